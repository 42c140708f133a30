"""Reading a table's rows as Hive would return them for a snapshot (spec §8), as Arrow.

Per partition: the getAcidState selection; rows of the base, insert deltas and (without a base)
original files of valid write ids, less the valid delete events, by (originalTransaction,
bucket property, rowId); bucket by bucket, as Hive's vectorized reader goes, so memory holds
one bucket's delete keys at a time. Hive 2 "legacy" tables (updates and deletes as events in
``delta_`` directories) are merged the way Hive 2.3's OrcRawRecordMerger does.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from ..core.errors import (
    AcidToolError,
    ExitStatus,
    HalfCompactionError,
    OrcReadError,
    UsageError,
)
from ..core.facts import footer_is_acid, row_shape
from ..core.halfdone import half_done
from ..core.names import FLUSH_LENGTH_SUFFIX, FileName, parse_bucket_id
from ..core.orcproto import Footer
from ..core.raw import RawRead, bucket_property, dir_is_raw, file_in_dir, numbered, raw_read
from ..core.select import AcidState
from ..core.snapshot import IdList, Snapshot
from ..io.footers import read_footer
from ..io.orc import ACID_COLUMNS, acid_type_problem, open_orc, scan_batches
from .deletekeys import KEY, DeleteKeys
from .ls import PartitionState
from .rownames import conformed, row_named

BATCH_ROWS = 1 << 20


class SnapshotError(AcidToolError):
    """Hive would refuse this snapshot (e.g. not enough history)."""

    exit_status = ExitStatus.FINDINGS


@dataclass(frozen=True)
class _File:
    rel: str  # relative to the partition
    bucket: int  # bucket id from the name (-1 when none)
    kind: str  # "acid" or "raw"
    directory: str | None  # enclosing base/delta, None for originals at the root
    synthetic_otid: int = 0
    statement: int = 0
    start_row: int = 0


def _bucket_from_name(name: str, version: str) -> int:
    try:
        bucket, _ = parse_bucket_id(name, version)
    except ValueError:
        return -1
    return bucket


def _events(src, columns: list[str] | None, acid: bool, batch_rows: int = BATCH_ROWS,
            threads: bool = True) -> Iterator[pa.RecordBatch]:
    names = None
    if columns is not None and acid:
        names = list(src.schema.names)
    for batch in scan_batches(src, batch_size=batch_rows, columns=names, use_threads=threads,
                              batch_readahead=0, fragment_readahead=0):
        if batch.num_rows:
            yield batch


def _normalise_acid(batch: pa.RecordBatch, row_names: Sequence[str] | None
                    ) -> pa.RecordBatch:
    """Readers match by position: the ACID columns (Hive 3.1 query-based compaction wrote them in
    lower case) and the columns of ``row`` (Hive 2.3 names them ``_col0..`` in inserts but
    ``_col1..`` in updates), which take the table's ``row_names``."""
    row = batch.column(5)
    named = row_named(row, row_names)
    if named is row and list(batch.schema.names) == list(ACID_COLUMNS):
        return batch
    return pa.RecordBatch.from_arrays(batch.columns[:5] + [named], names=list(ACID_COLUMNS))


@dataclass
class _Bucket:
    data: list[_File] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)


def require_whole(part: PartitionState) -> None:
    """Refuses a partition caught between a compaction's two renames (its rows would come out
    deleted or resurrected: core/halfdone.py)."""
    halves = half_done(part.state)
    if halves:
        raise HalfCompactionError(
            f"{part.location.url}: {halves[0].message()}. Nothing reads its rows meanwhile: "
            "if Hive's compactor runs, let it finish; if acidtool's was killed, `acidtool undo "
            "JOURNAL` or the next `acidtool compact --apply` rolls it back")


class PartitionReader:
    """Rows of one partition for one snapshot, as Arrow batches (row columns, optionally the
    ROW__ID, and the partition columns)."""

    def __init__(self, part: PartitionState, snapshot: Snapshot, *, with_row_id: bool = False,
                 columns: Sequence[str] | None = None, row_names: Sequence[str] | None = None,
                 memory_limit: int | None = None, batch_rows: int = BATCH_ROWS):
        self.part = part
        self.batch_rows = batch_rows  # rows a data batch holds at most
        self.memory_limit = memory_limit
        self.state: AcidState = part.state
        self.snapshot = snapshot
        self.with_row_id = with_row_id
        # also each row's event transaction (currentTransaction) as "__event": a Hive 2.3
        # legacy UPDATE keeps the row's ROW__ID and changes this (export --incremental)
        self.with_event = False
        self.columns = list(columns) if columns else None
        self.row_names = list(row_names) if row_names else None
        self.others: dict[str, pa.DataType] = {}  # row columns of the table's other files
        # the widest files' row columns (written after an ADD COLUMNS): a narrower file's rows
        self.row_columns: list[tuple[str, pa.DataType]] = []  # are read into them by position
        self._footers: dict[str, Footer | None] = {}  # (``footer``: each file's read once)
        self.version = snapshot.hive_version
        ids = snapshot.write_ids if self.version.has_write_ids else snapshot.txns
        assert ids is not None, "a Hive 3 or 4 snapshot holds a write-id list"
        self.ids: IdList = ids
        if self.state.error is not None:
            raise SnapshotError(f"{part.location.url}: Hive would fail: {self.state.error.message}")
        require_whole(part)
        if with_row_id and snapshot.insert_only:
            raise UsageError("--with-row-id: an insert-only table's rows have no ROW__ID")

    # -- planning -----------------------------------------------------------------------------
    @functools.cached_property
    def _plan(self) -> tuple[dict[int, _Bucket], list[_File]]:
        """Made once: original files are opened for their row counts."""
        buckets: dict[int, _Bucket] = {}
        legacy_events: list[_File] = []
        st, version = self.state, self.version
        legacy = self.legacy

        def add(f: _File):
            if legacy:
                legacy_events.append(f)
            else:
                buckets.setdefault(f.bucket, _Bucket()).data.append(f)

        if st.base is None:
            # Original files: synthetic ROW__IDs numbered across the files of a bucket in path
            # order (Hive 2 numbers each file from 0); raw_read says which bucket.
            self._add_raw(add, [(rel, raw_read(rel.rsplit("/", 1)[-1], version))
                                for rel in st.original_files], True, 0, 0, None)
        for entry in st.read_entries:
            names = sorted(f.path for f in entry.files if "/" not in f.path
                           and FileName.parse(f.path).kind in ("bucket", "original", "other"))
            if entry.kind == "delete_delta":
                for name in names:
                    buckets.setdefault(_bucket_from_name(name, version), _Bucket()
                                       ).deletes.append(f"{entry.name}/{name}")
                continue
            raw = dir_is_raw(names, functools.partial(self._is_acid_in, entry.name), version)
            raws = []
            for name in names:
                rel = f"{entry.name}/{name}"
                decision = file_in_dir(name, version, entry.kind, raw)
                if decision.outcome == "acid":
                    add(_File(rel, decision.bucket, "acid", entry.name))
                else:
                    raws.append((rel, decision))
            # LOAD DATA: raw files in base_X / delta_X_X_S get write id X, statement S.
            p = entry.parsed
            assert p is not None, "a selected directory's name is parsed"
            self._add_raw(add, raws, False, p.max_write_id, max(p.statement_id, 0), entry.name)
        return buckets, legacy_events

    def _is_acid_in(self, directory: str, name: str) -> bool:
        return self._is_acid(f"{directory}/{name}")

    def _add_raw(self, add, files: list[tuple[str, RawRead]], root: bool, write_id: int,
                 statement: int, directory: str | None) -> None:
        """Plan raw files the way Hive reads them: numbered on from the files of their bucket
        before them (Hive 2.3 in a root: each from 0), skipped, or failing the read."""
        for rel, decision in files:
            if decision.outcome == "fails":
                raise OrcReadError(f"{self.part.location.url}/{rel}: Hive fails the read: "
                                   f"{decision.reason} (validate reports it)")
        for rel, decision, start in numbered(files, self._rows, self.version, root):
            add(_File(rel, decision.bucket, "raw", directory, write_id, statement, start))

    def _is_acid(self, rel: str) -> bool:
        footer = self.footer(rel)
        return footer is not None and footer_is_acid(footer)

    @property
    def legacy(self) -> bool:
        return not self.version.split_update and not any(e.kind == "delete_delta"
                                                         for e in self.state.entries)

    @functools.cached_property
    def _sizes(self) -> dict[str, int]:
        return {p.path: p.size for p in self.part.listing.paths if not p.is_dir}

    def footer(self, rel: str) -> Footer | None:
        """A listed file's footer (up to its committed length), from one ranged read, once;
        None for a file that is not readable ORC (reading its rows fails and says why)."""
        if rel not in self._footers:
            side = rel + FLUSH_LENGTH_SUFFIX
            facts = read_footer(self.part.location, rel, self._sizes.get(rel, 0),
                                side if side in self._sizes else None)
            self._footers[rel] = facts.footer if facts.error is None else None
        return self._footers[rel]

    def row_layouts(self) -> Iterator[list[str]]:
        """The names of the row columns of each data file the snapshot reads, in plan order."""
        for _, names, _ in self.row_shapes():
            yield names

    def row_shapes(self) -> Iterator[tuple[str, list[str], list[str]]]:
        """(file, its row columns' names, their ORC types) of each data file the snapshot
        reads, in plan order, from one footer read each (an unreadable file is left out)."""
        if self.snapshot.insert_only:
            rels = self.insert_only_files()
        else:
            buckets, legacy = self._plan
            rels = [f.rel for f in legacy + [f for b in buckets.values() for f in b.data]]
        for rel in rels:
            shape = self.row_shape(rel)
            if shape is not None:
                yield rel, shape[0], shape[1]

    def row_shape(self, rel: str) -> tuple[list[str], list[str]] | None:
        """The names and ORC types of one data file's row columns (None: unreadable)."""
        footer = self.footer(rel)
        return row_shape(footer) if footer is not None else None

    def _rows(self, rel: str) -> int:
        footer = self.footer(rel)
        return footer.rows if footer is not None else 0

    # -- reading ------------------------------------------------------------------------------
    def _valid(self, arr: pa.Array) -> pa.Array:
        return valid_mask(self.ids, arr)

    def _open(self, rel: str):
        """The file, opened (an ACID file whose event columns have other types fails here)."""
        try:
            src = open_orc(self.part.location, rel)
        except OrcReadError as exc:
            if "/" in rel and "not an ORC file" in str(exc):
                raise OrcReadError(f"{exc}; a Parquet or text file in a base or delta is what "
                                   "an insert-only table holds: if this table is one, read it "
                                   "with --insert-only") from None
            raise
        problem = acid_type_problem(src.schema) if src.is_acid else None
        if problem is not None:
            raise OrcReadError(f"{src.path}: not the ACID event schema: {problem} (validate "
                               "reports it as ACID008)")
        return src

    def _acid_batches(self, f: _File) -> Iterator[pa.RecordBatch]:
        src = self._open(f.rel)
        if src.is_acid:
            yield from self._valid_events(src)
            return
        if f.kind == "acid":
            raise OrcReadError(f"{src.path}: Hive reads this file as ACID events, and it has "
                               "no ACID event columns: Hive fails on it (validate reports it "
                               "as ACID007)")
        # A plain file: synthetic events.
        if f.bucket < 0 and self.version.bucket_codec:
            raise OrcReadError(f"{src.path}: not in the ACID event schema, and its name gives "
                               "no bucket id: Hive fails with 'bucketId out of range: -1' "
                               "(validate reports ACID004 and ACID007)")
        row_start = f.start_row
        for batch in _events(src, None, False, self.batch_rows, self.memory_limit is None):
            n = batch.num_rows
            prop = bucket_property(f.bucket, f.statement, self.version)
            row = row_named(pa.StructArray.from_arrays(batch.columns, names=batch.schema.names),
                             self.row_names)
            events = pa.RecordBatch.from_arrays([
                pa.array([0] * n, pa.int32()),
                pa.array([f.synthetic_otid] * n, pa.int64()),
                pa.array([prop] * n, pa.int32()),
                pa.array(range(row_start, row_start + n), pa.int64()),
                pa.array([f.synthetic_otid] * n, pa.int64()),
                row], names=list(ACID_COLUMNS))
            row_start += n
            if f.synthetic_otid and not self.ids.is_valid(f.synthetic_otid):
                continue
            yield events

    def _delete_key_tables(self, rels: list[str]) -> Iterator[pa.Table]:
        """(originalTransaction, bucket, rowId) of the delete events the snapshot sees."""
        for rel in rels:
            src = self._open(rel)
            if not src.is_acid:
                raise OrcReadError(f"{src.path}: a delete delta file without the ACID event "
                                   "schema: its delete events cannot be read (validate "
                                   "reports it as ACID007)")
            for batch in _events(src, None, True):
                batch = _normalise_acid(batch, None)
                ok = pc.and_(self._valid(batch.column("currentTransaction")),
                             pc.equal(batch.column("operation"), 2))
                batch = batch.filter(ok)
                yield pa.table({k: batch.column(k) for k in KEY})

    def _delete_keys(self, rels: list[str]) -> "DeleteKeys | None":
        parts = list(self._delete_key_tables(rels))
        if not parts:
            return None
        table = pa.concat_tables(parts).combine_chunks()
        return DeleteKeys(table) if table.num_rows else None

    # About what one delete key costs in memory: three columns and its hash-set entry.
    KEY_BYTES = 48

    def _too_many_deletes(self, rels: list[str]) -> bool:
        if self.memory_limit is None:
            return False
        rows = sum(self._rows(rel) for rel in rels)
        return rows * self.KEY_BYTES > self.memory_limit

    def _delete_chunks(self, rels: list[str]) -> Iterator["DeleteKeys"]:
        """The streaming fallback under --memory-limit: delete keys read again for every data
        batch, a limited number at a time, so memory never holds more than one chunk."""
        assert self.memory_limit is not None, "streams deletes only under --memory-limit"
        per_chunk = max(1024, self.memory_limit // self.KEY_BYTES)
        pending, held = list[pa.Table](), 0
        for keys in self._delete_key_tables(rels):
            for start in range(0, keys.num_rows, per_chunk):
                piece = keys.slice(start, per_chunk)
                pending.append(piece)
                held += piece.num_rows
                if held >= per_chunk:
                    yield DeleteKeys(pa.concat_tables(pending).combine_chunks())
                    pending, held = [], 0
        if held:
            yield DeleteKeys(pa.concat_tables(pending).combine_chunks())

    def output(self, events: pa.RecordBatch | pa.Table) -> pa.Table:
        row = events.column("row")
        if isinstance(row, pa.ChunkedArray):
            row = row.combine_chunks()
        out_names = [f.name for f in row.type]
        widest = self.row_columns  # (a file written before an ADD COLUMNS: as Hive reads it)
        if len(out_names) < len(widest):
            out_names = [n for n, _ in widest[:len(out_names)]]
        cols = {name: row.field(i) for i, name in enumerate(out_names)}
        cols.update({n: pa.nulls(len(row), t) for n, t in widest[len(out_names):]})
        if self.columns:  # (a column other files have: nulls, as Hive reads this file)
            missing = [c for c in self.columns if c not in cols and c not in self.others]
            if missing:
                raise UsageError(f"--columns: unknown column {', '.join(map(repr, missing))} "
                                 f"(the table has: {', '.join(out_names)})")
            cols = {c: cols[c] if c in cols else pa.nulls(len(row), self.others[c])
                    for c in self.columns}
        table_cols: dict = {}
        if self.with_row_id:
            table_cols["ROW__ID"] = pa.StructArray.from_arrays(
                [_plain(events.column("originalTransaction")), _plain(events.column("bucket")),
                 _plain(events.column("rowId"))], names=["writeid", "bucketid", "rowid"])
            if self.with_event:
                table_cols["__event"] = _plain(events.column("currentTransaction"))
        table_cols.update(cols)
        for key, value in partition_values(self.part.partition):
            table_cols[key] = pa.array([value] * events.num_rows, pa.string())
        return pa.table(table_cols)

    def data_files(self) -> list[str]:
        """The data files the snapshot reads (no delete deltas), as ``units`` orders them."""
        if self.snapshot.insert_only:
            return self.insert_only_files()
        buckets, legacy = self._plan
        return [f.rel for f in legacy + [f for b in sorted(buckets) for f in buckets[b].data]]

    def tables(self) -> Iterator[pa.Table]:
        for unit in self.units():
            yield from self.unit_tables(unit)

    def units(self) -> list[tuple[str, object]]:
        """The pieces this partition's rows can be read in, each on its own (a Spark task
        each): an insert-only table's files, a split-update table's buckets, or (Hive 2.3's
        legacy merge) the whole partition."""
        if self.snapshot.insert_only:
            return [("file", rel) for rel in self.insert_only_files()]
        buckets, _ = self._plan
        if self.legacy:
            return [("legacy", None)]
        return [("bucket", b) for b in sorted(buckets)]

    def unit_tables(self, unit: tuple[str, Any]) -> Iterator[pa.Table]:
        kind, key = unit
        if kind == "file":
            yield from self._insert_only([key])
            return
        for events in self.unit_events(unit):
            yield self.output(events)

    def unit_events(self, unit: tuple[str, Any]) -> Iterator[pa.RecordBatch | pa.Table]:
        """The events of a unit the snapshot returns, in the ACID event columns: the merge
        ``read`` and ``compact --major`` share. A split-update bucket gives its valid insert
        events less the deleted ones; a legacy unit (the partition, or with ``("legacy",
        b)`` one bucket as one split) the winning event of each row (an INSERT or UPDATE)."""
        kind, key = unit
        buckets, legacy_events = self._plan
        if kind == "legacy":
            if key is None:
                yield from self._legacy(legacy_events)
            else:
                anchors, deltas = self._legacy_groups(legacy_events)
                yield from self._legacy_split(anchors.get(key, []) + deltas.get(key, []))
            return
        group = buckets[key]
        streaming = bool(group.deletes) and self._too_many_deletes(group.deletes)
        deletes = self._delete_keys(group.deletes) if group.deletes and not streaming \
            else None
        for f in group.data:
            for batch in self._acid_batches(f):
                if batch.num_rows == 0:
                    continue
                keep = pc.equal(batch.column("operation"), 0)
                chunks = self._delete_chunks(group.deletes) if streaming else \
                    ([deletes] if deletes is not None else [])
                for chunk in chunks:
                    deleted = chunk.match(batch)
                    if deleted is not None:
                        keep = pc.and_(keep, pc.invert(deleted))
                batch = batch.filter(keep)
                if batch.num_rows:
                    yield batch

    def compaction_units(self) -> list[tuple[str, Any]]:
        """The units a compaction writes one bucket file each from: a bucket (a Hive 2.3
        legacy table's bucket merged as one split, as its compactor reads it)."""
        buckets, legacy_events = self._plan
        if self.legacy:
            anchors, deltas = self._legacy_groups(legacy_events)
            return [("legacy", b) for b in sorted(anchors.keys() | deltas.keys())]
        return [("bucket", b) for b in sorted(buckets)]

    def bucket_files(self) -> dict[int, tuple[list[str], list[str]]]:
        """bucket id -> (its data files, its delete delta files) the snapshot reads: what a
        minor compaction merges (raw files too: they are read with synthetic ROW__IDs)."""
        buckets, legacy_events = self._plan
        out: dict[int, tuple[list[str], list[str]]] = {}
        for f in legacy_events:
            out.setdefault(f.bucket, ([], []))[0].append(f.rel)
        for b, group in buckets.items():
            files = out.setdefault(b, ([], []))
            files[0].extend(f.rel for f in group.data)
            files[1].extend(group.deletes)
        return out

    def events_of(self, rel: str) -> Iterator[pa.RecordBatch]:
        """Every valid event of one data or delete delta file (a raw file's synthetic inserts),
        nothing merged away: what a minor compaction keeps."""
        planned = self._files_by_rel.get(rel)
        if planned is None:  # a delete delta's file
            yield from self._valid_events(self._open(rel))
        for f in planned or []:
            yield from self._acid_batches(f)

    def _valid_events(self, src) -> Iterator[pa.RecordBatch]:
        """An ACID file's events whose currentTransaction the snapshot sees."""
        for batch in _events(src, None, True, self.batch_rows, self.memory_limit is None):
            batch = _normalise_acid(batch, self.row_names)
            valid = self._valid(batch.column("currentTransaction"))
            if valid.null_count or not pc.all(valid).as_py():
                batch = batch.filter(valid)
            yield batch

    @functools.cached_property
    def _files_by_rel(self) -> dict[str, list[_File]]:
        buckets, legacy_events = self._plan
        out: dict[str, list[_File]] = {}
        for f in legacy_events + [f for b in buckets.values() for f in b.data]:
            out.setdefault(f.rel, []).append(f)
        return out

    def insert_only_files(self) -> list[str]:
        """An insert-only table's data files the snapshot reads: every plain file of the base
        and the insert deltas (the original files without a base), in Hive's order. It has no
        delete deltas (validate reports one as ACID027)."""
        st = self.state
        files = list(st.original_files) if st.base is None else []
        for entry in st.read_entries:
            if entry.kind == "delete_delta":
                continue
            files.extend(f"{entry.name}/{f.path}" for f in sorted(entry.files)
                         if not f.is_dir
                         and not any(part.startswith(("_", ".")) for part in f.path.split("/"))
                         and not f.path.endswith(FLUSH_LENGTH_SUFFIX))
        return files

    def _insert_only(self, files: Sequence[str] | None = None) -> Iterator[pa.Table]:
        """Plain rows (of ``files``, by default all the snapshot reads): no ROW__ID, no delete
        events; columns by position (row_names)."""
        from ..io.plain import plain_batches

        for rel in self.insert_only_files() if files is None else files:
            for batch in plain_batches(self.part.location, rel, self.batch_rows,
                                       self.memory_limit is None):
                if batch.num_rows == 0:
                    continue
                row = row_named(pa.StructArray.from_arrays(batch.columns,
                                                            names=batch.schema.names),
                                 self.row_names)
                events = pa.RecordBatch.from_arrays([row], names=["row"])
                yield self.output(events)

    def _legacy(self, files: list[_File]) -> Iterator[pa.Table]:
        """Hive 2.3 without split-update, split by split as OrcRawRecordMerger reads them: a
        split is one base or original file with every delta file of its bucket (or, for a
        bucket with neither, the delta files alone). In a split, per row identity the event
        with the highest currentTransaction (then statement id) wins and a delete removes the
        row. Two original files of one bucket are two splits: Hive 2.3 applies the bucket's
        delta events to each, and returns their inserts once per split."""
        anchors, deltas = self._legacy_groups(files)
        for b in sorted(anchors.keys() | deltas.keys()):
            split_anchors: list[_File | None] = list(anchors.get(b, [])) or [None]
            for anchor in split_anchors:
                yield from self._legacy_split(([anchor] if anchor else []) + deltas.get(b, []))

    def _legacy_groups(self, files: list[_File]
                       ) -> tuple[dict[int, list[_File]], dict[int, list[_File]]]:
        """bucket -> its base or original files, and bucket -> its delta files."""
        anchors: dict[int, list[_File]] = {}
        deltas: dict[int, list[_File]] = {}
        for f in files:
            in_delta = f.directory is not None and self.state.entry(f.directory).kind != "base"
            (deltas if in_delta else anchors).setdefault(f.bucket, []).append(f)
        return anchors, deltas

    def statement_of(self, directory: str | None) -> int:
        """The statement id of a delta directory (0: none; Hive 2.3 breaks ties by it)."""
        parsed = self.state.entry(directory).parsed if directory is not None else None
        return max(parsed.statement_id, 0) if parsed is not None else 0

    def _legacy_split(self, files: list[_File]) -> Iterator[pa.Table]:
        parts = []
        for f in files:
            stmt = self.statement_of(f.directory)
            for batch in self._acid_batches(f):
                t = pa.Table.from_batches([batch])
                parts.append(t.append_column("__stmt", pa.array([stmt] * t.num_rows, pa.int32())))
        if not parts:
            return
        events = pa.concat_tables(conformed(parts), promote_options="permissive").combine_chunks()
        order = pc.sort_indices(events, sort_keys=[("originalTransaction", "ascending"),
                                                   ("bucket", "ascending"),
                                                   ("rowId", "ascending"),
                                                   ("currentTransaction", "descending"),
                                                   ("__stmt", "descending")])
        events = events.take(order)
        n = events.num_rows
        if n == 0:
            return
        keys = [events.column(k).combine_chunks() for k in KEY]
        same = None
        for k in keys:
            eq = pc.equal(k.slice(1), k.slice(0, n - 1))
            same = eq if same is None else pc.and_(same, eq)
        first = pa.concat_arrays([pa.array([True]), pc.invert(same)]) if n > 1 else \
            pa.array([True])
        winners = events.filter(first)
        winners = winners.filter(pc.not_equal(winners.column("operation"), 2))
        if winners.num_rows:
            yield winners.drop_columns(["__stmt"])


def valid_mask(ids: IdList, arr: pa.Array) -> pa.Array:
    """isWriteIdValid for every value (high watermark, then the exceptions); a null is not
    valid."""
    low, high = (v.as_py() for v in pc.min_max(arr).values())
    if high is not None and high <= ids.high_watermark and not any(
            low <= e <= high for e in ids.exceptions):
        return pa.array([True] * len(arr)) if len(arr) < 1024 else \
            pc.is_valid(arr)
    ok = pc.less_equal(arr, ids.high_watermark)
    if ids.exceptions:
        ok = pc.and_(ok, pc.invert(pc.is_in(arr, pa.array(ids.exceptions, pa.int64()))))
    return pc.fill_null(ok, False)


def _plain(arr):
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def partition_values(partition: str) -> list[tuple[str, str]]:
    if not partition:
        return []
    from urllib.parse import unquote

    return [(k, unquote(v)) for k, _, v in (c.partition("=") for c in partition.split("/"))]

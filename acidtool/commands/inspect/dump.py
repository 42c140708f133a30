"""``acidtool dump``: rows of ORC files, one JSON line each, exactly as ``orc-tools data`` prints.

Targets are files, base/delta directories, or tables and partitions (then the files Hive reads, in
``ls`` order). Rows are decoded a stripe at a time and formatted column-wise (``jsonl.py``), so memory
stays bounded by one stripe whatever the file size.
"""

from __future__ import annotations

import bisect
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import BinaryIO, Callable, Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from ...core.errors import OrcReadError, PathError, UsageError
from ...core.javafmt import gson_string
from ...core.names import FileName, is_hidden, parse_dir_name
from ...core.raw import RawRead, bucket_property, dir_is_raw, file_in_dir, numbered, raw_read
from ...core.select import AcidState
from ...core.snapshot import Snapshot, make_snapshot
from ...core.versions import HiveVersion
from ...io.fs import Location, kind_of, list_tree, resolve
from ...io.jsonl import (
    FileContext,
    Literal,
    format_parts,
    format_values,
    lines_buffer,
    object_text,
)
from ...io.orc import OrcSource, TimestampRangeError, open_orc, scan_batches
from ...table.ls import inspect_table

CHUNK_ROWS = 65_536
OPERATIONS = {"insert": 0, "update": 1, "delete": 2}
OP_NAMES = ("insert", "update", "delete")


@dataclass(frozen=True)
class Synthetic:
    """The ROW__ID Hive gives the rows of an original (non-ACID) file (spec §8.4)."""

    original_transaction: int
    bucket_property: int
    start_row_id: int


@dataclass(frozen=True)
class DumpFile:
    loc: Location  # the directory the file is in, or the file itself with rel ""
    rel: str
    display: str  # path relative to TARGET (for --with-file)
    synthetic: Synthetic | None = None


@dataclass(frozen=True)
class DumpOptions:
    limit: int | None = None
    bucket: int | None = None
    write_id: int | None = None
    operation: str | None = None
    columns: tuple[str, ...] | None = None
    decode: bool = False
    with_file: bool = False
    synthetic_row_ids: bool = False
    all_files: bool = False
    snapshot: Snapshot = field(default_factory=make_snapshot)

    @property
    def filters_acid_fields(self) -> bool:
        return self.bucket is not None or self.write_id is not None or self.operation is not None


@dataclass
class DumpResult:
    rows: int = 0
    files: int = 0
    failures: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------------
# Targets


def _is_data_name(name: str) -> bool:
    fn = FileName.parse(name)
    return fn.kind not in ("hidden", "flush_length", "acid_version", "metadata")


def _synthetic_ids(loc: Location, files: Sequence[tuple[str, RawRead]], version: HiveVersion,
                   otid: int, statement: int, root: bool) -> dict[str, Synthetic]:
    """The synthetic ROW__IDs of the raw files Hive reads (core.raw decides, as for read)."""
    return {rel: Synthetic(otid, bucket_property(d.bucket, statement, version), start)
            for rel, d, start in numbered(files, lambda rel: _row_count(loc, rel), version, root)}


def _row_count(loc: Location, rel: str) -> int:
    try:
        return open_orc(loc, rel).file.nrows
    except OrcReadError:
        return 0


def _is_acid(loc: Location, rel: str) -> bool:
    try:
        return open_orc(loc, rel).is_acid
    except OrcReadError:
        return False


def _originals_synthetic(loc: Location, state: AcidState, version: HiveVersion
                         ) -> dict[str, Synthetic]:
    return _synthetic_ids(loc, [(rel, raw_read(rel.rsplit("/", 1)[-1], version))
                                for rel in state.original_files], version, 0, 0, True)


def _dir_files(loc: Location, display: str, opts: DumpOptions, *, table: bool = False
               ) -> list[DumpFile]:
    """The data files of one base or delta directory, in name order; of a ``table`` target, only
    those Hive reads (a delta of ACID files never reads a ``part-`` file, for one)."""
    rels = sorted(p.path for p in list_tree(loc)
                  if not p.is_dir and "/" not in p.path and _is_data_name(p.path))
    version = opts.snapshot.hive_version
    acid = parse_dir_name(loc.url.rstrip("/").rsplit("/", 1)[-1], version)
    synthetic: dict[str, Synthetic] = {}
    if (opts.synthetic_row_ids or table) and acid is not None and acid.kind != "delete_delta":
        raw = dir_is_raw(rels, lambda rel: _is_acid(loc, rel), version)
        decisions = [(rel, file_in_dir(rel, version, acid.kind, raw)) for rel in rels]
        if table:
            rels = [rel for rel, d in decisions if d.outcome != "skipped"]
        if opts.synthetic_row_ids:
            # LOAD DATA: raw files inside base_X / delta_X_X_S get write id X and statement S.
            synthetic = _synthetic_ids(loc, decisions, version, acid.max_write_id,
                                       max(acid.statement_id, 0), False)
    return [DumpFile(loc, rel, f"{display}/{rel}" if display else rel, synthetic.get(rel))
            for rel in rels]


def _table_files(loc: Location, opts: DumpOptions, errors: list[str]) -> list[DumpFile]:
    table = inspect_table(loc, opts.snapshot)
    out: list[DumpFile] = []
    for part in table.partitions:
        ploc, state = part.location, part.state
        prefix = f"{part.partition}/" if part.partition else ""
        if opts.all_files:
            for entry in state.entries:
                if entry.kind == "hidden":
                    continue
                if not entry.is_dir:
                    out.append(DumpFile(ploc, entry.name, prefix + entry.name))
                    continue
                for f in entry.files:
                    rel = f"{entry.name}/{f.path}"
                    if not any(is_hidden(p) for p in f.path.split("/")) and _is_data_name(f.name):
                        out.append(DumpFile(ploc, rel, prefix + rel))
            continue
        if state.error is not None:
            errors.append(f"{ploc.url}: Hive would fail to read this directory: "
                          f"{state.error.message} (use --all to dump every file anyway)")
            continue
        if state.base is None:
            synthetic = (_originals_synthetic(ploc, state, opts.snapshot.hive_version)
                         if opts.synthetic_row_ids else {})
            out.extend(DumpFile(ploc, rel, prefix + rel, synthetic.get(rel))
                       for rel in state.original_files)
        for name in ([state.base] if state.base else []) + list(state.deltas):
            out.extend(_dir_files(ploc.child(name), prefix + name, opts, table=True))
    return out


def resolve_targets(targets: Sequence[str], opts: DumpOptions, errors: list[str],
                    purpose: str = " to dump") -> list[DumpFile]:
    """The ORC files each target names (a file, a base/delta directory, a table: the files Hive
    reads); what cannot be had goes to ``errors``."""
    files: list[DumpFile] = []
    for target in targets:
        loc = resolve(target)
        kind = kind_of(loc)
        if kind == "missing":
            raise PathError(f"{target}: no such file or directory")
        if kind == "file":
            files.append(_single_file(loc, opts))
            continue
        name = loc.url.rstrip("/").rsplit("/", 1)[-1]
        acid = None
        try:
            acid = parse_dir_name(name, opts.snapshot.hive_version)
        except ValueError:
            pass
        found = _dir_files(loc, "", opts) if acid is not None else _table_files(loc, opts, errors)
        if not found and not errors:
            errors.append(f"{target}: no ORC data files{purpose} here")
        files.extend(found)
    return files


def _single_file(loc: Location, opts: DumpOptions) -> DumpFile:
    """One file; with --synthetic-row-ids, numbered as among the files of its directory: a base
    or delta's (LOAD DATA), else a table root's (original files)."""
    name = loc.url.rstrip("/").rsplit("/", 1)[-1]
    synthetic = None
    if opts.synthetic_row_ids and FileName.parse(name).kind in ("original", "other", "bucket"):
        parent_url = loc.url[: len(loc.url.rstrip("/")) - len(name)].rstrip("/") or "/"
        parent = resolve(parent_url)
        version = opts.snapshot.hive_version
        try:
            acid = parse_dir_name(parent_url.rsplit("/", 1)[-1], version)
        except ValueError:
            acid = None
        if acid is not None:
            synthetic = next((f.synthetic for f in _dir_files(parent, "", opts)
                              if f.rel == name), None)
        else:
            table = inspect_table(parent, opts.snapshot)
            state = table.partitions[0].state if table.partitions else None
            if state is not None and name in state.original_files:
                synthetic = _originals_synthetic(parent, state, version).get(name)
            else:  # a file on its own: its name alone
                synthetic = _synthetic_ids(loc, [("", raw_read(name, version))], version, 0, 0,
                                           True).get("")
    return DumpFile(loc, "", name, synthetic)


# ------------------------------------------------------------------------------------------------
# Rows


def _batches(src: OrcSource) -> Iterator[tuple[int, pa.RecordBatch]]:
    """(stripe index, batch) in file order, CHUNK_ROWS rows at a time.

    Arrow's dataset scanner reads a stripe in row batches, so memory stays bounded by a batch
    even when a writer made one enormous stripe. Timestamps outside 1677-2262 do not fit Arrow's
    nanoseconds: from the stripe where one appears, the rest is read through pyorc."""
    bounds = src.stripe_starts()
    done = 0
    try:
        for batch in scan_batches(src, batch_size=CHUNK_ROWS, use_threads=False,
                                  batch_readahead=0, fragment_readahead=0):
            if batch.num_rows:
                yield bisect.bisect_right(bounds, done) - 1, batch
                done += batch.num_rows
        return
    except TimestampRangeError:
        pass
    stripe = bisect.bisect_right(bounds, done) - 1
    skip = done - bounds[stripe]
    for i in range(stripe, len(bounds)):
        batch = _stripe_via_pyorc(src, i).slice(skip)
        skip = 0
        for start in range(0, batch.num_rows, CHUNK_ROWS):
            yield i, batch.slice(start, CHUNK_ROWS)


def _stripe_via_pyorc(src: OrcSource, index: int) -> pa.RecordBatch:
    """Timestamps outside 1677-2262 do not fit Arrow's nanoseconds: read the stripe with pyorc,
    with timestamps turned into their Java spelling (which then prints as a JSON string, as
    orc-tools prints a timestamp)."""
    from ...io.orc_fallback import read_stripe_java_timestamps

    return read_stripe_java_timestamps(src, index)


def _acid_columns(batch: pa.RecordBatch) -> dict[str, pa.Array]:
    names = [n.lower() for n in batch.schema.names]
    return {key: batch.column(names.index(key.lower())) for key in
            ("operation", "originalTransaction", "bucket", "rowId", "currentTransaction", "row")}


def _decoded_bucket(bucket: pa.Array) -> tuple[pa.Array, pa.Array, pa.Array]:
    unsigned = pc.cast(pc.cast(bucket, pa.int64()), pa.int64())
    unsigned = pc.if_else(pc.less(unsigned, 0), pc.add(unsigned, 2**32), unsigned)
    codec = pc.shift_right(unsigned, 29)
    v1 = pc.equal(codec, 1)
    bucket_id = pc.if_else(v1, pc.bit_wise_and(pc.shift_right(unsigned, 16), 0xFFF),
                           pc.if_else(pc.equal(codec, 0), unsigned, None))
    statement = pc.if_else(v1, pc.bit_wise_and(unsigned, 0xFFF),
                           pc.if_else(pc.equal(codec, 0), 0, None))
    return codec, bucket_id, statement


def _mask(acid: dict[str, pa.Array], opts: DumpOptions) -> pa.Array | None:
    masks = []
    if opts.bucket is not None:
        masks.append(pc.equal(_decoded_bucket(acid["bucket"])[1], opts.bucket))
    if opts.write_id is not None:
        masks.append(pc.or_(pc.equal(acid["originalTransaction"], opts.write_id),
                            pc.equal(acid["currentTransaction"], opts.write_id)))
    if opts.operation is not None:
        masks.append(pc.equal(acid["operation"], OPERATIONS[opts.operation]))
    if not masks:
        return None
    mask = masks[0]
    for m in masks[1:]:
        mask = pc.and_(mask, m)
    return pc.fill_null(mask, False)


def _project(arr: pa.Array, columns: Sequence[str], path: str) -> pa.Array:
    if not pa.types.is_struct(arr.type):
        raise UsageError(f"--columns: {path} has no row struct to project")
    names = [f.name for f in arr.type]
    missing = [c for c in columns if c not in names]
    if missing:
        raise UsageError(f"--columns: unknown column {', '.join(map(repr, missing))} in {path} "
                         f"(it has: {', '.join(names)})")
    fields = [arr.type[names.index(c)] for c in columns]
    return pa.StructArray.from_arrays([arr.field(names.index(c)) for c in columns],
                                      fields=fields, mask=pc.is_null(arr) if arr.null_count else None)


def _acid_lines(batch: pa.RecordBatch, ctx: FileContext, f: DumpFile,
                opts: DumpOptions) -> pa.Array:
    acid = _acid_columns(batch)
    mask = _mask(acid, opts)
    if mask is not None:
        batch = batch.filter(mask)
        acid = _acid_columns(batch)
    names = list(batch.schema.names)
    values = [batch.column(i) for i in range(batch.num_columns)]
    if opts.columns is not None:
        values[5] = _project(values[5], opts.columns, f.display)
    texts = [format_parts(v, ctx, (n,)) for n, v in zip(names, values)]
    if opts.decode:
        codec, bucket_id, statement = _decoded_bucket(acid["bucket"])
        op = pc.cast(acid["operation"], pa.int64())
        op_text = pc.fill_null(pc.if_else(pc.equal(op, 0), '"insert"', pc.if_else(
            pc.equal(op, 1), '"update"', pc.if_else(pc.equal(op, 2), '"delete"', None))), "null")
        extra_names = ["bucketId", "statementId", "codecVersion", "op"]
        extra = [format_values(bucket_id), format_values(statement), format_values(codec), op_text]
        names[5:5] = extra_names
        texts[5:5] = extra
    return _finish(names, texts, batch.num_rows, f, opts)


def _finish(names: list[str], texts: list[pa.Array], length: int, f: DumpFile,
            opts: DumpOptions) -> pa.Array:
    if opts.with_file:
        names.append("file")
        texts.append(Literal(gson_string(f.display), length))
    return object_text(names, texts, length, suffix="\n")


def _plain_lines(batch: pa.RecordBatch, ctx: FileContext, f: DumpFile, opts: DumpOptions,
                 row_offset: int) -> pa.Array | None:
    names = list(batch.schema.names)
    values = [batch.column(i) for i in range(batch.num_columns)]
    if opts.columns is not None:
        missing = [c for c in opts.columns if c not in names]
        if missing:
            raise UsageError(f"--columns: unknown column {', '.join(map(repr, missing))} in "
                             f"{f.display} (it has: {', '.join(names)})")
        values = [values[names.index(c)] for c in opts.columns]
        names = list(opts.columns)
    if f.synthetic is None:
        if opts.filters_acid_fields:
            return None  # a plain row has no write id, bucket or operation to match
        return _finish(names, [format_parts(v, ctx, (n,)) for n, v in zip(names, values)],
                       batch.num_rows, f, opts)
    s = f.synthetic
    n = batch.num_rows
    row = pa.StructArray.from_arrays(values, names=names) if names else \
        pa.array([{}] * n, pa.struct([]))
    acid = {
        "operation": pa.array([0] * n, pa.int32()),
        "originalTransaction": pa.array([s.original_transaction] * n, pa.int64()),
        "bucket": pa.array([s.bucket_property] * n, pa.int32()),
        "rowId": pa.array(range(s.start_row_id + row_offset, s.start_row_id + row_offset + n),
                          pa.int64()),
        "currentTransaction": pa.array([s.original_transaction] * n, pa.int64()),
        "row": row,
    }
    synthetic_batch = pa.RecordBatch.from_arrays(list(acid.values()), names=list(acid))
    plain = DumpOptions(**{**opts.__dict__, "columns": None})
    nested = FileContext(frozenset(("row",) + p for p in ctx.chars), ctx.writer_zone)
    return _acid_lines(synthetic_batch, nested, f, plain)


def _workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def dump_file(f: DumpFile, opts: DumpOptions, out: BinaryIO, remaining: int | None,
              note: Callable[[str], None]) -> int:
    """Write one file's rows; return how many were written.

    Slices of rows are formatted on a few threads (Arrow's kernels release the GIL) and written
    in order; at most two slices per thread are in flight, so memory stays bounded."""
    src = open_orc(f.loc, f.rel)
    for message in src.notes:
        note(message)
    acid = src.is_acid

    def jobs():
        row_offset = 0
        for stripe, batch in _batches(src):
            yield batch, src.context(stripe), row_offset
            row_offset += batch.num_rows

    def render(job) -> pa.Array | None:
        batch, ctx, row_offset = job
        lines = (_acid_lines(batch, ctx, f, opts) if acid
                 else _plain_lines(batch, ctx, f, opts, row_offset))
        if lines is None or len(lines) == 0:
            return None
        return lines  # each line already ends in "\n"

    written = 0
    workers = _workers()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending: deque = deque()
        source = iter(jobs())
        exhausted = False
        while True:
            while not exhausted and len(pending) < 2 * workers:
                job = next(source, None)
                if job is None:
                    exhausted = True
                else:
                    pending.append(pool.submit(render, job))
            if not pending:
                break
            text = pending.popleft().result()
            if text is None:
                continue
            if remaining is not None and written + len(text) > remaining:
                text = text.slice(0, remaining - written)
            out.write(lines_buffer(text))
            written += len(text)
            if remaining is not None and written >= remaining:
                for future in pending:
                    future.cancel()
                break
    return written


def dump(targets: Sequence[str], opts: DumpOptions, out: BinaryIO,
         note: Callable[[str], None]) -> DumpResult:
    result = DumpResult()
    errors: list[str] = []
    files = resolve_targets(targets, opts, errors)
    for message in errors:
        result.failures.append(message)
        note(f"error: {message}")
    for f in files:
        remaining = None if opts.limit is None else opts.limit - result.rows
        if remaining is not None and remaining <= 0:
            break
        try:
            result.rows += dump_file(f, opts, out, remaining, note)
            result.files += 1
        except OrcReadError as exc:
            result.failures.append(str(exc))
            note(f"error: {exc}")
    out.flush()
    return result

"""``acidtool convert``: re-wrap raw ORC into the delta directory Hive itself would have written.

Plan first (sources, schema mapping, write id, bucket layout: every problem is reported before
anything is written), then write into a hidden staging directory inside the target
(``_acidtool_staging_<id>``, which Hive ignores) and commit with one directory rename. A failure
or Ctrl-C removes the staging directory; sources are never modified (``--move-sources`` moves
them out of the table only after the commit, and writes a manifest).

Rows keep their source order: sources in path order, rows in file order. Unbucketed tables get
``bucket_00000``, ``bucket_00001``... as Hive's writer tasks each write their own: consecutive
sources share a file while it holds at most ``max_file_rows`` rows, and a larger source gets
files of its own (of ``max_file_rows`` rows each). Bucketed tables put each row in the file
Hive's hash picks. Row ids run 0..n-1 in every file.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from ...core.errors import (
    AcidToolError,
    AfterCommitError,
    ExitStatus,
    Interrupted,
    OrcReadError,
    Terminated,
    UsageError,
    raise_if_terminated,
)
from ...core.hashing import bucket_number
from ...core.javanum import LONG_MAX
from ...core.names import (
    ACID_VERSION_FILE,
    ACIDTOOL_STAGING_PREFIX,
    Base,
    Delta,
    is_hidden,
    parse_dir_name,
)
from ...core.versions import HiveVersion
from ...io.arrowtypes import ORC_TO_ARROW
from ...io.commit import Commit, require_inside, shielded, table_of
from ...io.deltawriter import BucketWriter, BucketWriters, FileFormat
from ...io.fs import (
    Location,
    is_utf8,
    kind_of,
    list_tree,
    resolve,
)
from ...io.journal import PlaceDir, Scratch, fault_point
from ...io.orc import fragment_batches, is_acid_schema, open_orc, orc_fragment
from ...io.recovery import held_by_another
from .schema import map_schema, require_table_fit
from .sources import (
    SOURCES_FILE,
    Fingerprint,
    Group,
    dedupe,
    expand_sources,
    fingerprint,
    group_sources,
    manifest_name,
    move_targets,
    record,
    refuse_duplicates,
)

DEFAULT_MAX_FILE_ROWS = 10_000_000


class ConvertError(AcidToolError):
    """A failure while writing, before the commit: nothing was committed."""

    exit_status = ExitStatus.FINDINGS


@dataclass(frozen=True)
class ConvertOptions:
    table: str
    write_id: str = "auto"  # a number or "auto"
    partition: str | None = None
    statement_id: int = 0
    compression: str = "zlib"
    hive_version: HiveVersion | None = None  # None: 4, or the metastore's
    buckets: int | None = None
    bucket_by: tuple[str, ...] = ()
    bucketing_version: int = 2
    max_file_rows: int = DEFAULT_MAX_FILE_ROWS
    schema: str | None = None
    by_position: bool = False
    move_sources: str | None = None
    allow_duplicates: bool = False  # convert sources whose rows a delta records already
    stripe_size: int = 64 * 1024 * 1024
    insert_only: bool = False  # plain ORC files, as Hive 3/4 write an insert-only table
    # another statement of a write id that deltas hold already (repair's re-wrap of a delta's
    # foreign file): only a directory of the very same name clashes
    another_statement: bool = False
    # a metastore (thrift://HOST:PORT): --table may name the table, and --write-id auto
    # writes inside a transaction of its (convert_txn)
    metastore: str | None = None
    journal: str | None = None  # the run's journal (None: the state directory's)

    def __post_init__(self) -> None:
        if self.hive_version is None and not self.metastore:
            object.__setattr__(self, "hive_version", HiveVersion.V4)
        if self.hive_version is not None:
            object.__setattr__(self, "hive_version", HiveVersion.of(self.hive_version))
        if self.insert_only and self.hive_version is not None and \
                not self.hive_version.has_insert_only:
            raise UsageError("--insert-only: Hive 2.3 has no insert-only tables (they came "
                             "with Hive 3): use --hive-version 3 or 4")

    @property
    def version(self) -> HiveVersion:
        """The Hive version (the metastore's is filled in before a plan is made)."""
        assert self.hive_version is not None, "the metastore's version is taken first"
        return self.hive_version

    @property
    def file_format(self) -> FileFormat:
        return FileFormat(self.version, self.statement_id, self.compression,
                          self.stripe_size, self.insert_only)


@dataclass(frozen=True)
class Source:
    loc: Location
    rows: int
    schema: pa.Schema


@dataclass
class Plan:
    options: ConvertOptions
    sources: list[Source]
    target: Location  # the table or partition directory
    write_id: int
    directory: str  # delta_W_W_SSSS
    schema: pa.Schema  # the row columns written
    mapping: list[tuple[str, str, str]]  # (target column, source column, cast or "")
    bucket_kinds: list[str] = field(default_factory=list)
    total_rows: int = 0
    files: list[str] = field(default_factory=list)  # bucket file names (unbucketed: known)
    groups: list[Group] = field(default_factory=list)  # unbucketed: sources per file run
    named_twice: list[tuple[str, str]] = field(default_factory=list)  # (path, same file as)
    fingerprints: list[Fingerprint] = field(default_factory=list)  # of each source
    moves: list[Location] = field(default_factory=list)  # --move-sources: where each goes

    def describe(self) -> dict:
        o = self.options
        return {
            "target": self.target.url, "directory": self.directory, "write_id": self.write_id,
            "statement_id": o.statement_id, "hive_version": o.hive_version,
            "sources": [{"path": s.loc.url, "rows": s.rows} for s in self.sources],
            "rows": self.total_rows,
            "columns": [{"column": t, "source": s, "cast": c} for t, s, c in self.mapping],
            "bucketing": ({"buckets": o.buckets, "by": list(o.bucket_by),
                           "version": o.bucketing_version} if o.buckets else None),
            "files": self.files if not o.buckets else
            [o.file_format.file_name(b) for b in range(o.buckets)],
            "compression": o.compression,
            "named_twice": [{"path": a, "same_file_as": b} for a, b in self.named_twice],
        }


# ------------------------------------------------------------------------------------------------
# Planning


def _read_sources(locs: list[Location]) -> list[Source]:
    problems, sources = [], []
    for loc in locs:
        try:
            src = open_orc(loc, "")
        except OrcReadError as exc:
            problems.append(str(exc))
            continue
        if is_acid_schema(src.schema):
            problems.append(f"{loc.url}: already in the ACID event schema (it is ACID data, "
                            "not a raw file to convert)")
            continue
        sources.append(Source(loc, src.file.nrows, src.schema))
    if problems:
        raise UsageError("cannot convert: " + "; ".join(problems))
    return sources


def _listed(target: Location) -> list:
    """Everything below the target directory (nothing when it does not exist yet)."""
    return list_tree(target) if kind_of(target) == "dir" else []


def _max_write_id(target: Location, paths: list | None = None) -> int:
    """The highest write id of any base or delta below the target (0 when there is none)."""
    top = 0
    for p in _listed(target) if paths is None else paths:
        if not p.is_dir or any(is_hidden(part) for part in p.path.split("/")):
            continue  # a staging directory left by a killed convert holds no committed id
        name = p.name
        try:
            acid = parse_dir_name(name, "4")
        except ValueError:
            continue
        if isinstance(acid, (Base, Delta)):
            top = max(top, acid.max_write_id)
    return top


def existing_deltas(target: Location, write_id: int, statement: int,
              paths: list | None = None, exact: bool = False) -> list[str]:
    if exact:
        name = str(Delta(write_id, write_id, statement))
        return [p.path for p in (_listed(target) if paths is None else paths) if p.path == name]
    clashes = []
    for p in _listed(target) if paths is None else paths:
        if not p.is_dir or "/" in p.path:
            continue
        try:
            acid = parse_dir_name(p.path, "4")
        except ValueError:
            continue
        if isinstance(acid, Delta) and not acid.delete and \
                acid.min_write_id <= write_id <= acid.max_write_id:
            clashes.append(p.path)
        elif isinstance(acid, Base) and acid.write_id >= write_id:
            clashes.append(p.path)
    return clashes


def plan(source_patterns: Sequence[str | Location], opts: ConvertOptions, *,
         settle: bool = False) -> Plan:
    """The conversion of the sources (the user's patterns; a ``Location`` is taken as the one
    file it names, never globbed), with every check that can be made before writing;
    ``settle``: a convert killed with its commit in flight is rolled back first."""
    table = resolve(opts.table)
    kind = kind_of(table)
    if kind == "file":
        raise UsageError(f"{opts.table}: is a file, not a table or partition directory")
    if kind == "missing":
        raise UsageError(f"{opts.table}: no such directory (create the table first)")
    target = table.child(opts.partition.strip("/")) if opts.partition else table
    for what, loc in (("--table/--partition", target),
                      ("--move-sources", resolve(opts.move_sources) if opts.move_sources
                       else None)):
        if loc is not None and not is_utf8(loc.path):
            raise UsageError(f"{what} {loc.url!r}: a name that is not UTF-8 cannot be written "
                             "(Hive's own paths are UTF-8): rename it")
    if opts.buckets is not None:
        if opts.buckets < 1 or not opts.bucket_by:
            raise UsageError("--buckets needs a positive count and --bucket-by columns")
    if not 0 <= opts.statement_id <= 4095:
        raise UsageError("--statement-id must be between 0 and 4095")
    locs, named_twice = dedupe(expand_sources(source_patterns))
    sources = _read_sources(locs)
    schema, mapping = map_schema(sources, opts.schema, opts.by_position)
    kinds = []
    if opts.buckets:
        names = {f.name.lower(): f for f in schema}
        missing = [c for c in opts.bucket_by if c.lower() not in names]
        if missing:
            raise UsageError(f"--bucket-by: no column {', '.join(map(repr, missing))}")
        for c in opts.bucket_by:
            kinds.append(bucket_kind_of(names[c.lower()].type))
    if settle:
        _settle(target)
    # One listing of the target serves every check below (a remote table: one round trip).
    listed = _listed(target)
    write_id = parse_write_id(opts.write_id, table, listed if target is table else None)
    clashes = existing_deltas(target, write_id, opts.statement_id, listed, opts.another_statement)
    if clashes:
        raise UsageError(f"write id {write_id} is already used in {target.url}: "
                         f"{', '.join(clashes)} (pick another, or --write-id auto)")
    require_table_fit(table, schema, opts.hive_version, opts.insert_only, bool(opts.metastore),
                      listed if target is table else None)
    directory = str(Delta(write_id, write_id, opts.statement_id))
    p = Plan(opts, sources, target, write_id, directory, schema, mapping, kinds,
             sum(s.rows for s in sources), named_twice=named_twice)
    p.fingerprints = [fingerprint(s.loc) for s in sources]
    if not opts.allow_duplicates:
        refuse_duplicates(sources, p.fingerprints, target, listed)
    if opts.move_sources:
        p.moves = move_targets(sources, resolve(opts.move_sources), table,
                               [s for s in source_patterns if isinstance(s, str)],
                               manifest_name(directory))
    if not opts.buckets:
        p.groups = group_sources([src.rows for src in sources], opts.max_file_rows)
        n = max(1, sum(max(1, -(-g.rows // opts.max_file_rows)) for g in p.groups))
        if n > 4096:
            raise UsageError(f"{n} bucket files would exceed the 4096 a BucketCodec can number: "
                             "raise --max-file-rows")
        p.files = [opts.file_format.file_name(i) for i in range(n)]
    return p



def parse_write_id(text: str, table: Location, paths: list | None = None) -> int:
    """--write-id: a number, or 'auto' for one above every write id in the table. Write ids
    are Java longs."""
    if text == "auto":
        top = _max_write_id(table, paths)
        if top >= LONG_MAX:
            raise UsageError(f"--write-id auto: {table.url} already holds write id {top}, the "
                             "largest a write id (a Java long) can be")
        return top + 1
    try:
        write_id = int(text)
    except ValueError:
        raise UsageError(f"--write-id must be a number or 'auto', not {text!r}") from None
    if not 1 <= write_id <= LONG_MAX:
        raise UsageError(f"--write-id must be between 1 and {LONG_MAX} (a Java long), "
                         f"not {write_id}")
    return write_id


def bucket_kind_of(t: pa.DataType) -> str:
    for kind, arrow in ORC_TO_ARROW.items():
        if arrow == t:
            return kind
    raise UsageError(f"bucketing on a {t} column is not supported")


# ------------------------------------------------------------------------------------------------
# Writing


def _source_batches(p: Plan) -> Iterator[tuple[int, pa.Table]]:
    """(source index, batch) in source order, columns renamed and cast to the table's."""
    for index, source in enumerate(p.sources):
        for table in batches_of(source.loc, p.mapping, p.schema):
            yield index, table


def batches_of(loc: Location, mapping: list[tuple[str, str, str]],
             schema: pa.Schema) -> Iterator[pa.Table]:
    """One source's rows in file order, columns renamed and cast to the table's."""

    names = [s for _, s, _ in mapping]
    for batch in fragment_batches(orc_fragment(loc.fs, loc.path), loc.url, batch_size=1 << 20, columns=names,
                                  use_threads=True, batch_readahead=0, fragment_readahead=0):
        table = pa.Table.from_batches([batch]).rename_columns([t for t, _, _ in mapping])
        yield table.cast(schema)


class GroupWriter:
    """The bucket files of one group of sources (unbucketed tables): row i of the group goes to
    bucket ``first_bucket + i // max_file_rows``. Fed in source order, then in file order."""

    def __init__(self, options: ConvertOptions, write_id: int, first_bucket: int):
        self.options, self.first_bucket = options, first_bucket
        self.writers = BucketWriters(options.file_format, write_id)
        self.rows = 0  # rows of the group so far

    def write(self, table: pa.Table) -> None:
        r = self.options.max_file_rows
        start = 0
        while start < table.num_rows:
            at = self.rows + start
            bucket = self.first_bucket + at // r
            piece = table.slice(start, r - at % r)
            self.writers[bucket].write(piece)
            start += piece.num_rows
        self.rows += table.num_rows


def bucket_ids(table: pa.Table, p: Plan) -> pa.Array:
    """The bucket of every row (bucketed tables)."""
    o = p.options
    assert o.buckets is not None, "bucketed tables only"
    return hive_buckets(table, o.bucket_by, p.bucket_kinds, o.buckets, o.bucketing_version)


def hive_buckets(table: pa.Table, by: Sequence[str], kinds: Sequence[str], buckets: int,
                 version: int) -> pa.Array:
    """The bucket Hive's hash of the columns ``by`` (of Hive types ``kinds``) puts each row
    in, with bucketing ``version``."""
    cols = [table.column(c).to_pylist() for c in by]
    return pa.array([bucket_number(values, list(kinds), buckets, version)
                     for values in zip(*cols)], pa.int32())


@dataclass
class Summary:
    directory: str
    write_id: int
    files: dict[str, int] = field(default_factory=dict)  # bucket file -> rows
    bytes: int = 0
    elapsed: float = 0.0
    moved: list[dict] = field(default_factory=list)
    manifest: str | None = None
    transaction: int | None = None  # the metastore transaction that committed it
    journal: str | None = None  # the run's journal (``acidtool undo`` takes the delta back)

    @property
    def rows(self) -> int:
        return sum(self.files.values())

    def as_dict(self) -> dict:
        out = {"directory": self.directory, "write_id": self.write_id, "files": self.files,
               "rows": sum(self.files.values()), "bytes": self.bytes,
               "elapsed_seconds": round(self.elapsed, 3), "moved_sources": self.moved,
               "manifest": self.manifest, "journal": self.journal}
        if self.transaction is not None:
            out["transaction"] = self.transaction
        return out


def write_files(p: Plan, progress: Callable[[int], None] | None = None
                ) -> dict[str, tuple[bytes, int]]:
    """Every bucket file's finished bytes, in memory, with its row count."""
    o = p.options
    writers = BucketWriters(o.file_format, p.write_id)
    done = 0
    if o.buckets:
        for _, table in _source_batches(p):
            ids = bucket_ids(table, p)
            for b in pc.unique(ids).to_pylist():
                writers[b].write(table.filter(pc.equal(ids, b)))
            done += table.num_rows
            if progress:
                progress(done)
    else:
        for g in p.groups:
            group = GroupWriter(o, p.write_id, g.first_bucket)
            for i in g.sources:
                for table in batches_of(p.sources[i].loc, p.mapping, p.schema):
                    group.write(table)
                    done += table.num_rows
                    if progress:
                        progress(done)
            writers.update(group.writers)
    if not writers:  # no rows: Hive's writers still leave an (empty) bucket file
        writers[0] = BucketWriter(o.file_format, p.write_id, 0, p.schema)
    return {o.file_format.file_name(b): (w.finish(), w.rows)
            for b, w in sorted(writers.items())}


# Writes the bucket files into the staging directory it is given; returns name -> (rows, bytes).
StagedWriter = Callable[[Location], "dict[str, tuple[int, int, str]]"]


def commit(p: Plan, files: dict[str, tuple[bytes, int]] | StagedWriter, started: float,
           staging: Location | None = None) -> Summary:
    """Write into the staging directory, then rename the delta into place. ``files`` is every
    bucket file's bytes and row count (``write_files``), or a function that writes them there
    itself (the Spark paths, whose workers write their files directly; ``staging``: the hidden
    directory they wrote into, on the table's filesystem). Whatever happens before the rename
    (an error, SIGINT, SIGTERM), the staging directory is removed and the table is as it was;
    an interruption after it raises ``AfterCommitError``."""
    fs, o = p.target.fs, p.options
    staging = staging or p.target.child(f"{ACIDTOOL_STAGING_PREFIX}{uuid.uuid4().hex[:12]}")
    staged = staging.child(p.directory)
    final = p.target.child(p.directory)
    summary = Summary(p.directory, p.write_id)
    digests: dict[str, str] = {}  # a bucket file's SHA-256, for the journal
    try:
        fs.create_dir(staged.path, recursive=True)
        if callable(files):
            for name, (rows, size, digest) in sorted(files(staged).items()):
                summary.files[name] = rows
                summary.bytes += size
                digests[name] = digest
        else:
            for name, (data, rows) in files.items():
                with fs.open_output_stream(staged.join(name)) as out:
                    out.write(data)
                summary.files[name] = rows
                summary.bytes += len(data)
                digests[name] = hashlib.sha256(data).hexdigest()
        if o.version.writes_acid_version and not o.insert_only:
            with fs.open_output_stream(staged.join(ACID_VERSION_FILE)) as out:
                out.write(b"2")
        if p.fingerprints:
            with fs.open_output_stream(staged.join(SOURCES_FILE)) as out:
                out.write(record(p.sources, p.fingerprints, p.write_id))
        place = PlaceDir(staged, final, _hashes(staged, digests))
        fault_point()  # everything staged
        # (a convert killed between its journal's start and its end is rolled back by the
        # next one, first; `acidtool undo JOURNAL` takes a finished one back)
        with Commit(p.target, "convert", wait=LOCK_WAIT, recover=(held_by_another, "convert")) as run:
            fault_point()  # locked
            _guard(p, final)
            raise_if_terminated()  # a SIGTERM whose exception Python dropped still stops us
            require_inside(table_of(p.target), final, what="the commit")
            summary.journal = _journal(run, p, staging)
            # (the staging directory, made before: undone, it goes with what it holds)
            run.steps({"a1": [Scratch(staging), place]})
            try:
                with run.action("a1", swallow=False) as action:
                    action.take([place], shield=True, journaled=True)
            except OSError:
                if kind_of(final) != "missing" and kind_of(staged) != "missing":
                    raise ConvertError(_raced(p, final)) from None
                raise
            fault_point()  # committed, the lock still held
            run.end()
    except BaseException as exc:
        # The rename is the commit: whether it happened is read from the filesystem, so that
        # an interruption between it and the next line is told right.
        if kind_of(final) != "missing" and kind_of(staged) == "missing":
            message = f"{final.url} is committed; then: {what_failed(exc)}"
            if isinstance(exc, KeyboardInterrupt):
                raise Interrupted(message, exit_signal(exc)) from None
            raise AfterCommitError(message) from exc
        raise
    finally:
        with shielded():  # a second signal does not leave half a staging directory
            try:
                fs.delete_dir(staging.path)
            except (OSError, FileNotFoundError):
                pass
    summary.elapsed = time.perf_counter() - started
    return summary


# Seconds a commit waits for another writer's lock on the table (a convert holds it for its
# checks and one rename; a repair for its whole apply).
LOCK_WAIT = 30.0


def _guard(p: Plan, final: Location) -> None:
    """The checks of the plan made again under the table's lock, against what the table holds
    now: no delta of the write id was committed meanwhile, and no source's rows were (another
    convert or a repair of the same bytes)."""
    listed = _listed(p.target)
    o = p.options
    clashes = existing_deltas(p.target, p.write_id, o.statement_id, listed, o.another_statement)
    if clashes or kind_of(final) != "missing":
        raise ConvertError(_raced(p, final))
    if not o.allow_duplicates:
        try:
            refuse_duplicates(p.sources, p.fingerprints, p.target, listed)
        except UsageError as exc:
            raise ConvertError(f"while this convert ran, another writer committed the same "
                               f"rows: {exc}") from None


def _raced(p: Plan, final: Location) -> str:
    return (f"another writer committed {final.url} (write id {p.write_id}) while this convert "
            "ran; nothing of this run was committed (run it again: --write-id auto takes the "
            "next id)")


def what_failed(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    return str(exc) or type(exc).__name__


def _settle(target: Location) -> None:
    """A convert killed with its commit in flight (its delta renamed in, the journal not
    saying so) left the table's lock: rolled back before the checks, which would take its
    delta for the sources converted already (another writer's run: refused, as later)."""
    from ...io.lock import LOCK_FILE

    if kind_of(table_of(target).child(LOCK_FILE)) == "file":
        with Commit(target, "convert", wait=LOCK_WAIT, recover=(held_by_another, "convert")):
            pass


def _journal(run: Commit, p: Plan, staging: Location) -> str:
    """The run's journal begun (``acidtool undo`` takes the delta back out): its path. It
    names the staging directory from its first record: undo of a run killed before it
    journaled its steps removes it."""
    from ...io.journal import JOURNAL_VERSION, default_journal, new_run_id

    run_id = new_run_id()
    path = p.options.journal or default_journal("convert", run_id)
    moved: dict = {"sources_moved_to": p.moves[0].url.rsplit("/", 1)[0]} if p.moves else {}
    run.begin(path, record="begin", version=JOURNAL_VERSION, run=run_id,
              path=table_of(p.target).url, quarantine="", hive_version=str(p.options.version),
              command="convert", write_id=p.write_id, scratch=staging.url, **moved)
    return path


def _hashes(staged: Location, known: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """Each staged file's SHA-256 (undo leaves a delta whose files changed): the bucket
    files' as they were written (``known``), the others' (a few bytes each) read."""
    from ...io.fileops import list_names
    from ...io.journal import sha256_of

    return tuple(sorted((name, known.get(name) or sha256_of(staged.child(name)) or "")
                        for name in list_names(staged)))


@dataclass(frozen=True)
class ConvertResult:
    plan: Plan
    summary: Summary | None  # None for a dry run: nothing was written


def exit_signal(exc: BaseException) -> int:
    return 15 if isinstance(exc, Terminated) else 2

"""``acidtool validate``: gather facts about table directories (in parallel) and run the rules.

Listing is one recursive call per PATH; footers (``footers.py``), markers and (at --level rows)
the five ACID columns (``rowscan.py``) are read on a thread pool (``--jobs``) where reads wait
(object stores, HDFS, network mounts), and a large local partitioned table is split among
processes, since reading a local disk is CPU bound. Nothing is ever written.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Callable, Sequence

from .._gc import paused_gc
from ..core.errors import PathError, UsageError
from ..core.facts import Context, PartitionFacts, TableFacts, Thresholds
from ..core.listing import UNKNOWN_SIZE, Listing, markers_needed, split_links
from ..core.names import ACID_VERSION_FILE, FLUSH_LENGTH_SUFFIX
from ..core.partitions import (
    PartitionListing,
    discover_tables,
    is_partition_component,
    split_partitions,
)
from ..core.rules import (
    REGISTRY,
    SEVERITIES,
    Finding,
    add_gathered,
    check_partitions,
    check_table,
    data_file_names,
    run_rules,
)
from ..core.select import select, with_sizes
from ..core.snapshot import Snapshot, make_snapshot
from ..io.footers import read_footer_and_bytes
from ..io.fs import (
    Location,
    kind_of,
    list_tree,
    read_bytes,
    require_dir,
    resolve,
    size_if_any,
)
from .ls import listed_partition, require_not_acid_dir, tree_partitions


@dataclass(frozen=True)
class ValidateOptions:
    level: str = "metadata"
    snapshot: Snapshot = field(default_factory=make_snapshot)
    snapshot_given: bool = False
    recursive: bool = False
    jobs: int = 8
    schema: str | None = None
    thresholds: Thresholds = field(default_factory=Thresholds)
    table_name: str | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    spark: bool = False  # shares of partitions checked by Spark's executors (spark_jobs)
    master: str | None = None

    def codes(self) -> list[str]:
        return select_codes(self.select, self.ignore)


def select_codes(select: Sequence[str] | None, ignore: Sequence[str]) -> list[str]:
    """Rule codes after --select / --ignore; each entry is a code or a prefix (ACID01)."""
    def matching(prefixes):
        out = set()
        for prefix in prefixes:
            found = {c for c in REGISTRY if c.startswith(prefix.strip().upper())}
            if not found:
                raise UsageError(f"no rule matches {prefix!r} (see `acidtool rules`)")
            out |= found
        return out
    chosen = matching(select) if select else set(REGISTRY)
    return sorted(chosen - matching(ignore))


@dataclass
class Report:
    paths: list[str]
    options: ValidateOptions
    findings: list[Finding] = field(default_factory=list)
    tables: int = 0
    partitions: int = 0
    files: int = 0
    table_roots: list[str] = field(default_factory=list)  # each table's directory, as named

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for f in self.findings if f.severity == s) for s in SEVERITIES}

    def failed(self, fail_on: str) -> bool:
        limit = SEVERITIES.index(fail_on)
        return any(SEVERITIES.index(f.severity) <= limit for f in self.findings)


def _files_to_read(listing: Listing, state, hive_version: str
                   ) -> tuple[list[tuple[str, int, str | None]], list[str]]:
    """What to read at --level metadata: (relative path, size, flush side file) of the ORC files
    whose footers matter (data files of live ACID directories and the original files Hive
    reads), and the version markers of those directories (ACID005 judges their contents; not
    under Hive 2, which writes none)."""
    files, markers = [], []
    for e in state.entries:
        if e.kind in ("base", "delta", "delete_delta") and e.status in ("selected", "ignored"):
            in_dir = {f.path: f.size for f in e.files}
            for name in data_file_names(e):
                side = name + FLUSH_LENGTH_SUFFIX
                files.append((f"{e.name}/{name}", in_dir[name],
                              f"{e.name}/{side}" if side in in_dir else None))
            if ACID_VERSION_FILE in in_dir and hive_version.writes_acid_version:
                markers.append(f"{e.name}/{ACID_VERSION_FILE}")
    if state.base is None and state.original_files:
        sizes = {p.path: p.size for p in listing.paths if not p.is_dir}
        files.extend((rel, sizes.get(rel, 0), None) for rel in state.original_files)
    return files, markers


class _Progress:
    """A one-line counter on stderr (only when it is a terminal)."""

    def __init__(self, total: int, enabled: bool, what: str = "read {done}/{total} files",
                 every: int = 50):
        self.total, self.done, self.enabled = total, 0, enabled and total > 0
        self.what, self.every = what, every
        self.lock = threading.Lock()

    def tick(self, count: int = 1) -> None:
        if not self.enabled:
            return
        with self.lock:
            before, self.done = self.done, self.done + count
            if self.done == self.total or before // self.every != self.done // self.every:
                text = self.what.format(done=self.done, total=self.total)
                sys.stderr.write(f"\racidtool: {text}")
                if self.done == self.total:
                    sys.stderr.write("\n")
                sys.stderr.flush()


@dataclass
class _Pending:
    """A partition whose listing and selection are done and whose files are being read."""

    loc: Location
    name: str
    listing: Listing
    state: object
    todo: list
    markers: list[str]
    sized: bool  # False: the listing left out sizes that reading the files learns
    links: tuple[str, ...] = ()  # symbolic links below the partition (never followed)
    files: dict = field(default_factory=dict)
    rows: dict = field(default_factory=dict)
    acid_markers: dict = field(default_factory=dict)

    def facts(self) -> PartitionFacts:
        state = self.state if self.sized else with_sizes(self.state, self._sizes())
        return PartitionFacts(self.loc.url, self.name, state,
                              MappingProxyType(self.acid_markers), MappingProxyType(self.files),
                              MappingProxyType(self.rows), self.links)

    def _sizes(self) -> dict[str, int]:
        """The sizes of the files listed without one: as their reads found them, else (a
        marker read whole) its length, else a stat."""
        sizes = {rel: facts.size for rel, facts in self.files.items()}
        for rel, content in self.acid_markers.items():
            if len(content) < MARKER_BYTES:
                sizes[rel] = len(content)
        for rel, content in self.listing.markers.items():
            sizes[rel] = len(content)
        for info in self.listing.paths:
            if info[1] == UNKNOWN_SIZE and info[0] not in sizes:
                sizes[info[0]] = size_if_any(self.loc, info[0])
        return sizes


MARKER_BYTES = 16  # what is read of an _orc_acid_version marker (it holds one digit)


def _sizes_listed(loc: Location, opts: ValidateOptions) -> bool:
    """Whether a listing for validation states every size. Not at --level metadata or rows on
    a local disk: there the sizes of the files in ACID directories are learnt as they are read
    (a stat per file costs a tenth of checking a small one). Remote listings state them all."""
    return opts.level == "names" or not loc.is_local


def _plan_all(loc: Location, parts: list[PartitionListing], opts: ValidateOptions,
              pool: ThreadPoolExecutor | None = None) -> list[_Pending]:
    """The partitions ``parts`` of the table at ``loc``, selected and with what to read. The
    markers the selections read (a base's ``_metadata_acid``) are read first, on ``pool``'s
    threads where one is given (a remote store: a round trip each, overlapping)."""
    split = [split_links(part.paths) for part in parts]
    parts = [PartitionListing(part.name, tuple(paths)) for part, (paths, _) in zip(parts, split)]
    locs = [loc.child(part.name) if part.name else loc for part in parts]
    wanted = [(i, rel) for i, part in enumerate(parts)
              for rel in markers_needed(part.paths, opts.snapshot.hive_version)]
    markers: list[dict[str, bytes]] = [{} for _ in parts]
    mapper = pool.map if pool is not None and len(wanted) > 1 else map
    for (i, rel), content in zip(wanted, mapper(lambda w: read_bytes(locs[w[0]], w[1]),
                                                wanted)):
        markers[i][rel] = content
    return [_plan(ploc, part, markers[i], opts, split[i][1])
            for i, (ploc, part) in enumerate(zip(locs, parts))]


def _plan(ploc: Location, part: PartitionListing, markers: dict[str, bytes],
          opts: ValidateOptions, links: tuple[str, ...] = ()) -> _Pending:
    snap = opts.snapshot
    listing = Listing(part.paths, MappingProxyType(markers), root=ploc.url)
    state = select(listing, snap.write_ids, snap.txns, snap.hive_version,
                   insert_only=snap.insert_only)
    todo, acid_markers = [], []
    if opts.level != "names":
        todo, acid_markers = _files_to_read(listing, state, snap.hive_version)
    return _Pending(ploc, part.name, listing, state, todo, acid_markers,
                    _sizes_listed(ploc, opts), links)


# How many threads read footers. A remote store is latency bound: ``--jobs`` threads keep its
# round trips overlapping. On a local disk a footer read is a few microseconds of I/O and the
# rest is Python under the GIL, where threads only add hand-offs (8 threads took 2.3 to 2.8
# times as long as one over bench_validate.py's files, and as long again at --level rows). But
# a local path may be a network mount (NFS, a FUSE-mounted object store) or a cold disk: there
# the first PROBE_FILES are read on one thread and timed, and when the time spent waiting
# (wall clock minus this thread's CPU time) passes WAIT_PER_FILE a file, the rest go to
# ``--jobs`` threads.
PROBE_FILES = 32
WAIT_PER_FILE = 200e-6  # seconds


def _waited(work: Callable[[], object]) -> float:
    """Seconds ``work`` spent not running on this thread's CPU (waiting for I/O)."""
    wall, cpu = time.perf_counter(), time.thread_time()
    work()
    return (time.perf_counter() - wall) - (time.thread_time() - cpu)


def _read_all(pending: list[_Pending], opts: ValidateOptions, pool: ThreadPoolExecutor,
              progress: bool, remote: bool) -> None:
    """Read every footer (and row scan, and marker) of every partition on one pool."""
    bar = _Progress(sum(len(p.todo) for p in pending), progress)
    rows = opts.level == "rows"
    if rows:  # pyarrow is imported for row scans only
        from .rowscan import scan_rows

    tick = bar.enabled  # a call per file saved where nothing is shown

    def read(p: _Pending, rel: str, size: int, side: str | None) -> None:
        facts, data = read_footer_and_bytes(p.loc, rel, size, side)
        p.files[rel] = facts
        if rows and facts.event_ranges is not None:
            p.rows[rel] = scan_rows(p.loc, rel, facts, data)
        if tick:
            bar.tick()

    jobs = [(p, *item) for p in pending for item in p.todo]
    threads = opts.jobs if remote else 1
    if not remote and opts.jobs > 1 and len(jobs) > PROBE_FILES:
        probe, jobs = jobs[:PROBE_FILES], jobs[PROBE_FILES:]
        if _waited(lambda: [read(*job) for job in probe]) > WAIT_PER_FILE * len(probe):
            threads = opts.jobs
    if threads <= 1:  # no hand-offs at all
        for job in jobs:
            read(*job)
    else:
        # Files go to the threads in small batches: a thread hand-off per file costs more
        # than a local footer read; a batch still keeps a remote store's round trips
        # overlapping. Each file's facts land in its own key of its partition's dicts.
        batch = max(1, min(16, len(jobs) // (threads * 4) or 1))
        for _ in pool.map(lambda chunk: [read(*job) for job in chunk],
                          [jobs[i:i + batch] for i in range(0, len(jobs), batch)]):
            pass
    markers = [(p, rel) for p in pending for rel in p.markers]
    mapper = pool.map if threads > 1 else map
    for (p, rel), content in zip(markers, mapper(lambda m: read_bytes(m[0].loc, m[1],
                                                                      MARKER_BYTES), markers)):
        p.acid_markers[rel] = content


def validate(paths: Sequence[str], opts: ValidateOptions, *, progress: bool = False) -> Report:
    report = Report(list(paths), opts)
    ctx = Context(opts.snapshot.hive_version, opts.level, opts.snapshot_given, opts.schema,
                  opts.thresholds, opts.table_name, opts.snapshot.insert_only)
    codes = opts.codes()
    if opts.level == "rows":  # imported once here, not once in every process it forks
        from . import rowscan  # noqa: F401
    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        for path in paths:
            loc = resolve(path)
            require_dir(loc)
            if not opts.recursive:
                require_not_acid_dir(loc)
            tables = report.tables
            # Listing, footers and rules make a few objects per file and no reference
            # cycles: the collector's scans of a growing heap would only cost time.
            with paused_gc():
                _validate_path(loc, opts, ctx, codes, pool, progress, report)
            if opts.recursive and report.tables == tables:
                # A CI job pointed at the wrong directory must not go green.
                raise PathError(f"no ACID table or partition found under {path}")
    report.findings.sort(key=lambda f: (f.path, f.code, f.message))
    return report


def _validate_path(loc: Location, opts: ValidateOptions, ctx: Context, codes: list[str],
                   pool: ThreadPoolExecutor, progress: bool, report: Report) -> None:
    processes = _processes(loc, opts)
    if opts.spark and opts.recursive:
        _validate_tree_on_spark(loc, opts, ctx, codes, progress, report)
        return
    if loc.is_local and not opts.recursive and not opts.spark:
        top = _top_partitions(loc)
        # Each process lists its own share too. In one process as well, this beats one
        # listing of the tree: paths come relative to their partition, with nothing to split,
        # and each share's facts are let go once its partitions are checked.
        if len(top) >= SHARE_MIN_PARTITIONS:
            work = functools.partial(_check_subtrees, loc, opts=opts, ctx=ctx, codes=codes)
            _in_processes(top, work, processes, 1, progress, report, ctx, codes,
                          "top-level partition directories")
            return
    tree = list_tree(loc, sizes=_sizes_listed(loc, opts))
    if opts.recursive:
        tables = [(t.root, list(t.partitions), []) for t in discover_tables(tree)]
    else:
        parts, stray = split_partitions(tree)
        tables = [("", parts, stray)]
    # Many partitions (a deep or remote table, a warehouse tree) are checked share by share
    # too, in processes where they can be forked: memory then holds one share's facts.
    if sum(len(parts) for _, parts, _ in tables) >= SHARE_MIN_PARTITIONS or opts.spark:
        units = [(i, part) for i, (_, parts, _) in enumerate(tables) for part in parts]
        work = functools.partial(_check_listed, loc, [root for root, _, _ in tables],
                                 opts=replace(opts, spark=False), ctx=ctx, codes=codes,
                                 remote=not loc.is_local)
        _in_processes(units, work, processes, len(tables), progress, report, ctx, codes,
                      "partitions", (opts.master or "") if opts.spark else None)
        report.table_roots.extend(loc.child(r).url if r else loc.url for r, _, _ in tables)
        return
    threads = pool if not loc.is_local else None
    planned = [(loc.child(root) if root else loc,
                _plan_all(loc.child(root) if root else loc, parts, opts, threads), stray)
               for root, parts, stray in tables]
    _read_all([p for _, ps, _ in planned for p in ps], opts, pool, progress,
              remote=not loc.is_local)
    for tloc, pending, stray in planned:
        report.table_roots.append(tloc.url)
        table = TableFacts(tloc.url, tuple(p.facts() for p in pending),
                           tuple(s.path for s in stray))
        report.findings.extend(run_rules(table, ctx, codes))
        report.tables += 1
        report.partitions += len(pending)
        report.files += sum(len(p.files) for p in pending)


# ------------------------------------------------------------------------------------------------
# Many partitions: share by share, in processes where they help
#
# A table with many partitions (or a --recursive tree with many) is checked a share of the
# partitions at a time: each share gives back its findings and what the table rules gather,
# which are judged once every share is in, and its facts are let go, so memory holds one
# share's facts rather than a whole warehouse's footers.
#
# Reading a local disk is CPU bound, and the GIL keeps threads to one core: there the shares
# go to up to --jobs processes, one a CPU at most, this one included. For one table, each
# process also lists its own top-level partition directories. Processes are forked (Linux),
# so nothing is imported again. With --jobs 1, or on an object store (whose reads wait, and
# go to threads), this process checks every share in turn.

# Fewer partitions are checked at once: forking would cost more than it saves, and their
# footers are few enough to hold together.
SHARE_MIN_PARTITIONS = 16
CHUNK_MAX = 16  # units (partitions, or top-level partition directories) in one share at most

# What a share of the work gives back, for each table it touched: (table index, findings,
# what table rules gather, partitions, files).
_Checked = list[tuple[int, list[Finding], dict[str, list], int, int]]


def _cpus() -> int:
    return len(os.sched_getaffinity(0))


def _processes(loc: Location, opts: ValidateOptions) -> int:
    if opts.jobs < 2 or not loc.is_local or not sys.platform.startswith("linux") or \
            multiprocessing.current_process().daemon:
        return 1  # a daemonic process (a pool's worker: Celery, Airflow...) may not fork any
    return min(opts.jobs, _cpus())


def _top_partitions(loc: Location) -> list[str]:
    """The ``k=v`` directories directly in a local table directory (none: not partitioned).
    Everything else there belongs to no partition (split_partitions: stray)."""
    with os.scandir(loc.path) as entries:
        return sorted(e.name for e in entries if is_partition_component(e.name) and e.is_dir())


def _check_subtrees(loc: Location, names: list[str], opts: ValidateOptions, ctx: Context,
                    codes: list[str]) -> _Checked:
    """The partitions at and below the top-level partition directories ``names`` of one
    table, listed here."""
    parts = []
    for name in names:
        try:
            tree = list_tree(loc.child(name), sizes=_sizes_listed(loc, opts))
        except PathError:
            if kind_of(loc.child(name)) != "missing":
                raise
            continue  # removed since the table was listed (a cleaner at work), as in list_tree
        # A partition directory's listing splits as the whole table's would below it.
        parts.extend(PartitionListing(f"{name}/{part.name}" if part.name else name, part.paths)
                     for part in split_partitions(tree)[0])
    with ThreadPoolExecutor(max_workers=opts.jobs) as pool:  # threads only if reads wait
        return [(0, *_check_pending(_plan_all(loc, parts, opts), opts, ctx, codes, pool))]


def _validate_tree_on_spark(loc: Location, opts: ValidateOptions, ctx: Context,
                            codes: list[str], progress: bool, report: Report) -> None:
    """``--recursive --spark``: the driver finds the partitions (``ls.tree_partitions``);
    each executor lists its share's partitions and checks them (``_check_unlisted``)."""
    tables = tree_partitions(loc)
    units = [(i, name, nested) for i, (_, parts) in enumerate(tables) for name, nested in parts]
    roots = [root for root, _ in tables]
    work = functools.partial(_check_unlisted, loc, roots, opts=replace(opts, spark=False),
                             ctx=ctx, codes=codes, remote=not loc.is_local)
    _in_processes(units, work, 1, len(tables), progress, report, ctx, codes, "partitions",
                  opts.master or "")
    report.table_roots.extend(loc.child(r).url if r else loc.url for r in roots)


def _check_unlisted(loc: Location, roots: list[str], units: list[tuple[int, str, tuple]],
                    opts: ValidateOptions, ctx: Context, codes: list[str],
                    remote: bool = False) -> _Checked:
    """Partitions named, not listed: (table index, partition name, the partitions nested in
    it) listed here, then checked."""
    listed = [(index, listed_partition(loc, roots[index], name, nested,
                                       _sizes_listed(loc, opts)))
              for index, name, nested in units]
    return _check_listed(loc, roots, listed, opts, ctx, codes, remote)


def _check_listed(loc: Location, roots: list[str], units: list[tuple[int, PartitionListing]],
                  opts: ValidateOptions, ctx: Context, codes: list[str],
                  remote: bool = False) -> _Checked:
    """Listed partitions, each with the index of its table (whose directory below ``loc`` is
    in ``roots``); ``remote`` where ``loc`` is not on a local disk (reads go to threads)."""
    by_table: dict[int, list[PartitionListing]] = {}
    for index, part in units:
        by_table.setdefault(index, []).append(part)
    out = []
    with ThreadPoolExecutor(max_workers=opts.jobs) as pool:  # threads only if reads wait
        for index, parts in by_table.items():
            tloc = loc.child(roots[index]) if roots[index] else loc
            pending = _plan_all(tloc, parts, opts, pool if remote else None)
            out.append((index, *_check_pending(pending, opts, ctx, codes, pool, remote)))
    return out


def _check_pending(pending: list[_Pending], opts: ValidateOptions, ctx: Context,
                   codes: list[str], pool: ThreadPoolExecutor, remote: bool = False
                   ) -> tuple[list[Finding], dict[str, list], int, int]:
    _read_all(pending, opts, pool, False, remote=remote)
    found, gathered = check_partitions((p.facts() for p in pending), ctx, codes)
    return found, gathered, len(pending), sum(len(p.files) for p in pending)


def _in_processes(units: list, work: Callable[[list], _Checked], processes: int, tables: int,
                  progress: bool, report: Report, ctx: Context, codes: list[str],
                  what: str, spark: str | None = None) -> None:
    """``work`` over chunks of ``units`` (``what`` they are, for the progress line) in up to
    ``processes`` processes (one: this process only), or as Spark tasks (``spark``: the
    master, "" for the default); then the table rules of each of the ``tables``."""
    bar = _Progress(len(units), progress, "checked {done}/{total} " + what, 1)
    gathered: list[dict[str, list]] = [{} for _ in range(tables)]

    def add(chunk: list, checked: _Checked) -> None:
        for index, found, values, partitions, files in checked:
            report.findings.extend(found)
            add_gathered(gathered[index], values)
            report.partitions += partitions
            report.files += files
        bar.tick(len(chunk))

    if spark is not None:
        from .spark_jobs import spark_map

        tick, bar.tick = bar.tick, lambda n: None  # counted as the executors' tasks finish
        for chunk, checked in spark_map(work, units, spark or None, tick=tick):
            add(chunk, checked)
    else:
        _on_this_machine(units, work, processes, add)
    for values in gathered:
        report.findings.extend(check_table(values, ctx, codes))
    report.tables += tables


def _on_this_machine(units: list, work: Callable[[list], _Checked], processes: int,
                     add: Callable[[list, _Checked], None]) -> None:
    # small enough to keep every process busy, and the progress line moving
    size = max(1, min(len(units) // (processes * 4), CHUNK_MAX))
    chunks = [units[i:i + size] for i in range(0, len(units), size)]
    # This process takes every processes-th chunk itself (it would only wait otherwise) and
    # forks one process fewer for the rest; where none can be forked (no POSIX semaphores
    # in some sandboxes), it takes them all.
    mine, theirs = chunks[::processes], [c for i, c in enumerate(chunks) if i % processes]
    pool = None
    if theirs:
        try:
            pool = multiprocessing.get_context("fork").Pool(min(processes - 1, len(theirs)))
        except (OSError, ImportError, ValueError):
            mine, theirs = chunks, []
    with pool or contextlib.nullcontext():
        results = pool.imap(work, theirs) if pool is not None else iter(())
        for chunk in mine:
            add(chunk, work(chunk))
        for chunk, checked in zip(theirs, results):
            add(chunk, checked)

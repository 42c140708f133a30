"""``acidtool validate``: gather facts about table directories (in parallel) and run the rules.

Listing is one recursive call per PATH; footers (``footers.py``), markers and (at --level rows)
the five ACID columns (``rowscan.py``) are read on a thread pool (``--jobs``) where reads wait
(object stores, HDFS, network mounts), and a large local partitioned table is split among
processes, since reading a local disk is CPU bound. Nothing is ever written. What is read is
gathered by ``facts.py``, which ``repair`` and ``compaction-plan`` share.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

from ..._gc import paused_gc
from ...core.errors import PathError
from ...core.facts import Context, TableFacts
from ...core.names import is_hidden
from ...core.partitions import (
    PartitionListing,
    discover_tables,
    is_partition_component,
    require_one_table,
    split_partitions,
)
from ...core.rules import (
    SEVERITIES,
    Finding,
    add_gathered,
    check_partitions,
    check_table,
    run_rules,
    stray_values,
)
from ...io.fs import (
    Location,
    kind_of,
    list_tree,
    require_dir,
    resolve,
)
from ...io.progress import Progress
from ...table import facts
from ...table.facts import (
    Pending,
    ValidateOptions,
    plan_all,
    read_all,
    select_codes,
)
from ...table.ls import listed_partition, require_not_acid_dir, tree_partitions

__all__ = ["Report", "ValidateOptions", "select_codes", "validate"]


@dataclass
class Report:
    paths: list[str]
    options: ValidateOptions
    findings: list[Finding] = field(default_factory=list)
    tables: int = 0
    partitions: int = 0
    files: int = 0
    table_roots: list[str] = field(default_factory=list)  # each table's directory, as named
    # (index in table_roots, what ``options.keep`` gave for one of its partitions)
    kept: list[tuple[int, object]] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for f in self.findings if f.severity == s) for s in SEVERITIES}

    def failed(self, fail_on: str) -> bool:
        limit = SEVERITIES.index(fail_on)
        return any(SEVERITIES.index(f.severity) <= limit for f in self.findings)


def validate(paths: Sequence[str], opts: ValidateOptions, *, progress: bool = False) -> Report:
    report = Report(list(paths), opts)
    ctx = Context(opts.snapshot.hive_version, opts.level, opts.snapshot_given, opts.schema,
                  opts.thresholds, opts.table_name, opts.snapshot.insert_only)
    codes = opts.codes()
    if opts.level == "rows":  # imported once here, not once in every process it forks
        from ...table import rowscan  # noqa: F401
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
            _in_processes(top, work, processes, [loc.url], progress, report, ctx, codes,
                          "top-level partition directories", strays=[_root_stray(loc)])
            return
    tree = list_tree(loc, sizes=facts.sizes_listed(loc, opts))
    tables: list[tuple[str, list[PartitionListing], list]]
    if opts.recursive:
        tables = [(t.root, list(t.partitions), []) for t in discover_tables(tree)]
    else:
        require_one_table(tree, loc.url)
        parts, stray = split_partitions(tree)
        tables = [("", parts, stray)]
    # Many partitions (a deep or remote table, a warehouse tree) are checked share by share
    # too, in processes where they can be forked: memory then holds one share's facts.
    if sum(len(parts) for _, parts, _ in tables) >= SHARE_MIN_PARTITIONS or opts.spark:
        units = [(i, part) for i, (_, parts, _) in enumerate(tables) for part in parts]
        work = functools.partial(_check_listed, loc, [root for root, _, _ in tables],
                                 opts=replace(opts, spark=False), ctx=ctx, codes=codes,
                                 remote=not loc.is_local)
        _in_processes(units, work, processes,
                      [loc.child(r).url if r else loc.url for r, _, _ in tables], progress,
                      report, ctx, codes, "partitions", (opts.master or "") if opts.spark else None,
                      [[(loc.child(root) if root else loc).url_of(s.path) for s in stray]
                       for root, _, stray in tables])
        return
    threads = pool if not loc.is_local else None
    planned = [(loc.child(root) if root else loc,
                plan_all(loc.child(root) if root else loc, parts, opts, threads), stray)
               for root, parts, stray in tables]
    read_all([p for _, ps, _ in planned for p in ps], opts, pool, progress,
              remote=not loc.is_local)
    for tloc, pending, stray in planned:
        if opts.keep is not None:
            report.kept.extend((len(report.table_roots), k) for k in opts.keep(pending))
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
# what table rules gather, partitions, files, what ``opts.keep`` gave for each partition).
_Checked = list[tuple[int, list[Finding], dict[str, list], int, int, list]]


def _cpus() -> int:
    return len(os.sched_getaffinity(0))


def _processes(loc: Location, opts: ValidateOptions) -> int:
    if opts.jobs < 2 or not loc.is_local or not sys.platform.startswith("linux") or \
            multiprocessing.current_process().daemon:
        return 1  # a daemonic process (a pool's worker: Celery, Airflow...) may not fork any
    return min(opts.jobs, _cpus())


def _root_stray(loc: Location) -> list[str]:
    """What lies directly in a local partitioned table's directory besides its partitions
    (hidden names left out), as URLs."""
    with os.scandir(loc.path) as entries:
        return sorted(loc.url_of(e.name) for e in entries
                      if not is_partition_component(e.name) and not is_hidden(e.name))


def _top_partitions(loc: Location) -> list[str]:
    """The ``k=v`` directories directly in a local table directory (none: not partitioned).
    Everything else there belongs to no partition (split_partitions: stray)."""
    with os.scandir(loc.path) as entries:
        return sorted(e.name for e in entries if is_partition_component(e.name) and e.is_dir())


def _check_subtrees(loc: Location, names: list[str], opts: ValidateOptions, ctx: Context,
                    codes: list[str]) -> _Checked:
    """The partitions at and below the top-level partition directories ``names`` of one
    table, listed here."""
    parts: list[PartitionListing] = []
    stray: list[str] = []
    for name in names:
        try:
            tree = list_tree(loc.child(name), sizes=facts.sizes_listed(loc, opts))
        except PathError:
            if kind_of(loc.child(name)) != "missing":
                raise
            continue  # removed since the table was listed (a cleaner at work), as in list_tree
        # A partition directory's listing splits as the whole table's would below it.
        found, between = split_partitions(tree)
        parts.extend(PartitionListing(f"{name}/{part.name}" if part.name else name, part.paths)
                     for part in found)
        stray.extend(loc.url_of(f"{name}/{s.path}") for s in between)
    with ThreadPoolExecutor(max_workers=opts.jobs) as pool:  # threads only if reads wait
        found_, gathered, n_parts, n_files, kept = _check_pending(
            plan_all(loc, parts, opts), opts, ctx, codes, pool)
    add_gathered(gathered, stray_values(stray, ctx, codes))
    return [(0, found_, gathered, n_parts, n_files, kept)]


def _validate_tree_on_spark(loc: Location, opts: ValidateOptions, ctx: Context,
                            codes: list[str], progress: bool, report: Report) -> None:
    """``--recursive --spark``: the driver finds the partitions (``ls.tree_partitions``);
    each executor lists its share's partitions and checks them (``_check_unlisted``)."""
    tables = tree_partitions(loc)
    units = [(i, name, nested) for i, (_, parts) in enumerate(tables) for name, nested in parts]
    roots = [root for root, _ in tables]
    work = functools.partial(_check_unlisted, loc, roots, opts=replace(opts, spark=False),
                             ctx=ctx, codes=codes, remote=not loc.is_local)
    _in_processes(units, work, 1, [loc.child(r).url if r else loc.url for r in roots],
                  progress, report, ctx, codes, "partitions", opts.master or "")


def _check_unlisted(loc: Location, roots: list[str], units: list[tuple[int, str, tuple]],
                    opts: ValidateOptions, ctx: Context, codes: list[str],
                    remote: bool = False) -> _Checked:
    """Partitions named, not listed: (table index, partition name, the partitions nested in
    it) listed here, then checked."""
    listed = [(index, listed_partition(loc, roots[index], name, nested,
                                       facts.sizes_listed(loc, opts)))
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
            pending = plan_all(tloc, parts, opts, pool if remote else None)
            out.append((index, *_check_pending(pending, opts, ctx, codes, pool, remote)))
    return out


def _check_pending(pending: list[Pending], opts: ValidateOptions, ctx: Context,
                   codes: list[str], pool: ThreadPoolExecutor, remote: bool = False
                   ) -> tuple[list[Finding], dict[str, list], int, int, list]:
    read_all(pending, opts, pool, False, remote=remote)
    found, gathered = check_partitions((p.facts() for p in pending), ctx, codes)
    kept = opts.keep(pending) if opts.keep is not None else []
    return found, gathered, len(pending), sum(len(p.files) for p in pending), kept


def _in_processes(units: list, work: Callable[[list], _Checked], processes: int,
                  roots: list[str], progress: bool, report: Report, ctx: Context,
                  codes: list[str], what: str, spark: str | None = None,
                  strays: list[list[str]] | None = None) -> None:
    """``work`` over chunks of ``units`` (``what`` they are, for the progress line) in up to
    ``processes`` processes (one: this process only), or as Spark tasks (``spark``: the
    master, "" for the default); then the table rules of each table (``roots``: their
    directories' URLs, which a unit's table index counts)."""
    bar = Progress(len(units), progress, what + " checked")
    gathered: list[dict[str, list]] = [{} for _ in roots]
    first = len(report.table_roots)
    report.table_roots.extend(roots)

    def add(chunk: list, checked: _Checked) -> None:
        for index, found, values, partitions, files, kept in checked:
            report.findings.extend(found)
            add_gathered(gathered[index], values)
            report.partitions += partitions
            report.files += files
            report.kept.extend((first + index, k) for k in kept)
        bar.tick(len(chunk))

    if spark is not None:
        from ...io.spark_jobs import spark_map

        tick = bar.tick
        setattr(bar, "tick", lambda n: None)  # noqa: B010 - told as the executors' tasks finish
        for chunk, checked in spark_map(work, units, spark or None, tick=tick):
            add(chunk, checked)
    else:
        _on_this_machine(units, work, processes, add)
    for i, values in enumerate(gathered):
        report.findings.extend(check_table(values, ctx, codes, strays[i] if strays else ()))
    report.tables += len(roots)


def _on_this_machine(units: list, work: Callable[[list], _Checked], processes: int,
                     add: Callable[[list, _Checked], None]) -> None:
    # small enough to keep every process busy, and the progress line moving
    size = max(1, min(len(units) // (processes * 4), CHUNK_MAX))
    chunks = [units[i:i + size] for i in range(0, len(units), size)]
    # Every process, this one too (it would only wait otherwise), takes the next chunk not
    # yet taken, so whoever is faster does more and the chunks are checked about in order.
    # A forked process has the chunks and ``work`` already: it is sent nothing but a task.
    # Where none can be forked (no POSIX semaphores in some sandboxes), this takes them all.
    pool, taken = None, None
    if processes > 1 and len(chunks) > 1:
        fork = multiprocessing.get_context("fork")
        try:
            taken = fork.Value("q", 0)
            with _signals_held():
                pool = fork.Pool(min(processes - 1, len(chunks) - 1), initializer=_inherit,
                                 initargs=(work, chunks, taken))
        except (OSError, ImportError, ValueError):
            pool = None
    if pool is None:
        for chunk in chunks:
            add(chunk, work(chunk))
        return
    with pool:
        # one task a chunk: each takes the next chunk, or finds that this process took it
        results = pool.imap_unordered(_next_chunk, range(len(chunks)))
        while (i := _take(taken, len(chunks))) is not None:
            add(chunks[i], work(chunks[i]))
        for done in results:
            if done is not None:
                add(chunks[done[0]], done[1])


# What a forked process of _on_this_machine inherits: (work, chunks, the next chunk's number)
_INHERITED: tuple = ()


def _inherit(work: Callable[[list], _Checked], chunks: list, taken) -> None:
    global _INHERITED
    _INHERITED = (work, chunks, taken)
    # A forked process ends at SIGTERM (the pool's terminate) and leaves SIGINT to this
    # command's own process, which ends the pool; held back since the fork (_signals_held),
    # a signal that came meanwhile is acted on now.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)


_HELD = {signal.SIGTERM, signal.SIGINT}


@contextlib.contextmanager
def _signals_held():
    """SIGTERM and SIGINT held back while the pool's processes are forked (each takes them
    back in ``_inherit``; this one at the end). Without it, a SIGTERM from the pool's own
    terminate (another share failed at once) could reach a process still in fork's clean-up
    of its threads: the CLI's handler raised there, Python dropped the exception, and the
    process went on to wait for work that never came while terminate waited for it."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _take(taken, n: int) -> int | None:
    """The number of the next chunk of ``n`` not yet taken by any process, now taken."""
    with taken.get_lock():
        i = taken.value
        if i >= n:
            return None
        taken.value = i + 1
        return i


def _next_chunk(_task: int) -> tuple[int, _Checked] | None:
    """The next chunk not yet taken, checked here (None: every chunk is taken)."""
    work, chunks, taken = _INHERITED
    i = _take(taken, len(chunks))
    return None if i is None else (i, work(chunks[i]))

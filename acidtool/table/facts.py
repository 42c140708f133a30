"""What ``validate``, ``repair`` and ``compaction-plan`` read of a table: each partition listed
and selected (``plan_all``), then its footers, markers and, at --level rows, the ACID columns
read on a thread pool (``read_all``). Read-only; the rules run over the facts it gathers.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Sequence

from ..core.errors import UsageError
from ..core.facts import PartitionFacts, Thresholds
from ..core.listing import UNKNOWN_SIZE, Listing, markers_needed, split_links
from ..core.names import ACID_VERSION_FILE, FLUSH_LENGTH_SUFFIX
from ..core.partitions import PartitionListing
from ..core.rules import REGISTRY, data_file_names
from ..core.select import AcidState, select, with_sizes
from ..core.snapshot import Snapshot, make_snapshot
from ..core.versions import HiveVersion
from ..io.footers import read_footer_and_bytes
from ..io.fs import Location, read_bytes, size_if_any
from ..io.progress import Progress


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
    # Run on the partitions of a table checked together (in the process or on the executor
    # that checked them), giving a value for each, kept in ``Report.kept``: what a caller
    # wants of the listing and selection validate makes anyway (``report`` sums each
    # partition up). A module-level function or a partial of one: it is pickled elsewhere.
    keep: Callable[[list[Pending]], list] | None = None

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


def files_to_read(listing: Listing, state: AcidState, hive_version: HiveVersion
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


@dataclass
class Pending:
    """A partition whose listing and selection are done and whose files are being read."""

    loc: Location
    name: str
    listing: Listing
    state: AcidState
    todo: list
    markers: list[str]
    sized: bool  # False: the listing left out sizes that reading the files learns
    links: tuple[str, ...] = ()  # symbolic links below the partition (never followed)
    files: dict = field(default_factory=dict)
    rows: dict = field(default_factory=dict)
    acid_markers: dict = field(default_factory=dict)
    _facts: PartitionFacts | None = field(default=None, repr=False, compare=False)

    def facts(self) -> PartitionFacts:
        """The partition's facts, once its files are read (made once: the rules and
        ``ValidateOptions.keep`` share them)."""
        if self._facts is None:
            state = self.state if self.sized else with_sizes(self.state, self._sizes())
            self._facts = PartitionFacts(self.loc.url, self.name, state,
                                         MappingProxyType(self.acid_markers),
                                         MappingProxyType(self.files),
                                         MappingProxyType(self.rows), self.links)
        return self._facts

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


def sizes_listed(loc: Location, opts: ValidateOptions) -> bool:
    """Whether a listing for validation states every size. Not at --level metadata or rows on
    a local disk: there the sizes of the files in ACID directories are learnt as they are read
    (a stat per file costs a tenth of checking a small one). Remote listings state them all."""
    return opts.level == "names" or not loc.is_local


def plan_all(loc: Location, parts: list[PartitionListing], opts: ValidateOptions,
              pool: ThreadPoolExecutor | None = None) -> list[Pending]:
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
    return [plan_partition(ploc, part, markers[i], opts, split[i][1])
            for i, (ploc, part) in enumerate(zip(locs, parts))]


def plan_partition(ploc: Location, part: PartitionListing, markers: dict[str, bytes],
                   opts: ValidateOptions, links: tuple[str, ...] = ()) -> Pending:
    snap = opts.snapshot
    listing = Listing(part.paths, MappingProxyType(markers), root=ploc.url)
    state = select(listing, snap.write_ids, snap.txns, snap.hive_version,
                   insert_only=snap.insert_only)
    todo: list[tuple[str, int, str | None]] = []
    acid_markers: list[str] = []
    if opts.level != "names":
        todo, acid_markers = files_to_read(listing, state, snap.hive_version)
    return Pending(ploc, part.name, listing, state, todo, acid_markers,
                    sizes_listed(ploc, opts), links)


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


def waited(work: Callable[[], object]) -> float:
    """Seconds ``work`` spent not running on this thread's CPU (waiting for I/O)."""
    wall, cpu = time.perf_counter(), time.thread_time()
    work()
    return (time.perf_counter() - wall) - (time.thread_time() - cpu)


def _each(work: Callable[..., None], jobs: list) -> None:
    for job in jobs:
        work(*job)


def read_all(pending: list[Pending], opts: ValidateOptions, pool: ThreadPoolExecutor,
              progress: bool, remote: bool) -> None:
    """Read every footer (and row scan, and marker) of every partition on one pool."""
    bar = Progress(sum(len(p.todo) for p in pending), progress, "files read")
    rows = opts.level == "rows"
    if rows:  # pyarrow is imported for row scans only
        from .rowscan import scan_rows

    tick = bar.enabled  # a call per file saved where nothing is shown

    def read(p: Pending, rel: str, size: int, side: str | None) -> None:
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
        if waited(lambda: _each(read, probe)) > WAIT_PER_FILE * len(probe):
            threads = opts.jobs
    if threads <= 1:  # no hand-offs at all
        for job in jobs:
            read(*job)
    else:
        # Files go to the threads in small batches: a thread hand-off per file costs more
        # than a local footer read; a batch still keeps a remote store's round trips
        # overlapping. Each file's facts land in its own key of its partition's dicts.
        batch = max(1, min(16, len(jobs) // (threads * 4) or 1))
        for _ in pool.map(lambda chunk: _each(read, chunk),
                          [jobs[i:i + batch] for i in range(0, len(jobs), batch)]):
            pass
    markers = [(p, rel) for p in pending for rel in p.markers]
    mapper = pool.map if threads > 1 else map
    for (p, rel), content in zip(markers, mapper(lambda m: read_bytes(m[0].loc, m[1],
                                                                      MARKER_BYTES), markers)):
        p.acid_markers[rel] = content



"""``acidtool repair``: validate's findings turned into a plan (``core/repair.py``), read-only.

The facts are validate's, at ``--level rows`` (sorting and key indexes need the event columns),
gathered the same way; a few more are read for the planners: the footers of root files that
validate does not read (a base exists), and how long ago each leftover changed (``--min-age``).
``apply.py`` carries a plan out.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from ...core.errors import OrcReadError, UsageError
from ...core.facts import Context, PartitionFacts, TableFacts
from ...core.guards import (
    LOCK_FILE,
    covering,
    inside,
    snapshot_problem,
    table_root,
    write_id_range_problem,
)
from ...core.names import FLUSH_LENGTH_SUFFIX
from ...core.partitions import require_one_table, split_partitions
from ...core.repair import (
    OPT_IN,
    QUARANTINE_DIR,
    Action,
    Manual,
    RepairContext,
    Rewrap,
    plan_findings,
    relative,
    within,
)
from ...core.rules import REGISTRY, run_rules
from ...core.rules.index import top_fields
from ...core.snapshot import Snapshot, make_snapshot
from ...io.footers import read_footer_and_bytes
from ...io.fs import Location, kind_of, list_tree, require_dir, resolve
from ...io.journal import default_journal, new_run_id, newest_change
from ...table.facts import ValidateOptions, plan_all, read_all, select_codes
from ...table.ls import require_not_acid_dir
from ..convert.sources import committed_sources, fingerprint

# the rules whose repairs wait until a leftover is unchanged for --min-age (Rule.waits_for_age)
AGE_CODES = tuple(code for code, r in REGISTRY.items() if r.waits_for_age)


@dataclass(frozen=True)
class RepairOptions:
    snapshot: Snapshot = field(default_factory=make_snapshot)
    snapshot_given: bool = False
    partition: str | None = None
    write_id: int | None = None
    quarantine: str | None = None  # default: PATH/.acidtool-quarantine
    journal: str | None = None  # default: the state directory
    min_age: float = 3600.0
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    jobs: int = 8
    # the write id was allocated by the metastore for this run (--write-id auto): open in its
    # transaction, so not judged against the snapshot taken before it
    write_id_allocated: bool = False

    def codes(self) -> list[str]:
        return select_codes(self.select, self.ignore)

    def opted_in(self) -> frozenset:
        """The opt-in repairs (core.repair.OPT_IN) that --select names by their full code."""
        named = {c.strip().upper() for c in self.select or ()}
        return frozenset(code for code in OPT_IN if code in named)


@dataclass
class Plan:
    path: str
    root: Location
    hive_version: str
    actions: list[Action]
    manual: list[Manual]
    quarantine: Location  # this run's quarantine directory
    journal: str
    run: str
    facts: list[tuple[PartitionFacts, str]] = field(default_factory=list, repr=False)
    row_type: str | None = None  # the row struct of the table's ACID files (re-wraps map to it)
    snapshot: Snapshot | None = None  # the snapshot planned at (compactions plan again at it)

    def as_dict(self) -> dict:
        return {"path": self.path, "hive_version": str(self.hive_version),
                "actions": [a.as_dict() for a in self.actions],
                "manual": [m.as_dict() for m in self.manual],
                "quarantine": self.quarantine.url, "journal": self.journal}

    @property
    def clean(self) -> bool:
        return not self.actions and not self.manual


def quarantine_root(root: Location, opts: RepairOptions) -> Location:
    if opts.quarantine is None:
        return root.child(QUARANTINE_DIR)
    q = resolve(opts.quarantine)
    if type(q.store) is not type(root.store) or (q.store is not None and not q.is_local and
                                                 q.url.split("/")[:3] != root.url.split("/")[:3]):
        raise UsageError(f"--quarantine {opts.quarantine}: must be on the table's filesystem "
                         "(what leaves the table is renamed, never copied)")
    if q.is_local and root.is_local:
        here = q.path
        while not os.path.exists(here):
            here = os.path.dirname(here)
        if os.stat(here).st_dev != os.stat(root.path).st_dev:
            raise UsageError(f"--quarantine {opts.quarantine}: on another filesystem than the "
                             "table (what leaves the table is renamed, never copied)")
    rel = q.path[len(root.path):].lstrip("/") if q.path.startswith(root.path + "/") else None
    if rel is not None and not rel.split("/")[0].startswith((".", "_")):
        raise UsageError(f"--quarantine {opts.quarantine}: inside the table it must start "
                         "with '.' or '_' (a name Hive ignores)")
    return q


def plan_repair(path: str, opts: RepairOptions, *, run: str | None = None,
                progress: bool = False) -> Plan:
    """Validate PATH (or its --partition) at --level rows, and plan."""
    root = resolve(path)
    require_dir(root)
    require_not_acid_dir(root)
    if root.is_local:  # the journal must name it wherever undo runs from
        root = Location(root.store, root.path, root.path)
    part = (opts.partition or "").strip("/")
    target = root.child(part) if part else root
    if part and kind_of(target) != "dir":
        raise UsageError(f"--partition {opts.partition}: no such partition in {path}")
    codes = opts.codes()
    run = run or new_run_id()
    quarantine = quarantine_root(root, opts).child(run)
    journal = os.path.abspath(opts.journal) if opts.journal else \
        default_journal("", run)
    table = table_root(root.path) if root.is_local else None
    if table is not None and inside(os.path.realpath(journal), os.path.realpath(table)):
        raise UsageError(f"--journal {journal}: inside the table {table}; the journal must "
                         "live outside what it records (leave --journal out, or name a file "
                         "elsewhere)")
    snap = opts.snapshot
    vopts = ValidateOptions(level="rows", snapshot=snap, snapshot_given=opts.snapshot_given,
                            jobs=opts.jobs, select=opts.select, ignore=opts.ignore)
    ctx = Context(snap.hive_version, "rows", opts.snapshot_given, None,
                  table_name=None, insert_only=snap.insert_only)
    tree = [p for p in list_tree(target) if not _ours(p.path)]
    require_one_table(tree, target.url)
    parts, stray = split_partitions(tree)
    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        remote = not target.is_local
        pending = plan_all(target, parts, vopts, pool if remote else None)
        read_all(pending, vopts, pool, progress, remote=remote)
    facts = [p.facts() for p in pending]
    findings = run_rules(TableFacts(target.url, tuple(facts), tuple(s.path for s in stray)),
                         ctx, codes)
    findings.sort(key=lambda f: (f.path, f.code, f.message))
    prefix = [(f"{part}/{p.partition}".strip("/") if part else p.partition, p) for p in facts]
    placed = []
    for f in findings:
        owner = _owner(f.path, facts)
        if owner is not None:
            placed.append((f, owner, next(pre for pre, p in prefix if p is owner)))
    row_type = _row_type(facts)
    if opts.write_id is not None:
        _check_write_id(opts, placed)
    rctx = RepairContext(
        snap.hive_version, opts.write_id, opts.min_age,
        _ages(root, placed), opts.opted_in(), opts.snapshot_given, _min_open(snap),
        snap.insert_only, row_type, _extra_files(root, placed),
        snapshot=None if opts.write_id_allocated else snap,
        fingerprints=_fingerprints(root, placed),
        committed={(f"{part}/{pl.name}".strip("/") if part else pl.name):
                   committed_sources(target.child(pl.name) if pl.name else target, pl.paths)
                   for pl in parts})
    actions, manual = plan_findings(placed, rctx)
    actions, misfits = _fitting(actions, root, snap.hive_version, row_type)
    manual.extend(misfits)
    for f in findings:  # findings outside every partition (a table-wide rule's)
        if _owner(f.path, facts) is None and f.severity != "info":
            manual.append(Manual(f.code, _rel(root, f.path), f.message))
    return Plan(path, root, snap.hive_version, actions, manual, quarantine, journal, run,
                [(p, pre) for pre, p in prefix], row_type, snap)


REWRAP_CODES = ("ACID001", "ACID004", "ACID007")


def _fitting(actions: list[Action], root: Location, hive_version, row_type: str | None
             ) -> tuple[list[Action], list[Manual]]:
    """The actions, less the re-wraps whose source convert would refuse (columns that do not
    fit the table's row type, say): those go to a person with convert's reason, rather than
    fail at apply and be planned again on every run."""
    from .build import rewrap_plan

    kept: list[Action] = []
    refused: list[Manual] = []
    for a in actions:
        if isinstance(a, Rewrap):
            try:
                rewrap_plan(a, root, hive_version, row_type)
            except (UsageError, OrcReadError) as exc:
                refused.append(Manual(a.code, a.target, f"raw ORC that cannot be re-wrapped "
                                      f"into this table: {exc}; convert it by hand with the "
                                      "--schema it needs, or move it out"))
                continue
        kept.append(a)
    if len(kept) != len(actions):
        kept = [replace(a, id=f"a{i}") for i, a in enumerate(kept, 1)]
    return kept, refused


def _check_write_id(opts: RepairOptions, placed) -> None:
    """--write-id W is refused before anything is planned when no delta of W would be read:
    out of range, not committed in the snapshot given, or covered by a base or compacted delta
    of a partition whose root files it would re-wrap."""
    w = opts.write_id
    assert w is not None
    problem = write_id_range_problem(w) or (
        None if opts.write_id_allocated else snapshot_problem(w, opts.snapshot))
    if problem is None:
        for f, p, part in placed:
            if f.code == "ACID001":
                cover = covering(w, [e.name for e in p.state.entries if e.parsed is not None])
                if cover is not None:
                    where = f"{part}/{cover}" if part else cover
                    problem = (f"write id {w} is covered by {where}: a delta under it would "
                               "never be read, and Hive's cleaner would delete it (use a write "
                               "id committed after it)")
                    break
    if problem:
        raise UsageError(f"--write-id {w}: {problem}; nothing was planned")


def _fingerprints(root: Location, placed) -> dict[str, str]:
    """The fingerprint of every raw file a re-wrap could take."""
    out = {}
    for f, p, part in placed:
        if f.code in REWRAP_CODES:
            rel = relative(f.path, p, part)
            if rel not in out:
                try:
                    out[rel] = fingerprint(root.child(rel)).sha256
                except OSError:
                    pass  # not readable: its planner says so
    return out


def _ours(rel: str) -> bool:
    top = rel.split("/")[0]
    return top in (QUARANTINE_DIR, LOCK_FILE)


def _rel(root: Location, url: str) -> str:
    base = root.url.rstrip("/")
    return url[len(base) + 1:] if url.startswith(base + "/") else url


def _owner(path: str, facts: list[PartitionFacts]) -> PartitionFacts | None:
    best = None
    for p in facts:
        base = p.url.rstrip("/")
        if path == base or path.startswith(base + "/"):
            if best is None or len(base) > len(best.url.rstrip("/")):
                best = p
    return best


def _ages(root: Location, placed) -> dict[str, float]:
    """Seconds since each leftover an AGE_CODES finding names last changed."""
    now = time.time()
    out: dict[str, float] = {}
    for f, p, part in placed:
        if f.code not in AGE_CODES:
            continue
        rel = relative(f.path, p, part)
        targets = [rel]
        if f.code == "ACID022" and not rel.endswith(FLUSH_LENGTH_SUFFIX):
            targets.append(rel + FLUSH_LENGTH_SUFFIX)
        for t in targets:
            try:
                out[t] = max(0.0, now - newest_change(root.child(t)))
            except OSError:
                pass
    return out


def _extra_files(root: Location, placed) -> dict:
    """Footers of the root files ACID001 names that validate did not read (a base exists)."""
    out = {}
    for f, p, part in placed:
        if f.code != "ACID001":
            continue
        rel = relative(f.path, p, part)
        in_part = within(rel, part)
        if in_part not in p.files:
            size = next((e.size for e in p.state.entries if e.name == in_part), -1)
            out[rel] = read_footer_and_bytes(root, rel, size, None)[0]
    return out


def _row_type(facts: list[PartitionFacts]) -> str | None:
    """The ``row`` struct of the table's ACID files (the first one found)."""
    for p in facts:
        for _, ff in sorted(p.files.items()):
            if ff.event_ranges is not None and ff.footer is not None:
                for name, type_string in top_fields(ff.footer):
                    if name.lower() == "row":
                        return type_string
    return None


def _min_open(snap: Snapshot) -> int | None:
    ids = snap.write_ids if snap.write_ids is not None else snap.txns
    value = getattr(ids, "min_open", None)
    return None if value is None or value >= 2**63 - 1 else value


def with_results(plan: Plan, results: dict[str, tuple[str, str]]) -> Plan:
    """The plan with each action's result (and, where it failed, why)."""
    actions = [replace(a, result=results[a.id][0], reason=results[a.id][1] or a.reason)
               if a.id in results else a for a in plan.actions]
    return replace(plan, actions=actions)


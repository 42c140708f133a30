"""The repair planners: what ``acidtool repair`` does about a finding, declared with its rule
(``Repair(kind, text, planner)`` in ``rules/*.py``). Given a finding and the facts of its
partition, a planner returns an ``Action`` (a change proven safe from those facts, ``actions.py``)
or a ``Manual`` item (what a person has to decide, and why). No IO.

Safety is decided here, from facts: an action never changes which rows a reader of a committed
snapshot gets, except to bring back rows Hive could not read (a foreign file re-wrapped).
Anything that would change which rows a delete hits (bucket properties, statement ids, write
ids, duplicate ROW__IDs, operations) is never automatic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from ..actions import (  # the plan's values, planned here (re-exported)
    Action,
    Compact,
    Manual,
    Quarantine,
    RebuildKeyIndex,
    RecoverStreaming,
    RenameFile,
    Rewrap,
    SortEvents,
    WriteMarker,
)
from ..bucket import BucketCodecError, decode
from ..compact import plan_job
from ..facts import FileFacts, PartitionFacts
from ..guards import write_id_problem
from ..names import (
    ACID_VERSION_FILE,
    FLUSH_LENGTH_SUFFIX,
    Base,
    Delta,
    bucket_file_name,
    is_hidden,
    parse_dir_name,
)
from ..snapshot import Snapshot
from ..versions import HiveVersion
from .index import STAGING
from .registry import Finding


@dataclass(frozen=True)
class RepairContext:
    """What the planners know besides one partition's facts."""

    hive_version: HiveVersion
    write_id: int | None = None  # --write-id: for foreign files in a table root
    min_age: float = 3600.0  # seconds
    ages: Mapping[str, float] = field(default_factory=dict)  # rel path -> seconds since change
    opted_in: frozenset = frozenset()  # codes --select named (OPT_IN)
    snapshot_given: bool = False
    min_open: int | None = None  # the snapshot's lowest open write id (or txn, Hive 2)
    insert_only: bool = False
    table_row_type: str | None = None  # the row struct of the table's ACID files
    # rel path (to PATH) -> footer facts of files the planners need that validate did not read
    extra_files: Mapping[str, FileFacts] = field(default_factory=dict)
    taken: frozenset = frozenset()  # paths this plan's new files and directories will have
    # the snapshot the user gave (None: none given); a re-wrap's write id must be committed in it
    snapshot: Snapshot | None = None
    # rel path (to PATH) of each raw file a re-wrap could take -> the SHA-256 fingerprint of
    # its contents (convert_sources.fingerprint)
    fingerprints: Mapping[str, str] = field(default_factory=dict)
    # partition path (relative to PATH) -> {fingerprint: (delta, source path)} of the
    # provenance records (_acidtool_sources) its committed deltas carry
    committed: Mapping[str, Mapping[str, tuple[str, str]]] = field(default_factory=dict)
    # fingerprint -> rel path of the file this plan re-wraps already
    rewrapped: Mapping[str, str] = field(default_factory=dict)


Planned = Action | Manual | None
Planner = Callable[[Finding, PartitionFacts, str, RepairContext], Planned]


def relative(finding_path: str, p: PartitionFacts, part: str) -> str:
    """A finding's path relative to the PATH repaired (``part`` is the partition's own path
    relative to it, "" for the root)."""
    base = p.url.rstrip("/")
    rel = finding_path[len(base) + 1:] if finding_path.startswith(base + "/") else ""
    return f"{part}/{rel}" if part and rel else (rel or part)


def within(rel: str, part: str) -> str:
    """A path relative to PATH, made relative to the partition ``part`` it lies in."""
    return rel[len(part) + 1:] if part else rel


def _join(part: str, rel: str) -> str:
    return f"{part}/{rel}" if part else rel


def _old_enough(rel: str, ctx: RepairContext) -> tuple[bool, str]:
    age = ctx.ages.get(rel)
    if age is None:
        return False, "its age could not be read"
    if age < ctx.min_age:
        return False, (f"changed {_duration(age)} ago, less than --min-age "
                       f"{_duration(ctx.min_age)}: a running job may still own it (run again "
                       "later, or lower --min-age)")
    return True, f"unchanged for {_duration(age)}"


def _duration(seconds: float) -> str:
    s = int(seconds)
    if s < 120:
        return f"{s}s"
    if s < 7200:
        return f"{s // 60}m"
    if s < 172800:
        return f"{s // 3600}h"
    return f"{s // 86400}d"


# ------------------------------------------------------------------------------------------------
# Foreign data: re-wrapped into a delta, the raw file quarantined


def _facts_of(p: PartitionFacts, rel_in_part: str, rel: str, ctx: RepairContext
              ) -> FileFacts | None:
    return p.files.get(rel_in_part) or ctx.extra_files.get(rel)


def _next_statement(p: PartitionFacts, part: str, write_id: int, ctx: RepairContext) -> int:
    """The lowest statement id no delta of ``write_id`` in the partition uses (nor one this
    plan writes)."""
    used = set()
    for e in p.state.entries:
        if isinstance(e.parsed, Delta) and e.parsed.min_write_id == write_id == \
                e.parsed.max_write_id:
            used.add(max(e.parsed.statement_id, 0))
    for name in ctx.taken:
        head, _, last = name.rpartition("/")
        if head == part:
            try:
                d = parse_dir_name(last, "4")
            except ValueError:
                continue
            if isinstance(d, Delta) and d.min_write_id == write_id:
                used.add(max(d.statement_id, 0))
    return next(i for i in range(len(used) + 1) if i not in used)


def _rewrap(f: Finding, p: PartitionFacts, part: str, ctx: RepairContext, write_id: int,
            where: str) -> Planned:
    rel = relative(f.path, p, part)
    in_part = within(rel, part)
    problem = write_id_problem(write_id, _directories(p), ctx.snapshot)
    if problem:
        return Manual(f.code, rel, f"{f.message}; cannot re-wrap it: {problem}")
    facts = _facts_of(p, in_part, rel, ctx)
    if facts is None or facts.footer is None:
        why = facts.error if facts is not None and facts.error else "not readable ORC"
        return Manual(f.code, rel, f"{f.message}; cannot re-wrap it ({why}): move it out of "
                      "the table and load it as its format needs")
    if facts.event_ranges is not None:
        return Manual(f.code, rel, f"{f.message}; it holds ACID events already: move it back "
                      "into the directory it came from (its ROW__IDs name it), or out of the "
                      "table")
    sha = ctx.fingerprints.get(rel)
    done = ctx.committed.get(part, {}).get(sha) if sha else None
    if done is not None:
        delta, source = done
        return Quarantine("", f.code, rel, f"raw ORC {where} whose rows {delta} holds already "
                          f"(its provenance record names the same bytes, from {source}): "
                          "quarantined, not re-wrapped again")
    if sha and sha in ctx.rewrapped:
        return Manual(f.code, rel, f"{f.message}; not re-wrapped: the same bytes as "
                      f"{ctx.rewrapped[sha]}, which this plan re-wraps (two loads of the same "
                      "file would be its rows twice); if both are meant, load it with "
                      "`acidtool convert --allow-duplicates`")
    statement = _next_statement(p, part, write_id, ctx)
    if statement > 4095:
        return Manual(f.code, rel, f"{f.message}; write id {write_id} has no free statement id")
    dest = _join(part, str(Delta(write_id, write_id, statement)))
    return Rewrap("", f.code, rel, f"raw ORC {where}: re-wrapped into {dest} (write id "
                  f"{write_id}, statement {statement}); the file goes to quarantine", dest,
                  write_id=write_id, statement_id=statement,
                  rows=sum(facts.footer.stripe_rows), source_sha256=sha)


def _directories(p: PartitionFacts) -> list[str]:
    """The partition's top-level directory names."""
    return [e.name for e in p.state.entries if e.parsed is not None]


def rewrap_root_file(f: Finding, p: PartitionFacts, part: str, ctx: RepairContext) -> Planned:
    rel = relative(f.path, p, part)
    if ctx.write_id is None:
        return Manual(f.code, rel, f"{f.message}; re-wrapping it needs --write-id W, a write "
                      "id the metastore has committed for this table (Hive 2.3: a committed "
                      "transaction id)")
    return _rewrap(f, p, part, ctx, ctx.write_id, "in the table root")


def rewrap_delta_file(f: Finding, p: PartitionFacts, part: str, ctx: RepairContext) -> Planned:
    rel = relative(f.path, p, part)
    in_part = within(rel, part)
    directory, _, name = in_part.partition("/")
    if "/" in name:
        return Manual(f.code, rel, f"{f.message}; a nested file: move it by hand")
    try:
        parsed = parse_dir_name(directory, ctx.hive_version)
    except ValueError:
        parsed = None
    facts = _facts_of(p, in_part, rel, ctx)
    if facts is not None and facts.event_ranges is not None:
        return _renamed_bucket(f, p, part, rel, directory, facts, ctx)
    if not isinstance(parsed, Delta) or parsed.delete:
        what = "a delete delta" if isinstance(parsed, Delta) else "a base"
        return Manual(f.code, rel, f"{f.message}; raw data in {what} cannot be re-wrapped "
                      "safely (a base's rows replace everything below it): move it out and "
                      "load it with `acidtool convert`")
    if ctx.insert_only:
        return None
    if parsed.min_write_id != parsed.max_write_id:
        return Manual(f.code, rel, f"{f.message}; {directory} spans write ids "
                      f"{parsed.min_write_id}-{parsed.max_write_id}: which one its rows belong "
                      "to is not known")
    return _rewrap(f, p, part, ctx, parsed.min_write_id, f"in {directory}")


def _renamed_bucket(f: Finding, p: PartitionFacts, part: str, rel: str, directory: str,
                    facts: FileFacts, ctx: RepairContext) -> Planned:
    """An ACID file under another name (``bucket_00000.orc``, ``bucket_00000 (1)``): renamed
    back when its rows' bucket property names one bucket and no file has that name."""
    ranges = facts.event_ranges
    bucket = ranges[2] if ranges is not None and len(ranges) > 2 else None
    if bucket is None or bucket[0] != bucket[1]:
        return Manual(f.code, rel, f"{f.message}; its rows do not name one bucket, so the "
                      "right name is not known")
    try:
        bucket_id = decode(bucket[0]).bucket_id if ctx.hive_version.bucket_codec else bucket[0]
    except BucketCodecError:
        return Manual(f.code, rel, f"{f.message}; its bucket property {bucket[0]} is not valid")
    name = bucket_file_name(bucket_id)
    dest = _join(part, f"{directory}/{name}")
    entry = next((e for e in p.state.entries if e.name == directory), None)
    names = {x.path for x in entry.files} if entry is not None else set()
    if name in names or dest in ctx.taken:
        return Manual(f.code, rel, f"{f.message}; its rows say {name}, which exists already: "
                      "compare the two and keep one")
    return RenameFile("", f.code, rel, f"an ACID file whose rows say bucket {bucket_id}: "
                      f"renamed to {name}", dest)


# ------------------------------------------------------------------------------------------------
# Footers and events


def rebuild_key_index(f: Finding, p: PartitionFacts, part: str, ctx: RepairContext) -> Planned:
    if f.severity == "info":
        return None  # Hive 2.3's own split-update pair: nothing is wrong
    rel = relative(f.path, p, part)
    in_part = within(rel, part)
    rows = p.rows.get(in_part)
    if rows is None or rows.error is not None:
        return Manual(f.code, rel, f"{f.message}; its rows could not be scanned")
    return RebuildKeyIndex("", f.code, rel, "hive.acid.key.index rebuilt from the stripes' last "
                           "keys (rows untouched); the old file goes to quarantine",
                           key_index=_key_index_text(rows.stripe_last_keys))


def _key_index_text(keys) -> str:
    return "".join(f"{k[0]},{k[1]},{k[2]};" for k in keys if k is not None)


def sort_events(f: Finding, p: PartitionFacts, part: str, ctx: RepairContext) -> Planned:
    rel = relative(f.path, p, part)
    return SortEvents("", f.code, rel, "events rewritten in (originalTransaction, bucket, rowId) "
                      "order: the same events, the same ROW__IDs; the old file goes to "
                      "quarantine")


def write_marker(f: Finding, p: PartitionFacts, part: str, ctx: RepairContext) -> Planned:
    rel = relative(f.path, p, part)
    if rel.endswith("/" + ACID_VERSION_FILE) or rel == ACID_VERSION_FILE:
        return WriteMarker("", f.code, rel, f"{ACID_VERSION_FILE} rewritten as '2'; the old one "
                           "goes to quarantine", replace=True)
    return WriteMarker("", f.code, _join(rel, ACID_VERSION_FILE),
                       f"{ACID_VERSION_FILE} written ('2', what Hive 3 and 4 write)")


# ------------------------------------------------------------------------------------------------
# Leftovers: quarantined once old enough


def quarantine_leftover(f: Finding, p: PartitionFacts, part: str, ctx: RepairContext) -> Planned:
    rel = relative(f.path, p, part)
    name = rel.rsplit("/", 1)[-1]
    if f.code == "ACID003" and not (is_hidden(name) and STAGING.match(name)):
        return Manual(f.code, rel, f"{f.message}; it may hold data Hive reads: convert it or "
                      "move it out by hand")
    if f.code == "ACID002" and "/" in within(rel, part):
        return Manual(f.code, rel, f"{f.message}; quarantine it by hand")
    ok, why = _old_enough(rel, ctx)
    if not ok:
        return Manual(f.code, rel, f"{f.message}; not quarantined: {why}")
    what = "unparsable ACID directory name" if f.code == "ACID002" else "leftover directory"
    return Quarantine("", f.code, rel, f"{what}, {why}: quarantined")


def finish_streaming(f: Finding, p: PartitionFacts, part: str, ctx: RepairContext) -> Planned:
    rel = relative(f.path, p, part)
    in_part = within(rel, part)
    data = in_part[:-len(FLUSH_LENGTH_SUFFIX)] if in_part.endswith(FLUSH_LENGTH_SUFFIX) \
        else in_part
    facts = p.files.get(data)
    side = _join(part, data + FLUSH_LENGTH_SUFFIX)
    if facts is None or facts.flush_committed is None:
        return None
    ok, why = _old_enough(side, ctx)
    if not ok:
        return Manual(f.code, side, f"{f.message}; not touched: {why}")
    if facts.flush_committed == facts.size:
        return Quarantine("", f.code, side, f"flush-length side file whose last "
                      f"length is the file's size ({facts.size} bytes), {why}: quarantined")
    if "ACID022" not in ctx.opted_in:
        return None  # an open streaming file: recovery only when --select names ACID022
    if facts.flush_committed > facts.size:
        return Manual(f.code, side, f"{f.message}; the side file says {facts.flush_committed} "
                      f"bytes, more than the file's {facts.size}")
    return RecoverStreaming("", f.code, _join(part, data), f"{data} is {facts.size} bytes, its "
                            f"last flush {facts.flush_committed}: cut to the flushed length (as "
                            f"`orcfiledump --recover`), {why}; the file and its side file go to "
                            "quarantine", length=facts.flush_committed, side=side)


def clean_obsolete(f: Finding, p: PartitionFacts, part: str, ctx: RepairContext) -> Planned:
    if "ACID021" not in ctx.opted_in:
        return None
    rel = relative(f.path, p, part)
    in_part = within(rel, part)
    entry = next((e for e in p.state.entries if e.name == in_part), None)
    if entry is None or (entry.parsed is None and not f.details.get("compacted")):
        return None
    if not ctx.snapshot_given:
        return Manual(f.code, rel, f"{f.message}; give the snapshot (--write-ids, or --txns "
                      "for Hive 2.3) so that it can be proven no reader needs it")
    if entry.status == "obsolete":
        top = _covering(p, entry) if entry.parsed is not None else \
            _write_id_of(p, f.details.get("compacted"))
        if top is None or (ctx.min_open is not None and top >= ctx.min_open):
            return Manual(f.code, rel, f"{f.message}; a transaction open in the snapshot may "
                          "still read it (the cleaner waits for it too)")
    ok, why = _old_enough(rel, ctx)
    if not ok:
        return Manual(f.code, rel, f"{f.message}; not quarantined: {why}")
    return Quarantine("", f.code, rel, f"{entry.status} in the given snapshot, {why}: "
                  "quarantined")


def compact_due(f: Finding, p: PartitionFacts, part: str, ctx: RepairContext) -> Planned:
    """The compaction Hive's Initiator would run, run by ``acidtool compact``'s writer."""
    if "ACID024" not in ctx.opted_in:
        return None
    kind = f.details.get("kind")
    target = part or "."  # the partition, or PATH itself
    if kind not in ("major", "minor"):
        return None
    if not ctx.snapshot_given:
        return Manual(f.code, target, f"{f.message}; give the snapshot (--write-ids, --txns for "
                      "Hive 2.3, or --metastore) so that no aborted or open write id is "
                      "compacted as if committed")
    if ctx.min_open is not None:  # the compactor's snapshot stops below it: planned then
        return Compact("", f.code, target, f"{f.message}: a {kind} compaction of what lies "
                       f"below the first open write id, {ctx.min_open}, planned at the "
                       "compactor's snapshot when it runs; what it reads stays, obsolete",
                       compaction=kind)
    job = plan_job(p.state, kind, ctx.hive_version, insert_only=ctx.insert_only)
    if job.kind is None:
        return Manual(f.code, target, f"{f.message}; not compacted: {job.reason}")
    writes = tuple(w.name for w in job.writes)
    return Compact("", f.code, target, f"{f.message}: a {kind} compaction of {len(job.reads)} "
                   f"directories and files into {', '.join(writes)}; what it reads stays, "
                   "obsolete, for the Cleaner (or --select ACID021)", compaction=kind,
                   reads=job.reads, writes=writes)


def _write_id_of(p: PartitionFacts, name) -> int | None:
    """The highest write id of the base (an original file's cover) named."""
    e = next((e for e in p.state.entries if e.name == name), None)
    return e.parsed.max_write_id if e is not None and e.parsed is not None else None


def _covering(p: PartitionFacts, entry) -> int | None:
    """The highest write id of the directory that makes ``entry`` obsolete (the base or a
    compacted delta)."""
    d = entry.parsed
    hi = d.max_write_id
    best = None
    for e in p.state.entries:
        if e.status != "selected" or e.parsed is None or e.name == entry.name:
            continue
        top = e.parsed.max_write_id
        low = 0 if isinstance(e.parsed, Base) else e.parsed.min_write_id
        if low <= hi <= top:
            best = top if best is None else min(best, top)
    return best

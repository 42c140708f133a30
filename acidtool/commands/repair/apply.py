"""``repair --apply`` and ``undo``: a plan carried out step by step behind a write-ahead journal,
through the commit protocol of every writer (``io/commit.py``).

Apply takes the table's lock, finishes (rolls back) an action an interrupted run of the same
table left half done, plans once, and carries that plan out: every action is a few typed steps
(``io/journal.py``), worked out with every new file's bytes before any is taken, journaled
(and fsync'ed) first, then taken in order. What leaves the table is renamed into this run's
quarantine directory; nothing is deleted, nothing overwritten, and a file rewritten in place is
swapped in by one rename, so that a reader never finds it missing. A failed action is rolled
back at once. The table is planned once more at the end (the re-check the output shows).

Undo takes the journal's steps backwards and reverses each by what the filesystem shows, so it
works from any state an apply left, finished, failed or killed. It first checks every file it
would remove or move back against the hash journaled for it: a file changed after the repair
stops the undo before anything is changed, naming the file.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field, replace
from typing import Callable

from ...core.errors import (
    AcidToolError,
    ExitStatus,
    Interrupted,
    raise_if_terminated,
)
from ...core.guards import inside
from ...core.names import ACIDTOOL_STAGING_PREFIX
from ...core.repair import (
    Action,
    Compact,
    Quarantine,
    RebuildKeyIndex,
    RecoverStreaming,
    RenameFile,
    Rewrap,
    SortEvents,
    WriteMarker,
)
from ...io.commit import (
    LOCK_FILE,
    Commit,
    LockedError,
    StaleRunRefused,
    TableLock,
    exclusive_journal,
    refuse_link,
)
from ...io.fs import Location, resolve
from ...io.journal import (
    JOURNAL_VERSION,
    JournalWriteError,
    MakeDir,
    PlaceDir,
    Rename,
    Requires,
    Scratch,
    Step,
    Swap,
    WriteNew,
    exists,
    read_journal,
    step_of,
)
from ...io.recovery import (
    ABSORBED,
    CHANGED_LATER,
    changed_since,
    done_ids,
    finish_interrupted,
    journal_unfinished,
    remove_empty_scratch,
    require_journal_inside,
    step_records,
    undo_unfinished,
)
from .build import new_files, rewritten
from .plan import Plan, RepairOptions, plan_repair

STAGING = ".staging"
BATCH = 256  # single-rename actions journaled in one record (one fsync)

__all__ = ["LOCK_FILE", "LockedError", "ApplyResult", "UndoResult", "apply", "undo"]


@dataclass
class ApplyResult:
    plan: Plan
    results: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (result, why)
    after: Plan | None = None  # the table planned again once the apply is done
    resumed: bool = False
    transaction: int | None = None  # the metastore transaction of --write-id auto
    written: bool = True  # False: nothing to do, so no journal and no quarantine were made

    @property
    def ok(self) -> bool:
        return (all(r == "done" for r, _ in self.results.values()) and self.after is not None
                and self.after.clean)


# ------------------------------------------------------------------------------------------------
# Steps


def _steps_for(action: Action, plan: Plan, made: set[str]) -> list[Step]:
    """The steps of one action, with the bytes of the files it writes: by the action's type
    (``STEPS``)."""
    b = _Steps(action, plan, made)
    STEPS[type(action)](b, action)
    return b.steps


class _Steps:
    """The steps of one action as they are worked out, and the directories they need."""

    def __init__(self, action: Action, plan: Plan, made: set[str]) -> None:
        self.action, self.plan, self.made = action, plan, made
        self.root, self.q = plan.root, plan.quarantine
        self.steps: list[Step] = []

    def mkdirs(self, loc: Location) -> None:
        chain = []
        while loc.url not in self.made and not exists(loc):
            chain.append(loc)
            parent = posixpath.dirname(loc.path)
            if parent == loc.path:
                break
            loc = Location(loc.store, parent, loc.url.rsplit("/", 1)[0])
        for d in reversed(chain):
            self.steps.append(MakeDir(d))
            self.made.add(d.url)

    def quarantined(self, rel: str) -> Location:
        self.mkdirs(self.q.child(posixpath.dirname(rel)) if "/" in rel else self.q)
        return self.q.child(rel)

    def stage(self, name: str, content: bytes) -> Location:
        where = self.q.child(f"{STAGING}/{self.action.id}/{name}")
        self.mkdirs(self.q.child(f"{STAGING}/{self.action.id}/{posixpath.dirname(name)}"
                                 .rstrip("/")))
        self.steps.append(WriteNew.of(where, content))
        return where


def _quarantine(b: _Steps, action: Action) -> None:
    b.steps.append(Rename(b.root.child(action.target), b.quarantined(action.target)))


def _rename(b: _Steps, action: Action) -> None:
    assert action.dest is not None
    b.steps.append(Rename(b.root.child(action.target), b.root.child(action.dest)))


def _rewrap(b: _Steps, action: Action) -> None:
    assert action.dest is not None
    delta = posixpath.basename(action.dest)
    for name, content in new_files(action, b.plan).items():
        b.stage(f"{delta}/{name}", content)
    staged = b.q.child(f"{STAGING}/{action.id}/{delta}")
    b.steps.append(Rename(staged, b.root.child(action.dest), staged=True))
    b.steps.append(Rename(b.root.child(action.target), b.quarantined(action.target)))


def _write_marker(b: _Steps, action: Action) -> None:
    assert isinstance(action, WriteMarker)
    if action.replace:  # one with other contents: swapped
        _swap(b, action)
        return
    content = new_files(action, b.plan)[posixpath.basename(action.target)]
    staged = b.stage(posixpath.basename(action.target), content)
    b.steps.append(Rename(staged, b.root.child(action.target), staged=True,
                          sha256=WriteNew.of(staged, content).sha256))


def _swap(b: _Steps, action: Action) -> None:
    """A file rewritten in place: the new bytes swapped in, the old ones kept."""
    new, old = rewritten(action, b.plan)
    staged = b.stage(posixpath.basename(action.target), new)
    keep = b.quarantined(action.target)
    b.steps.append(Swap(b.root.child(action.target), staged, keep,
                        WriteNew.of(keep, old).sha256, WriteNew.of(staged, new).sha256))


def _recover(b: _Steps, action: Action) -> None:
    """A streaming file cut at its last flushed length (swapped), its side file quarantined."""
    assert isinstance(action, RecoverStreaming)
    _swap(b, action)
    b.steps.append(Rename(b.root.child(action.side), b.quarantined(action.side)))


# an action's steps, by its type (a compaction is its writer's own: ``_compact``)
STEPS: dict[type[Action], Callable[[_Steps, Action], None]] = {
    Quarantine: _quarantine, RenameFile: _rename, Rewrap: _rewrap, WriteMarker: _write_marker,
    RebuildKeyIndex: _swap, SortEvents: _swap, RecoverStreaming: _recover}


# ------------------------------------------------------------------------------------------------
# Apply


def _root_of(path: str) -> Location:
    root = resolve(path)
    return Location(root.store, root.path, root.path) if root.is_local else root


def apply(path: str, opts: RepairOptions, *, command: str = "repair --apply",
          progress: Callable[[int, int], None] | None = None) -> ApplyResult:
    """Take the table's lock, finish what an interrupted apply of the same table left, plan
    PATH once and carry the plan out (see the module's text)."""
    root = _root_of(path)
    with Commit(root, command) as run:
        resumed_from = _resumable(run.lock, root)
        empty = _empty_journal_of_ours(run.lock)
        if resumed_from is not None or empty is not None:
            # the same journal: a run killed before its first record left it empty
            opts = replace(opts, journal=run.stale["journal"])  # type: ignore[index]
        elif opts.journal and os.path.exists(opts.journal):
            exclusive_journal(os.path.abspath(opts.journal))  # refused: one run's journal
        return _apply_locked(path, root, opts, run, resumed_from, progress,
                             reuse=empty is not None)


def _resumable(lock: TableLock, root: Location) -> list[dict] | None:
    """The journal of the interrupted apply of this very table that this run finishes, if the
    lock it took over names one; refused when the interrupted run is another's to finish."""
    stale = lock.stale
    if stale is None or stale.get("unreadable") or not stale.get("journal"):
        return None
    if not lock.stale_is_ours():
        return None  # a lock copied with the table from elsewhere: not this table's run
    journal = stale["journal"]
    try:
        records = read_journal(journal)
    except AcidToolError:
        return None  # gone or unreadable: nothing to resume (provenance guards re-wraps)
    if not records:
        return None
    kinds = {r.get("record") for r in records}
    if undo_unfinished(records):
        raise StaleRunRefused(f"an interrupted undo of {journal} holds this table's lock: run "
                              f"`acidtool undo {journal}` to finish it first")
    if "end" in kinds or "undone" in kinds:
        return None
    if records[0].get("command") == "compact":
        raise StaleRunRefused(
            f"an interrupted compaction of {records[0].get('path')} (journal {journal}) holds "
            f"this table's lock: run `acidtool compact {records[0].get('path')} --apply` (it "
            f"rolls the interrupted one back first), or `acidtool undo {journal}`")
    other = records[0].get("command")
    if other:  # another writer's run (convert, a change, the hiveacid writer): not a repair
        done = done_ids(records)
        if all(a["id"] in done for rec in step_records(records) for a in rec["actions"]):
            return None  # nothing of it in flight (only its end record missing): taken over
        raise StaleRunRefused(
            f"an interrupted {other} of {records[0].get('path')} (journal {journal}) holds "
            f"this table's lock: `acidtool undo {journal}` rolls it back, then repair")
    if records[0].get("path") != root.url:
        raise StaleRunRefused(
            f"an interrupted repair of {records[0].get('path')} (journal {journal}) holds this "
            f"table's lock: finish it with `acidtool repair {records[0].get('path')} --apply`, "
            f"or `acidtool undo {journal}`")
    return records


def _empty_journal_of_ours(lock: TableLock) -> str | None:
    """The journal a dead run of this table named in its lock before writing a record in it
    (killed right after taking the lock): taken as this run's own."""
    stale = lock.stale
    if stale is None or not lock.stale_is_ours() or not stale.get("journal"):
        return None
    try:
        return stale["journal"] if os.path.getsize(stale["journal"]) == 0 else None
    except OSError:
        return None


def _apply_locked(path: str, root: Location, opts: RepairOptions, run: Commit,
                  resumed_from: list[dict] | None, progress, reuse: bool = False
                  ) -> ApplyResult:
    run_id = resumed_from[0]["run"] if resumed_from is not None else None
    if resumed_from is not None:
        require_journal_inside(resumed_from, root)
        finish_interrupted(resumed_from)
        remove_empty_scratch(resumed_from)
    plan = plan_repair(path, opts, run=run_id)  # the one plan, made under the lock
    if resumed_from is None and not plan.actions:
        return ApplyResult(plan, {}, plan, written=False)
    refuse_link(plan.root, plan.quarantine, "the quarantine")
    results: dict[str, tuple[str, str]] = {}
    try:
        if resumed_from is None:
            run.begin(plan.journal, fresh=not reuse, record="begin", version=JOURNAL_VERSION,
                      run=plan.run, path=plan.root.url, quarantine=plan.quarantine.url,
                      hive_version=str(plan.hive_version))
        else:
            run.begin(plan.journal, fresh=False, record="resume", run=plan.run)
        plan = _renumber(plan, _next_id(resumed_from))
        run.record(record="plan", actions=[a.as_dict() for a in plan.actions],
                   manual=[m.as_dict() for m in plan.manual])
        _carry_out(plan, run, progress, results)
        after = plan_repair(path, opts, run=plan.run)  # the re-check
        run.end(all(r == "done" for r, _ in results.values()))
        return ApplyResult(plan, results, after, resumed_from is not None)
    except JournalWriteError as exc:
        raise _journal_failed(exc, plan, results) from None


def _journal_failed(exc: JournalWriteError, plan: Plan, results: dict) -> AcidToolError:
    """A journal that could not be written stops the apply at once; what was done is said,
    and how to reverse it (every step taken had been journaled)."""
    done = [i for i, (r, _) in results.items() if r == "done"]
    error = JournalWriteError(
        f"{exc}; the apply stopped there: {len(done)} of {len(plan.actions)} actions were done"
        + (f" ({', '.join(done)})" if done else "")
        + f"; every step taken was journaled before it was: `acidtool undo {plan.journal}` "
        f"reverses them, or free the space and run `acidtool repair {plan.path} --apply` "
        "again to finish")
    if done:
        error.exit_status = ExitStatus.AFTER_COMMIT
    return error






def _next_id(records: list[dict] | None) -> int:
    if records is None:
        return 1
    return 1 + max((int(item["id"][1:]) for rec in step_records(records)
                    for item in rec["actions"]), default=0)


def _renumber(plan: Plan, first: int) -> Plan:
    if first == 1:
        return plan
    return replace(plan, actions=[replace(a, id=f"a{i}") for i, a in
                                  enumerate(plan.actions, first)])






def _carry_out(plan: Plan, run: Commit, progress, results: dict) -> None:
    made: set[str] = set()
    todo = list(plan.actions)
    done_count = 0
    while todo:
        raise_if_terminated()  # a signal recorded while a roll-back ran stops here
        # single-rename actions go together (one journal record for many); others alone
        first = todo[0]
        if isinstance(first, Compact):
            todo.pop(0)
            _compact(first, plan, run, results)
            done_count += 1
            if progress:
                progress(done_count, len(plan.actions))
            continue
        batch = [todo.pop(0)]
        while todo and isinstance(batch[0], Quarantine) and isinstance(todo[0], Quarantine) \
                and len(batch) < BATCH:
            batch.append(todo.pop(0))
        prepared = []
        for action in batch:
            try:
                steps = _steps_for(action, plan, made)
            except (AcidToolError, OSError, ValueError) as exc:
                results[action.id] = ("failed", f"not done: {_what(exc)}")
                run.record(record="failed", id=action.id, reason=_what(exc))
                continue
            prepared.append((action, steps))
        if not prepared:
            continue
        run.steps({a.id: st for a, st in prepared})
        for action, steps in prepared:
            _take_action(action, steps, plan, run, results)
        run.done([a.id for a, _ in prepared if results.get(a.id, ("",))[0] == "done"])
        done_count += len(batch)
        if progress:
            progress(done_count, len(plan.actions))


def _compact(action: Compact, plan: Plan, run: Commit, results: dict) -> None:
    """A compaction (ACID024) by ``acidtool compact``'s writer, in this run's journal: its
    staging directory and the renames of what it wrote are this action's steps."""
    from ..compact.run import compact_partition

    url = plan.root.url if action.target in ("", ".") else plan.root.child(action.target).url
    assert plan.snapshot is not None
    result, why, _ = compact_partition(url, plan.snapshot, action.compaction, run,
                                       action.id, plan.run)
    results[action.id] = (result, why)


def _take_action(action: Action, steps: list[Step], plan: Plan, run: Commit,
                 results: dict) -> None:
    def interrupted(problems: list[str]) -> str:
        return (f"interrupted during {action.id}, which was rolled back; run `acidtool repair "
                f"{plan.path} --apply` again to finish, or `acidtool undo {plan.journal}`")

    with run.action(action.id, interrupted=interrupted, failed="failed and rolled back: ",
                    done=False) as taking:
        taking.take(steps, journaled=True)
    results[action.id] = ("failed", taking.failed) if taking.failed is not None else \
        ("done", "")


def _what(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


# ------------------------------------------------------------------------------------------------
# Undo


@dataclass
class UndoResult:
    journal: str
    path: str
    reversed: int  # steps that changed something
    problems: list[str]
    refused: str = ""  # why nothing was done: a precondition of the undo does not hold
    sources_moved_to: str = ""  # a convert's --move-sources: where its sources still are

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict:
        return {"journal": self.journal, "path": self.path, "restored": self.ok,
                "refused": self.refused or None, "steps_reversed": self.reversed,
                "problems": self.problems, "sources_moved_to": self.sources_moved_to or None}


def _rolled_back(records: list[dict]) -> bool:
    """Whether the next run of the same command rolled this interrupted one back."""
    return any(r.get("record") == "end" and str(r.get("result", "")).startswith("rolled back")
               for r in records)


def _refusal(steps: list[Step], problems: list[str]) -> str:
    """Why undo refused, in one sentence, from the preconditions that failed."""
    gone = [s for s in steps if isinstance(s, Requires) and s.check()]
    if gone:
        return (f"{len(gone)} of the directories and files the commit superseded are gone or "
                "changed since (Hive's Cleaner, or `repair --select ACID021`, removed them): "
                "its output is the only copy of their rows, and removing it would lose them; "
                "put them back first (`acidtool undo` of the repair that quarantined them), "
                "or keep the commit")
    if any(ABSORBED in p for p in problems):
        return ("a compaction took the directory this commit wrote into its own output since "
                "(the Hive compactor, or `acidtool compact`): the write is in the table for good "
                "even without it, so removing it would not take the write back. Undo that "
                "compaction first while the directories it read are still there, or make the "
                "opposite change (a delete, an update) as a new write")
    if any(CHANGED_LATER in p for p in problems):
        return ("a later write deleted or updated rows this commit wrote: undoing this one "
                "alone would bring back rows as they were before it, or leave the later "
                "write's versions of its rows behind. Undo the later writes first, newest "
                "first, or keep this one")
    if any("placed by another run" in p for p in problems):
        return ("what this journal's run placed was replaced by another run's output (equal "
                "rows are not the same output): undo that run's own journal")
    return "a file the commit wrote, moved or superseded is not as the journal records it"


def undo(journal_path: str) -> UndoResult:
    """Put the table a journal names back as it was (see the module's text)."""
    records = read_journal(journal_path)
    if not records:
        return UndoResult(str(journal_path), "", 0, [])  # killed before its first record
    root = resolve(records[0]["path"])
    require_journal_inside(records, root)
    steps = [step_of(s) for rec in reversed(step_records(records))
             for item in reversed(rec["actions"]) for s in reversed(item["steps"])]
    if _rolled_back(records):  # the next run rolled this one back: what stands is its own
        steps = [s for s in steps if not (isinstance(s, PlaceDir) and s.placed_by_another())]
    steps += _early_scratch(records, root)
    with Commit(root, "undo", journal=str(journal_path)) as run:
        stale = run.stale
        if stale is not None and run.lock.stale_is_ours() and stale.get("journal") and \
                not _same_file(stale.get("journal"), journal_path) and \
                journal_unfinished(stale["journal"]):
            raise StaleRunRefused(f"an interrupted repair (journal {stale.get('journal')}) "
                                  f"holds {run.lock.location.url}: undo that journal first, "
                                  "or finish it with `acidtool repair --apply`")
        problems = _check_all(steps) + changed_since(records, steps)
        if problems:  # a precondition does not hold: nothing is touched
            return UndoResult(str(journal_path), root.url, 0, problems,
                              _refusal(steps, problems))
        count, problems = _undo_steps(steps, journal_path, run)
        # (convert moved its sources out of the landing zone after its commit, outside the
        # table: undo puts back only the table, and says where they are)
        return UndoResult(str(journal_path), root.url, count, problems,
                          sources_moved_to=records[0].get("sources_moved_to") or "")


def _early_scratch(records: list[dict], root: Location) -> list[Step]:
    """The staging directory a run named in its first record and was killed before it
    journaled its steps (a hiveacid commit's): everything in it is that run's, never
    committed."""
    url = records[0].get("scratch")
    if not url or step_records(records):
        return []
    loc = resolve(url)
    if not loc.url.rsplit("/", 1)[-1].startswith(ACIDTOOL_STAGING_PREFIX) or \
            not inside(loc.url, root.url):
        return []
    return [Scratch(loc)]


def _undo_steps(steps: list[Step], journal_path: str, run: Commit) -> tuple[int, list[str]]:
    run.begin(journal_path, fresh=False, record="undo")
    count, problems = 0, []
    try:
        for step in steps:
            changed = _changes(step)
            problem = step.reverse()
            if problem:
                problems.append(problem)
            elif changed:
                count += 1
    except KeyboardInterrupt:
        raise Interrupted(f"undo interrupted; run `acidtool undo {journal_path}` again to "
                          "finish", 2) from None
    run.record(record="undone", problems=problems)
    return count, problems


def _check_all(steps: list[Step]) -> list[str]:
    """Every file undo would remove or put back, checked against the journal's hashes before
    anything is changed. A file a repair wrote may be inside a staged directory that a later
    step renamed into the table: it is looked for where that rename put it."""
    problems = []
    moved = [(s.src.url, s.dst) for s in steps if isinstance(s, Rename) and s.staged
             and exists(s.dst) and not exists(s.src)]
    for step in steps:
        if isinstance(step, WriteNew):
            where = step.path
            for src, dst in moved:
                if step.path.url.startswith(src + "/"):
                    where = dst.child(step.path.url[len(src) + 1:])
            problem = step.check(where)
        else:
            problem = step.check()
        if problem:
            problems.append(problem)
    return problems


def _changes(step: Step) -> bool:
    """Whether reversing ``step`` changes anything the filesystem shows now."""
    if isinstance(step, MakeDir):
        return exists(step.path)
    if isinstance(step, WriteNew):
        return exists(step.path)
    if isinstance(step, (Rename, PlaceDir)):
        return step.taken()
    if isinstance(step, Scratch):
        return exists(step.path)
    if isinstance(step, Requires):
        return False
    return exists(step.keep)




def _same_file(a, b) -> bool:
    try:
        return a is not None and os.path.samefile(a, b)
    except OSError:
        return False

"""``repair --apply`` and ``undo``: a plan carried out step by step behind a write-ahead journal.

Every action is a few steps: make a directory, write a new file (always under this run's
quarantine directory, in ``.staging``), rename. The steps of an action are worked out, with
every new file's bytes, before any is taken; they are journaled (and fsync'ed) first, then
taken in order. What leaves the table is renamed into the quarantine directory: nothing is
deleted, and nothing is overwritten. A failed action is rolled back at once.

Undo takes the journal's steps backwards and reverses each by what the filesystem shows
(a rename whose destination exists and whose source does not is renamed back; a new file is
removed; a directory it made is removed once empty), so it works from any state an apply left,
finished, failed or killed. An interrupted apply is finished by running it again: the
unfinished action is rolled back, and the table is planned and repaired anew into the same
journal.
"""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass, field, replace

from ..core.errors import AcidToolError, ExitStatus, Interrupted, Terminated
from ..core.repair import LOCK_FILE, Action
from ..io.fs import Location, resolve
from ..io.journal import (
    JOURNAL_VERSION,
    Journal,
    drop_lock,
    exists,
    holder_alive,
    lock_info,
    make_dir,
    read_journal,
    remove_empty_dir,
    remove_file,
    rename,
    take_lock,
    write_new,
)
from .repair import Plan, RepairOptions, plan_repair
from .repair_build import new_files

STAGING = ".staging"
BATCH = 256  # single-rename actions journaled in one record (one fsync)


class LockedError(AcidToolError):
    exit_status = ExitStatus.USAGE


@dataclass
class ApplyResult:
    plan: Plan
    results: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (result, why)
    after: Plan | None = None  # the table planned again once the apply is done
    resumed: bool = False
    transaction: int | None = None  # the metastore transaction of --write-id auto

    @property
    def ok(self) -> bool:
        return (all(r == "done" for r, _ in self.results.values()) and self.after is not None
                and self.after.clean)


# ------------------------------------------------------------------------------------------------
# Steps


def _steps_for(action: Action, plan: Plan, made: set[str]) -> tuple[list[dict], dict[str, bytes]]:
    """The steps of one action and the bytes of the files it writes (by URL)."""
    root, q = plan.root, plan.quarantine
    steps: list[dict] = []
    data: dict[str, bytes] = {}

    def mkdirs(loc: Location) -> None:
        chain = []
        while loc.url not in made and not exists(loc):
            chain.append(loc)
            parent = posixpath.dirname(loc.path)
            if parent == loc.path:
                break
            loc = Location(loc.store, parent, loc.url.rsplit("/", 1)[0])
        for d in reversed(chain):
            steps.append({"op": "mkdir", "path": d.url})
            made.add(d.url)

    def to_quarantine(rel: str) -> None:
        dst = q.child(rel)
        mkdirs(q.child(posixpath.dirname(rel)) if "/" in rel else q)
        steps.append({"op": "rename", "src": root.child(rel).url, "dst": dst.url})

    def stage(name: str, content: bytes) -> Location:
        where = q.child(f"{STAGING}/{action.id}/{name}")
        mkdirs(q.child(f"{STAGING}/{action.id}/{posixpath.dirname(name)}".rstrip("/")))
        steps.append({"op": "write", "path": where.url, "size": len(content),
                      "sha256": hashlib.sha256(content).hexdigest()})
        data[where.url] = content
        return where

    if action.kind == "quarantine":
        to_quarantine(action.target)
    elif action.kind == "rename":
        steps.append({"op": "rename", "src": root.child(action.target).url,
                      "dest_rel": action.dest, "dst": root.child(action.dest).url})
    elif action.kind == "rewrap":
        delta = posixpath.basename(action.dest)
        for name, content in new_files(action, plan).items():
            stage(f"{delta}/{name}", content)
        staged = q.child(f"{STAGING}/{action.id}/{delta}")
        steps.append({"op": "rename", "src": staged.url, "dst": root.child(action.dest).url,
                      "staged": True})
        to_quarantine(action.target)
    else:  # a file written anew in place of (or next to) the target
        files = new_files(action, plan)
        content = files[posixpath.basename(action.target)]
        staged = stage(posixpath.basename(action.target), content)
        if action.kind != "write-marker" or action.params.get("replace"):
            to_quarantine(action.target)
        if action.kind == "recover-streaming":
            to_quarantine(action.params["side"])
        # The new file takes the name the old one had: its hash tells them apart on undo.
        steps.append({"op": "rename", "src": staged.url, "dst": root.child(action.target).url,
                      "staged": True, "sha256": hashlib.sha256(content).hexdigest()})
    return steps, data


def _take(step: dict, data: dict[str, bytes]) -> None:
    op = step["op"]
    if op == "mkdir":
        make_dir(resolve(step["path"]))
    elif op == "write":
        write_new(resolve(step["path"]), data[step["path"]])
    elif op == "rename":
        rename(resolve(step["src"]), resolve(step["dst"]))


def reverse(step: dict) -> str | None:
    """Undo one step by what the filesystem shows; a problem as text, or None."""
    op = step["op"]
    if op == "mkdir":
        loc = resolve(step["path"])
        if exists(loc) and not remove_empty_dir(loc):
            return f"{loc.url} is not empty (it was made by the repair; look inside)"
    elif op == "write":
        loc = resolve(step["path"])
        if exists(loc):
            remove_file(loc)
    elif op == "rename":
        src, dst = resolve(step["src"]), resolve(step["dst"])
        there, back = exists(dst), exists(src)
        if there and "sha256" in step and _sha256(dst) != step["sha256"]:
            there = False  # what is there is the file the repair replaces: not taken yet
        if there and not back:
            rename(dst, src)
        elif there and back:
            return f"both {src.url} and {dst.url} exist: keep one by hand"
        elif not there and not back and not step.get("staged"):
            # (a file the repair wrote, removed by an undo before this one)
            return f"{src.url} is gone, and not at {dst.url} either"
    return None


def _sha256(loc: Location) -> str:
    from ..io.fs import read_bytes

    return hashlib.sha256(read_bytes(loc)).hexdigest()


def _roll_back(steps: list[dict]) -> list[str]:
    problems = []
    for step in reversed(steps):
        problem = reverse(step)
        if problem:
            problems.append(problem)
    return problems


# ------------------------------------------------------------------------------------------------
# Apply


def _lock_for(plan: Plan) -> Location:
    return plan.root.child(LOCK_FILE)


def _held(lock: Location) -> dict | None:
    """The lock's record when a live process holds it (refused); None when it is free.
    A lock left by a dead process is returned with "stale": True."""
    info = lock_info(lock)
    if info is None:
        return None
    if info.get("unreadable") or holder_alive(info):
        who = f"pid {info.get('pid')} on {info.get('host')}" if not info.get("unreadable") \
            else "an unreadable lock"
        raise LockedError(f"another repair or undo is running on this table ({who}, since "
                          f"{info.get('since')}); if it is not, remove {lock.url}")
    return {**info, "stale": True}


def apply(path: str, opts: RepairOptions, *, command: str = "repair --apply",
          progress=None) -> ApplyResult:
    """Plan PATH and carry the plan out, under the table's lock (finishing an interrupted
    apply first: its journal is named in the lock it left)."""
    root = resolve(path)
    lock = root.child(LOCK_FILE)
    stale = _held(lock)
    resumed_from: list[dict] | None = None
    if stale is not None:
        try:
            resumed_from = read_journal(stale["journal"])
        except AcidToolError:
            resumed_from = None
        if resumed_from is not None and any(r.get("record") == "end" for r in resumed_from):
            resumed_from = None
        drop_lock(lock)
    run = None
    if resumed_from is not None:
        opts = replace(opts, journal=stale["journal"])
        run = resumed_from[0]["run"]
    plan = plan_repair(path, opts, run=run)  # read-only; planned again under the lock
    if resumed_from is None and plan.clean:
        return ApplyResult(plan, {}, plan)
    opts = replace(opts, journal=plan.journal)
    try:
        take_lock(lock, plan.journal, command)
    except FileExistsError:
        _held(lock)
        raise LockedError(f"{lock.url} appeared while planning: another repair started")
    try:
        return _apply_locked(path, opts, plan.run, resumed_from, progress)
    finally:
        drop_lock(lock)


def _apply_locked(path: str, opts: RepairOptions, run: str, resumed_from, progress
                  ) -> ApplyResult:
    journal = Journal(opts.journal)
    try:
        first_id = 1
        if resumed_from is not None:
            done = _done_ids(resumed_from)
            for rec in reversed(_step_records(resumed_from)):
                for item in reversed(rec["actions"]):
                    if item["id"] not in done and len(item["steps"]) > 1:
                        _roll_back(item["steps"])
            first_id = 1 + max((int(item["id"][1:]) for rec in _step_records(resumed_from)
                                for item in rec["actions"]), default=0)
            journal.record(record="resume", run=run)
        plan = _renumber(plan_repair(path, opts, run=run), first_id)
        if resumed_from is None:
            journal.record(record="begin", version=JOURNAL_VERSION, run=run, path=plan.root.url,
                           quarantine=plan.quarantine.url, hive_version=str(plan.hive_version))
        journal.record(record="plan", actions=[a.as_dict() for a in plan.actions],
                       manual=[m.as_dict() for m in plan.manual])
        results = _carry_out(plan, journal, progress)
        after = plan_repair(path, opts, run=run)
        journal.record(record="end", result="ok" if all(
            r == "done" for r, _ in results.values()) else "failed")
        return ApplyResult(plan, results, after, resumed_from is not None)
    finally:
        journal.close()


def _renumber(plan: Plan, first: int) -> Plan:
    if first == 1:
        return plan
    return replace(plan, actions=[replace(a, id=f"a{i}") for i, a in
                                  enumerate(plan.actions, first)])


def _step_records(records: list[dict]) -> list[dict]:
    return [r for r in records if r.get("record") == "steps"]


def _done_ids(records: list[dict]) -> set[str]:
    return {i for r in records if r.get("record") == "done" for i in r["ids"]}


def _carry_out(plan: Plan, journal: Journal, progress) -> dict[str, tuple[str, str]]:
    results: dict[str, tuple[str, str]] = {}
    made: set[str] = set()
    todo = list(plan.actions)
    done_count = 0
    while todo:
        # single-rename actions go together (one journal record for many); others alone
        batch = [todo.pop(0)]
        while todo and batch[0].kind == "quarantine" and todo[0].kind == "quarantine" and \
                len(batch) < BATCH:
            batch.append(todo.pop(0))
        prepared = []
        for action in batch:
            try:
                steps, data = _steps_for(action, plan, made)
            except (AcidToolError, OSError, ValueError) as exc:
                results[action.id] = ("failed", f"not done: {_what(exc)}")
                journal.record(record="failed", id=action.id, reason=_what(exc))
                continue
            prepared.append((action, steps, data))
        if not prepared:
            continue
        journal.record(record="steps", actions=[{"id": a.id, "steps": s}
                                                for a, s, _ in prepared])
        for action, steps, data in prepared:
            taken: list[dict] = []
            try:
                for step in steps:
                    taken.append(step)
                    _take(step, data)
            except KeyboardInterrupt as exc:
                problems = _roll_back(taken)
                journal.record(record="interrupted", id=action.id, problems=problems)
                raise Interrupted(f"interrupted during {action.id}, which was rolled back; "
                                  f"run `acidtool repair {plan.path} --apply` again to finish, "
                                  f"or `acidtool undo {journal.path}`",
                                  15 if isinstance(exc, Terminated) else 2) from None
            except (AcidToolError, OSError, ValueError) as exc:
                problems = _roll_back(taken)
                reason = f"failed and rolled back: {_what(exc)}" + (
                    f" (roll-back problems: {'; '.join(problems)})" if problems else "")
                results[action.id] = ("failed", reason)
                journal.record(record="failed", id=action.id, reason=reason)
                made.difference_update(s["path"] for s in steps if s["op"] == "mkdir")
                continue
            results[action.id] = ("done", "")
        journal.record(record="done", ids=[a.id for a, _, _ in prepared
                                           if results.get(a.id, ("",))[0] == "done"])
        done_count += len(batch)
        if progress:
            progress(done_count, len(plan.actions))
    return results


def _what(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


# ------------------------------------------------------------------------------------------------
# Undo


@dataclass
class UndoResult:
    journal: str
    path: str
    reversed: int
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict:
        return {"journal": self.journal, "path": self.path, "restored": self.ok,
                "steps_reversed": self.reversed, "problems": self.problems}


def undo(journal_path: str) -> UndoResult:
    records = read_journal(journal_path)
    begin = records[0]
    root = resolve(begin["path"])
    lock = root.child(LOCK_FILE)
    stale = _held(lock)
    if stale is not None and stale.get("journal") != str(journal_path) and \
            not _same_file(stale.get("journal"), journal_path):
        raise LockedError(f"an interrupted repair (journal {stale.get('journal')}) holds "
                          f"{lock.url}: undo that journal first, or finish it with "
                          "`acidtool repair --apply`")
    if stale is not None:
        drop_lock(lock)
    try:
        take_lock(lock, str(journal_path), "undo")
    except FileExistsError:
        _held(lock)
        raise LockedError(f"{lock.url} appeared: another repair or undo started") from None
    journal = Journal(journal_path)
    problems: list[str] = []
    count = 0
    try:
        journal.record(record="undo")
        for rec in reversed(_step_records(records)):
            for item in reversed(rec["actions"]):
                for step in reversed(item["steps"]):
                    problem = reverse(step)
                    count += 1
                    if problem:
                        problems.append(problem)
        journal.record(record="undone", problems=problems)
    except KeyboardInterrupt:
        raise Interrupted(f"undo interrupted; run `acidtool undo {journal_path}` again "
                          "to finish", 2) from None
    finally:
        journal.close()
        drop_lock(lock)
    return UndoResult(str(journal_path), root.url, count, problems)


def _same_file(a, b) -> bool:
    import os

    try:
        return a is not None and os.path.samefile(a, b)
    except OSError:
        return False


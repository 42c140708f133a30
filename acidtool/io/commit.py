"""The one commit protocol of every writer (convert, repair, undo, compact, the hiveacid writer):
a writer plans first, then commits through ``Commit``, which alone takes the lock and the
journal::

    with Commit(table, "compact", recover=(refused, "compaction")) as run:   # lock, recovery
        run.begin(journal_path, record="begin", ...)     # the run's journal, named in the lock
        with run.action("a1", interrupted=message) as action:
            action.take([Scratch(staging)])                # journaled, then taken
            ...                                            # staging, guards
            action.take(renames, shield=True)              # the commit: renames back to back
        run.end()

1. **Lock** the table (``io/lock.py``): ``.acidtool-lock`` in the table directory; a partition's
   writer locks its table. With ``recover``, the unfinished run a dead holder of the same
   command left is rolled back first (``io/recovery.py``); another command's is refused
   (``StaleRunRefused``, and its lock record is put back).
2. **Guards** under the lock, in the ``with`` block: the write id (``core.guards``), the
   provenance records of every delta (no source's rows committed twice), every path inside the
   table (``require_inside``).
3. **Staging**: new files are written under a hidden name (Hive ignores ``.`` and ``_``).
4. **Journal**: each action's steps are on disk before they are taken (``io/journal.py``); an
   action that fails is rolled back and recorded ``failed``, one interrupted is rolled back
   and recorded ``interrupted``; ``acidtool undo JOURNAL`` reverses what was finished.
5. **Provenance**: every delta a writer makes carries ``_acidtool_sources``.
6. **Rename** into place (``rename_into``: never over anything, never outside the table), and
   **release**: rolling back and releasing happen shielded from a second signal.
"""

from __future__ import annotations

import contextlib
import os
from typing import Callable, Iterator, Sequence

from ..core.errors import (
    COMMITTED,
    AcidToolError,
    Interrupted,
    PathError,
    Terminated,
    UsageError,
)
from ..core.guards import inside
from .fs import Location, kind_of, move
from .journal import Journal, JournalWriteError, Step
from .lock import (
    LOCK_FILE,
    LockedError,
    StaleRunRefused,
    TableLock,
    read_lock,
    shielded,
    table_of,
)
from .recovery import finish_stale, roll_back

__all__ = ["LOCK_FILE", "Commit", "LockedError", "StaleRunRefused", "TableLock", "read_lock",
           "refuse_link", "rename_into", "require_inside", "shielded", "table_of"]


def failures() -> tuple[type[BaseException], ...]:
    """What an action's failure is (rolled back, recorded, the run goes on); anything else
    stops the run once the action is rolled back. (pyarrow imported only when a writer runs.)"""
    import pyarrow as pa

    return (AcidToolError, OSError, ValueError, pa.ArrowException)


class Commit:
    """One writer's run on a table: its lock held from ``with`` to its end, its journal
    (``begin``), its actions (``action``). See the module's text."""

    def __init__(self, table: Location, command: str, *, wait: float = 0.0,
                 recover: tuple[Callable[[str, list[dict]], str], str] | None = None,
                 journal: str | None = None) -> None:
        self.lock = TableLock(table_of(table), journal, command)
        self.table = table
        self.command, self.wait, self.recover = command, wait, recover
        self.journal: Journal | None = None

    def __enter__(self) -> Commit:
        self.lock.acquire(wait=self.wait)
        if self.recover is not None:
            refused, by = self.recover
            try:
                finish_stale(self.lock, self.command, refused, by)
            except BaseException as exc:
                self.__exit__(type(exc), exc, None)
                raise
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if self.journal is not None:
                self.journal.close()
        finally:
            # a run that is not ours to finish keeps its lock record
            self.lock.release(restore=isinstance(exc, StaleRunRefused))

    @property
    def stale(self) -> dict | None:
        """The lock record of the dead holder this run took the lock over from."""
        return self.lock.stale

    def begin(self, path: str, /, *, fresh: bool = True, **first) -> Journal:
        """This run's journal ``path``: a new file (``fresh``: one that exists is refused),
        named in the lock before its first record (a run that finds the lock left by a kill
        takes the same journal on); ``first``: that first record."""
        if fresh:
            exclusive_journal(path)
        self.lock.name_journal(path)
        self.journal = Journal(path)
        if first:
            self.record(**first)
        return self.journal

    def record(self, **fields) -> None:
        assert self.journal is not None, "Commit.begin first"
        self.journal.record(**fields)

    def steps(self, actions: dict[str, Sequence[Step]]) -> None:
        """One record: the steps these actions are about to take."""
        self.record(record="steps", actions=[{"id": aid, "steps": [s.record() for s in st]}
                                             for aid, st in actions.items()])

    def done(self, ids: Sequence[str]) -> None:
        self.record(record="done", ids=list(ids))

    def end(self, ok: bool = True) -> None:
        self.record(record="end", result="ok" if ok else "failed")
        if ok and self.journal is not None:
            COMMITTED[:] = [(self.table.url, str(self.journal.path))]  # the last one

    @contextlib.contextmanager
    def action(self, aid: str, *, interrupted: Callable[[list[str]], str] | None = None,
               failed: str = "", done: bool = True, swallow: bool = True
               ) -> Iterator[Action]:
        """One action of the run: its steps taken through ``Action.take``. Done: recorded
        ``done`` (unless ``done=False``: the caller records a batch's at once). A failure
        (``failures()``): rolled back, recorded with ``failed`` + why, and kept in
        ``Action.failed`` (raised again unless ``swallow``). An interruption: rolled back,
        recorded, and raised as ``Interrupted(interrupted(problems))`` (as it came without
        ``interrupted``). A journal that cannot be written stops the run."""
        action, failure = Action(self, aid), failures()
        try:
            yield action
        except KeyboardInterrupt as exc:
            problems = roll_back(action.taken)
            with shielded():
                self.record(record="interrupted", id=aid, problems=problems)
            if interrupted is None:
                raise
            raise Interrupted(interrupted(problems),
                              15 if isinstance(exc, Terminated) else 2) from None
        except JournalWriteError:
            roll_back(action.taken)
            raise
        except failure as exc:
            problems = roll_back(action.taken)
            action.failed = f"{failed}{str(exc) or type(exc).__name__}" + (
                f" (roll-back problems: {'; '.join(problems)})" if problems else "")
            self.record(record="failed", id=aid, reason=action.failed)
            if not swallow:
                raise
            return
        except BaseException as exc:  # not a failure the run goes on after: rolled back
            problems = roll_back(action.taken)
            with shielded():
                self.record(record="failed", id=aid, problems=problems,
                            reason=str(exc) or type(exc).__name__)
            raise
        if done:
            self.done([aid])


class Action:
    """The steps one action of a ``Commit`` has taken (rolled back if it does not finish)."""

    def __init__(self, run: Commit, aid: str) -> None:
        self.run, self.id = run, aid
        self.taken: list[Step] = []
        self.failed: str | None = None

    def take(self, steps: Sequence[Step], *, shield: bool = False,
             journaled: bool = False) -> None:
        """Journal ``steps`` (unless ``journaled`` already), then take them in order;
        ``shield``: back to back, a signal meanwhile honoured after the last."""
        if not journaled:
            self.run.steps({self.id: steps})
        with shielded() if shield else contextlib.nullcontext():
            for step in steps:
                self.taken.append(step)
                step.take()


# ------------------------------------------------------------------------------------------------
# Guards on paths


def require_inside(table: Location, *locs: Location, what: str = "") -> None:
    """Every location is inside the table (a writer never renames outside it)."""
    for loc in locs:
        if not inside(loc.url, table.url):
            raise UsageError(f"{what or 'a step'} would write {loc.url}, outside the table "
                             f"{table.url}: refused")


def refuse_link(table: Location, loc: Location, what: str) -> None:
    """A local directory inside the table that a writer moves files into must not be, or lie
    below, a symbolic link: the table's files would leave it."""
    if not (loc.is_local and table.is_local and inside(loc.path, table.path)):
        return
    here = table.path.rstrip("/")
    for part in loc.path[len(here):].strip("/").split("/"):
        if not part:
            continue
        here = f"{here}/{part}"
        if os.path.islink(here):
            raise UsageError(f"{what} {loc.path}: {here} is a symbolic link; files that leave "
                             "the table must stay in it: remove the link (or give another "
                             "directory with --quarantine)")


def rename_into(table: Location, src: Location, dst: Location) -> None:
    """The commit of a new directory or file: one rename, never over an existing ``dst``,
    never outside ``table``."""
    require_inside(table, dst, what="the commit")
    if kind_of(dst) != "missing":
        raise FileExistsError(f"{dst.url} exists")
    move(src, dst)


def exclusive_journal(path: str) -> None:
    """A journal is one run's: a file that exists already is refused."""
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise UsageError(f"--journal {path}: exists already; a journal records one run (give "
                         "a new file, or leave --journal out)") from None
    except OSError as exc:
        raise PathError(f"cannot write the journal {path}: {exc.strerror or exc} (give "
                        "another with --journal FILE)") from None
    os.close(fd)

"""Recovery from a journal (``io/journal.py``): what every writer's apply and the next run
after a kill need (repair, undo, compact). An action's steps taken so far are reversed by
``roll_back``; ``finish_interrupted`` rolls back every action an interrupted run journaled and
did not finish; ``require_journal_inside`` refuses a journal naming paths outside its table.
"""

from __future__ import annotations

from typing import Callable

from ..core.errors import AcidToolError, UsageError
from ..core.guards import absorbing, inside, later_delete_deltas, single_write
from ..core.names import is_hidden
from .fs import Location, list_dir, resolve
from .journal import (
    Journal,
    MakeDir,
    PlaceDir,
    Rename,
    Scratch,
    Step,
    exists,
    read_journal,
    remove_empty_dir,
    step_of,
    step_urls,
)
from .lock import StaleRunRefused, TableLock, shielded


def roll_back(steps: list[Step]) -> list[str]:
    """Reverse the steps taken of one action, last first, shielded from a second signal.
    Directories made are left (empty, in the quarantine; undo removes them): the actions
    journaled with this one may use them."""
    problems = []
    with shielded():
        for step in reversed(steps):
            if isinstance(step, MakeDir):
                continue
            problem = step.reverse()
            if problem:
                problems.append(problem)
    return problems


def undo_unfinished(records: list[dict]) -> bool:
    """Whether the journal's last undo began and did not end."""
    order = [r.get("record") for r in records]
    began = max((i for i, k in enumerate(order) if k == "undo"), default=-1)
    ended = max((i for i, k in enumerate(order) if k == "undone"), default=-1)
    return began > ended


def require_journal_inside(records: list[dict], root: Location) -> None:
    """Every path a journal names lies in its table or its quarantine."""
    begin = records[0]
    places = [begin.get("path", ""), begin.get("quarantine", "")]
    quarantine = begin.get("quarantine", "")
    for rec in step_records(records):
        for item in rec.get("actions", []):
            for raw in item.get("steps", []):
                step = step_of(raw)
                for url in step_urls(step):
                    if isinstance(step, MakeDir) and quarantine and inside(quarantine, url):
                        continue  # a directory made on the way to a --quarantine elsewhere
                    if not any(p and inside(url, p) for p in places):
                        raise UsageError(f"the journal names {url}, outside its table "
                                         f"{places[0]} and quarantine: refused, nothing done")


def finish_interrupted(records: list[dict]) -> None:
    """Roll back the actions an interrupted apply journaled but did not finish."""
    done = done_ids(records)
    for rec in reversed(step_records(records)):
        for item in reversed(rec["actions"]):
            if item["id"] not in done:
                problems = roll_back([step_of(s) for s in item["steps"]])
                if problems:
                    raise AcidToolError("the interrupted apply's unfinished action "
                                        f"{item['id']} could not be rolled back: "
                                        + "; ".join(problems))


def step_records(records: list[dict]) -> list[dict]:
    return [r for r in records if r.get("record") == "steps"]


def done_ids(records: list[dict]) -> set[str]:
    return {i for r in records if r.get("record") == "done" for i in r["ids"]}


def journal_unfinished(journal: str) -> bool:
    """Whether a journal's apply, or its last undo, began and did not end."""
    try:
        records = read_journal(journal)
    except AcidToolError:
        return False
    kinds = {r.get("record") for r in records}
    return bool(kinds) and (undo_unfinished(records) or
                            ("end" not in kinds and "undo" not in kinds))


def remove_empty_scratch(records: list[dict]) -> None:
    """The staging directories (``Scratch`` steps) of finished actions that a kill left, empty,
    after their renames: removed (one holding anything is left)."""
    for rec in step_records(records):
        for item in rec.get("actions", []):
            for raw in item["steps"]:
                step = step_of(raw)
                if isinstance(step, Scratch) and exists(step.path):
                    try:
                        remove_empty_dir(step.path)
                    except OSError:
                        pass


def held_by_another(journal: str, records: list[dict]) -> str:
    """What a writer says when the dead holder of the table's lock was another command's run
    (``finish_stale``'s ``refused`` of the writers that name no command of their own)."""
    what = records[0].get("command", "writer") if records else "writer"
    return (f"an interrupted {what} (journal {journal}) holds this table's lock: finish or "
            f"undo it first (`acidtool undo {journal}`)")


def finish_stale(lock: TableLock, command: str, refused: Callable[[str, list[dict]], str],
                 by: str) -> None:
    """Roll back the unfinished run of ``command`` whose holder died with this table's lock
    (the emptied staging directories of its finished actions removed too), and end its
    journal "rolled back by the next ``by``". The unfinished run of another command is not
    touched: ``StaleRunRefused``, saying ``refused(journal, its records)``."""
    stale = lock.stale
    if stale is None or not lock.stale_is_ours() or not stale.get("journal") or \
            not journal_unfinished(stale["journal"]):
        return
    journal = stale["journal"]
    records = read_journal(journal)
    if not records or records[0].get("command") != command:
        raise StaleRunRefused(refused(journal, records))
    require_journal_inside(records, resolve(records[0]["path"]))
    finish_interrupted(records)
    remove_empty_scratch(records)
    Journal(journal).record(record="end", result=f"rolled back by the next {by}")


ABSORBED = "a compaction took it in"
CHANGED_LATER = "a later write changed its rows"


def _skip_checks(records: list[dict]) -> bool:
    """A compaction's journal (its undo takes no row out, whatever came after), or one whose
    undo finished (what is gone now is its own doing)."""
    return bool(records and records[0].get("command") == "compact") or \
        any(r.get("record") == "undone" and not r.get("problems") for r in records)


def _single_writes(steps: list[Step]) -> tuple[list[tuple[Location, str, int]], set[str]]:
    """(directory, its name, its write id) of each directory of one write the commit placed,
    and the urls of everything it placed."""
    placed = [s.dst for s in steps if isinstance(s, (PlaceDir, Rename))]
    out = []
    for loc in placed:
        name = loc.url.rstrip("/").rpartition("/")[2]
        one = single_write(name)
        if one is not None:  # not a file, a quarantine, a compaction's output
            out.append((loc, name, one[1]))
    return out, {loc.url for loc in placed}


def _siblings(loc: Location, own: set[str], listed: dict) -> tuple[Location, list[str]]:
    """``loc``'s partition directory and the directories in it now, less the commit's own
    (listed once a partition)."""
    parent_url = loc.url.rstrip("/").rpartition("/")[0]
    if parent_url not in listed:
        parent = resolve(parent_url)
        listed[parent_url] = parent, [
            e.path for e in (list_dir(parent) if exists(parent) else [])
            if e.is_dir and parent.child(e.path).url not in own]
    return listed[parent_url]


def changed_since(records: list[dict], steps: list[Step]) -> list[str]:
    """Preconditions of undo that no journal records, since they are about what came after,
    for each directory of a single write the commit placed (a delta, a delete delta or a base
    of one write id):

    * it is still the only one holding its write, not taken into a compaction's output since
      (``core.guards.absorbing``): removing it would leave the write in the table, and undo
      would say it had taken it back. (Checked also where it is gone: the Cleaner, or
      ``repair --select ACID021``, removes it once the compaction is done.)
    * no delete delta of a later write names a row it wrote: removing it would undo a write
      another one built on (an update's rows deleted later would come back as they were
      before the update; an append's rows updated later would stay, updated)."""
    if _skip_checks(records):
        return []
    single, own = _single_writes(steps)
    problems: list[str] = []
    listed: dict[str, tuple[Location, list[str]]] = {}
    for loc, name, write_id in single:
        parent, others = _siblings(loc, own, listed)
        cover = absorbing(name, others)
        if cover is not None:
            problems.append(f"{loc.url}: {ABSORBED} ({cover}): its write is in that "
                            "directory too, and removing this one would not take it back")
            continue
        if name.startswith("delete_delta_") or not exists(loc):
            continue
        for later in later_delete_deltas(write_id, others):
            if _names_rows_of(parent.child(later), write_id):
                problems.append(f"{loc.url}: {CHANGED_LATER} ({later} deletes or updates "
                                "rows it wrote)")
                break
    return problems


def _names_rows_of(delete_delta: Location, write_id: int) -> bool:
    """Whether a delete event in ``delete_delta``'s files names a row of ``write_id``."""
    import pyarrow.compute as pc

    from .orc import open_orc, scan_batches

    for entry in list_dir(delete_delta):
        if entry.is_dir or is_hidden(entry.path):
            continue
        src = open_orc(delete_delta, entry.path)
        if not src.is_acid:
            continue
        for batch in scan_batches(src, batch_size=65536, columns=["originalTransaction"]):
            if pc.any(pc.equal(batch.column(0), write_id)).as_py():
                return True
    return False

"""The write-ahead journal of ``repair --apply`` and ``undo``, and the steps they are made of.

The journal is a local file of JSON lines; each record is flushed and fsync'ed before the step
it announces is taken (docs/repair.md describes the records). A step is a typed value holding
locations (``MakeDir``, ``WriteNew``, ``Rename``, ``Swap``), turned into JSON only when the
journal records it. Steps never overwrite and never delete anything but what a repair itself
wrote: a rename refuses an existing destination, a new file refuses an existing name, and a
``Swap`` puts a file's new bytes in place with one replacing rename (the old ones stay in the
quarantine), so that a reader never finds the file missing.

Every step is reversed by what the filesystem shows (``reverse``), and never removes bytes it
did not write: a file whose hash is not the one journaled is left where it is and named.

``ACIDTOOL_KILL_AT=N`` (for the fault-injection tests, documented in docs/repair.md) kills this
process with SIGKILL at its N-th fault point: after each journal record and after each
filesystem step.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Union

from ..core.errors import PathError, UsageError
from .fileops import (  # noqa: F401 - the steps' operations, used from here by the writers
    exists,
    fault_point,
    list_names,
    newest_change,
    remove_empty_dir,
    remove_file,
    remove_tree,
    rename,
    replace_file,
    size_of,
    sizes_below,
    write_new,
)
from .fs import Location, kind_of, read_bytes, resolve

JOURNAL_VERSION = 1


def state_dir() -> Path:
    """Where journals go by default: $ACIDTOOL_STATE_DIR, else $XDG_STATE_HOME/acidtool, else
    ~/.local/state/acidtool."""
    explicit = os.environ.get("ACIDTOOL_STATE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                            "state")
    return Path(base) / "acidtool"


def new_run_id(token: str | None = None) -> str:
    """A run's id, as every writer spells it: UTC time, then ``token`` (default: random)."""
    import uuid

    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + (token or uuid.uuid4().hex[:8])


def default_journal(command: str, run: str) -> str:
    """Where a run's journal goes when none is given: the state directory's ``journals/``."""
    return str(state_dir() / "journals" / (f"{command}-{run}.jsonl" if command else
                                            f"{run}.jsonl"))


class JournalWriteError(PathError):
    """The journal could not be written (a full disk, a lost mount): no step it would have
    announced was taken."""


class Journal:
    """Appends records to a journal file; each is on disk before ``record`` returns."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.file = open(self.path, "a", encoding="utf-8")
        except OSError as exc:
            raise JournalWriteError(f"cannot write the journal {self.path}: "
                                    f"{exc.strerror or exc} (give another with --journal FILE)"
                                    ) from None

    def record(self, **fields) -> None:
        if fields.get("record") == "begin":  # what its relative paths are relative to
            fields.setdefault("cwd", os.getcwd())
        fields.setdefault("at", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        try:
            self.file.write(json.dumps(fields, sort_keys=False) + "\n")
            self.file.flush()
            os.fsync(self.file.fileno())
        except OSError as exc:
            raise JournalWriteError(f"the journal {self.path} could not be written: "
                                    f"{exc.strerror or exc}") from None
        fault_point()

    def close(self) -> None:
        try:
            self.file.close()
        except OSError:
            pass  # what could not be flushed was reported by record


def read_journal(path: str | Path) -> list[dict]:
    """Every complete record; a last line cut short by a kill is left out. An empty file
    (a run killed before its first record) is an empty list."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such journal") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: a directory, not a journal") from None
    except OSError as exc:
        raise PathError(f"{path}: {exc.strerror or exc}") from None
    lines = data.split(b"\n")
    records = []
    for n, line in enumerate(lines, 1):
        if not line and n == len(lines):
            break
        try:
            doc = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            if n == len(lines):
                break  # the record being written when the process died
            raise UsageError(f"{path}:{n}: not a journal record (not JSON)") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("record"), str):
            raise UsageError(f"{path}:{n}: not a journal record")
        records.append(doc)
    if not records:
        return []
    if records[0].get("record") != "begin" or not isinstance(records[0].get("path"), str):
        raise UsageError(f"{path}: not an acidtool repair journal")
    if records[0].get("version") != JOURNAL_VERSION:
        raise UsageError(f"{path}: journal version {records[0].get('version')}, this acidtool "
                         f"reads version {JOURNAL_VERSION}")
    return anchored(records)


# the keys of a journal's records that hold a path: the begin record's, and its steps'
_BEGIN_PATHS = ("path", "quarantine", "scratch", "sources_moved_to")
_STEP_PATHS = ("path", "src", "dst", "target", "staged", "keep")


def anchored(records: list[dict]) -> list[dict]:
    """The records of a journal written in another working directory, its relative local
    paths (as the command was given them) made absolute from that directory (its begin
    record's ``cwd``): an undo run elsewhere then acts on the same table, not on one of the
    same relative name there."""
    cwd = records[0].get("cwd")
    if not isinstance(cwd, str) or not cwd or cwd == os.getcwd():
        return records

    def fix(doc: dict, keys: tuple[str, ...]) -> dict:
        return {k: os.path.join(cwd, v) if k in keys and _relative(v) else v
                for k, v in doc.items()}

    out = [fix(records[0], _BEGIN_PATHS)]
    for rec in records[1:]:
        if rec.get("record") == "steps":
            rec = {**rec, "actions": [{**a, "steps": [fix(st, _STEP_PATHS)
                                                      for st in a.get("steps", [])]}
                                      for a in rec.get("actions", [])]}
        out.append(rec)
    return out


def _relative(value) -> bool:
    """Whether a journaled location is a relative local path (not a URL)."""
    return isinstance(value, str) and bool(value) and not value.startswith("/") and \
        "://" not in value and not value.startswith("file:")


# ------------------------------------------------------------------------------------------------
# Steps


def sha256_of(loc: Location) -> str | None:
    """The hash of a file's bytes, None when there is no file."""
    if kind_of(loc) != "file":
        return None
    return hashlib.sha256(read_bytes(loc)).hexdigest()


@dataclass(frozen=True)
class MakeDir:
    op: ClassVar[str] = "mkdir"
    path: Location

    def record(self) -> dict:
        return {"op": self.op, "path": self.path.url}

    def take(self) -> None:
        if self.path.is_local:
            os.mkdir(self.path.path)
        else:
            self.path.fs.create_dir(self.path.path, recursive=False)
        fault_point()

    def reverse(self) -> str | None:
        if exists(self.path) and not remove_empty_dir(self.path):
            return f"{self.path.url} is not empty (it was made by the repair; look inside)"
        return None

    def check(self) -> str | None:
        return None


@dataclass(frozen=True)
class WriteNew:
    """A new file (never over an existing one), on disk when ``take`` returns. ``data`` is not
    journaled (its size and hash are)."""

    op: ClassVar[str] = "write"
    path: Location
    sha256: str
    size: int
    data: bytes = b""

    @classmethod
    def of(cls, path: Location, data: bytes) -> WriteNew:
        return cls(path, hashlib.sha256(data).hexdigest(), len(data), data)

    def record(self) -> dict:
        return {"op": self.op, "path": self.path.url, "size": self.size, "sha256": self.sha256}

    def take(self) -> None:
        write_new(self.path, self.data)

    def reverse(self, where: Location | None = None) -> str | None:
        loc = where or self.path
        if not exists(loc):
            return None
        problem = self.check(loc)
        if problem:
            return problem
        remove_file(loc)
        return None

    def check(self, where: Location | None = None) -> str | None:
        loc = where or self.path
        found = sha256_of(loc)
        if found is not None and found != self.sha256:
            return (f"{loc.url} changed after the repair wrote it (its bytes are not the ones "
                    "journaled): left as it is; remove it by hand if it is not wanted")
        return None


@dataclass(frozen=True)
class Rename:
    """One rename on one filesystem (atomic on a local disk and HDFS); never over ``dst``.
    ``staged``: ``src`` is something the repair wrote (its absence is no problem on undo);
    ``sha256``: the hash of the new file that takes ``dst``'s name."""

    op: ClassVar[str] = "rename"
    src: Location
    dst: Location
    staged: bool = False
    sha256: str | None = None

    def record(self) -> dict:
        out: dict = {"op": self.op, "src": self.src.url, "dst": self.dst.url}
        if self.staged:
            out["staged"] = True
        if self.sha256:
            out["sha256"] = self.sha256
        return out

    def take(self) -> None:
        rename(self.src, self.dst)

    def taken(self) -> bool:
        """Whether what the filesystem shows is this rename taken."""
        if not exists(self.dst) or exists(self.src):
            return False
        return self.sha256 is None or sha256_of(self.dst) == self.sha256

    def reverse(self) -> str | None:
        there, back = exists(self.dst), exists(self.src)
        if there and self.sha256 is not None and sha256_of(self.dst) != self.sha256:
            there = False  # what is there is the file the repair replaces: not taken yet
        if there and not back:
            rename(self.dst, self.src)
        elif there and back:
            return f"both {self.src.url} and {self.dst.url} exist: keep one by hand"
        elif not there and not back and not self.staged:
            return f"{self.src.url} is gone, and not at {self.dst.url} either"
        return None

    def check(self) -> str | None:
        """Before undo changes anything: what this rename moved is still somewhere (a file
        it moved out of the table, deleted since, would leave the undo half done)."""
        if not self.staged and not exists(self.src) and not exists(self.dst):
            return (f"{self.src.url} is gone, and not at {self.dst.url} either (removed after "
                    "the commit): undo cannot put it back")
        return None


@dataclass(frozen=True)
class Swap:
    """A file's new bytes put in place of its old ones without a moment where it is missing:
    the old file is kept in the quarantine (``keep``: a hard link on a local disk, a copy
    elsewhere), then the staged new file replaces it with one rename (local disks; elsewhere a
    delete and a rename, the nearest a store without a replacing rename allows)."""

    op: ClassVar[str] = "swap"
    target: Location
    staged: Location
    keep: Location
    old_sha256: str
    new_sha256: str

    def record(self) -> dict:
        return {"op": self.op, "target": self.target.url, "staged": self.staged.url,
                "keep": self.keep.url, "old_sha256": self.old_sha256,
                "new_sha256": self.new_sha256}

    def take(self) -> None:
        if sha256_of(self.target) != self.old_sha256:
            raise FileExistsError(f"{self.target.url} changed since it was planned")
        if self.target.is_local:
            os.link(self.target.path, self.keep.path)
        else:
            write_new(self.keep, read_bytes(self.target))
        fault_point()
        replace_file(self.staged, self.target)

    def reverse(self) -> str | None:
        now, kept = sha256_of(self.target), sha256_of(self.keep)
        if now == self.new_sha256 or (now is None and kept == self.old_sha256):
            if kept != self.old_sha256:
                return (f"{self.keep.url} does not hold the original bytes of "
                        f"{self.target.url}: put it back by hand")
            replace_file(self.keep, self.target)
        elif now == self.old_sha256:
            if kept is not None:  # the replace was not taken: drop the kept link or copy
                if kept != self.old_sha256:
                    return f"{self.keep.url} changed after the repair: left as it is"
                remove_file(self.keep)
        elif now is not None:
            return (f"{self.target.url} changed after the repair (its bytes are neither the "
                    "original nor what the repair wrote): left as it is"
                    + (f"; the original is {self.keep.url}" if kept is not None else ""))
        return None

    def check(self) -> str | None:
        now = sha256_of(self.target)
        if now is not None and now not in (self.old_sha256, self.new_sha256):
            return (f"{self.target.url} changed after the repair (its bytes are neither the "
                    "original nor what the repair wrote)")
        return None


@dataclass(frozen=True)
class Scratch:
    """A staging directory of a unique hidden name, made for one run's files: everything in
    it was written by that run, so reversing removes it with what it holds."""

    op: ClassVar[str] = "scratch"
    path: Location

    def record(self) -> dict:
        return {"op": self.op, "path": self.path.url}

    def take(self) -> None:
        MakeDir(self.path).take()

    def reverse(self) -> str | None:
        if exists(self.path):
            remove_tree(self.path)
        return None

    def check(self) -> str | None:
        return None


@dataclass(frozen=True)
class PlaceDir:
    """A staged directory renamed into the table (the commit of a compaction); ``files``: the
    hash of each file in it (name -> sha256). Reversed, it goes back to its staging place
    (which the Scratch step before it then removes), unless its files changed."""

    op: ClassVar[str] = "place"
    src: Location
    dst: Location
    files: tuple[tuple[str, str], ...]

    def record(self) -> dict:
        return {"op": self.op, "src": self.src.url, "dst": self.dst.url,
                "files": dict(self.files)}

    def take(self) -> None:
        rename(self.src, self.dst)

    def taken(self) -> bool:
        return exists(self.dst) and not exists(self.src)

    def reverse(self) -> str | None:
        if not exists(self.dst):
            return None
        problem = self.check()
        if problem:
            return problem
        if exists(self.src):
            return f"both {self.src.url} and {self.dst.url} exist: keep one by hand"
        missing = []  # the staging directories, removed once the commit was done
        parent = _parent(self.src)
        while not exists(parent):
            missing.append(parent)
            parent = _parent(parent)
        for d in reversed(missing):
            MakeDir(d).take()
        rename(self.dst, self.src)
        return None

    def placed_by_another(self) -> bool:
        """Whether ``dst`` holds a directory another run placed (its run marker differs)."""
        mine = dict(self.files).get(RUN_FILE)
        return mine is not None and exists(self.dst) and \
            sha256_of(self.dst.child(RUN_FILE)) != mine

    def check(self) -> str | None:
        if not exists(self.dst) or exists(self.src):
            return None
        found = {name: sha256_of(self.dst.child(name)) for name, _ in self.files}
        mine = dict(self.files).get(RUN_FILE)
        if mine is not None and found[RUN_FILE] != mine:
            other = run_of(self.dst)
            return (f"{self.dst.url} was placed by another run"
                    + (f" ({other})" if other else "")
                    + ", not by the one this journal records (equal rows are not the same "
                    "output): left as it is; undo that run's own journal instead")
        changed = sorted(name for name, digest in self.files if found[name] != digest)
        extra = sorted(set(list_names(self.dst)) - set(found))
        if changed or extra:
            return (f"{self.dst.url} changed after it was written ("
                    + ", ".join([f"{n} changed" for n in changed] + [f"{n} added" for n in extra])
                    + "): left as it is")
        return None


@dataclass(frozen=True)
class Requires:
    """A precondition of undo, journaled with the commit it guards: what the commit superseded
    (a directory the compaction read, with the size of every file in it, or a file) is still
    there as it was. A compaction's output is the only copy of its rows once the Cleaner (or
    ``repair --select ACID021``) removed its inputs: undoing it then would lose them, so undo
    refuses. Taking it changes nothing; reversing it changes nothing."""

    op: ClassVar[str] = "requires"
    path: Location
    files: tuple[tuple[str, int], ...]  # name inside ``path`` -> size (a directory)
    size: int = -1  # a file's size; -1: ``path`` is a directory
    why: str = "superseded by the commit"

    def record(self) -> dict:
        out: dict = {"op": self.op, "path": self.path.url, "why": self.why}
        if self.size >= 0:
            out["size"] = self.size
        else:
            out["files"] = dict(self.files)
        return out

    def take(self) -> None:
        return None

    def reverse(self) -> str | None:
        return None

    def check(self) -> str | None:
        kind = kind_of(self.path)
        if kind == "missing":
            return f"{self.path.url} is gone ({self.why})"
        if self.size >= 0:  # a file
            return None if kind == "file" and size_of(self.path) == self.size \
                else f"{self.path.url} changed since the commit superseded it: {self.why}"
        now = dict(sizes_below(self.path))
        changed = sorted(n for n, size in self.files if now.get(n) != size) + \
            sorted(set(now) - {n for n, _ in self.files})
        if changed:
            return (f"{self.path.url} is not as the commit left it ({', '.join(changed[:3])}"
                    f"{' ...' if len(changed) > 3 else ''} gone or changed; {self.why})")
        return None


Step = Union[MakeDir, WriteNew, Rename, Swap, Scratch, PlaceDir, Requires]


RUN_FILE = "_acidtool_run"  # in each directory a commit places: which run placed it


def run_marker(run: str, command: str) -> bytes:
    """What ``RUN_FILE`` holds: the run that placed the directory (hidden from Hive by its
    ``_``). Two runs that write the same rows place different bytes here, so undo of one run
    never takes another's output for its own."""
    return json.dumps({"run": run, "command": command}).encode()


def run_of(loc: Location) -> str | None:
    """The run named by a placed directory's ``RUN_FILE`` (None: none, or unreadable)."""
    if kind_of(loc.child(RUN_FILE)) != "file":
        return None
    try:
        doc = json.loads(read_bytes(loc.child(RUN_FILE)))
    except (OSError, ValueError):
        return None
    return doc.get("run") if isinstance(doc, dict) else None


def _parent(loc: Location) -> Location:
    return Location(loc.store, posixpath.dirname(loc.path.rstrip("/")),
                    loc.url.rstrip("/").rsplit("/", 1)[0])


def step_of(record: dict) -> Step:
    """A journaled step as a value again (its locations resolved)."""
    op = record.get("op")
    try:
        if op == "mkdir":
            return MakeDir(resolve(record["path"]))
        if op == "write":
            return WriteNew(resolve(record["path"]), record["sha256"], int(record["size"]))
        if op == "rename":
            return Rename(resolve(record["src"]), resolve(record["dst"]),
                          bool(record.get("staged")), record.get("sha256"))
        if op == "scratch":
            return Scratch(resolve(record["path"]))
        if op == "place":
            return PlaceDir(resolve(record["src"]), resolve(record["dst"]),
                            tuple(sorted(dict(record["files"]).items())))
        if op == "requires":
            files = record.get("files")
            return Requires(resolve(record["path"]),
                            tuple(sorted((str(k), int(v)) for k, v in dict(files or {}).items())),
                            int(record.get("size", -1)),
                            str(record.get("why", "superseded by the commit")))
        if op == "swap":
            return Swap(resolve(record["target"]), resolve(record["staged"]),
                        resolve(record["keep"]), record["old_sha256"], record["new_sha256"])
    except (KeyError, TypeError, ValueError):
        pass
    raise UsageError(f"not a journaled step: {json.dumps(record)[:200]}")


def step_urls(step: Step) -> list[str]:
    if isinstance(step, (MakeDir, WriteNew, Scratch, Requires)):
        return [step.path.url]
    if isinstance(step, (Rename, PlaceDir)):
        return [step.src.url, step.dst.url]
    return [step.target.url, step.staged.url, step.keep.url]



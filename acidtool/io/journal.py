"""What ``repair --apply`` and ``undo`` need from storage: a write-ahead journal, a lock, and
the few filesystem steps a repair is made of (make a directory, write a new file, rename).

The journal is a local file of JSON lines; each record is flushed and fsync'ed before the step
it announces is taken (docs/repair.md describes the records). Steps never overwrite and never
delete anything but what a repair itself wrote: a rename refuses an existing destination, a new
file refuses an existing name.

``ACIDTOOL_KILL_AT=N`` (for the fault-injection tests) kills this process with SIGKILL at its
N-th fault point: after each journal record and after each filesystem step.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from pathlib import Path

from ..core.errors import PathError, UsageError
from .fs import Location, _translate, kind_of, move

JOURNAL_VERSION = 1
_faults = [0]


def fault_point() -> None:
    at = os.environ.get("ACIDTOOL_KILL_AT")
    if not at:
        return
    _faults[0] += 1
    if _faults[0] == int(at):
        os.kill(os.getpid(), signal.SIGKILL)


def state_dir() -> Path:
    """Where journals go by default: $ACIDTOOL_STATE_DIR, else $XDG_STATE_HOME/acidtool, else
    ~/.local/state/acidtool."""
    explicit = os.environ.get("ACIDTOOL_STATE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                            "state")
    return Path(base) / "acidtool"


class Journal:
    """Appends records to a journal file; each is on disk before ``record`` returns."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.file = open(self.path, "a", encoding="utf-8")
        except OSError as exc:
            raise PathError(f"cannot write the journal {self.path}: "
                            f"{exc.strerror or exc} (give another with --journal FILE)") from None

    def record(self, **fields) -> None:
        fields.setdefault("at", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        self.file.write(json.dumps(fields, sort_keys=False) + "\n")
        self.file.flush()
        os.fsync(self.file.fileno())
        fault_point()

    def close(self) -> None:
        self.file.close()


def read_journal(path: str | Path) -> list[dict]:
    """Every complete record; a last line cut short by a kill is left out."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such journal") from None
    except OSError as exc:
        raise PathError(f"{path}: {exc.strerror or exc}") from None
    records = []
    for n, line in enumerate(text.splitlines(), 1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            if n == len(text.splitlines()) and not text.endswith("\n"):
                break  # the record being written when the process died
            raise UsageError(f"{path}:{n}: not a journal record") from None
    if not records or records[0].get("record") != "begin":
        raise UsageError(f"{path}: not an acidtool repair journal")
    if records[0].get("version") != JOURNAL_VERSION:
        raise UsageError(f"{path}: journal version {records[0].get('version')}, this acidtool "
                         f"reads version {JOURNAL_VERSION}")
    return records


# ------------------------------------------------------------------------------------------------
# The lock: a hidden file in the table root (Hive ignores names starting with "."), naming the
# process that holds it and its journal.


def lock_info(lock: Location) -> dict | None:
    try:
        with lock.fs.open_input_stream(lock.path) if not lock.is_local else \
                open(lock.path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        if kind_of(lock) == "missing":
            return None
        raise _translate(exc, lock.url) from None
    try:
        return json.loads(data)
    except ValueError:
        return {"unreadable": True}


def holder_alive(info: dict) -> bool:
    """Whether the process named in a lock may still be running (another host: assume so)."""
    if info.get("host") != socket.gethostname():
        return True
    try:
        os.kill(int(info.get("pid", 0)), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError):
        return True
    return True


def take_lock(lock: Location, journal: str, command: str) -> None:
    """Create the lock; fails if it exists (a local disk: atomically)."""
    doc = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "journal": journal,
                      "command": command, "since": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                 time.gmtime())}).encode()
    if lock.is_local:
        fd = os.open(lock.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, doc)
            os.fsync(fd)
        finally:
            os.close(fd)
        return
    if kind_of(lock) != "missing":
        raise FileExistsError(lock.url)
    with lock.fs.open_output_stream(lock.path) as out:
        out.write(doc)


def drop_lock(lock: Location) -> None:
    try:
        if lock.is_local:
            os.unlink(lock.path)
        else:
            lock.fs.delete_file(lock.path)
    except FileNotFoundError:
        pass


# ------------------------------------------------------------------------------------------------
# Steps


def exists(loc: Location) -> bool:
    return kind_of(loc) != "missing"


def make_dir(loc: Location) -> None:
    if loc.is_local:
        os.mkdir(loc.path)
    else:
        loc.fs.create_dir(loc.path, recursive=False)
    fault_point()


def write_new(loc: Location, data: bytes) -> None:
    """A new file (never over an existing one), on disk when this returns."""
    if loc.is_local:
        fd = os.open(loc.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
    else:
        if exists(loc):
            raise FileExistsError(loc.url)
        with loc.fs.open_output_stream(loc.path) as out:
            out.write(data)
    fault_point()


def rename(src: Location, dst: Location) -> None:
    """One rename on one filesystem (atomic on a local disk and HDFS); never over ``dst``."""
    if exists(dst):
        raise FileExistsError(f"{dst.url} exists")
    move(src, dst)
    fault_point()


def remove_file(loc: Location) -> None:
    if loc.is_local:
        os.unlink(loc.path)
    else:
        loc.fs.delete_file(loc.path)


def remove_empty_dir(loc: Location) -> bool:
    """Remove a directory if it is empty; False if it holds anything."""
    try:
        if loc.is_local:
            os.rmdir(loc.path)
            return True
        from pyarrow.fs import FileSelector

        if loc.fs.get_file_info(FileSelector(loc.path)):
            return False
        loc.fs.delete_dir(loc.path)
        return True
    except OSError:
        if loc.is_local and os.path.isdir(loc.path) and os.listdir(loc.path):
            return False
        raise


def newest_change(loc: Location) -> float:
    """The latest modification time of a file, or of a directory and anything below it."""
    if loc.is_local:
        st = os.lstat(loc.path)
        newest = st.st_mtime
        if os.path.isdir(loc.path):
            for top, dirs, files in os.walk(loc.path):
                for name in dirs + files:
                    try:
                        newest = max(newest, os.lstat(os.path.join(top, name)).st_mtime)
                    except OSError:
                        pass
        return newest
    from pyarrow.fs import FileSelector, FileType

    info = loc.fs.get_file_info(loc.path)
    times = [info.mtime.timestamp()] if info.mtime is not None else []
    if info.type == FileType.Directory:
        for child in loc.fs.get_file_info(FileSelector(loc.path, recursive=True)):
            if child.mtime is not None:
                times.append(child.mtime.timestamp())
    return max(times) if times else time.time()

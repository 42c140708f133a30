"""The table's lock (``.acidtool-lock``), held by one writer at a time; a signal is recorded,
not raised, while the lock is taken or released (``shielded``). Taken by ``io/commit.py``'s
``Commit`` only: a writer never takes it by hand.

The lock names the table it was taken for, so that a lock copied with a table is not that
table's. On a local disk the holder also keeps an ``flock`` on it: a lock whose holder died is
taken over by exactly one of the processes that find it (the one whose ``flock`` succeeds);
elsewhere a lock is the holder's pid and host.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from dataclasses import dataclass, field
from typing import Iterator

from ..core.errors import (
    INTERRUPTED,
    SHIELD,
    TERMINATED,
    AcidToolError,
    ExitStatus,
    raise_if_terminated,
)
from ..core.guards import LOCK_FILE, table_root
from .fs import Location, kind_of, resolve, translate_error

__all__ = ["LOCK_FILE", "LockedError", "StaleRunRefused", "TableLock", "read_lock", "shielded",
           "table_of"]


class LockedError(AcidToolError):
    exit_status = ExitStatus.USAGE


@contextlib.contextmanager
def shielded() -> Iterator[None]:
    """SIGINT and SIGTERM are recorded, not raised, while this runs (the CLI's handlers look
    at ``SHIELD``): a roll-back or a lock's release is never cut in half. The signal is then
    honoured at the writer's next ``raise_if_terminated``."""
    SHIELD.append(1)
    try:
        yield
    finally:
        SHIELD.pop()


def table_of(loc: Location) -> Location:
    """The table directory of a table or partition location."""
    root_url = table_root(loc.url)
    if root_url == loc.url.rstrip("/"):
        return loc
    return resolve(root_url) if not loc.is_local else \
        Location(loc.store, table_root(loc.path), root_url)


def _identity(table: Location) -> str:
    """What tells this table's directory from a copy of it: its device and inode on a local
    disk, else its URL."""
    if table.is_local:
        st = os.stat(table.path)
        return f"{st.st_dev}:{st.st_ino}"
    return table.url.rstrip("/")


@dataclass
class TableLock:
    """The table's lock, held by this process (``acquire``, ``release``)."""

    table: Location
    journal: str | None
    command: str
    stale: dict | None = None  # the record of a dead holder's lock this one took over
    held: bool = False
    _fd: int | None = field(default=None, repr=False)

    @property
    def location(self) -> Location:
        return self.table.child(LOCK_FILE)

    def record(self) -> bytes:
        return json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                           "journal": self.journal, "command": self.command,
                           "table": self.table.url, "table_id": _identity(self.table),
                           "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}).encode()

    def acquire(self, wait: float = 0.0) -> TableLock:
        """Take the lock, waiting up to ``wait`` seconds for a live holder to let go."""
        deadline = time.monotonic() + wait
        while True:
            try:
                # a SIGTERM or SIGINT meanwhile is honoured once the lock is held, inside the
                # writer's own clean-up (never between creating the lock file and holding it)
                with shielded():
                    self._try()
                    self.held = True
                if TERMINATED or INTERRUPTED:  # signalled meanwhile: the lock goes as it came
                    self.release(restore=self.stale is not None)
                    raise_if_terminated()
                return self
            except LockedError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.05)

    def _try(self) -> None:
        lock = self.location
        if lock.is_local:
            self._try_local(lock.path)
            return
        info = read_lock(lock)
        if info is not None:
            if info.get("unreadable") or _alive(info):
                raise LockedError(_held_message(info, lock))
            self.stale = info
            lock.fs.delete_file(lock.path)
        if kind_of(lock) != "missing":
            raise LockedError(f"{lock.url} appeared: another writer started")
        with lock.fs.open_output_stream(lock.path) as out:
            out.write(self.record())

    def _try_local(self, path: str) -> None:
        import fcntl

        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
            created = True
        except FileExistsError:
            try:
                fd = os.open(path, os.O_RDWR)
            except FileNotFoundError:
                raise LockedError(f"{path} went while it was read: another writer is "
                                  "finishing") from None
            created = False
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise LockedError(_held_message(_parse(_read_fd(fd)), self.location)) from None
            if os.fstat(fd).st_ino != _inode(path):  # unlinked by its holder meanwhile
                raise LockedError(f"{path} was released while it was taken: try again")
            if not created:
                info = _parse(_read_fd(fd))
                if info.get("unreadable") and _young(path):
                    # created by a holder that has not written its record yet
                    raise LockedError(_held_message(info, self.location))
                if not info.get("unreadable") and _alive(info):
                    raise LockedError(_held_message(info, self.location))
                self.stale = info
                os.ftruncate(fd, 0)
            os.pwrite(fd, self.record(), 0)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def name_journal(self, journal: str) -> None:
        """Record the journal of this run in the lock (a run that finds the lock left by a
        dead holder finishes that journal)."""
        self.journal = journal
        self._write(self.record())

    def _write(self, data: bytes) -> None:
        lock = self.location
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, data, 0)
            os.fsync(self._fd)
        else:
            with lock.fs.open_output_stream(lock.path) as out:
                out.write(data)

    def release(self, restore: bool = False) -> None:
        """Drop the lock; ``restore``: put back the record of the dead holder this one took
        over (its run is someone else's to finish)."""
        with shielded():
            lock = self.location
            if restore and self.stale is not None:
                self._write(json.dumps({k: v for k, v in self.stale.items()
                                        if k != "unreadable"}).encode())
            else:
                try:
                    if lock.is_local:
                        os.unlink(lock.path)
                    else:
                        lock.fs.delete_file(lock.path)
                except FileNotFoundError:
                    pass
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            self.held = False

    def __enter__(self) -> TableLock:
        return self if self.held else self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()

    def stale_is_ours(self) -> bool:
        """Whether the dead holder's lock was taken for this very table (not a copy's)."""
        return self.stale is not None and not self.stale.get("unreadable") and \
            self.stale.get("table_id") == _identity(self.table)


def _young(path: str, seconds: float = 10.0) -> bool:
    try:
        return time.time() - os.stat(path).st_mtime < seconds
    except FileNotFoundError:
        return False


def _inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None


def _read_fd(fd: int) -> bytes:
    return os.pread(fd, 1 << 16, 0)


def _parse(data: bytes) -> dict:
    try:
        doc = json.loads(data)
    except ValueError:
        return {"unreadable": True}
    return doc if isinstance(doc, dict) else {"unreadable": True}


def read_lock(lock: Location) -> dict | None:
    """The lock's record, None when there is no lock."""
    try:
        if lock.is_local:
            with open(lock.path, "rb") as f:
                data = f.read()
        else:
            with lock.fs.open_input_stream(lock.path) as f:
                data = f.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        if kind_of(lock) == "missing":
            return None
        raise translate_error(exc, lock.url) from None
    return _parse(data)


def _alive(info: dict) -> bool:
    """Whether the process named in a lock may still be running (another host: assume so)."""
    if info.get("host") != socket.gethostname():
        return True
    try:
        os.kill(int(info.get("pid", 0)), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, TypeError, OverflowError):
        return True
    return True


def _held_message(info: dict, lock: Location) -> str:
    if info.get("unreadable"):
        return (f"another acidtool writer holds {lock.url} (its record is not readable yet); "
                "if none is running, remove it")
    return (f"another acidtool {info.get('command') or 'writer'} is running on this table (pid "
            f"{info.get('pid')} on {info.get('host')}, since {info.get('since')}); if it is "
            f"not, remove {lock.url}")


class StaleRunRefused(LockedError):
    """The table's lock names a run that is not this writer's to finish: the lock's record is
    put back as it was when this writer lets go."""

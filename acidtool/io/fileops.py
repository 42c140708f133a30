"""The filesystem operations a journal's steps are made of (``io/journal.py``), each followed
by a fault point: ``ACIDTOOL_KILL_AT=N`` kills this process with SIGKILL at its N-th (the
fault-injection tests)."""

from __future__ import annotations

import os
import signal
import time

from .fs import Location, kind_of, move

_faults = [0]


def exists(loc: Location) -> bool:
    return kind_of(loc) != "missing"


def fault_point() -> None:
    at = os.environ.get("ACIDTOOL_KILL_AT")
    if not at:
        return
    _faults[0] += 1
    if _faults[0] == int(at):
        os.kill(os.getpid(), signal.SIGKILL)




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


def replace_file(src: Location, dst: Location) -> None:
    """``src`` renamed over the file ``dst``: one atomic rename on a local disk."""
    if src.is_local and dst.is_local:
        os.replace(src.path, dst.path)
    else:
        if exists(dst):
            dst.fs.delete_file(dst.path)
        move(src, dst)
    fault_point()


def remove_file(loc: Location) -> None:
    if loc.is_local:
        os.unlink(loc.path)
    else:
        loc.fs.delete_file(loc.path)
    fault_point()


def remove_empty_dir(loc: Location) -> bool:
    """Remove a directory if it is empty; False if it holds anything."""
    try:
        if loc.is_local:
            os.rmdir(loc.path)
            fault_point()
            return True
        from pyarrow.fs import FileSelector

        if loc.fs.get_file_info(FileSelector(loc.path)):
            return False
        loc.fs.delete_dir(loc.path)
        fault_point()
        return True
    except OSError:
        if loc.is_local and os.path.isdir(loc.path) and os.listdir(loc.path):
            return False
        raise


def remove_tree(loc: Location) -> None:
    """A directory and everything below it (a staging directory of this tool's own)."""
    if loc.is_local:
        import shutil

        shutil.rmtree(loc.path)
    else:
        loc.fs.delete_dir(loc.path)
    fault_point()


def list_names(loc: Location) -> list[str]:
    """The names of the files below a directory, relative to it."""
    if loc.is_local:
        out: list[str] = []
        for top, _, files in os.walk(loc.path):
            rel = os.path.relpath(top, loc.path)
            out.extend(name if rel == "." else f"{rel}/{name}" for name in files)
        return out
    from pyarrow.fs import FileSelector, FileType

    base = loc.path.rstrip("/") + "/"
    return [i.path[len(base):] for i in loc.fs.get_file_info(FileSelector(loc.path,
                                                                           recursive=True))
            if i.type == FileType.File]


def size_of(loc: Location) -> int:
    if loc.is_local:
        return os.stat(loc.path).st_size
    return loc.fs.get_file_info(loc.path).size


def sizes_below(loc: Location) -> list[tuple[str, int]]:
    """(name relative to the directory, size) of every file below it."""
    if loc.is_local:
        out = []
        for top, _, files in os.walk(loc.path):
            rel = os.path.relpath(top, loc.path)
            for name in files:
                try:
                    size = os.stat(os.path.join(top, name)).st_size
                except OSError:
                    continue
                out.append((name if rel == "." else f"{rel}/{name}", size))
        return out
    from pyarrow.fs import FileSelector, FileType

    base = loc.path.rstrip("/") + "/"
    return [(i.path[len(base):], i.size) for i in
            loc.fs.get_file_info(FileSelector(loc.path, recursive=True))
            if i.type == FileType.File]


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

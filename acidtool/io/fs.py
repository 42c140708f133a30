"""Filesystem access: one small port over pyarrow.fs, for every URL acidtool accepts.

* a local path or ``file://``        -> pyarrow.fs.LocalFileSystem
* ``hdfs://``                        -> pyarrow.fs.HadoopFileSystem (needs libhdfs and a Hadoop classpath)
* anything else fsspec knows         -> fsspec, wrapped in pyarrow.fs.PyFileSystem
  (``s3://``, ``gs://``, ``abfs://``, ``memory://``...; the scheme's package is imported lazily)

On a local disk the hot paths skip pyarrow's objects, which cost more than the work there:
listing walks the tree with ``os.scandir`` (same result as pyarrow's recursive listing),
footers are read with ``pread`` on a plain descriptor, small files with the builtin ``open``.

Failures are translated at this boundary into PathError / DependencyError / UsageError with one
clear line each.
"""

from __future__ import annotations

import errno
import functools
import os
import posixpath
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from ..core.errors import DependencyError, PathError, UsageError
from ..core.listing import LINK_SIZE, UNKNOWN_SIZE, PathInfo, size_unseen

if TYPE_CHECKING:
    import pyarrow.fs as pafs

HDFS_HINT = ("hdfs:// needs Hadoop's native client: install Hadoop, set HADOOP_HOME (or "
             "ARROW_LIBHDFS_DIR to the directory holding libhdfs.so), JAVA_HOME, and "
             "CLASSPATH=$(hadoop classpath --glob); or, with no native client, use "
             "webhdfs://NAMENODE:HTTP_PORT/path, or set ACIDTOOL_WEBHDFS=HTTP_PORT to reach "
             "hdfs:// paths over WebHDFS (the NameNode's HTTP port, 9870 by default; pip "
             "install requests)")
# hdfs:// over WebHDFS when libhdfs is missing: "PORT" (the NameNode's HTTP port on the same
# host) or "HOST:PORT"
WEBHDFS_ENV = "ACIDTOOL_WEBHDFS"


@dataclass(frozen=True)
class Location:
    """A directory or file on some filesystem: ``fs`` plus a path in that filesystem's terms.

    ``store`` is None for the local disk: its pyarrow filesystem is made on first use of ``fs``,
    since importing pyarrow is a third of the time of an ``ls`` of a small local table, which
    needs none of it."""

    store: pafs.FileSystem | None
    path: str
    url: str

    @property
    def fs(self) -> pafs.FileSystem:
        return self.store if self.store is not None else _local_fs()

    def join(self, rel: str) -> str:
        # plain concatenation for the usual relative path: posixpath.join costs more than a
        # footer's read on a local disk, and validate joins once per file
        if not rel or rel[0] == "/":
            return posixpath.join(self.path, rel) if rel else self.path
        return self.path + rel if self.path.endswith("/") else self.path + "/" + rel

    def url_of(self, rel: str) -> str:
        return self.url.rstrip("/") + "/" + rel if rel else self.url

    def child(self, rel: str) -> Location:
        return Location(self.store, self.join(rel), self.url_of(rel))

    @property
    def is_local(self) -> bool:
        return self.store is None or isinstance(self.store, _pafs().LocalFileSystem)


def _pafs():
    import pyarrow.fs

    return pyarrow.fs


@functools.lru_cache(maxsize=1)
def _local_fs() -> pafs.FileSystem:
    return _pafs().LocalFileSystem()


def resolve(url: str) -> Location:
    """Turn what the user typed into a Location. Raises UsageError / DependencyError."""
    if not url:
        raise UsageError("empty path")
    parsed = urlparse(url)
    scheme = parsed.scheme.lower()
    if scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt"):
        path = parsed.path if scheme == "file" else url
        path = os.path.abspath(os.path.expanduser(path))
        return Location(None, path.rstrip("/") or "/", url)
    if scheme in ("hdfs", "viewfs"):
        try:
            fs, path = _pafs().FileSystem.from_uri(url)
        except (OSError, RuntimeError) as exc:
            if scheme == "hdfs" and os.environ.get(WEBHDFS_ENV):
                return _over_webhdfs(url, parsed, os.environ[WEBHDFS_ENV])
            raise DependencyError(f"{HDFS_HINT} ({str(exc).splitlines()[0]})") from None
        return Location(fs, path.rstrip("/") or "/", url)
    return _fsspec_location(url, scheme)


def _fsspec_location(url: str, scheme: str) -> Location:
    try:
        import fsspec
        from fsspec.core import url_to_fs
    except ImportError:  # pragma: no cover - fsspec is a hard dependency
        raise DependencyError("fsspec is needed for URLs: pip install fsspec") from None
    if scheme not in fsspec.available_protocols() and scheme not in fsspec.registry:
        raise UsageError(f"unknown URL scheme {scheme!r} in {url!r}: use a local path, file://, "
                         "hdfs:// or a scheme fsspec knows (s3, gs, abfs, memory, ...)")
    try:
        fs, path = url_to_fs(url)
    except ImportError as exc:
        raise DependencyError(f"{scheme}:// needs an extra package: {exc}") from None
    except (ValueError, TypeError) as exc:
        raise UsageError(f"cannot open {url!r}: {exc}") from None
    pafs = _pafs()
    return Location(pafs.PyFileSystem(pafs.FSSpecHandler(fs)), path.rstrip("/") or "/", url)


def _over_webhdfs(url: str, parsed, setting: str) -> Location:
    """``hdfs://NN:RPC/p`` read as ``webhdfs://NN:HTTP/p`` (the Location keeps the URL typed)."""
    host, _, port = setting.strip().rpartition(":")
    if not port.isdigit():
        raise UsageError(f"{WEBHDFS_ENV}={setting!r}: give the NameNode's HTTP port, PORT or "
                         "HOST:PORT")
    host = host or parsed.hostname or "localhost"
    loc = _fsspec_location(f"webhdfs://{host}:{port}{parsed.path or '/'}", "webhdfs")
    return Location(loc.store, loc.path, url)


def translate_error(exc: OSError, url: str) -> PathError:
    if isinstance(exc, FileNotFoundError):
        return PathError(f"{url}: no such file or directory")
    if isinstance(exc, PermissionError):
        return PathError(f"{url}: permission denied")
    if isinstance(exc, NotADirectoryError):
        return PathError(f"{url}: not a directory")
    return PathError(f"{url}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")


def kind_of(loc: Location) -> str:
    """'dir', 'file' or 'missing'."""
    if loc.is_local:
        try:
            mode = os.stat(loc.path).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return "missing"
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:  # (a side file's name past 255 bytes)
                return "missing"
            raise translate_error(exc, loc.url) from None
        return "dir" if stat.S_ISDIR(mode) else "file"
    pafs = _pafs()
    try:
        info = loc.fs.get_file_info(loc.path)
    except OSError as exc:
        raise translate_error(exc, loc.url) from None
    if info.type == pafs.FileType.Directory:
        return "dir"
    if info.type == pafs.FileType.File:
        return "file"
    return "missing"


def require_dir(loc: Location) -> None:
    kind = kind_of(loc)
    if kind == "missing":
        raise PathError(f"{loc.url}: no such file or directory")
    if kind == "file":
        raise PathError(f"{loc.url}: is a file, not a table or partition directory")


def list_tree(loc: Location, *, sizes: bool = True) -> list[PathInfo]:
    """Everything below ``loc`` in one recursive listing call, paths relative to it. Without
    ``sizes``, a local listing leaves out (UNKNOWN_SIZE) the sizes the selection never looks
    at (``core.listing.size_unseen``): for a caller that reads those files and learns them."""
    if loc.is_local:
        try:
            return _walk_local(loc.path, sizes)
        except OSError as exc:  # name the directory that failed, which may be below loc
            top = loc.path.rstrip("/") + "/"
            failed = exc.filename if isinstance(exc.filename, str) else ""
            raise translate_error(exc, loc.url_of(failed[len(top):]) if failed.startswith(top)
                             else loc.url) from None
    pafs = _pafs()
    selector = pafs.FileSelector(loc.path, recursive=True)
    try:
        infos = loc.fs.get_file_info(selector)
    except OSError as exc:
        raise translate_error(exc, loc.url) from None
    prefix = loc.path.rstrip("/") + "/"
    cut = len(prefix)
    directory = pafs.FileType.Directory
    # PathInfo values are built with tuple.__new__: the NamedTuple constructor is Python code.
    new = tuple.__new__
    out: list[PathInfo] = []
    append = out.append
    for info in infos:
        path = info.path
        rel = path[cut:] if path.startswith(prefix) else path.lstrip("/")
        if info.type == directory:
            append(new(PathInfo, (rel, 0, True)))
        else:
            append(new(PathInfo, (rel, info.size or 0, False)))
    return out


def list_dir(loc: Location, rel: str = "") -> list[PathInfo]:
    """The entries directly in ``loc/rel`` (paths relative to ``loc``), one listing call;
    links are listed as files, never followed."""
    where = loc.child(rel) if rel else loc
    prefix = rel.rstrip("/") + "/" if rel else ""
    if where.is_local:
        try:
            with os.scandir(where.path) as entries:
                return [PathInfo(prefix + e.name, 0, e.is_dir(follow_symlinks=False))
                        for e in entries]
        except OSError as exc:
            raise translate_error(exc, where.url) from None
    pafs = _pafs()
    try:
        infos = where.fs.get_file_info(pafs.FileSelector(where.path, recursive=False))
    except OSError as exc:
        raise translate_error(exc, where.url) from None
    return [PathInfo(prefix + i.path.rstrip("/").rsplit("/", 1)[-1], i.size or 0,
                     i.type == pafs.FileType.Directory) for i in infos]


def _walk_local(top: str, sizes: bool = True) -> list[PathInfo]:
    """A local directory tree, read with ``os.scandir``: directory entries say what they are
    without a stat call, so only files are stat'ed, for their size. A tenth faster than
    pyarrow's listing plus turning its FileInfo objects into paths (benchmarks/bench_ls.py).
    Without ``sizes``, regular files whose sizes the selection never looks at are not stat'ed
    either.

    Symbolic links are listed with ``LINK_SIZE`` and never followed, to a file or a directory,
    broken or not: nothing outside the directory is ever listed (a ``delta_5 -> ..`` would
    list the parent and every sibling table), and a loop cannot form. The directory given
    itself may be a link: that is the caller's choice."""
    new = tuple.__new__
    out: list[PathInfo] = []
    append = out.append
    pending = [(top, "")]
    while pending:
        directory, rel = pending.pop()
        try:
            entries = os.scandir(directory)
        except FileNotFoundError:
            if not rel:
                raise
            continue  # removed since its parent was read (a cleaner at work): gone
        unseen = False
        if not sizes and rel:
            names = rel[:-1].rsplit("/", 2)
            unseen = size_unseen(names[-1], names[-2] if len(names) > 1 else None)
        with entries:
            for entry in entries:
                path = rel + entry.name
                # The entry's type comes from the directory read (d_type), with no stat; the
                # checks go in the order that takes the fewest for the usual entries (a file
                # of an ACID directory: one).
                if unseen and entry.is_file(follow_symlinks=False):
                    append(new(PathInfo, (path, UNKNOWN_SIZE, False)))
                    continue
                if entry.is_symlink():  # listed, never followed (core.listing.LINK_SIZE)
                    append(new(PathInfo, (path, LINK_SIZE, False)))
                    continue
                if entry.is_dir():
                    append(new(PathInfo, (path, 0, True)))
                    pending.append((entry.path, path + "/"))
                    continue
                try:
                    size = entry.stat().st_size
                except FileNotFoundError:
                    continue  # a file removed meanwhile
                append(new(PathInfo, (path, size, False)))
    return out


def is_utf8(path: str) -> bool:
    """Whether pyarrow can take the path: it passes paths to C++ as UTF-8, and a local name
    that is not UTF-8 reaches Python with lone surrogates in it (PEP 383)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def open_input_file(loc: Location, rel: str = ""):
    """A random-access pyarrow file. A local file whose name is not UTF-8 is opened by Python
    (which takes any name) and handed to pyarrow as a file object."""
    path = loc.join(rel)
    if loc.is_local and not is_utf8(path):
        import pyarrow as pa

        return pa.PythonFile(open(path, "rb"), mode="r")
    return loc.fs.open_input_file(path)


def move(src: Location, dst: Location) -> None:
    """A rename within one filesystem (a local one takes any name)."""
    if src.is_local and dst.is_local:
        os.rename(src.path, dst.path)
    else:
        src.fs.move(src.path, dst.path)


def read_bytes(loc: Location, rel: str = "", limit: int | None = None) -> bytes:
    try:
        if loc.is_local and limit is not None and _PREAD:
            return read_range(loc, rel, limit, 0)  # a marker's first bytes
        path = loc.join(rel)
        if loc.is_local:  # the builtin file is a third of the cost of pyarrow's stream here
            with open(path, "rb", buffering=0) as f:
                return f.read(limit) if limit is not None else f.readall()
        with loc.fs.open_input_stream(path) as f:
            return f.read(limit) if limit is not None else f.read()
    except OSError as exc:
        raise translate_error(exc, loc.url_of(rel)) from None


_PREAD = hasattr(os, "pread")


def read_range(loc: Location, rel: str, nbytes: int, offset: int) -> bytes:
    """Up to ``nbytes`` bytes of a file from ``offset`` (fewer at its end), in one call. On a
    local disk one ``pread`` on a bare descriptor: validate reads thousands of footers, and a
    file object costs more to open than such a read. Raises OSError as the filesystem does
    (a caller reading many files judges each failure)."""
    path = loc.join(rel)
    if loc.is_local and _PREAD:
        fd = os.open(path, os.O_RDONLY)
        try:
            return os.pread(fd, nbytes, offset)
        finally:
            os.close(fd)
    with loc.fs.open_input_file(path) as file:
        return file.read_at(nbytes, offset)


def read_end(loc: Location, rel: str, nbytes: int) -> tuple[int, bytes]:
    """A file's size and its last ``nbytes`` bytes (all of them in a smaller file), from one
    open: for a file listed without its size. Raises OSError as the filesystem does."""
    path = loc.join(rel)
    if loc.is_local and _PREAD:
        fd = os.open(path, os.O_RDONLY)
        try:
            size = os.lseek(fd, 0, os.SEEK_END)
            n = min(size, nbytes)
            return size, os.pread(fd, n, size - n)
        finally:
            os.close(fd)
    with loc.fs.open_input_file(path) as file:
        size = file.size()
        n = min(size, nbytes)
        return size, file.read_at(n, size - n)


def size_if_any(loc: Location, rel: str) -> int:
    """A file's size, or 0 where it cannot be had (gone since it was listed): for the facts of
    a file that could not be read."""
    try:
        if loc.is_local:
            return os.stat(loc.join(rel)).st_size
        return loc.fs.get_file_info(loc.join(rel)).size or 0
    except OSError:
        return 0


def file_size(loc: Location, rel: str = "") -> int:
    try:
        if loc.is_local:
            return os.stat(loc.join(rel)).st_size
        return loc.fs.get_file_info(loc.join(rel)).size or 0
    except OSError as exc:
        raise translate_error(exc, loc.url_of(rel)) from None

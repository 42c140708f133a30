"""How Spark's file reader names a file (pure): the path handed to it, and the strings it gives
back, ``inputFiles()`` and the ``_metadata.file_path`` of a file's rows. Hadoop's ``Path``
makes both through ``java.net.URI``, which quotes a path's characters as below; the tests
compare these with Spark's own answers on names of every kind of character."""

from __future__ import annotations

import posixpath
import string
import unicodedata
from urllib.parse import urlparse

# Spark's reader globs a path with any of these
_GLOB = "\\{}[]*?"
# what java.net.URI leaves as it is in a path: letters, digits, its "mark" and "punct"
# characters, '/' and '@' ('%' is quoted: a name's %7B is the three characters)
_KEPT = frozenset(string.ascii_letters + string.digits + "-_.!~*'()" + ",;:$&+=" + "/@")


def listed(name: str) -> bool:
    """Whether Spark's listing of a directory keeps a file of this name (its
    ``shouldFilterOutPathName``: a name beginning with ``_`` and holding no ``=``, one
    beginning with ``.``, and one ending in ``._COPYING_`` are left out, but for Parquet's
    ``_metadata`` and ``_common_metadata``)."""
    left_out = (name.startswith("_") and "=" not in name) or name.startswith(".") or \
        name.endswith("._COPYING_")
    return not left_out or name.startswith(("_common_metadata", "_metadata"))


def unglobbed(url: str) -> str:
    """A file's URL as Spark's reader takes it literally: Spark globs a path with any of
    ``{}[]*?\\`` (Hive escapes them in partition names, other writers may not)."""
    for c in _GLOB:
        url = url.replace(c, "\\" + c)
    return url


def to_read(where: list[str], checked: bool) -> list[str]:
    """The paths Spark's reader is given for these files or directories: where its
    ``inputFiles()`` are checked after (``checked``), one glob of them all (``one_glob``),
    else each, its glob characters escaped (Spark fails on one that does not exist)."""
    glob = one_glob(where) if checked else None
    return [glob] if glob else [unglobbed(p) for p in where]


def one_glob(urls: list[str]) -> str | None:
    """One path for Spark's reader naming exactly these files or directories (local paths or
    URLs of one file system): a brace glob of them below a common directory, each alternative
    holding a '/', so that Hadoop's glob expands it to the literal paths and lists no
    directory. Spark checks that each literal path it is given exists, a thread of a new pool
    each (a relation of ten directories: 29 ms, of their glob: 8 ms; of one directory: 11-17
    ms, its glob 5 ms). A glob leaves out a path that does not exist, where a literal path
    fails: give it only where Spark's ``inputFiles()`` are checked after. None: the URLs share
    no directory above their parents', or are not local paths or ``hdfs://`` URLs of one
    file system (``_parts``)."""
    heads, splits = set(), []
    for url in urls:
        parts = _parts(url)
        if parts is None:
            return None
        scheme, authority, path = parts
        heads.add(f"{scheme}://{authority}" if authority else "")
        splits.append(path.split("/"))
    if len(heads) != 1:
        return None
    common = min(len(p) for p in splits) - 2  # (each alternative keeps two components)
    for i in range(common):
        if len({p[i] for p in splits}) > 1:
            common = i
            break
    if common < 1:
        return None
    # (Hadoop's GlobExpander takes one level of escapes off the alternatives as it expands
    # them: each is escaped for it on top of the glob's own escapes)
    alternatives = ",".join("".join("\\" + c if c in "\\{}," else c
                                    for c in unglobbed("/".join(p[common:]))) for p in splits)
    return heads.pop() + unglobbed("/".join(splits[0][:common])) + "/{" + alternatives + "}"


def _quoted(path: str) -> str:
    """A path as java.net.URI's constructors quote it: a character outside ``_KEPT`` as the
    %XX of its UTF-8 bytes, except a non-ASCII one that is neither a control nor a space."""
    out = []
    for ch in path:
        if ch in _KEPT or (ord(ch) > 0x9F and unicodedata.category(ch) not in ("Zs", "Zl", "Zp")):
            out.append(ch)
        else:
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass")))
    return "".join(out)


def _parts(url: str) -> tuple[str, str, str] | None:
    """(scheme, authority, absolute path) of a local path or an ``hdfs://`` URL (None: one
    whose file system Spark would have to be asked about)."""
    if url.startswith("/"):
        scheme, authority, path = "file", "", url
    else:
        parsed = urlparse(url)
        if parsed.scheme != "hdfs" or not parsed.netloc:
            return None
        scheme, authority, path = "hdfs", parsed.netloc, parsed.path
    while "//" in path:  # (normpath keeps a leading "//", as POSIX lets it)
        path = path.replace("//", "/")
    return scheme, authority, posixpath.normpath(path)


def file_path(url: str) -> str | None:
    """The ``_metadata.file_path`` Spark gives the rows of the file at ``url`` (a local
    absolute path or an ``hdfs://host:port/...`` URL, as acidtool hands it to Spark before
    ``unglobbed``); None where it cannot be told here."""
    parts = _parts(url)
    if parts is None:
        return None
    scheme, authority, path = parts
    return f"{scheme}:" + (f"//{authority}" if authority else "") + _quoted(path)


def input_file(url: str) -> str | None:
    """The string ``DataFrame.inputFiles()`` gives for that file (None: as ``file_path``)."""
    parts = _parts(url)
    if parts is None:
        return None
    scheme, authority, path = parts
    return f"{scheme}://{authority}{_quoted(path)}"

"""Building directory layouts on disk from lists of relative paths (as cases.json writes them)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping


def build(root: Path, paths: Iterable[str], *, empty: Iterable[str] = (),
          contents: Mapping[str, bytes | str] | None = None, size: int = 3) -> Path:
    """Create ``paths`` below ``root``: a trailing '/' is an empty directory, anything else a file
    of ``size`` bytes, zero bytes if listed in ``empty``, or the given contents."""
    empty = set(empty)
    contents = dict(contents or {})
    root.mkdir(parents=True, exist_ok=True)
    for rel in paths:
        target = root / rel
        if rel.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        data = contents.get(rel)
        if data is None:
            data = b"" if rel in empty else b"x" * size
        target.write_bytes(data.encode() if isinstance(data, str) else data)
    return root


# How a random layout fills a base or delta directory: mostly one data file; now and then
# nothing, or only what Hive 4's recursive listing passes over or does list (the empty
# directories a failed compaction leaves, markers alone, hidden files, subdirectories).
# (Files in a plain subdirectory of a base are not drawn: hive-exec 4.0.1 then takes them for
# original files and passes over the base, which acidtool does not model.)
FILLINGS = ["file"] * 6 + ["empty", "version_only", "metadata_only", "hidden_only",
                           "hidden_subdir"]


def fill(directory: Path, how: str, data_name: str = "bucket_00000") -> None:
    """Fill one directory (made here) the way ``how`` (one of FILLINGS) says."""
    directory.mkdir()
    if how == "file":
        (directory / data_name).write_bytes(b"xyz")
    elif how == "version_only":
        (directory / "_orc_acid_version").write_bytes(b"2")
    elif how == "metadata_only":
        (directory / "_metadata_acid").write_text(
            '{"thisFileVersion":"0","dataFormat":"compacted"}')
    elif how == "hidden_only":
        (directory / f".{data_name}.crc").write_bytes(b"xyz")
    elif how == "hidden_subdir":
        (directory / "_tmp").mkdir()
        (directory / "_tmp" / data_name).write_bytes(b"xyz")
    elif how == "subdir":
        (directory / "sub").mkdir()
        (directory / "sub" / data_name).write_bytes(b"xyz")

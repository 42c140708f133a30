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

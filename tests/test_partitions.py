"""Splitting one recursive listing into partitions (core.partitions.split_partitions)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acidtool.core.listing import PathInfo
from acidtool.core.partitions import is_partition_component, split_partitions


def _listing(*paths: str) -> list[PathInfo]:
    """Files, plus every directory above them, as a recursive listing gives them."""
    out, dirs = [], set()
    for p in paths:
        parts = p.split("/")
        for i in range(1, len(parts)):
            d = "/".join(parts[:i])
            if d not in dirs:
                dirs.add(d)
                out.append(PathInfo(d, 0, True))
        out.append(PathInfo(p, 3, False))
    return out


@pytest.mark.parametrize("paths, partitions, stray", [
    (["delta_1_1_0000/bucket_00000"], {"": ["delta_1_1_0000", "delta_1_1_0000/bucket_00000"]},
     []),
    (["ds=1/delta_1_1_0000/bucket_00000", "ds=2/base_5/bucket_00000"],
     {"ds=1": ["delta_1_1_0000", "delta_1_1_0000/bucket_00000"],
      "ds=2": ["base_5", "base_5/bucket_00000"]}, []),
    # two levels: the deepest k=v directories are the partitions; a file between is stray
    (["ds=1/hr=0/delta_1_1_0000/bucket_00000", "ds=1/hr=1/x", "ds=1/loose.orc"],
     {"ds=1/hr=0": ["delta_1_1_0000", "delta_1_1_0000/bucket_00000"], "ds=1/hr=1": ["x"]},
     ["ds=1/loose.orc"]),
    # hidden entries next to partitions belong to none and are not stray either
    (["ds=1/f", "_SUCCESS", ".hive-staging/x", "part-0.orc"], {"ds=1": ["f"]},
     ["part-0.orc"]),
    # a hidden k=v name is not a partition; a non-k=v directory stops the descent
    (["_ds=1/f", "ds=1/x/hr=2/f"], {"ds=1": ["x", "x/hr=2", "x/hr=2/f"]}, []),
])
def test_split_partitions_cases(paths, partitions, stray):
    parts, strays = split_partitions(_listing(*paths))
    assert {p.name: [i.path for i in p.paths] for p in parts} == partitions
    assert [s.path for s in strays if not s.is_dir] == stray


_COMPONENTS = ["ds=1", "ds=2", "hr=3", "x", "_tmp", ".h", "a=", "=b", "delta_1_1", "k=v", "_k=v"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_COMPONENTS), min_size=1, max_size=4).map("/".join),
                max_size=10, unique=True)
       .filter(lambda fs: not any(b.startswith(a + "/") for a in fs for b in fs)))
def test_every_path_lands_in_one_place(files):
    """Each listed path is a partition directory, exactly one partition's (under the same
    full path), stray, or hidden; partitions are k=v paths none of which holds another."""
    listing = _listing(*files)
    parts, stray = split_partitions(listing)
    names = [p.name for p in parts]
    assert len(set(names)) == len(names)
    if names != [""]:
        for name in names:
            assert all(is_partition_component(c) for c in name.split("/"))
            assert not any(other.startswith(name + "/") for other in names)
    placed: dict[str, int] = {}
    for p in parts:
        for info in p.paths:
            full = f"{p.name}/{info.path}" if p.name else info.path
            placed[full] = placed.get(full, 0) + 1
    for info in stray:
        placed[info.path] = placed.get(info.path, 0) + 1
    for info in listing:
        count = placed.get(info.path, 0)
        if info.path in names or any(n.startswith(info.path + "/") for n in names):
            continue  # a partition directory, or one above partitions
        assert count <= 1, info.path
        if count == 0:  # left out: only hidden paths may be
            assert any(c.startswith(("_", ".")) for c in info.path.split("/")), info.path


@pytest.mark.parametrize("files,keys", [
    ([], None),  # an empty table
    (["_orc_acid_version", ".hive-staging/x"], None),  # nothing but hidden entries
    (["base_0000001/bucket_00000"], ()),
    (["p=1/base_0000001/bucket_00000"], ("p",)),
    (["p=1/q=a/delta_0000001_0000001_0000/bucket_00000", "p=2/base_0000001/bucket_00000"],
     ("p", "q")),  # the deepest partitions name the columns
    (["p=1/base_0000001/bucket_00000", "_tmp/x=1/bucket_00000", ".t/y=2/f"], ("p",)),
    (["p=1/sub/k=v/f"], ("p",)),  # a key=value below a directory that is none is no column
    (["_c=1/x=2/f", "p=1/f"], ("p",)),  # a hidden key=value directory names no column
    (["_c=1/x=2/f"], None),
])
def test_named_keys_are_the_deepest_partitions_columns(files, keys):
    from acidtool.core.partitions import named_keys

    assert named_keys(_listing(*files)) == keys

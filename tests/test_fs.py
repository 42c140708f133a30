"""The local directory walk against pyarrow's recursive listing, whose results it stands in for."""

import os

import pyarrow.fs as pafs
import pytest

from acidtool.core.errors import PathError
from acidtool.io.fs import list_tree, resolve

from .helpers.runner import run


def pyarrow_listing(root):
    infos = pafs.LocalFileSystem().get_file_info(pafs.FileSelector(str(root), recursive=True))
    cut = len(str(root)) + 1
    return sorted((i.path[cut:], i.size or 0, i.type == pafs.FileType.Directory) for i in infos)


def test_walk_equals_pyarrows_listing_but_never_follows_a_link(tmp_path):
    """The same entries as pyarrow's listing, except symbolic links: pyarrow follows them (and
    lists what lies outside the tree); the walk lists each link, with LINK_SIZE, and stops."""
    from acidtool.core.listing import LINK_SIZE

    root = tmp_path / "t"
    for rel, data in [("delta_0000001_0000001_0000/bucket_00000", b"ORC1"),
                      ("delta_0000001_0000001_0000/_orc_acid_version", b"2"),
                      ("ds=1/base_0000002/bucket_00001", b"ORC22"),
                      ("ds=1/base_0000002/nested/deeper/x", b""),
                      (".hive-staging_1/-ext-10000/000000_0", b"abc"),
                      ("_SUCCESS", b""), ("ünïcode ñame/日本", b"x" * 7), ("000000_0", b"12")]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    (root / "empty_dir").mkdir()
    plain = pyarrow_listing(root)
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "f").write_bytes(b"12345")
    os.symlink(outside, root / "linked_dir")
    os.symlink(outside / "sub" / "f", root / "linked_file")
    os.symlink(tmp_path / "nowhere", root / "broken_link")
    mine = sorted(tuple(p) for p in list_tree(resolve(str(root))))
    links = [(name, LINK_SIZE, False) for name in ("broken_link", "linked_dir", "linked_file")]
    assert mine == sorted(plain + links)
    assert ("linked_dir/sub/f", 5, False) in pyarrow_listing(root)  # what is not listed


@pytest.mark.parametrize("rel, unseen", [
    ("delta_0000001_0000001_0000/bucket_00000", True),  # in an ACID directory of the top
    ("delta_0000001_0000001_0000/_orc_acid_version", True),
    ("base_0000005/bucket_00000", True),
    ("delete_delta_0000002_0000002/bucket_00000", True),
    ("ds=1/hr=2/delta_0000002_0000002_0000/bucket_00000", True),  # of a partition
    ("delta_0000001_0000001_0000/sub/bucket_00000", False),  # nested in one
    ("orig/delta_0000003_0000003/bucket_00000", False),  # in an original directory
    ("ds=1/orig/delta_0000003_0000003/bucket_00000", False),
    ("_hidden=1/delta_0000004_0000004/bucket_00000", False),  # not a partition's
    ("000000_0", False),
    ("delta_x/bucket_00000", True),  # unparsable: Hive fails, sizes do not matter
])
def test_a_walk_without_sizes_leaves_out_only_those_the_selection_never_reads(tmp_path, rel,
                                                                            unseen):
    from acidtool.core.listing import UNKNOWN_SIZE

    root = tmp_path / "t"
    (root / rel).parent.mkdir(parents=True)
    (root / rel).write_bytes(b"1234")
    sized = {p.path: p for p in list_tree(resolve(str(root)))}
    unsized = {p.path: p for p in list_tree(resolve(str(root)), sizes=False)}
    assert sized.keys() == unsized.keys() and sized[rel].size == 4
    assert unsized[rel].size == (UNKNOWN_SIZE if unseen else 4)
    assert {p: i for p, i in unsized.items() if p != rel} == \
        {p: i for p, i in sized.items() if p != rel}


def test_a_walk_without_sizes_lists_links_and_stats_special_files(tmp_path):
    """A link, broken or not, is listed as a link; a FIFO is stat'ed (a reader that opened it
    to learn its size would wait forever)."""
    from acidtool.core.listing import LINK_SIZE

    delta = tmp_path / "t" / "delta_0000001_0000001_0000"
    delta.mkdir(parents=True)
    (tmp_path / "target").write_bytes(b"12345")
    os.symlink(tmp_path / "target", delta / "bucket_00000")
    os.symlink(tmp_path / "nowhere", delta / "bucket_00001")
    os.mkfifo(delta / "bucket_00002")
    listing = sorted(tuple(p) for p in list_tree(resolve(str(tmp_path / "t")), sizes=False))
    assert listing == [("delta_0000001_0000001_0000", 0, True),
                       ("delta_0000001_0000001_0000/bucket_00000", LINK_SIZE, False),
                       ("delta_0000001_0000001_0000/bucket_00001", LINK_SIZE, False),
                       ("delta_0000001_0000001_0000/bucket_00002", 0, False)]


def test_links_and_loops_never_take_a_command_outside_the_table(tmp_path):
    """A delta that links to the table's parent (a loop, and a sibling table), a link to a
    directory elsewhere: every command lists only what is below the table, reads nothing
    through a link, and validate reports each link (ACID026)."""
    root = tmp_path / "t"
    delta = root / "ds=1" / "delta_0000001_0000001_0000"
    delta.mkdir(parents=True)
    from .helpers.layouts import acid, events

    (delta / "bucket_00000").write_bytes(acid(events(1)))
    (delta / "_orc_acid_version").write_bytes(b"2")
    sibling = tmp_path / "sibling" / "delta_0000002_0000002_0000"
    sibling.mkdir(parents=True)
    (sibling / "bucket_00000").write_bytes(acid(events(2)))
    os.symlink("..", root / "ds=1" / "delta_0000002_0000002_0000")
    os.symlink(sibling, root / "ds=1" / "delta_0000003_0000003_0000")
    os.symlink(root, delta / "to_root")
    paths = {p.path for p in list_tree(resolve(str(root)))}
    assert not any("/to_root/" in p or "delta_0000002_0000002_0000/" in p for p in paths)
    listing = run("ls", root, "--format", "json")
    assert listing.code == 0
    (part,) = listing.json()["partitions"]
    assert part["deltas"] == ["delta_0000001_0000001_0000"]
    assert part["links"] == ["delta_0000001_0000001_0000/to_root",
                             "delta_0000002_0000002_0000", "delta_0000003_0000003_0000"]
    assert len(run("read", root).out.splitlines()) == 2  # write id 1's rows only
    found = run("validate", root, "--format", "json").json()["findings"]
    assert sorted(f["path"][len(str(root)) + 1:] for f in found if f["code"] == "ACID026") == \
        ["ds=1/delta_0000001_0000001_0000/to_root", "ds=1/delta_0000002_0000002_0000",
         "ds=1/delta_0000003_0000003_0000"]
    for command in (["dump", root], ["meta", root], ["validate", root, "--level", "rows"]):
        assert "internal error" not in run(*command).err


def scandir_fails(monkeypatch, suffix, error):
    """os.scandir raises ``error`` for directories whose path ends with ``suffix``."""
    real = os.scandir

    def scandir(path):
        if str(path).endswith(suffix):
            raise error(0, "simulated", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)


def test_a_directory_removed_while_listing_is_gone_not_an_error(tmp_path, monkeypatch):
    root = tmp_path / "t"
    for d in ("delta_0000001_0000001_0000", "delta_0000002_0000002_0000"):
        (root / d).mkdir(parents=True)
        (root / d / "bucket_00000").write_bytes(b"ORC")
    scandir_fails(monkeypatch, "delta_0000001_0000001_0000", FileNotFoundError)
    paths = {p.path for p in list_tree(resolve(str(root)))}
    assert "delta_0000002_0000002_0000/bucket_00000" in paths
    assert not any(p.startswith("delta_0000001_0000001_0000/") for p in paths)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any directory")
def test_an_unreadable_subdirectory_is_named(tmp_path):
    root = tmp_path / "t"
    (root / "delta_0000001_0000001_0000").mkdir(parents=True)
    locked = root / "delta_0000001_0000001_0000"
    locked.chmod(0)
    try:
        with pytest.raises(PathError, match="delta_0000001_0000001_0000: permission denied"):
            list_tree(resolve(str(root)))
    finally:
        locked.chmod(0o755)


def test_an_unreadable_subdirectory_is_named_also_as_root(tmp_path, monkeypatch):
    """The same, without needing a non-root user: scandir refuses one subdirectory."""
    root = tmp_path / "t"
    (root / "ds=1" / "delta_0000001_0000001_0000").mkdir(parents=True)
    scandir_fails(monkeypatch, "ds=1", PermissionError)
    with pytest.raises(PathError) as caught:
        list_tree(resolve(str(root)))
    assert str(caught.value).endswith("/t/ds=1: permission denied")

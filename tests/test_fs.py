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


def test_walk_equals_pyarrows_listing(tmp_path):
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
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "f").write_bytes(b"12345")
    os.symlink(outside, root / "linked_dir")  # followed, as pyarrow does
    os.symlink(outside / "sub" / "f", root / "linked_file")
    os.symlink(tmp_path / "nowhere", root / "broken_link")  # left out, as pyarrow does
    mine = sorted(tuple(p) for p in list_tree(resolve(str(root))))
    assert mine == pyarrow_listing(root)
    assert ("linked_dir/sub/f", 5, False) in mine and ("empty_dir", 0, True) in mine


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


def test_a_walk_without_sizes_still_stats_links_and_special_files(tmp_path):
    """A broken link is left out and a link's size is its target's, as with sizes; a FIFO is
    stat'ed (a reader that opened it to learn its size would wait forever)."""
    delta = tmp_path / "t" / "delta_0000001_0000001_0000"
    delta.mkdir(parents=True)
    (tmp_path / "target").write_bytes(b"12345")
    os.symlink(tmp_path / "target", delta / "bucket_00000")
    os.symlink(tmp_path / "nowhere", delta / "bucket_00001")
    os.mkfifo(delta / "bucket_00002")
    listing = sorted(tuple(p) for p in list_tree(resolve(str(tmp_path / "t")), sizes=False))
    assert listing == [("delta_0000001_0000001_0000", 0, True),
                       ("delta_0000001_0000001_0000/bucket_00000", 5, False),
                       ("delta_0000001_0000001_0000/bucket_00002", 0, False)]


def test_a_link_back_up_the_tree_is_listed_but_not_entered(tmp_path):
    """pyarrow's listing goes round a link loop until the system refuses the path (with an
    error as long as the path); the walk lists the link and does not enter it again.
    Two links to one directory elsewhere are both walked: that is no loop."""
    root = tmp_path / "t"
    delta = root / "ds=1" / "delta_0000001_0000001_0000"
    delta.mkdir(parents=True)
    (delta / "bucket_00000").write_bytes(b"ORC1")
    os.symlink("..", delta / "to_partition")
    os.symlink(root, delta / "to_root")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "f").write_bytes(b"12")
    os.symlink(tmp_path / "outside", root / "a")
    os.symlink(tmp_path / "outside", root / "b")
    paths = {p.path for p in list_tree(resolve(str(root)))}
    prefix = "ds=1/delta_0000001_0000001_0000/"
    assert prefix + "to_root" in paths and prefix + "to_partition" in paths
    assert not any(p.startswith(prefix + "to_root/") for p in paths)
    # a link to a plain directory above goes round once before it shows
    assert max(len(p) for p in paths) < 200
    assert {"a/f", "b/f"} <= paths
    assert run("ls", root, "--format", "json").code == 0


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

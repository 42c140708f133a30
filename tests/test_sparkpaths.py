"""``hiveacid.sparkpaths``: the strings Spark gives for a file, as java.net.URI quotes a path
(tests/test_spark_native.py checks them against Spark itself)."""

from __future__ import annotations

import pytest

from acidtool.hiveacid.sparkpaths import file_path, input_file, unglobbed


@pytest.mark.parametrize("url,path,listed", [
    ("/t/p=1/base_0000001/bucket_00000", "file:/t/p=1/base_0000001/bucket_00000",
     "file:///t/p=1/base_0000001/bucket_00000"),
    ("/tmp/a b/k=%7Bx/c{d}=é", "file:/tmp/a%20b/k=%257Bx/c%7Bd%7D=é",
     "file:///tmp/a%20b/k=%257Bx/c%7Bd%7D=é"),
    ("//t//a/", "file:/t/a", "file:///t/a"),
    ("/t/\u00a0#?\"", "file:/t/%C2%A0%23%3F%22", "file:///t/%C2%A0%23%3F%22"),
    ("hdfs://nn:8020/w/t/k=it's/b", "hdfs://nn:8020/w/t/k=it's/b",
     "hdfs://nn:8020/w/t/k=it's/b"),
])
def test_strings_spark_gives_for_a_file(url, path, listed):
    assert file_path(url) == path and input_file(url) == listed


@pytest.mark.parametrize("url", ["hdfs:///w/t/b", "s3a://b/t/b", "relative/t/b", "file:///t"])
def test_urls_spark_would_have_to_qualify_get_no_string(url):
    """A URL without its authority (the default file system's), another file system, or a
    relative path: Spark qualifies them by its own configuration, so no string is guessed."""
    assert file_path(url) is None and input_file(url) is None


def test_glob_characters_are_escaped_for_sparks_reader():
    assert unglobbed("/t/k=a\\b{c}[d]*?") == "/t/k=a\\\\b\\{c\\}\\[d\\]\\*\\?"


@pytest.mark.parametrize("urls,glob", [
    (["/t/p=1/base_1", "/t/p=2/base_1"], "/t/{p=1/base_1,p=2/base_1}"),
    (["/t/p=1/base_1"], "/t/{p=1/base_1}"),  # (a '/' in each alternative: no listing)
    (["/t/p=1/base_1/b", "/t/p=1/base_1/c"], "/t/p=1/{base_1/b,base_1/c}"),
    (["hdfs://nn:8020/w/t/a,b{c}/x", "hdfs://nn:8020/w/t/d/y"],
     "hdfs://nn:8020/w/t/{a\\,b\\\\\\{c\\\\\\}/x,d/y}"),
    (["/t*/a\\b/c[d"], "/t\\*/{a\\\\\\\\b/c\\\\[d}"),
    (["/a"], None),  # no directory above the parent's
    (["/t/a/b", "hdfs://nn/t/a/b"], None),  # two file systems
    (["hdfs://nn/t/a/b", "hdfs://other/t/a/b"], None),
])
def test_one_glob_names_exactly_the_paths(urls, glob):
    from acidtool.hiveacid.sparkpaths import one_glob, to_read

    assert one_glob(urls) == glob
    assert to_read(urls, checked=True) == ([glob] if glob else [unglobbed(u) for u in urls])
    assert to_read(urls, checked=False) == [unglobbed(u) for u in urls]

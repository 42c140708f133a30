"""The fast JSON writers give exactly the text of the plain dict-and-encoder path."""

import json

import pyarrow.fs as pafs
from hypothesis import given, settings
from hypothesis import strategies as st

from acidtool.cli.output import RawJSON, dump_pieces, dumps, ls_json, ls_json_pieces
from acidtool.core.listing import Listing
from acidtool.core.select import select
from acidtool.core.snapshot import make_snapshot
from acidtool.io.fs import Location
from acidtool.table.ls import PartitionState, TableState

ACID_NAMES = st.builds(
    lambda prefix, lo, width, stmt, vis: f"{prefix}{lo:07d}_{lo + width:07d}{stmt}{vis}",
    st.sampled_from(["delta_", "delete_delta_"]), st.integers(1, 40), st.integers(0, 3),
    st.sampled_from(["", "_0000", "_0003"]), st.sampled_from(["", "", "_v0000007"]),
) | st.builds(lambda w, vis: f"base_{w:07d}{vis}", st.integers(1, 40),
              st.sampled_from(["", "_v0000009"]))
# Names a foreign tool may leave: quotes, backslashes, control and non-BMP characters.
ODD_NAMES = st.text(st.characters(blacklist_characters="/", blacklist_categories=("Cs",)),
                    min_size=1, max_size=12)


@st.composite
def tables(draw):
    version = draw(st.sampled_from(["2", "3", "4"]))
    paths = []
    for name in draw(st.lists(ACID_NAMES | ODD_NAMES, unique=True, max_size=10)):
        if draw(st.booleans()):
            paths += [f"{name}/{f}" for f in draw(st.lists(
                st.sampled_from(["bucket_00000", "bucket_00001", "_orc_acid_version", "x\"y"]),
                unique=True, max_size=3))] or [f"{name}/"]
        else:
            paths.append(name)
    listing = Listing.from_paths(paths, default_size=draw(st.integers(0, 10**12)))
    write_ids = None if version == "2" else draw(st.sampled_from([None, "db.t:20:9:9:3"]))
    snapshot = make_snapshot(version, write_ids, None, None)
    state = select(listing, snapshot.write_ids, snapshot.txns, version)
    loc = Location(pafs.LocalFileSystem(), "/t", "/t \"quoted\"")
    return TableState(loc, snapshot, (PartitionState("", loc, listing, state),), ())


@settings(max_examples=300, deadline=None)
@given(tables(), st.booleans())
def test_ls_pieces_are_the_encoded_document(table, with_files):
    text = "".join(ls_json_pieces(table, with_files))
    assert text == dumps(ls_json(table, with_files))
    json.loads(text)


def test_raw_pieces_are_written_as_they_are():
    doc = {"a": [1, {"b": RawJSON(["[", "1, 2", "]"])}], "c": RawJSON(["{}"]), "d": []}
    assert "".join(dump_pieces(doc, max_depth=9)) == (
        '{\n  "a": [\n    1,\n    {\n      "b": [1, 2]\n    }\n  ],\n  "c": {},\n  "d": []\n}')
    assert dumps({"x": {"y": [1, 2]}}, max_depth=1) == '{\n  "x": {"y": [1, 2]}\n}'

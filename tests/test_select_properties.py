"""Properties of the selection over random layouts and snapshots."""

import dataclasses
import random
from types import MappingProxyType

from hypothesis import given, settings
from hypothesis import strategies as st

from acidtool.core.listing import (
    UNKNOWN_SIZE,
    Listing,
    PathInfo,
    markers_needed,
    size_unseen,
)
from acidtool.core.select import SELECTED, select, with_sizes
from acidtool.core.snapshot import RangeResponse, ValidTxnList, ValidWriteIdList

EVERYTHING_TXNS = ValidTxnList.everything()


@st.composite
def layouts(draw):
    names = set()
    for _ in range(draw(st.integers(0, 12))):
        lo = draw(st.integers(1, 30))
        hi = lo + draw(st.integers(0, 6))
        stmt = draw(st.sampled_from(["", "_0000", "_0001", "_0002"]))
        prefix = draw(st.sampled_from(["delta_", "delta_", "delete_delta_"]))
        names.add(f"{prefix}{lo:07d}_{hi:07d}{stmt}")
    for _ in range(draw(st.integers(0, 3))):
        names.add(f"base_{draw(st.integers(1, 30)):07d}")
    paths = [f"{n}/bucket_00000" for n in names]
    if draw(st.booleans()):
        paths.append("000000_0")
    return paths


@st.composite
def snapshots(draw):
    hwm = draw(st.integers(1, 40))
    exc = draw(st.lists(st.integers(1, hwm), unique=True, max_size=8))
    aborted = sorted(e for e in exc if draw(st.booleans()))
    opened = sorted(e for e in exc if e not in aborted)
    min_open = opened[0] if opened else 9223372036854775807
    return ValidWriteIdList.parse(
        f"db.t:{hwm}:{min_open}:{','.join(map(str, opened))}:{','.join(map(str, aborted))}")


@settings(max_examples=300)
@given(layouts(), snapshots(), st.sampled_from(["3", "4"]))
def test_selected_deltas_hold_visible_write_ids(paths, wil, version):
    state = select(Listing.from_paths(paths), wil, EVERYTHING_TXNS, version)
    if state.error:
        return
    for entry in state.delta_entries:
        d = entry.parsed
        # Never a delta whose write ids are all open, aborted or above the high watermark.
        assert wil.range_valid(d.min_write_id, d.max_write_id) is not RangeResponse.NONE
        assert d.min_write_id <= wil.high_watermark
        assert wil.range_aborted(d.min_write_id, d.max_write_id) is not RangeResponse.ALL
    if state.base:
        w = state.base_entry.parsed.write_id
        if version == "4" and wil.min_open_id is not None and w <= wil.min_open_id:
            return  # Hive 4.0 takes it whatever its state (tests/test_hive_selection.py)
        assert wil.is_valid(w) and w <= wil.high_watermark


@settings(max_examples=200)
@given(layouts(), snapshots(), st.sampled_from(["3", "4"]), st.randoms())
def test_independent_of_listing_order(paths, wil, version, rnd):
    first = select(Listing.from_paths(paths), wil, EVERYTHING_TXNS, version)
    shuffled = list(paths)
    rnd.shuffle(shuffled)
    second = select(Listing.from_paths(shuffled), wil, EVERYTHING_TXNS, version)
    # exceptions compare by identity: the error by its type and text
    assert repr(first.error) == repr(second.error)
    assert dataclasses.replace(first, error=None) == dataclasses.replace(second, error=None)


@settings(max_examples=200)
@given(layouts(), snapshots(), st.sampled_from(["3", "4"]))
def test_every_child_has_one_status_and_selected_matches(paths, wil, version):
    state = select(Listing.from_paths(paths), wil, EVERYTHING_TXNS, version)
    names = [e.name for e in state.entries]
    assert len(names) == len(set(names))
    selected = {e.name for e in state.entries if e.status == SELECTED}
    assert selected == set(state.deltas) | ({state.base} if state.base else set())
    assert not (set(state.obsolete) & selected)


@given(st.integers(1, 40))
def test_everything_committed_reads_all_single_statement_deltas(n):
    paths = [f"delta_{i:07d}_{i:07d}_0000/bucket_00000" for i in range(1, n + 1)]
    random.Random(n).shuffle(paths)
    state = select(Listing.from_paths(paths), None, EVERYTHING_TXNS, "4")
    assert list(state.deltas) == [f"delta_{i:07d}_{i:07d}_0000" for i in range(1, n + 1)]


@st.composite
def sized_layouts(draw):
    """A partition's files with sizes (many empty: Hive skips empty original files), among
    them ACID-looking directories inside an original directory, and markers."""
    paths = [p.replace("bucket_00000", draw(st.sampled_from(["bucket_00000", "bucket_00001",
                                                              "_orc_acid_version"])))
             for p in draw(layouts())]
    paths += draw(st.lists(st.sampled_from([
        "000001_0", "part-0000.orc", "_SUCCESS", "delta_0000003_0000003/bucket_00002",
        "base_0000009/_metadata_acid", "orig/000000_0", "orig/delta_0000002_0000002/bucket_0",
        "orig/sub/000000_0", "delta_0000004_0000004/sub/bucket_00000"]), max_size=5))
    paths = sorted(set(paths))
    sizes = {p: draw(st.integers(0, 3)) for p in paths}
    return paths, sizes


def _listing(paths, size_of):
    dirs = {"/".join(p.split("/")[:i]) for p in paths for i in range(1, p.count("/") + 1)}
    markers = {p: b'{"thisFileVersion":"0","dataFormat":"compacted"}'
               for p in markers_needed([PathInfo(p) for p in paths], "4")}
    return Listing(tuple([PathInfo(d, 0, True) for d in sorted(dirs)]
                         + [PathInfo(p, size_of(p), False) for p in paths]),
                   MappingProxyType(markers))


def _size_unseen_in_partition(path):
    """What the local walk leaves unsized in a partition's listing (fs._walk_local)."""
    parts = path.split("/")
    return len(parts) == 2 and size_unseen(parts[0], None)


@settings(max_examples=300)
@given(sized_layouts(), snapshots(), st.sampled_from(["2", "3", "4"]), st.booleans())
def test_sizes_put_in_after_selecting_are_what_selecting_with_them_gives(layout, wil, version,
                                                                        ignore_empty):
    paths, sizes = layout
    full = _listing(paths, sizes.get)
    unsized = _listing(paths, lambda p: UNKNOWN_SIZE if _size_unseen_in_partition(p)
                       else sizes[p])
    expected = select(full, wil, EVERYTHING_TXNS, version, ignore_empty_files=ignore_empty)
    got = select(unsized, wil, EVERYTHING_TXNS, version, ignore_empty_files=ignore_empty)
    assert _comparable(with_sizes(got, sizes)) == _comparable(expected)
    # and the sizes matter: without them, entries would say otherwise
    if any(s for p, s in sizes.items() if _size_unseen_in_partition(p)):
        assert _comparable(got) != _comparable(expected)


def _comparable(state):
    """Errors are exceptions, equal only to themselves: compared by type and message."""
    return dataclasses.replace(state, error=None), type(state.error), str(state.error)

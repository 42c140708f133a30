"""acidtool's getAcidState against Hive 3.1's and 4.0's own ``AcidUtils.getAcidState``.

Every case of ../shared/spec/cases.json for the version, built as real directories, and random
layouts (bases with and without compacted markers and ``_v`` suffixes, deltas, delete deltas,
original files, unparsable names) with random write-id and transaction snapshots. Hive lists
through a local filesystem that lists in name order, as HDFS does (tests/java).

Where the spec and Hive disagree, Hive wins (docs/hive-versions.md): hive-exec 4.0.1 takes a base
at or below the minimum open write id whatever its state (the spec's expectation is the answer
after HIVE-29601), and its recursive listing reports the files inside an obsolete directory too.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from acidtool.core.select import select
from acidtool.core.snapshot import make_snapshot
from acidtool.table.ls import inspect_table

from .helpers.cases import expected, hive_version, inputs
from .helpers.hivejvm import Judge
from .helpers.layout import FILLINGS, build, fill
from .helpers.shared import case_params

pytestmark = pytest.mark.spark

ERRORS = (("Not enough history", "not_enough_history"),
          ("NumberFormatException", "invalid_name"),
          ("StringIndexOutOfBoundsException", "invalid_name"),
          ("No ValidTxnList", "missing_txn_list"))


def hive_error_kind(line: str) -> str:
    return next((kind for text, kind in ERRORS if text in line), "invalid_metadata")


def normalised(state: dict) -> dict:
    """Membership of obsolete and aborted (a file inside an obsolete directory is that
    directory's: Hive 4's recursive listing names both)."""
    if "error" in state:
        return state
    dirs = set(state["obsolete"])
    obsolete = sorted(p for p in dirs if not any(p.startswith(d + "/") for d in dirs))
    return {**state, "obsolete": obsolete, "aborted": sorted(state["aborted"])}


def order_free(state: dict) -> dict:
    """Hive 4 walks the directories of its recursive listing in hash order: a base older than
    the chosen one is obsolete when it was seen after that base was taken, and not otherwise.
    Such bases are left out of the comparison (the spec cases pin name order)."""
    if "error" in state or state["base"] is None:
        return state
    chosen = int(state["base"].split("_")[1])
    return {**state, "obsolete": [p for p in state["obsolete"] if not (
        p.startswith("base_") and int(p.split("_")[1]) < chosen)]}


def ours(state) -> dict:
    if state.error is not None:
        return {"error": state.error.kind}
    return {"base": state.base, "deltas": list(state.deltas), "obsolete": sorted(state.obsolete),
            "aborted": sorted(state.aborted), "original_files": list(state.original_files)}


def theirs(judge, table: Path, write_ids, txns, **options) -> dict:
    """Hive's answer; an error is asked for twice. Once in the suite's runs (a clean clone,
    CI), the judge's first answer to a layout on which Hive fails with a
    StringIndexOutOfBoundsException, every time since, was an exception of another kind;
    getAcidState answers alike each time it is asked (its listing sorted), so an exception
    that a second call does not repeat is the JVM's under load, not Hive's answer."""
    got = judge.acid_state(table, write_ids, txns, **options)
    if "error" in got:
        got = judge.acid_state(table, write_ids, txns, **options)  # the second answer taken
    return {"error": hive_error_kind(got["error"])} if "error" in got else normalised(got)


JUDGES = {"3": "hive31", "4": "hive40"}


@pytest.mark.parametrize("case", [p for p in case_params("cases", "id") if p.values[0] is None
                                  or hive_version(p.values[0]) in JUDGES])
def test_case_as_hive_selects_it(request, case, tmp_path):
    version = hive_version(case)
    hive = request.getfixturevalue(JUDGES[version])
    table = build(tmp_path / "tbl", case["files"], empty=case.get("empty_files", ()),
                  contents=case.get("file_contents"))
    args = inputs(case)
    hive_state = theirs(hive, table, case["valid_write_ids"], case["valid_txn_list"],
                        compactor=case["snapshot_class"] == "ValidCompactorWriteIdList",
                        ignore_empty_files=args.ignore_empty_files)
    state = select(args.listing, args.write_ids, args.txns, args.version,
                   ignore_empty_files=args.ignore_empty_files)
    assert ours(state) == hive_state
    # and the case says what Hive says (for 4.0: the answer before HIVE-29601)
    exp = expected(case)
    if exp["error"]:
        assert "error" in hive_state
    else:
        assert {k: hive_state[k] for k in ("base", "deltas", "original_files")} == \
            {k: exp[k] for k in ("base", "deltas", "original_files")}


@pytest.fixture(scope="module", params=["3", "4"])
def judge(request):
    return Judge((request.param, request.getfixturevalue(JUDGES[request.param])))


TOP = 12
ids = st.integers(1, TOP)
COMPACTED = '{"thisFileVersion":"0","dataFormat":"compacted"}'


@st.composite
def directory(draw, version: str):
    """(name, marker): a base (maybe compacted; in Hive 4 maybe with a _v suffix) or delta, now
    and then a name Hive cannot parse or a non-ACID directory."""
    kind = draw(st.sampled_from(["base", "delta", "delta", "delete_delta"] * 5 +
                                ["delta_abc", "HIVE_UNION_SUBDIR_1"]))
    if kind in ("delta_abc", "HIVE_UNION_SUBDIR_1"):
        return kind, None
    suffix = ""
    if version == "4" and draw(st.integers(0, 4)) == 0:
        suffix = f"_v{draw(st.integers(1, 30)):07d}"
    if kind == "base":
        marker = COMPACTED if draw(st.booleans()) else None
        return f"base_{draw(ids):07d}{suffix}", marker
    lo = draw(ids)
    hi = draw(st.integers(lo, min(TOP, lo + draw(st.sampled_from([0, 0, 1, 3])))))
    name = f"{kind}_{lo:07d}_{hi:07d}"
    statement = draw(st.sampled_from([None, None, 0, 1]))
    return (name if statement is None else f"{name}_{statement:04d}") + suffix, None


@st.composite
def id_list(draw, top: int, prefix: str = "") -> str:
    """``[prefix]hwm:minOpen:open,ids:aborted,ids``: a ValidWriteIdList (prefix ``db.t:``) or a
    ValidTxnList."""
    hwm = draw(st.integers(1, top))
    exceptions = draw(st.lists(st.integers(1, hwm), max_size=3, unique=True))
    opened = sorted(e for e in exceptions if draw(st.booleans()))
    aborted = sorted(set(exceptions) - set(opened))
    min_open = min(opened) if opened else 9223372036854775807
    return f"{prefix}{hwm}:{min_open}:{','.join(map(str, opened))}:{','.join(map(str, aborted))}"


def write_ids():
    return id_list(TOP + 2, "db.t:")


def txn_list():
    return id_list(30)


@st.composite
def layouts(draw, version: str):
    dirs = draw(st.lists(directory(version), min_size=1, max_size=7, unique_by=lambda d: d[0]))
    originals = draw(st.lists(st.sampled_from(["000000_0", "000001_0", "000000_0_copy_1"]),
                              max_size=2, unique=True))
    fillings = draw(st.lists(st.sampled_from(FILLINGS), min_size=len(dirs),
                             max_size=len(dirs)))
    return dirs, originals, fillings


@pytest.mark.slow
@settings(max_examples=160, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@pytest.mark.parametrize("insert_only", [False, True], ids=["full-acid", "insert-only"])
@given(layout=layouts("4"), wids=write_ids(), txns=txn_list())
def test_random_layouts_as_hive_selects_them(judge, insert_only, layout, wids, txns):
    """Full-ACID and insert-only tables (Hive 3.1 lists an insert-only table's aborted deltas,
    as 4.0 lists every table's)."""
    version, hive = judge
    dirs, originals, fillings = layout
    if version == "3":  # no visibility suffixes, no transaction list
        dirs = [(name.split("_v")[0], marker) for name, marker in dirs]
        txns = None
    # one meaning per name: two spellings of one directory are the spec cases' business
    meaning = [tuple(int(x) if x.isdigit() else x for x in d.split("_")) for d, _ in dirs]
    assume(len(set(meaning)) == len(meaning))
    table = Path(tempfile.mkdtemp(prefix="acid-hive-"))
    try:
        for (name, marker), how in zip(dirs, fillings):
            fill(table / name, how, "000000_0" if name.startswith("H") else "bucket_00000")
            if marker and how != "metadata_only":
                (table / name / "_metadata_acid").write_text(marker)
        for name in originals:
            (table / name).write_bytes(b"xyz")
        expected_state = theirs(hive, table, wids, txns, insert_only=insert_only)
        (part,) = inspect_table(str(table), make_snapshot(version, wids, txns,
                                                          insert_only=insert_only)).partitions
        event("Hive fails" if "error" in expected_state else
              f"base: {expected_state['base'] is not None}")
        mine = ours(part.state)
        if version == "4":
            mine, expected_state = order_free(mine), order_free(expected_state)
        assert mine == expected_state, (dirs, fillings, originals, wids, txns)
    finally:
        shutil.rmtree(table)

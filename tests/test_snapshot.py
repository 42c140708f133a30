import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acidtool.core.snapshot import (
    RangeResponse,
    SnapshotParseError,
    ValidTxnList,
    ValidWriteIdList,
    parse_txn_write_ids,
    parse_write_ids,
)

from .helpers.shared import case_params

CALL = re.compile(r"(\w+)\(([^)]*)\)")


def _make(case):
    text, cls = case["string"], case["class"]
    if cls == "ValidReaderWriteIdList":
        return ValidWriteIdList.parse(text)
    if cls == "ValidCompactorWriteIdList":
        return ValidWriteIdList.parse(text, compactor=True)
    if cls == "ValidReadTxnList":
        return ValidTxnList.parse(text)
    raise AssertionError(cls)


def _call(obj, method, args):
    table = {
        "isWriteIdValid": obj.is_valid, "isTxnValid": obj.is_valid,
        "isValidBase": obj.is_valid_base,
        "isWriteIdAborted": obj.is_aborted, "isTxnAborted": obj.is_aborted,
        "isWriteIdRangeValid": obj.range_valid, "isTxnRangeValid": obj.range_valid,
        "isWriteIdRangeAborted": obj.range_aborted,
        "getMinOpenWriteId": lambda: obj.min_open_id,
        "getHighWatermark": lambda: obj.high_watermark,
        "writeToString": lambda: str(obj),
    }
    result = table[method](*args)
    return result.value if isinstance(result, RangeResponse) else result


@pytest.mark.parametrize("case", case_params("write_id_list_cases"))
def test_write_id_list_cases(case):
    obj = _make(case)
    for call, expected in case["results"].items():
        method, raw = CALL.fullmatch(call).groups()
        args = [int(a) for a in raw.split(",") if a]
        assert _call(obj, method, args) == expected, call


@pytest.mark.parametrize("text", ["tbl:x:5", "tbl:5", "tbl:5:9:1,a:", "a:1:2:3:4:5", "5:1:2:3:4"])
def test_malformed_lists_raise(text):
    with pytest.raises(SnapshotParseError):
        if text.count(":") >= 4 and text[0].isdigit():
            ValidTxnList.parse(text)
        else:
            ValidWriteIdList.parse(text)


def test_legacy_txn_list():
    t = ValidTxnList.parse("150:121:99:121", legacy=True)
    assert t.exceptions == (99, 121)
    assert not t.is_valid(99) and t.is_valid(100) and not t.is_valid(151)
    assert t.is_valid_base(100) and not t.is_valid_base(121)
    assert str(t) == "150:121:99:121"
    assert str(ValidTxnList.parse("100:9223372036854775807:", legacy=True)) == \
        "100:9223372036854775807:"


def test_parse_any_reads_both_forms():
    assert ValidTxnList.parse_any("150:121:99:121").exceptions == (99, 121)
    modern = ValidTxnList.parse_any("100:4:4,7:5")
    assert modern.exceptions == (4, 5, 7) and modern.is_aborted(5)


def test_multi_table_form():
    text = "42$db.a:10:9223372036854775807::$db.b:7:5:5:"
    txn, tables = parse_txn_write_ids(text)
    assert txn == 42 and set(tables) == {"db.a", "db.b"}
    assert parse_write_ids(text, "db.b").high_watermark == 7
    with pytest.raises(SnapshotParseError, match="--table"):
        parse_write_ids(text)
    assert parse_write_ids("42$db.a:10:9223372036854775807::").high_watermark == 10


def test_quirk_exception_above_watermark():
    wil = ValidWriteIdList.parse("tbl:10:20:20")
    assert wil.range_valid(5, 12) is RangeResponse.ALL  # rule 2 runs before the overhang
    assert wil.range_valid(11, 12) is RangeResponse.NONE


@st.composite
def write_id_lists(draw):
    hwm = draw(st.integers(1, 60))
    exc = draw(st.lists(st.integers(1, hwm), unique=True, max_size=10))
    aborted = [e for e in exc if draw(st.booleans())]
    opened = [e for e in exc if e not in aborted]
    min_open = min(opened) if opened else 9223372036854775807
    return ValidWriteIdList.parse(
        f"t:{hwm}:{min_open}:{','.join(map(str, sorted(opened)))}:"
        f"{','.join(map(str, sorted(aborted)))}")


@given(write_id_lists(), st.integers(1, 70), st.integers(0, 10))
def test_range_valid_agrees_with_brute_force(wil, lo, width):
    hi = lo + width
    valid = sum(wil.is_valid(w) for w in range(lo, hi + 1))
    expected = ("ALL" if valid == width + 1 else "NONE" if valid == 0 else "SOME")
    assert wil.range_valid(lo, hi).value == expected


@given(write_id_lists())
def test_string_round_trip(wil):
    again = ValidWriteIdList.parse(str(wil))
    assert again == wil and str(again) == str(wil)

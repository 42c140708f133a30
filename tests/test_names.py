"""Directory and file names, parsed as Hive parses them."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acidtool.core.errors import InvalidNameError
from acidtool.core.names import Base, Delta, FileName, parse_bucket_id, parse_dir_name

from .helpers.shared import case_params

ERRORS = {"number_format": "java.lang.NumberFormatException",
          "string_index_out_of_bounds": "java.lang.StringIndexOutOfBoundsException"}


@pytest.mark.parametrize("case", case_params("name_parse_cases"))
def test_name_parse_cases(case):
    version = "2" if case["hive_version"] == "2.3" else case["hive_version"]
    exp = case["expected"]
    if "error" in exp:
        with pytest.raises(InvalidNameError) as info:
            parse_dir_name(case["name"], version)
        assert info.value.hive_exception == ERRORS[exp["error"]]
        assert info.value.kind == "invalid_name"
        return
    got = parse_dir_name(case["name"], version)
    assert got.kind == exp["kind"]
    if exp["kind"] == "base":
        assert got.write_id == exp["write_id"]
    else:
        assert (got.min_write_id, got.max_write_id, got.statement_id) == (
            exp["min_write_id"], exp["max_write_id"], exp["statement_id"])
    assert got.visibility_txn_id == exp.get("visibility_txn_id", 0)
    assert got.name == case["name"]


def _bucket_expectation(value):
    if isinstance(value, str) and value.startswith("error:"):
        return "error"
    if isinstance(value, str):  # "0 (copy 1)": Hive 3 reports the copy number beside the id
        return int(value.split()[0])
    return value


@pytest.mark.parametrize("case", case_params("bucket_file_name_cases"))
@pytest.mark.parametrize("version,key", [("4", "hive_4"), ("3", "hive_3"), ("2", "hive_2_3")])
def test_bucket_file_name_cases(case, version, key):
    exp = case[key]
    want = _bucket_expectation(exp["bucket_id"])
    if want == "error":
        with pytest.raises(InvalidNameError):
            parse_bucket_id(case["file_name"], version)
        return
    bucket, attempt = parse_bucket_id(case["file_name"], version)
    assert bucket == want
    if "attempt_id" in exp:
        assert attempt == exp["attempt_id"]


@pytest.mark.parametrize("name,expected", [
    ("base_5", "base_0000005"),
    ("base_0000010_v0000020", "base_0000010_v0000020"),
    ("base_10_v0", "base_0000010"),
    ("base_-9223372036854775808", "base_-9223372036854775808"),
    ("delta_1_2", "delta_0000001_0000002"),
    ("delta_00061_61_3", "delta_0000061_0000061_0003"),
    ("delete_delta_12_34_56_v78", "delete_delta_0000012_0000034_0056_v0000078"),
    ("delta_1234567880_1234567890_0000", "delta_1234567880_1234567890_0000"),
])
def test_canonical_spelling(name, expected):
    parsed = parse_dir_name(name, "4")
    assert str(parsed) == expected
    assert parsed.name == name  # the raw spelling is kept


@pytest.mark.parametrize("name", ["base_1_000", "base_ 5", "delta_1_2 ", "base_٣"[:0] + "base_1e3",
                                  "delta_+_1", "base_0x10"])
def test_java_number_rules_reject_what_python_int_accepts(name):
    with pytest.raises(InvalidNameError):
        parse_dir_name(name, "4")


def test_unicode_digits_parse_like_java():
    # Character.digit accepts every Unicode decimal digit, and so does Hive.
    assert parse_dir_name("base_\u0663", "4").write_id == 3


@pytest.mark.parametrize("name", ["BASE_5", "Delta_1_1", "random", "deltas", "base"])
def test_non_acid_directories(name):
    assert parse_dir_name(name, "4") is None


@pytest.mark.parametrize("name,kind,bucket,attempt,copy", [
    ("bucket_00000", "bucket", 0, None, None),
    ("bucket_00007_12", "bucket", 7, 12, None),
    ("bucket_00001_flush_length", "flush_length", 1, None, None),
    ("_orc_acid_version", "acid_version", None, None, None),
    ("_metadata_acid", "metadata", None, None, None),
    ("_SUCCESS", "hidden", None, None, None),
    (".part-0.crc", "hidden", None, None, None),
    ("000000_0", "original", 0, None, None),
    ("000003_0_copy_12", "original", 3, None, 12),
    ("part-00000-0a72.c000.snappy.orc", "other", None, None, None),
    ("orders__9c1d2f0e_8a7b_4c1d_9e2f_0a1b2c3d4e5f", "other", None, None, None),
])
def test_file_name_kinds(name, kind, bucket, attempt, copy):
    f = FileName.parse(name)
    assert (f.kind, f.bucket_id, f.attempt_id, f.copy) == (kind, bucket, attempt, copy)


ids = st.integers(min_value=0, max_value=2**63 - 1)
stmts = st.integers(min_value=-1, max_value=2**31 - 1)


@given(ids, ids, stmts, st.integers(min_value=0, max_value=2**63 - 1), st.booleans())
def test_delta_round_trip(lo, hi, stmt, vis, delete):
    d = Delta(lo, hi, stmt, vis, delete)
    assert Delta.parse(str(d), "4") == d
    if vis == 0:
        for version in ("2", "3"):
            assert Delta.parse(str(d), version) == d


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1), st.integers(0, 2**63 - 1))
def test_base_round_trip(wid, vis):
    b = Base(wid, vis)
    assert Base.parse(str(b), "4") == b


@given(st.text(min_size=1, max_size=12))
def test_parse_never_raises_anything_but_invalid_name(suffix):
    for prefix in ("base_", "delta_", "delete_delta_"):
        for version in ("2", "3", "4"):
            try:
                parse_dir_name(prefix + suffix, version)
            except InvalidNameError:
                pass


def test_java_string_order_for_characters_above_the_bmp():
    from acidtool.core.javanum import java_string_key

    # Java compares UTF-16 code units: a surrogate pair (U+10000) sorts before U+FFFF.
    assert java_string_key("\U00010000") < java_string_key("\uffff")
    assert "\U00010000" > "\uffff"  # while Python compares code points
    assert java_string_key("abc") == "abc"


@pytest.mark.parametrize("placed,others,cover", [
    # a delete's delta taken into a minor compaction's output, with or without Hive 4's _v
    ("delete_delta_0000006_0000006_0000", ["delete_delta_0000001_0000006"],
     "delete_delta_0000001_0000006"),
    ("delete_delta_0000006_0000006_0000", ["delete_delta_0000003_0000009_v0000042"],
     "delete_delta_0000003_0000009_v0000042"),
    # the insert half of an update: the minor compaction's delete delta holds write 6 as well
    ("delta_0000006_0000006_0000", ["delete_delta_0000001_0000006", "delta_0000001_0000006"],
     "delete_delta_0000001_0000006"),
    # another statement of write id 6 is beside it; a delta of write id 6 without a statement
    # id is its statements compacted (but beside a delta that has none itself, as Hive 2 names)
    ("delta_0000006_0000006_0001", ["delta_0000006_0000006_0000"], None),
    ("delta_0000006_0000006_0001", ["delta_0000006_0000006_0000", "delta_0000006_0000006"],
     "delta_0000006_0000006"),
    ("delete_delta_0000006_0000006_0000", ["delete_delta_0000006_0000006"],
     "delete_delta_0000006_0000006"),
    ("delta_0000006_0000006", ["delta_0000006_0000006_0000"], None),
    # a major compaction at or above it; a base of the write itself under a later one
    ("delete_delta_0000006_0000006_0000", ["base_0000006"], "base_0000006"),
    ("delta_0000006_0000006_0000", ["base_0000009_v0000050"], "base_0000009_v0000050"),
    ("base_0000006", ["base_0000007"], "base_0000007"),
    # nothing took it in: older or later directories that do not hold write id 6
    ("delete_delta_0000006_0000006_0000", ["base_0000005", "delta_0000001_0000005",
                                           "delta_0000007_0000007_0000",
                                           "delete_delta_0000007_0000009", "_tmp", ".hive"],
     None),
    ("base_0000006", ["delta_0000001_0000009", "base_0000005"], None),
    # a compaction's own output (a range) and names that are no directory of Hive's
    ("delta_0000001_0000006", ["base_0000009"], None),
    ("bucket_00000", ["base_0000009"], None),
    ("_acidtool_staging_0b4f82053b81", ["base_0000009"], None),
])
def test_a_single_writes_directory_a_compaction_took_in(placed, others, cover):
    from acidtool.core.guards import absorbing

    assert absorbing(placed, others) == cover
    assert absorbing(placed, [placed]) is None  # its own name is never its cover

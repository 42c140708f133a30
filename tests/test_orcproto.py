"""The ORC tail decoder against pyorc's reading of the same footers."""

import pyarrow.orc as paorc
import pyorc
import pytest

from acidtool.core.orcproto import ProtoError, parse_file_tail, parse_footer

from .helpers.orcfiles import ALL_TYPES, all_types_rows, write_orc
from .helpers.runner import run
from .helpers.shared import REALDATA


def _orc_files():
    files = []
    if REALDATA.exists():
        files = sorted(p for p in REALDATA.rglob("*") if p.is_file()
                       and not p.name.startswith(("_", ".")) and p.suffix not in (".md", ".crc"))
    return files


def _compare(path):
    tail = parse_file_tail(paorc.ORCFile(str(path)).reader.serialized_file_tail())
    reader = pyorc.Reader(open(path, "rb"))
    stripes = list(reader.iter_stripes())
    assert tail.rows == len(reader)
    assert [s.rows for s in tail.stripes] == [len(s) for s in stripes]
    assert [(s.offset, s.length) for s in tail.stripes] == [
        (s.bytes_offset, s.bytes_length) for s in stripes]
    assert tail.type_string() == str(reader.schema)
    assert tail.metadata == dict(reader.user_metadata)
    if "presto" in str(path):
        return  # pyorc crashes on these string statistics (ORC-1959); we do not
    for cid, mine in enumerate(tail.statistics):
        theirs = dict(reader[cid].statistics)
        assert mine.number_of_values == theirs["number_of_values"]
        if mine.has_null is not None:
            assert mine.has_null == theirs["has_null"]
        for key in ("minimum", "maximum", "sum", "total_length"):
            if key in theirs and isinstance(theirs[key], (int, str)) and key in mine.values:
                assert mine.values[key] == theirs[key], (cid, key)


def test_fixture_with_every_type(tmp_path):
    _compare(write_orc(tmp_path / "all.orc", ALL_TYPES, all_types_rows()))


@pytest.mark.parametrize("path", _orc_files() or [pytest.param(None, marks=pytest.mark.skip(
    reason="../shared/realdata is not present"))], ids=lambda p: p.name if p else "none")
def test_realdata_footers(path):
    _compare(path)


def test_garbage_is_an_error():
    with pytest.raises(ProtoError):
        parse_footer(b"\x0a\xff")  # a length-delimited field longer than the buffer
    with pytest.raises(ProtoError):
        parse_file_tail(b"")


def test_meta_survives_statistics_other_readers_crash_on():
    path = REALDATA / "orc/java/core/src/test/resources/orc-file-presto-string.orc"
    if not path.exists():
        pytest.skip("../shared/realdata is not present")
    result = run("meta", path, "--format", "json")
    assert result.code == 0
    (doc,) = result.json()
    assert doc["writer"] == "PRESTO" and [c["name"] for c in doc["columns"]] == [
        "(root)", "id", "name", "score"]

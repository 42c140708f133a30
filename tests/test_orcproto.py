"""The ORC tail decoder against pyorc's reading of the same footers."""

import random

import pyarrow as pa
import pyarrow.orc as paorc
import pyorc
import pytest

from acidtool.core.orcproto import (
    TAIL_GUESS,
    ProtoError,
    UnsupportedCompression,
    encode_field,
    encode_varint,
    parse_file_tail,
    parse_footer,
    parse_postscript,
)
from acidtool.io.footers import read_footer, read_footer_at
from acidtool.io.fs import resolve

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


# ------------------------------------------------------------------------------------------------
# The footer read straight from the file's last bytes (what validate does) against pyarrow's tail


def _summary(footer):
    # statistics as text: a double sum may be NaN, which equals nothing, itself included
    return (footer.rows, footer.stripes, footer.types, footer.metadata,
            repr(list(footer.statistics)), footer.calendar, footer.software_version,
            footer.row_index_stride)


def _direct(path, size=None):
    size = path.stat().st_size if size is None else size
    with pa.OSFile(str(path)) as f:
        return read_footer_at(f, size)


def _through_pyarrow(path):
    return parse_file_tail(paorc.ORCFile(str(path)).reader.serialized_file_tail())


@pytest.mark.parametrize("path", _orc_files() or [pytest.param(None, marks=pytest.mark.skip(
    reason="../shared/realdata is not present"))], ids=lambda p: p.name if p else "none")
def test_realdata_direct_tail_equals_pyarrows(path):
    assert _summary(_direct(path)) == _summary(_through_pyarrow(path))


@pytest.mark.slow
@pytest.mark.parametrize("compression", ["NONE", "ZLIB", "SNAPPY", "LZ4", "ZSTD"])
@pytest.mark.parametrize("columns, stripe_size", [
    (3, 64 << 20),            # a footer of a few hundred bytes, one read
    (2500, 64 << 20),         # a wide table: the footer outgrows the first read
    (2, 4096),                # many stripes
])
def test_direct_tail_for_every_codec(tmp_path, compression, columns, stripe_size):
    path = tmp_path / "f.orc"
    schema = "struct<" + ",".join(f"c{i}:bigint" for i in range(columns)) + ">"
    with open(path, "wb") as f:
        writer = pyorc.Writer(f, schema, stripe_size=stripe_size,
                              compression=getattr(pyorc.CompressionKind, compression))
        rng = random.Random(columns)
        for _ in range(20_000 if columns < 10 else 20):
            writer.write(tuple(rng.getrandbits(60) for _ in range(columns)))
        writer.close()
    expected = _summary(_through_pyarrow(path))
    size = path.stat().st_size
    memory = resolve(f"memory://tails-{compression}-{columns}")
    memory.fs.create_dir(memory.path)
    with memory.fs.open_output_stream(memory.join("f.orc")) as out:
        out.write(path.read_bytes())
    for loc in (resolve(str(tmp_path)), memory):  # a local descriptor; pyarrow's file
        facts = read_footer(loc, "f.orc", size, None)
        assert facts.error is None and _summary(facts.footer) == expected, loc.url
    if compression in ("NONE", "ZLIB", "SNAPPY"):  # decoded here, without an ORC reader
        assert _summary(_direct(path)) == expected
    else:
        with pytest.raises(UnsupportedCompression):
            _direct(path)
    assert len(facts.footer.stripes) > 1 or stripe_size > 4096
    assert path.stat().st_size > TAIL_GUESS or columns < 1000


def test_direct_tail_of_a_prefix(tmp_path):
    """A streaming file is read up to its committed length: the footer is found there."""
    path = write_orc(tmp_path / "a.orc", ALL_TYPES, all_types_rows())
    data = path.read_bytes()
    padded = tmp_path / "padded.orc"
    padded.write_bytes(data + b"\0" * 100)  # bytes written after the last flush
    assert _summary(_direct(padded, len(data))) == _summary(_through_pyarrow(path))


@pytest.mark.parametrize("mangle, message", [
    (lambda d: d[:-1], "postscript"),
    (lambda d: d[:len(d) // 2], "postscript"),
    (lambda d: d[:-1] + bytes([200]), "postscript"),
    (lambda d: d[:20] + bytes([30]), "postscript length"),
    (lambda d: b"ORC", "too short"),
    (lambda d: d[:-40] + b"\xff" * 39 + d[-1:], None),
])
def test_direct_tail_of_damaged_files_is_an_error(tmp_path, mangle, message):
    path = write_orc(tmp_path / "a.orc", ALL_TYPES, all_types_rows())
    path.write_bytes(mangle(path.read_bytes()))
    with pytest.raises(ProtoError, match=message):
        _direct(path)


def test_types_apart_from_each_other_are_still_one_schema():
    """Protobuf allows repeated fields in any order; writers keep them together, but a footer
    whose types are interleaved with other fields decodes to the same schema."""
    def field(number, payload):
        return bytes([number << 3 | 2, len(payload)]) + payload
    struct = field(4, bytes([0x08, 12, 0x10, 1, 0x1a, 1]) + b"a")  # struct<a:int>
    integer = field(4, bytes([0x08, 3]))
    together = parse_footer(struct + integer + bytes([6 << 3, 5]))
    apart = parse_footer(struct + bytes([6 << 3, 5]) + integer)
    assert together.type_string() == apart.type_string() == "struct<a:int>"
    assert together.rows == apart.rows == 5


def test_a_damaged_chunk_does_not_inflate_beyond_the_block_size():
    """As in ORC's Java reader, a chunk longer than the block size is refused, and so is one
    that inflates beyond it; a chunk that could inflate without bound is inflated with the
    bound, not first in full."""
    import zlib

    from acidtool.core.orcproto import decompress

    def framed(payload):
        packer = zlib.compressobj(6, zlib.DEFLATED, -15)
        chunk = packer.compress(payload) + packer.flush()
        return (len(chunk) << 1).to_bytes(3, "little") + chunk, len(chunk)

    rng = random.Random(7)
    payload = rng.randbytes(100_000)  # big enough to take the bounded path
    data, length = framed(payload)
    assert decompress(data, "ZLIB", 256 * 1024) == payload
    with pytest.raises(ProtoError, match=f"chunk of {length} bytes exceeds the block size"):
        decompress(data, "ZLIB", 1024)
    half = rng.randbytes(70_000) + bytes(80_000)  # 70 KB compressed, 150 KB inflated
    data, length = framed(half)
    assert length < 100_000
    with pytest.raises(ProtoError, match="inflates beyond the block size 100000"):
        decompress(data, "ZLIB", 100_000)
    small, _ = framed(bytes(5000))  # the unbounded path checks the size it inflated to
    with pytest.raises(ProtoError, match="inflates beyond the block size 1024"):
        decompress(small, "ZLIB", 1024)
    with pytest.raises(ProtoError, match="corrupt ZLIB"):
        decompress((10 << 1).to_bytes(3, "little") + b"\xff" * 10, "ZLIB", 1024)


# Hand-built footers: protobuf fields written out, so that each case damages one thing.

_field = encode_field


def _type(kind, subtypes=(), names=()):
    packed = b"".join(encode_varint(s) for s in subtypes)
    return _field(4, _field(1, kind) + (_field(2, packed) if subtypes else b"")
                  + b"".join(_field(3, n.encode()) for n in names))


INT, STRUCT, LIST, MAP = 3, 12, 10, 11
ROWS = _field(6, 5)
GOOD_STATS = _field(7, _field(1, 5) + _field(2, _field(1, 0) + _field(2, 8)))


@pytest.mark.parametrize("footer, message", [
    (_type(STRUCT, [1], ["a"]) + _type(INT) + ROWS, None),
    (_type(STRUCT, [1], ["a", "extra"]) + _type(INT) + ROWS, None),  # Java ignores extra names
    (_type(STRUCT, [1], ["a"]) + _type(INT) + ROWS + GOOD_STATS * 2, None),
    (ROWS, "no types"),
    (_type(STRUCT, [5], ["a"]) + _type(INT), "subtype 5"),
    (_type(STRUCT, [0], ["a"]), "subtype 0"),                          # a cycle
    (_type(STRUCT, [1, 2], ["a"]) + _type(INT) + _type(INT), "only 1 names"),
    (_type(STRUCT, [1], ["l"]) + _type(LIST), "array type 1 has 0 subtypes"),
    (_type(STRUCT, [1], ["m"]) + _type(MAP, [2]) + _type(INT), "map type 1 has 1 subtypes"),
    (_type(STRUCT, [1], ["a"]) + _type(40), "kind ORC does not know"),
    (_type(STRUCT, [1], ["a"]) + _type(INT) + _field(7, _field(2, b"\x08")), "footer is not a well-formed"),
    (_type(STRUCT, [1], ["a"]) + _type(INT) + _field(7, b"\x0f"), "footer is not a well-formed"),
    (_type(STRUCT, [1], ["a"]) + _type(INT) + _field(7, _field(12, b"\x18\xfa")), "footer is not a well-formed"),
    (_type(STRUCT, [1], ["a"]) + _type(INT) + _field(7, b"\x09\x00"), "footer is not a well-formed"),
    (_type(STRUCT, [1], ["a"]) + _type(INT) + _field(3, b"\x08"), "footer is not a well-formed"),  # a stripe
    (_type(STRUCT, [1], ["a"]) + _type(INT) + b"\x00\x01", "footer is not a well-formed"),
], ids=lambda v: "-" if isinstance(v, bytes) else str(v))
def test_check_fails_where_orc_readers_fail_to_parse_the_footer(footer, message):
    """Protobuf parses the whole footer and ``check()`` decodes the types, so that a damaged
    footer is an error when the file is opened, as in ORC's readers, and not an IndexError or
    a loop later in whatever asks first."""
    if message is None:
        assert parse_footer(footer).check().type_string() in ("struct<a:int>",)
    else:
        with pytest.raises(ProtoError, match=message):
            parse_footer(footer).check()


def test_fields_of_an_unexpected_wire_type_are_skipped_as_protobuf_does():
    name_as_varint = _field(4, _field(1, STRUCT) + _field(2, b"\x01") + _field(3, 7)
                            + _field(3, b"a"))
    item_as_varint = _field(5, _field(1, 9) + _field(1, b"k") + _field(2, b"v"))
    footer = parse_footer(name_as_varint + _type(INT) + item_as_varint + ROWS).check()
    assert footer.type_string() == "struct<a:int>"
    assert footer.metadata == {"k": b"v"}


def _tail(postscript: bytes) -> bytes:
    return postscript + bytes([len(postscript)])


PS_FIELDS = _field(1, 0) + _field(2, 0) + _field(3, 262144)


@pytest.mark.parametrize("postscript, magic_at_end, message", [
    (PS_FIELDS + _field(8000, b"ORC"), True, None),
    (PS_FIELDS + _field(8001, b"ORC"), True, None),  # the raw bytes count, not the field
    (PS_FIELDS + _field(8000, b"ORX"), False, None),  # the caller then checks the header
    (PS_FIELDS + b"\x0d\x00\x00\x00\x00" + _field(8000, b"ORC"), True, None),  # a fixed32
    (PS_FIELDS + b"\x00\x00" + _field(8000, b"ORC"), None, "postscript is not a well-formed"),
    (PS_FIELDS + _field(4, b"\x00\x80") + _field(8000, b"ORC"), None, "postscript is not a well-formed"),
    (PS_FIELDS + b"\x0f" + _field(8000, b"ORC"), None, "postscript is not a well-formed"),
    (b"ORC", None, "postscript length 3"),
], ids=lambda v: "-" if isinstance(v, bytes) else str(v))
def test_postscript_as_orcs_java_reader_reads_it(postscript, magic_at_end, message):
    tail = _tail(postscript)
    if message is None:
        assert parse_postscript(tail, 1000).magic_at_end is magic_at_end
    else:
        with pytest.raises(ProtoError, match=message):
            parse_postscript(tail, 1000)


def test_magic_missing_from_the_postscript_is_read_when_the_file_starts_with_it(tmp_path):
    """ORC 0.11 files: Java's reader checks the header instead. Elsewhere: not ORC."""
    good = write_orc(tmp_path / "a.orc", "struct<a:int>", [(1,), (2,)]).read_bytes()
    length = good[-1]
    assert good[-4:-1] == b"ORC"
    old_style = good[:-4] + b"ORX" + bytes([length])
    (tmp_path / "old.orc").write_bytes(old_style)
    assert _direct(tmp_path / "old.orc").rows == 2
    (tmp_path / "neither.orc").write_bytes(b"XYZ" + old_style[3:])
    with pytest.raises(ProtoError, match="no ORC magic"):
        _direct(tmp_path / "neither.orc")


def test_int_ranges_only_where_integer_statistics_have_both_ends():
    from .helpers.layouts import acid, events

    data = acid(events(3, n=4, bucket=1))
    footer = read_footer_at(pa.BufferReader(data), len(data))
    # columns: 1-5 the ACID ints, 6 the row struct, 7 row.id (int), 8 row.name (string)
    assert footer.int_ranges((1, 2, 3, 4, 5, 6, 7, 8, 99, -1)) == (
        (0, 0), (3, 3), (536936448, 536936448), (0, 3), (3, 3), None, (0, 3), None, None, None)


def _int_stats(ints: bytes) -> bytes:
    return _field(7, _field(1, 4) + _field(2, ints))


@pytest.mark.parametrize("ints, expected", [
    (_field(1, 6) + _field(2, 8), (3, 4)),   # sint64: 6 is 3, 8 is 4
    (_field(1, 0) + _field(2, 8), (0, 4)),   # a minimum of 0, written
    (_field(1, 0) + _field(2, 0), (0, 0)),
    (_field(1, 6), None),                    # half there: a damaged footer
    (_field(2, 8), None),
    (_field(1, 0), None),
    (b"", None),
], ids=lambda v: v.hex() or "empty" if isinstance(v, bytes) else str(v))
def test_int_ranges_tell_a_written_zero_from_an_absent_value(ints, expected):
    footer = parse_footer(_type(STRUCT, [1], ["a"]) + _type(INT) + ROWS + GOOD_STATS
                          + _int_stats(ints)).check()
    assert footer.int_ranges((1,)) == (expected,)


def test_a_released_footer_answers_as_a_held_one():
    """validate keeps footers released (no parsed message, no raw types): what the rules ask
    later is decoded again from the raw bytes, and must not differ."""
    from .helpers.layouts import acid, events

    data = acid(events(3, n=4, bucket=1))
    held = read_footer_at(pa.BufferReader(data), len(data)).check()
    released = read_footer_at(pa.BufferReader(data), len(data)).check().release()
    released_unchecked = read_footer_at(pa.BufferReader(data), len(data)).release()

    def answers(f):
        return (f.rows, f.metadata, f.stripe_count, f.types, f.type_string(), f.top_level(),
                f.column_names(), f.stripes, f.statistics, f.int_ranges((1, 2, 3, 5)),
                f.calendar, f.software_version, f.row_index_stride)

    assert answers(released) == answers(held) == answers(released_unchecked)


@pytest.mark.parametrize("schema", [
    "struct<`x y`:int,`a``b`:struct<`Q r`:array<string>>,`m,n`:map<string,int>>",
    "struct<`my col`:int,`a{b}'c`:string,s:struct<`x y`:int,z:array<string>>>",
    "struct<id:int,`Mixed Case`:decimal(10,2)>",
])
def test_quoted_field_names_keep_their_spaces_and_case_through_the_type_string(tmp_path,
                                                                              schema):
    """A footer's type string quotes names ORC would not parse bare; struct_fields and the
    Arrow type read from it give the file's own names back (pyarrow's reading of the file
    is the judge), as Spark's reader needs them to match the file's nested fields."""
    from acidtool.core.orctypes import struct_fields
    from acidtool.io.arrowtypes import orc_type_to_arrow

    path = tmp_path / "f.orc"
    with path.open("wb") as f:
        pyorc.Writer(f, schema).close()
    facts = read_footer(resolve(str(tmp_path)), "f.orc", path.stat().st_size, None)
    text = facts.footer.type_string()
    expected = paorc.ORCFile(str(path)).schema
    assert [n for n, _ in struct_fields(text)] == expected.names
    assert orc_type_to_arrow(text) == pa.struct(list(expected))


def test_types_compare_without_case_or_spaces_while_parsing_keeps_the_names():
    """Comparing a file's row types with --schema or with other files ignores case and
    whitespace, quoted names too (Hive's names are case-insensitive); parsing a type keeps a
    quoted name as the file has it (Spark matches a nested field by its name)."""
    from acidtool.core.orctypes import canonical, normalize

    assert normalize("struct<`My Col`:INT>") == normalize("struct< `my col` : int >")
    assert canonical("STRUCT< `My Col` : INT >") == "struct<`My Col`:int>"


@pytest.mark.parametrize("text,expected", [
    ("map<string,struct<`a>b`:int,`c,d`:string>>",
     pa.map_(pa.string(), pa.struct([("a>b", pa.int32()), ("c,d", pa.string())]))),
    ("map<struct<`a>b`:int>,string>",
     pa.map_(pa.struct([("a>b", pa.int32())]), pa.string())),
    ("map<string, decimal(10,2)>", pa.map_(pa.string(), pa.decimal128(10, 2))),
])
def test_a_maps_key_and_value_split_outside_quoted_names(text, expected):
    """The map's two types split at its one top-level comma, as a struct's fields do: a
    quoted name's comma or bracket is the name's (writers ORC's Java reader accepts may
    quote names pyorc cannot write, so the type string alone is tested)."""
    from acidtool.io.arrowtypes import orc_type_to_arrow

    assert orc_type_to_arrow(text) == expected

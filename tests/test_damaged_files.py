"""Damaged ORC files never crash acidtool, and validate agrees with an ORC reader on which
files cannot be read.

Files written by our own code (three codecs, nested types) are damaged at random, with a fixed
seed per case: bytes changed near the tail (postscript, footer, metadata), anywhere, or cut off.
Each damaged file goes through validate (metadata and rows), meta, dump and read. Every command
must end with a finding or one clear line and exit status 0 or 1, never an internal error; and
validate's ACID006 (not readable ORC) must not fire on a file that pyarrow's ORC reader opens.
"""

from __future__ import annotations

import contextlib
import functools
import io
import random

import pyarrow.orc as paorc
import pytest

from acidtool.commands.check.validate import ValidateOptions, validate
from acidtool.core.bucket import encode_v1
from acidtool.io.acidwrite import INSERT, Event, write_acid_file

from .helpers.layouts import acid, events, with_footer
from .helpers.runner import run

ROW_TYPE = "struct<id:int,name:string,m:map<string,int>,l:array<double>>"


@functools.lru_cache(maxsize=None)
def _seed_files() -> tuple[bytes, ...]:
    out = []
    for compression in ("none", "zlib", "snappy"):
        buf = io.BytesIO()
        write_acid_file(buf, ROW_TYPE, [
            Event(INSERT, 1, encode_v1(0, 0), i, 1, (i, f"n{i}", {"k": i}, [i / 2]))
            for i in range(50)], compression=compression)
        out.append(buf.getvalue())
    return tuple(out)


def _damage(rng: random.Random, data: bytes) -> bytes:
    d = bytearray(data)
    how = rng.randrange(4)
    if how == 0:  # a few bytes of the tail
        for _ in range(rng.randint(1, 4)):
            d[len(d) - 1 - rng.randrange(min(len(d), 400))] = rng.randrange(256)
    elif how == 1:  # cut off
        del d[rng.randrange(len(d)):]
    elif how == 2:  # anywhere
        for _ in range(rng.randint(1, 8)):
            d[rng.randrange(len(d))] = rng.randrange(256)
    else:  # the postscript and its length, with values that stress varints
        d[len(d) - 1 - rng.randrange(20)] = rng.choice([0, 1, 0x7F, 0x80, 0xFF])
    return bytes(d)


def _pyarrow_opens(path: str) -> bool:
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            paorc.ORCFile(path).schema  # noqa: B018
        return True
    except Exception:  # noqa: BLE001 - any failure of that reader is what is compared
        return False


@pytest.mark.parametrize("seed", range(150))
def test_a_damaged_file_is_a_finding_or_one_clear_line(tmp_path, seed):
    rng = random.Random(seed)
    data = _damage(rng, rng.choice(_seed_files()))
    delta = tmp_path / "t" / "delta_0000001_0000001_0000"
    delta.mkdir(parents=True)
    path = delta / "bucket_00000"
    path.write_bytes(data)
    table = tmp_path / "t"

    findings = {}
    for level in ("metadata", "rows"):
        report = validate([str(table)], ValidateOptions(level=level, jobs=1))
        findings[level] = report.findings
    unreadable = [f for f in findings["metadata"] if f.code == "ACID006"]
    if unreadable and _pyarrow_opens(str(path)):
        # A type kind newer than Hive's ORC: pyarrow's reader knows it, Hive's does not.
        assert all("kind ORC does not know" in f.message for f in unreadable), unreadable

    for args in (["meta", path], ["dump", path], ["read", table], ["validate", table]):
        result = run(*args)
        assert result.code in (0, 1), (args[0], result.code, result.err)
        assert "internal error" not in result.err and "Traceback" not in result.err, \
            (args[0], result.err)
        if result.code == 1 and args[0] in ("meta", "dump"):
            assert str(path) in result.err, (args[0], result.err)  # the line names the file


def test_the_damage_covers_what_it_should():
    """The sweep above is only worth its time if it reaches every layer: files the decoder
    rejects, files it reads whose stripes are broken, and files that stay readable."""
    kinds = set()
    for seed in range(150):
        rng = random.Random(seed)
        data = _damage(rng, rng.choice(_seed_files()))
        with contextlib.redirect_stderr(io.StringIO()):
            try:
                f = paorc.ORCFile(io.BytesIO(data))
            except Exception:  # noqa: BLE001
                kinds.add("unreadable")
                continue
            try:
                f.read()
                kinds.add("readable")
            except Exception:  # noqa: BLE001
                kinds.add("broken stripes")
    assert kinds == {"unreadable", "readable", "broken stripes"}


def test_column_names_that_are_not_utf8(tmp_path):
    """Hive's reader replaces such bytes; pyarrow cannot read the file at all. dump and read
    say so in one line at open (not mid-output); validate decodes the footer itself."""
    import pyorc

    buf = io.BytesIO()
    writer = pyorc.Writer(buf, "struct<a:int,s:struct<qqqq:int>>",
                          compression=pyorc.CompressionKind.NONE)
    writer.write((1, (2,)))
    writer.close()
    data = buf.getvalue()
    assert data.count(b"qqqq") == 1
    path = tmp_path / "t" / "delta_0000001_0000001_0000" / "bucket_00000"
    path.parent.mkdir(parents=True)
    path.write_bytes(data.replace(b"qqqq", b"q\xff\xfeq"))
    for args in (["dump", path], ["read", tmp_path / "t"]):
        result = run(*args)
        assert result.code == 1 and "is not UTF-8" in result.err, result.err
        assert result.out == ""
    result = run("validate", tmp_path / "t")
    assert result.code == 1 and "ACID007" in result.out and "ACID006" not in result.out


def _with_current_transaction_stats(data: bytes, int_stats: bytes) -> bytes:
    """The file with currentTransaction's (column 5) integer statistics replaced."""
    from acidtool.core.orcproto import encode_field

    def transform(footer_fields):
        out, column = [], 0
        for number, wire, value in footer_fields:
            if number == 7:
                if column == 5:
                    value = encode_field(1, 2) + encode_field(2, int_stats)
                column += 1
            out.append((number, wire, value))
        return out
    return with_footer(data, transform)


def test_half_of_an_integer_statistic_is_nothing_to_judge_by(tmp_path):
    """Statistics with a minimum and no maximum (only damage makes them): validate's rules
    skip the column instead of failing; the same statistics made whole are judged."""
    from acidtool.core.orcproto import encode_field

    data = acid(events(1, n=2), compression="none")
    zigzag_99 = 198
    delta = tmp_path / "t" / "delta_0000001_0000001_0000"
    delta.mkdir(parents=True)
    (delta / "_orc_acid_version").write_bytes(b"2")
    for stats, code in ((encode_field(1, zigzag_99), 0),
                        (encode_field(1, zigzag_99) + encode_field(2, zigzag_99), 1)):
        (delta / "bucket_00000").write_bytes(_with_current_transaction_stats(data, stats))
        result = run("validate", tmp_path / "t")
        assert result.code == code, result.out + result.err
        assert ("ACID014" in result.out) == bool(code) and "internal error" not in result.err


def test_string_values_that_are_not_utf8_print_as_java_decodes_them(tmp_path):
    """ORC does not check string bytes; orc-tools prints them through Java's UTF-8 decoding,
    which puts U+FFFD for each bad sequence. dump and read print the same, and their output
    stays UTF-8."""
    import pyorc

    buf = io.BytesIO()
    writer = pyorc.Writer(buf, "struct<s:string,m:map<string,int>>",
                          compression=pyorc.CompressionKind.NONE)
    writer.write(("aqqqqz", {"qqqq": 1}))
    writer.write(("plain", {"k": 2}))
    writer.close()
    # a LOAD DATA file (a plain bucket_00000 in a delta fails Hive, and read)
    path = tmp_path / "t" / "delta_0000001_0000001_0000" / "000000_0"
    path.parent.mkdir(parents=True)
    path.write_bytes(buf.getvalue().replace(b"qqqq", b"q\xffq\xbe"))
    out = run("dump", path)
    assert out.code == 0, out.err
    assert out.out.splitlines() == [
        '{"s":"aq\ufffdq\ufffdz","m":[{"_key":"q\ufffdq\ufffd","_value":1}]}',
        '{"s":"plain","m":[{"_key":"k","_value":2}]}']
    out = run("read", tmp_path / "t")
    assert out.code == 0 and "q\ufffdq\ufffd" in out.out, out.err


def _facts_key(facts):
    footer = facts.footer
    return (facts.path, facts.size, facts.error, facts.flush_committed, facts.event_ranges,
            footer and (footer.rows, footer.metadata, footer.schema.types, footer.stripe_count))


@pytest.mark.parametrize("seed", range(0, 150, 5))
def test_a_file_listed_without_its_size_has_the_facts_of_one_listed_with_it(tmp_path, seed):
    """validate's local listing leaves out the sizes of files in ACID directories, and the
    read learns them: the facts must be the same (damaged files included)."""
    from acidtool.core.listing import UNKNOWN_SIZE
    from acidtool.io.footers import read_footer_and_bytes
    from acidtool.io.fs import resolve

    rng = random.Random(seed)
    seed_file = rng.choice(_seed_files())
    cases = {"damaged": (_damage(rng, seed_file), None), "empty": (b"", None),
             "streaming": (seed_file + b"\0" * 40, len(seed_file)),
             "flushed beyond": (seed_file, len(seed_file) + 1)}
    loc = resolve(str(tmp_path))
    for name, (data, flushed) in cases.items():
        (tmp_path / name).write_bytes(data)
        side = None
        if flushed is not None:
            side = f"{name}_flush_length"
            (tmp_path / side).write_bytes(flushed.to_bytes(8, "big"))
        listed = read_footer_and_bytes(loc, name, len(data), side)
        unlisted = read_footer_and_bytes(loc, name, UNKNOWN_SIZE, side)
        assert _facts_key(unlisted[0]) == _facts_key(listed[0]), name
        assert unlisted[1] == listed[1], name
    gone = read_footer_and_bytes(loc, "gone", UNKNOWN_SIZE, None)[0]
    assert gone.size == 0 and "not readable" in gone.error

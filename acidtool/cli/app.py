"""The ``acidtool`` command line: the typer app and what its commands share.

The commands live in ``inspect`` (ls, dump, meta), ``check`` (validate, rules, explain),
``rows`` (read, diff), ``write`` (convert) and ``decode``; each parses its options, calls the
library and hands the result to ``output``. ``main`` is the one error boundary.
"""

from __future__ import annotations

import enum
import os
import re
import sys
from typing import Iterable

import typer

from ..core.errors import UsageError
from ..core.version import __version__
from ..core.versions import HiveVersion as HiveVersion  # the commands' --hive-version type

app = typer.Typer(
    name="acidtool",
    help="Look inside Apache Hive ACID (transactional) table directories the way Hive does, "
         "without a running Hive.\n\nExit status: 0 ok, 1 Hive would fail (or findings), "
         "2 usage error or unreadable path, 3 internal error (a bug: please report it).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
decode_app = typer.Typer(help="Decode the numbers Hive writes: bucket properties and snapshots.",
                         no_args_is_help=True)


class Format(str, enum.Enum):
    """``--format`` of the commands that show a result as text or JSON (the one Output each
    is rendered by: ``results.output_for``). A command with formats of its own (validate's
    JSONL, SQL, SVG...) declares them on the command."""

    text = "text"
    json = "json"


class Codec(str, enum.Enum):
    """An ORC or Parquet codec, as ``--compression`` and ``--codec`` take it."""

    zlib = "zlib"
    snappy = "snappy"
    lz4 = "lz4"
    zstd = "zstd"
    none = "uncompressed"


class TableFormat(str, enum.Enum):
    """``--format`` of the listings (ls, meta, rules, decode): their text is a table."""

    table = "table"
    json = "json"


class LsFormat(str, enum.Enum):
    table = "table"
    json = "json"
    svg = "svg"


WRITE_IDS_HELP = ("Snapshot as a ValidWriteIdList, 'db.tbl:hwm:minOpen:open,ids:aborted,ids' "
                  "(or the '$'-joined hive.txn.tables.valid.writeids form). Default: everything "
                  "committed. Not used with --hive-version 2.")
TXNS_HELP = ("ValidTxnList 'hwm:minOpenTxn:open:aborted' (Hive 4: decides which _v<txn> "
             "directories are visible). With --hive-version 2 it is the snapshot itself, in 2.3's "
             "'hwm:minOpenTxn[:exception]*' form. Default: everything committed.")


def hive_version_option(says: str = "Hive semantics to apply"):
    """``--hive-version``, declared once: ``says`` what the version decides for the command."""
    return typer.Option(None, "--hive-version", help=f"{says}: 2 (2.3), 3 or 4. Default: 4, or "
                        "the metastore's version with --metastore (which it must agree with "
                        "if given).")


HIVE_VERSION = hive_version_option()
MASTER = typer.Option(None, "--master", help="With --spark: the Spark master (default "
                      "local[*], or the active session's).")
# The snapshot options most commands take, declared once.
WRITE_IDS = typer.Option(None, "--write-ids", help=WRITE_IDS_HELP)
TXNS = typer.Option(None, "--txns", help=TXNS_HELP)
METASTORE = typer.Option(
    None, "--metastore", envvar="ACIDTOOL_METASTORE",
    help="A Hive metastore, thrift://HOST:PORT (hive.metastore.uris). Then PATH may name a "
         "table, db.table or db.table/k=v, and without --write-ids/--txns the snapshot is the "
         "metastore's (its open and aborted transactions, or the table's valid write ids).")
INSERT_ONLY = typer.Option(False, "--insert-only", help="An insert-only (micro-managed) "
                           "table, transactional_properties=insert_only (Hive 3 and 4): its "
                           "bases and deltas hold plain data files (ORC, Parquet...), no ACID "
                           "columns, no delete deltas.")


def emit(text: str) -> None:
    """A command's output to stdout: text for people or JSON. Names that are not UTF-8 are
    escaped as JSON escapes them (``output.escape_surrogates``), and no line may start with
    "::" (GitHub Actions would take it for a workflow command)."""
    from .escapes import no_commands

    emit_raw(no_commands(text if text.endswith("\n") else text + "\n"))


def emit_raw(text: str) -> None:
    """Output written as it is made (JSON lines, JUnit XML, GitHub workflow commands)."""
    from .escapes import escape_surrogates

    sys.stdout.write(escape_surrogates(text))


def emit_pieces(pieces: Iterable[str]) -> None:
    """Write a long JSON output piece by piece as it is made, never joined into one string
    (names escaped as ``output.escape_json_names`` says)."""
    from .escapes import escape_json_names

    write = sys.stdout.write
    for piece in pieces:
        write(escape_json_names(piece))
    write("\n")


def emit_json(doc, **options) -> None:
    """A JSON document (``output.dumps``) to stdout, names escaped as
    ``output.escape_json_names`` says."""
    from .output import dumps

    emit_json_text(dumps(doc, **options))


def emit_json_text(text: str) -> None:
    """JSON (or JSON lines) already made, to stdout."""
    from .escapes import escape_json_names

    if text:  # (JSON lines of nothing are no line at all)
        sys.stdout.write(escape_json_names(text if text.endswith("\n") else text + "\n"))


def note(message: str) -> None:
    """A line for the person at the terminal (stderr), never part of the command's output: one
    line, whatever names it quotes. Errors come this way too."""
    from .escapes import display

    print(f"acidtool: {display(message)}", file=sys.stderr)


def snapshot_note(snapshot) -> None:
    """Where a snapshot that the metastore gave came from, on stderr (the output's own
    "snapshot" says it in JSON)."""
    if snapshot.source.startswith("metastore"):
        ids = snapshot.write_ids if snapshot.write_ids is not None else snapshot.txns
        note(f"snapshot {ids} from the {snapshot.source}")


def silence_stdout() -> None:
    """After the reader of stdout went away (`| head`): later writes go nowhere."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


def _version_callback(value: bool) -> None:
    if value:
        emit(f"acidtool {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version_callback,
                                       is_eager=True, help="Print the version and exit."),
          traceback: bool = typer.Option(False, "--traceback", help="On an error, show the "
                                         "Python traceback instead of one line (may stand "
                                         "anywhere on the line; or ACIDTOOL_TRACEBACK=1).")
          ) -> None:
    pass


# ------------------------------------------------------------------------------------------------
# Option values that typer does not parse itself


def size_bytes(text: str | None) -> int | None:
    """'512M', '2G', '100000' -> bytes."""
    if text is None:
        return None
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    try:
        if t and t[-1] in units:
            return int(float(t[:-1]) * units[t[-1]])
        return int(t)
    except ValueError:
        raise UsageError(f"{text!r} is not a size (e.g. 512M, 2G)") from None


def csv_items(value: str | None, what: str = "--columns needs at least one column name"
              ) -> tuple[str, ...] | None:
    """'a, b,c' -> ('a', 'b', 'c'); None stays None."""
    if value is None:
        return None
    items = tuple(v.strip() for v in value.split(",") if v.strip())
    if not items:
        raise UsageError(what)
    return items


def write_whole(path: str, data: bytes) -> None:
    """``path`` written beside under a temporary name, then renamed: never half a file."""
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise UsageError(f"--output {path}: {exc.strerror or exc}") from None


def duration(text: str, option: str = "--min-age") -> float:
    """'1h', '30m', '90s', '2d', '0' -> seconds."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([smhd]?)\s*", text or "")
    if not m:
        raise UsageError(f"{option} {text!r} is not a duration (e.g. 0, 90s, 30m, 1h, 2d)")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]

"""`acidtool decode bucket` and `decode write-ids`."""

from __future__ import annotations

from typing import List

import typer

from .app import Format, HiveVersion, decode_app, emit, emit_json


@decode_app.command("bucket")
def decode_bucket(
    values: List[str] = typer.Argument(..., help="Encoded bucket properties, e.g. 536936448 "
                                       "or 0x20010000."),
    fmt: Format = typer.Option(Format.table, "--format"),
) -> None:
    """Decode the bucket column of ACID rows (BucketCodec): codec version, bucket id, statement.

    Example: acidtool decode bucket 536870912 536936451
    """
    from ..commands.inspect.decode import decode_buckets
    from .output import decoded_buckets_text

    rows = decode_buckets(values)
    if fmt is Format.json:
        emit_json(rows if len(rows) > 1 else rows[0])
    else:
        emit(decoded_buckets_text(rows))


@decode_app.command("write-ids")
def decode_write_ids(
    text: str = typer.Argument(..., help="A ValidWriteIdList ('db.t:hwm:minOpen:open:aborted'), "
                               "the '$'-joined multi-table form, or with --txns a ValidTxnList."),
    txns: bool = typer.Option(False, "--txns", help="Read TEXT as a ValidTxnList instead."),
    hive_version: HiveVersion = typer.Option(HiveVersion.V4, "--hive-version",
                                             help="With --txns: 2 reads the 2.3 form."),
    fmt: Format = typer.Option(Format.table, "--format"),
) -> None:
    """Say what a snapshot string means: high watermark, open and aborted ids, what is visible.

    Examples:

    \b
      acidtool decode write-ids 'db.t:100:4:4,7:5'
      acidtool decode write-ids --txns '150:121:99:121' --hive-version 2
    """
    from ..commands.inspect.decode import decode_snapshot
    from .output import decoded_snapshot_json, decoded_snapshot_text

    decoded = decode_snapshot(text, txns=txns, hive_version=hive_version)
    if fmt is Format.json:
        emit_json(decoded_snapshot_json(decoded))
    else:
        emit(decoded_snapshot_text(decoded))

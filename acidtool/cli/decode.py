"""`acidtool decode bucket` and `decode write-ids`."""

from __future__ import annotations

from typing import List

import typer

from .app import HiveVersion, TableFormat, decode_app


@decode_app.command("bucket")
def decode_bucket(
    values: List[str] = typer.Argument(..., help="Encoded bucket properties, e.g. 536936448 "
                                       "or 0x20010000."),
    fmt: TableFormat = typer.Option(TableFormat.table, "--format"),
) -> None:
    """Decode the bucket column of ACID rows (BucketCodec): codec version, bucket id, statement.

    Example: acidtool decode bucket 536870912 536936451
    """
    from ..commands.inspect.decode import decode_buckets
    from .results import output_for

    output_for(fmt).decoded_buckets(decode_buckets(values))


@decode_app.command("write-ids")
def decode_write_ids(
    text: str = typer.Argument(..., help="A ValidWriteIdList ('db.t:hwm:minOpen:open:aborted'), "
                               "the '$'-joined multi-table form, or with --txns a ValidTxnList."),
    txns: bool = typer.Option(False, "--txns", help="Read TEXT as a ValidTxnList instead."),
    hive_version: HiveVersion = typer.Option(HiveVersion.V4, "--hive-version",
                                             help="With --txns: 2 reads the 2.3 form."),
    fmt: TableFormat = typer.Option(TableFormat.table, "--format"),
) -> None:
    """Say what a snapshot string means: high watermark, open and aborted ids, what is visible.

    Examples:

    \b
      acidtool decode write-ids 'db.t:100:4:4,7:5'
      acidtool decode write-ids --txns '150:121:99:121' --hive-version 2
    """
    from ..commands.inspect.decode import decode_snapshot
    from .results import output_for

    output_for(fmt).decoded_snapshot(decode_snapshot(text, txns=txns, hive_version=hive_version))

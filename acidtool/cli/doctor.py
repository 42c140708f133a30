"""`acidtool doctor`: the metastore's view of tables against their files."""

from __future__ import annotations

from typing import List, Optional

import typer

from ..core.errors import UsageError
from .app import METASTORE, Format, app, duration

_TABLES = typer.Argument(..., help="Tables: db.table, db.table/k=v (one partition) or db.* "
                         "(every transactional table of the database).")
_OLDER_THAN = typer.Option("1h", "--older-than", help="How old an open transaction, or an "
                           "initiated or working compaction, must be to be reported: 2s, 30m, "
                           "1h, 2d.")


@app.command("doctor")
def doctor_command(
    tables: List[str] = _TABLES,
    metastore: Optional[str] = METASTORE,
    fmt: Format = typer.Option(Format.text, "--format", help="text or json."),
    older_than: str = _OLDER_THAN,
) -> None:
    """Compare what the metastore says of tables with their files, and say why compaction or
    cleaning is stuck. Reads only: nothing is written to the metastore or the files.

    HMS001 a directory of write ids the metastore never allocated (error); HMS002 aborted
    write ids not cleaned (warning); HMS003 a committed write id with no directory (error);
    HMS004 a partition directory the metastore does not list (warning); HMS005 a partition
    whose location is gone (error); HMS006 an old open transaction holding the Cleaner back
    (warning); HMS007 a failed or stuck compaction (warning); HMS008 obsolete directories the
    Cleaner should have removed (info). `acidtool explain HMS006` says more.

    Examples:

    \b
      acidtool doctor shop.orders --metastore thrift://metastore:9083
      acidtool doctor 'shop.*' --metastore thrift://metastore:9083 --format json
      acidtool doctor shop.orders/ds=2026-11-24 --older-than 30m

    Exit status: 0 nothing found; 1 findings; 2 bad option, no such table, or the metastore
    unreachable.
    """
    from ..commands.check.doctor import doctor
    from ..io.progress import ticker
    from .results import output_for

    if not metastore:
        raise UsageError("doctor compares the metastore with the files: give --metastore "
                         "thrift://HOST:PORT (or set ACIDTOOL_METASTORE)")
    seconds = duration(older_than, "--older-than")
    report = doctor(list(tables), metastore, seconds,
                    progress=None if fmt is Format.json else ticker("tables diagnosed"))
    output_for(fmt).doctor(report)
    if report.findings:
        raise typer.Exit(1)

"""``acidtool convert``, run: the caller's choice of how a plan is written and committed.

``delta.py`` plans, writes and commits a delta; ``spark.py`` writes its bucket files
on Spark's executors; ``txn.py`` commits it inside a metastore transaction. Each of
those imports ``delta.py``; this module, which picks among them, is the one that imports
them all (no module imports back the one that imports it, at any depth).
"""

from __future__ import annotations

import os
import time
from typing import Callable, Sequence

from ...core.errors import AfterCommitError, Interrupted, OrcReadError
from ...io.commit import exclusive_journal
from .delta import (
    ConvertOptions,
    ConvertResult,
    Plan,
    Summary,
    commit,
    exit_signal,
    plan,
    what_failed,
    write_files,
)
from .sources import move_sources


def convert(source_patterns: Sequence[str], opts: ConvertOptions, *, dry_run: bool = False,
            spark: bool = False, master: str | None = None, verbose: bool = False,
            progress: Callable[[int, int], None] | None = None) -> ConvertResult:
    """Plan (every check that can be made before writing), then, unless ``dry_run``, write the
    bucket files (in this process or as a Spark job), commit the delta with one rename and move
    the sources if asked. ``progress(rows done, rows in all)`` is told as rows are written. With
    a metastore, ``--write-id auto`` writes inside a transaction of its (``convert_txn``)."""
    started = time.perf_counter()
    if opts.journal and not dry_run and os.path.lexists(opts.journal):  # (before writing)
        exclusive_journal(opts.journal)  # refused: one run's journal
    if opts.metastore:
        from .txn import convert_in_transaction, for_metastore

        metastore = opts.metastore
        opts, info = for_metastore(opts)
        if opts.write_id == "auto":
            where = opts.table + (f"/{opts.partition}" if opts.partition else "")
            result = _interruptible(where, lambda: convert_in_transaction(
                source_patterns, opts, info, metastore, dry_run=dry_run, spark=spark,
                master=master, verbose=verbose, progress=progress))
            if opts.move_sources and result.summary is not None:
                _move(result.plan, result.summary, opts)
            return result
    p = plan(source_patterns, opts, settle=not dry_run)
    if spark:
        from .spark import spark_usable

        spark_usable(p)
    if dry_run:
        return ConvertResult(p, None)

    def write() -> Summary:
        if spark:
            from .spark import spark_writer

            files = spark_writer(p, master, verbose)
        else:
            files = write_files(p, progress and (lambda done: progress(done, p.total_rows)))
        return commit(p, files, started)
    summary = _interruptible(p.target.url, write)
    if opts.move_sources:
        _move(p, summary, opts)
    return ConvertResult(p, summary)


def _interruptible(where: str, work):
    """``work()``, with a damaged source and an interruption said as what they left."""
    try:
        return work()
    except OrcReadError as exc:  # a source's stripes, damaged past its footer
        raise OrcReadError(f"{exc}; nothing was written to the table") from None
    except KeyboardInterrupt as exc:
        raise Interrupted(f"interrupted; nothing was committed to {where} (the "
                          "staging directory was removed)", exit_signal(exc)) from None


def _move(p: Plan, summary: Summary, opts: ConvertOptions) -> None:
    assert opts.move_sources is not None, "asked for with --move-sources"
    try:
        move_sources(p, summary, opts.move_sources)
    except BaseException as exc:
        moved = ", ".join(m["from"] for m in summary.moved) or "none"
        message = (f"{p.target.url}/{p.directory} is committed ({summary.rows:,} rows); "
                   f"moving the sources then failed: {what_failed(exc)}; moved: {moved}; the "
                   f"others are where they were (manifest: {summary.manifest})")
        if isinstance(exc, KeyboardInterrupt):
            raise Interrupted(message, exit_signal(exc)) from None
        raise AfterCommitError(message) from exc

"""Rules judged from a scan of the five ACID event columns (--level rows)."""

from __future__ import annotations

from ..facts import ACID_NAMES, Context, PartitionFacts
from .index import scans
from .registry import AUTO, MANUAL, Repair, Rule, rule
from .repairs import sort_events


@rule("ACID015", "unsorted-events", "error", "rows",
      "Rows not sorted by (originalTransaction, bucket, rowId)",
      what="Within an ACID file, events must be in ascending (originalTransaction, bucket, "
           "rowId) order.",
      why="Hive's merge and its key-range split logic rely on that order; unsorted files drop "
          "or duplicate rows silently.",
      example="a delta written by Spark with the events in arbitrary order",
      fix="Re-write the file sorted (`acidtool convert` writes row ids in order).",
      repair=Repair(AUTO, "Rewrites the file's events sorted by (originalTransaction, bucket, "
                          'rowId): the same events with the same ROW__IDs, a new key index; '
                          'refused if the rewrite would change a column type. The old file is '
                          'quarantined.',
                    planner=sort_events))
def _unsorted(r: Rule, p: PartitionFacts, ctx: Context):
    for rel, rows in scans(p):
        if rows.first_unsorted is not None:
            yield r.finding(p.path(rel), f"events go backwards at row {rows.first_unsorted}",
                            row=rows.first_unsorted)


@rule("ACID016", "duplicate-row-id", "error", "rows",
      "Duplicate (originalTransaction, bucket, rowId) within a file",
      what="Two events with the same ROW__ID in one file.",
      why="A ROW__ID names one row; duplicates make updates and deletes hit the wrong row, and "
          "Hive's merge can fail with `Two readers for {...}`.",
      example="the same source file converted twice into one delta",
      fix="Re-write the file with unique row ids.",
      repair=Repair(MANUAL, 'Never automatic: duplicate ROW__IDs decide which rows a delete hits.',
                    manual='duplicate ROW__IDs: a delete hits both rows or neither; rewrite the '
                           'data through Hive (INSERT OVERWRITE ... SELECT DISTINCT ...)'))
def _duplicates(r: Rule, p: PartitionFacts, ctx: Context):
    for rel, rows in scans(p):
        if rows.first_duplicate is not None:
            yield r.finding(p.path(rel), f"duplicate ROW__ID at row {rows.first_duplicate}",
                            row=rows.first_duplicate)


@rule("ACID025", "null-event-value", "error", "rows",
      "Null in an ACID event column",
      what="A null operation, originalTransaction, bucket, rowId or currentTransaction in an "
           "ACID file (its rows are scanned at --level rows).",
      why="Hive's writers never write one. Its row-by-row reader takes each of these values "
          "as a Java int or long (OrcRecordUpdater's getters unbox the field) and fails with a "
          "NullPointerException.",
      example="a delta written by a foreign tool whose bucket column is null for some rows",
      fix="Re-write the events with every column set (`acidtool convert`).",
      repair=Repair(MANUAL, 'Never automatic: rewrite the data through Hive.',
                    manual='null ACID event columns: rewrite the data through Hive'))
def _null_event_values(r: Rule, p: PartitionFacts, ctx: Context):
    for rel, rows in scans(p):
        if any(rows.null_values):
            found = {name: count for name, count in zip(ACID_NAMES, rows.null_values) if count}
            yield r.finding(p.path(rel), "null values in ACID event columns: " + ", ".join(
                f"{name} {count}" for name, count in found.items()), nulls=found)

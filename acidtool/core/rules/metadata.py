"""Rules judged from ORC footers and marker files (--level metadata)."""

from __future__ import annotations

import functools
from collections import Counter

from ..facts import ACID_NAMES, Context, FileFacts, PartitionFacts, url_of
from ..names import NO_STATEMENT, Base, Delta
from ..orctypes import TypeStringError, normalize, struct_fields
from ..raw import file_in_dir
from .index import (
    acid_files,
    bucket_of,
    column_values,
    file_name,
    index_of,
    is_acid_file,
    is_legacy,
    raw_directory,
    top_fields,
)
from .registry import AUTO, MANUAL, Repair, Rule, rule
from .repairs import rebuild_key_index, rewrap_delta_file

ACID_TYPES = ("int", "bigint", "int", "bigint", "bigint")  # the event columns but row


@rule("ACID006", "unreadable-orc", "error", "metadata",
      "File that is not readable ORC",
      what="A data file Hive would read whose bytes are not a readable ORC file: bad magic, a "
           "truncated tail, zero bytes, or a damaged postscript or footer. The whole footer is "
           "decoded (types, stripes, every column's statistics) and checked the way ORC's "
           "Java reader parses it when it opens a file. At `--level rows`, also a file whose "
           "ACID columns cannot be decoded (damage inside a stripe; the `row` payload is not "
           "read). In an insert-only table (--insert-only) a file that is not ORC at all "
           "(Parquet, text, Avro) is its format, not damage, and is not reported.",
      why="The query that reaches the file fails.",
      example="orders/delta_0000004_0000004_0000/bucket_00000 of 0 bytes after a killed copy",
      fix="Restore the file from its source or remove the directory it belongs to.",
      repair=Repair(MANUAL, "Never automatic: an unreadable file's rows are unknown.",
                    manual='the file is not readable ORC: only its writer knows what it held; '
                           'move it out of the table by hand once you have a copy'))
def _unreadable(r: Rule, p: PartitionFacts, ctx: Context):
    for rel, facts in sorted(p.files.items()):
        if facts.error is not None:
            if ctx.insert_only and facts.error.startswith("not an ORC file"):
                continue  # an insert-only table's data may be Parquet, text, Avro...
            yield r.finding(p.path(rel), facts.error)
        else:
            rows = p.rows.get(rel)
            if rows is not None and rows.error is not None:
                yield r.finding(p.path(rel), rows.error)


@rule("ACID007", "not-acid-schema", "error", "metadata",
      "ORC file in a base or delta without the ACID event schema",
      what="A bucket file (or any file in a delete delta) whose schema is not the six-column ACID "
           "event struct `operation, originalTransaction, bucket, rowId, currentTransaction, "
           "row`.",
      why="The classic DataX / plain-Spark case: Hive fails with `ORC ACID file should have 6 "
          "columns` or reads garbage.",
      example="orders/delta_0000008_0000008_0000/bucket_00000 with schema struct<id:int,...>",
      fix="`acidtool convert` re-wraps plain ORC into the ACID event schema.",
      repair=Repair(AUTO, 'Raw ORC in a delta: re-wrapped as for ACID004 (same write id, next '
                          'free statement id), the file quarantined. In a base or delete delta: '
                          'left to a person.',
                    planner=rewrap_delta_file))
def _not_acid(r: Rule, p: PartitionFacts, ctx: Context):
    if ctx.insert_only:
        return  # plain files are what an insert-only table holds (ACID027 judges it)
    for e, name, rel, facts, acid in index_of(p).live_files:
        if facts is None or facts.error is not None or acid:
            continue
        effect = "delete events cannot be read from it"
        if e.kind != "delete_delta":
            outcome = file_in_dir(name, ctx.hive_version, e.kind,
                                  raw_directory(p, e, ctx.hive_version)).outcome
            if outcome == "read":
                continue  # raw (LOAD DATA) layout: a plain schema is right
            effect = "Hive reads it as ACID events and fails" if outcome == "acid" else \
                "Hive never reads it, so its rows are lost"
        found = facts.footer.type_string()[:120] if facts.footer is not None else "?"
        yield r.finding(p.path(rel), f"not in the ACID event schema (found {found}): {effect}")


@rule("ACID027", "insert-only-layout", "error", "metadata",
      "What a full-ACID writer leaves in an insert-only table (--insert-only)",
      what="In a table declared insert-only (`transactional_properties=insert_only`, given as "
           "--insert-only): data files with the six ACID event columns, and delete deltas. "
           "Hive 3 and 4 write an insert-only table's data as plain files (ORC, Parquet, text...) "
           "in `base_W` and `delta_W_W_S`, and never write a delete delta into it.",
      why="Hive reads an insert-only table's files as they are: a file of ACID events comes "
          "back as rows of the six event columns (operation, write ids, bucket, row id, the row "
          "struct), not as the table's columns; delete events are not applied, so deleted rows "
          "stay. Either the table is really full-ACID (read it without --insert-only) or a "
          "full-ACID writer wrote into it.",
      example="orders_mm/delta_0000004_0000004_0000/bucket_00000 with the ACID event schema",
      fix="If the table is full-ACID, drop --insert-only. Otherwise re-write the data as plain "
          "files (`acidtool convert --insert-only` from the rows `acidtool read` returns).",
      repair=Repair(MANUAL, "Never automatic: check the table's transactional_properties first.",
                    manual="a full-ACID layout in an insert-only table: check the table's "
                           'transactional_properties, then rewrite the data'))
def _insert_only_layout(r: Rule, p: PartitionFacts, ctx: Context):
    if not ctx.insert_only:
        return
    index = index_of(p)
    for e in index.live:
        if e.kind == "delete_delta":
            yield r.finding(p.path(e.name), f"{e.name} in an insert-only table: Hive never "
                            "writes delete deltas there, and its reader does not apply them")
    for e, _name, rel, _facts, acid in index.live_files:
        if acid and e.kind != "delete_delta":
            yield r.finding(p.path(rel), "ACID event columns in an insert-only table: Hive "
                            "returns the six event columns as the rows")


@rule("ACID008", "acid-schema-mismatch", "error", "metadata",
      "ACID schema with wrong field order, names or types",
      what="A file that looks like an ACID event file (its columns include `row` or the ACID "
           "names) but whose top-level fields differ from the exact names, order and types.",
      why="Newer Hive 4 recognises ACID files by the exact field names; Hive reads fields by "
          "position, so a wrong order or type mixes up write ids and row ids. Lower-case names "
          "(written by Hive 3.1's query-based compaction) are a warning: engines differ.",
      example="struct<operation:int,originaltransaction:bigint,bucket:int,...>",
      fix="Re-write the file with the exact schema (`acidtool convert`).",
      repair=Repair(MANUAL, 'Never automatic: rewrite the data through Hive.',
                    manual='the ACID columns have the wrong order, names or types: rewrite the '
                           'data through Hive (INSERT OVERWRITE ... SELECT) from a copy'))
def _schema_mismatch(r: Rule, p: PartitionFacts, ctx: Context):
    for rel, facts in sorted(p.files.items()):
        if facts.error is not None or facts.footer is None:
            continue
        problem = _schema_problem(facts.footer)
        if problem is not None:
            yield r.finding(p.path(rel), problem[1], problem[0])


def _schema_problem(footer) -> tuple[str | None, str] | None:
    """(severity or None for the rule's, message) of an ACID-like schema that is not exactly
    the event schema; worked out once per schema."""
    derived = footer.schema.derived
    if "acid008" not in derived:
        derived["acid008"] = _judge_schema(footer)
    return derived["acid008"]


def _judge_schema(footer) -> tuple[str | None, str] | None:
    fields = top_fields(footer)
    names = [n for n, _ in fields]
    lower = [n.lower() for n in names]
    if "row" not in lower and len(set(lower) & {n.lower() for n in ACID_NAMES}) < 3:
        return None
    types = tuple(t for _, t in fields[:5])
    exact = tuple(names) == ACID_NAMES and types == ACID_TYPES and \
        fields[5][1].startswith("struct<")
    if exact:
        return None
    if lower == [n.lower() for n in ACID_NAMES] and types == ACID_TYPES:
        return "warning", f"ACID field names differ in case from Hive's ({', '.join(names)})"
    return None, f"ACID-like schema with wrong fields: {footer.type_string()[:160]}"


@rule("ACID009", "missing-key-index", "error", "metadata",
      "ACID file without `hive.acid.key.index`",
      what="A file in the ACID event schema whose ORC user metadata has no `hive.acid.key.index`.",
      why="Hive 2, 3 and older 4 decide whether a file is ACID by the presence of this key: "
          "without it the file is treated as an original file and its event columns are read "
          "as table columns.",
      example="a delta written by a plain ORC writer with the right columns but no metadata",
      fix="Re-write with a writer that sets the key index (`acidtool convert`).",
      repair=Repair(AUTO, "Rebuilds hive.acid.key.index from the stripes' last keys (as Hive's "
                          '`fixacidkeyindex --recover`): only the footer is rewritten, the '
                          'stripes are byte for byte the same; the old file is quarantined.',
                    planner=rebuild_key_index))
def _missing_key_index(r: Rule, p: PartitionFacts, ctx: Context):
    for f in acid_files(p):
        if "hive.acid.key.index" not in f.footer.metadata:
            yield r.finding(p.path(f.rel), "no hive.acid.key.index in the ORC user metadata: "
                            "Hive would read it as an original file")


@functools.lru_cache(maxsize=65536)
def _parse_index(raw: bytes) -> list[tuple[int, int, int]] | None:
    out: list[tuple[int, int, int]] = []
    for part in (x for x in raw.decode("utf-8", "replace").split(";") if x):
        pieces = part.split(",")
        if len(pieces) != 3:
            return None
        try:
            out.append((int(pieces[0]), int(pieces[1]), int(pieces[2])))
        except ValueError:
            return None
    return out


def _index_length_fits(entries: int, stripes: int, ctx: Context) -> bool:
    """One key index entry per stripe; Hive 2 writers leave out the last stripe's."""
    return entries == stripes or (ctx.hive_version.key_index_may_skip_last_stripe
                                  and entries == stripes - 1)


@rule("ACID010", "key-index-mismatch", "error", "metadata",
      "`hive.acid.key.index` that does not match the stripes' last keys",
      what="The key index must hold one `originalTransaction,bucket,rowId;` entry per stripe "
           "(Hive 2 writers leave out the last stripe). At --level rows each entry is compared "
           "with the stripe's actual last event. Files of a Hive 2.3 split-update UPDATE are "
           "reported as info, not as damage: Hive 2.3's insert and delete writers of one UPDATE "
           "share the key-index and stats callbacks, so each file's `hive.acid.key.index` holds "
           "the keys of both files' stripes (twice as many entries as it has stripes, or the "
           "other file's keys) and its `hive.acid.stats` counts the other file's events. They "
           "are told apart by having no `hive.acid.version` (Hive 2 wrote them) and a "
           "`delta_T_T_S` and `delete_delta_T_T_S` pair holding the file.",
      why="Readers use the index to bound each split's key range and to decide which delete "
          "events apply; a wrong index hides or resurrects rows. Hive 2.3's own reader reads a "
          "split-update UPDATE file correctly in one split, but loses rows when it splits one by "
          "stripe (a file larger than the split size, ETL strategy): measured with Hive 2.3.10 "
          "on an UPDATE of 3,000 rows in 3 stripes read in 4 KiB splits, 1,000 of the 3,000 "
          "updated rows came back; of 6,000 in 6 stripes read in 8 KiB splits, 2,000 "
          "(tests/test_hive23_sql_files.py).",
      example="a 3-stripe file whose index has 1 entry",
      fix="Re-write the file (`acidtool convert`) or major-compact the partition (for Hive "
          "2.3's UPDATE files, before they grow past one split).",
      repair=Repair(AUTO, "As ACID009. Hive 2.3's own split-update files (info) are left as they "
                          'are.',
                    planner=rebuild_key_index))
def _key_index(r: Rule, p: PartitionFacts, ctx: Context):
    for f in acid_files(p):
        rel, footer = f.rel, f.footer
        raw = footer.metadata.get("hive.acid.key.index")
        if raw is None:
            continue
        entries = _parse_index(raw)
        stripes = footer.stripe_count
        if entries is None:
            yield r.finding(p.path(rel), f"unparsable hive.acid.key.index {raw[:80]!r}")
            continue
        shared = _hive23_update_pair(p, rel, footer)
        severity, why = ("info", " (Hive 2.3's split-update UPDATE: its insert and delete "
                         "files share one key index; what Hive 2.3 writes, not damage)") \
            if shared else (None, "")
        if not _index_length_fits(len(entries), stripes, ctx) and not _index_length_fits(
                len(entries), sum(1 for s in footer.stripes if s.rows), ctx):
            yield r.finding(p.path(rel), f"hive.acid.key.index has {len(entries)} entries for "
                            f"{stripes} stripes{why}", severity, entries=len(entries),
                            stripes=stripes)
            continue
        if f.scan is None:
            continue
        for i, (entry, actual) in enumerate(zip(entries, f.scan.stripe_last_keys)):
            if actual is not None and tuple(entry) != tuple(actual):
                yield r.finding(p.path(rel), f"key index entry {i} is {entry}, but stripe {i} "
                                f"ends with {actual}{why}", severity, stripe=i)
                break


def _hive23_update_pair(p: PartitionFacts, rel: str, footer) -> bool:
    """A file of a Hive 2.3 split-update UPDATE: no ``hive.acid.version`` (a Hive 2 writer),
    in ``delta_T_T_S`` or ``delete_delta_T_T_S`` with the other one of the pair beside it."""
    if "hive.acid.version" in footer.metadata:
        return False
    directory, _, name = rel.partition("/")
    if directory.startswith("delete_delta_"):
        other = directory[len("delete_"):]
    elif directory.startswith("delta_"):
        other = "delete_" + directory
    else:
        return False
    return any(e.name == other for e in p.state.entries)


@rule("ACID011", "missing-acid-version-metadata", "warning", "metadata",
      "ACID file without `hive.acid.version` in its metadata",
      what="Hive 3+ writers set the ORC user metadata key `hive.acid.version` to `2`.",
      why="Trino rejects ACID files without it (\"expected to be >= 2 but was empty\") and "
          "advises a major compaction; Hive itself does not need it.",
      example="a delta written by a Hive 2 writer or a hand-rolled ORC writer, read by Trino",
      fix="Major-compact the partition, or re-write with `acidtool convert`.",
      repair=Repair(MANUAL, 'Never automatic: Hive reads the file without hive.acid.version.',
                    manual='Hive reads the file without hive.acid.version; nothing to repair '
                           'unless an engine complains'))
def _missing_acid_version(r: Rule, p: PartitionFacts, ctx: Context):
    if not ctx.hive_version.writes_acid_version:
        return
    for f in acid_files(p):
        if "hive.acid.version" not in f.footer.metadata:
            yield r.finding(p.path(f.rel), "no hive.acid.version in the ORC user metadata")


# The bucket properties of a table's files are few (one per bucket and statement): what they
# decode to is worked out once for each, not once per file.

@functools.lru_cache(maxsize=65536)
def _bucket_problem(values: tuple[int, ...], bucket_id: int) -> tuple[str, dict] | None:
    """What is wrong with the bucket properties ``values`` in the file of ``bucket_id``."""
    decoded = [bucket_of(v) for v in values]
    for v, (b, _, codec) in zip(values, decoded):
        if b is None:
            return f"bucket property {v} has codec version {codec}, which does not exist", {}
    ids = sorted({b for b, _, _ in decoded if b is not None})  # (None returned above)
    if ids != [bucket_id]:
        return (f"rows carry bucket id {', '.join(map(str, ids))} in bucket file {bucket_id}",
                {"found": ids, "expected": bucket_id})
    return None


@rule("ACID012", "bucket-id-mismatch", "error", "metadata",
      "Bucket id in the rows differs from the bucket file name",
      what="Every event in `bucket_N` must carry a bucket property that decodes to N (from the "
           "ORC column statistics, or every row at --level rows).",
      why="Hive loads the delete events for bucket N only from `bucket_N` of each delete delta "
          "and fails with \"Corrupted records with different bucket ids\"; mismatched rows "
          "are never deleted.",
      example="delete_delta_0000009_0000009_0000/bucket_00000 holding deletes for bucket 1",
      fix="Re-write the events into the file of their bucket.",
      repair=Repair(MANUAL, 'Never automatic: changing bucket properties changes which rows '
                            'deletes hit.',
                    manual='changing bucket properties changes which rows deletes hit: rewrite '
                           'the data through Hive (INSERT OVERWRITE ... SELECT)'))
def _bucket_mismatch(r: Rule, p: PartitionFacts, ctx: Context):
    for f in acid_files(p):
        rel, fn = f.rel, f.file
        if fn.kind != "bucket" or f.footer.rows == 0:
            continue
        values = f.buckets
        problem = _bucket_problem(values, fn.bucket_id) if values else None
        if problem is not None:
            message, details = problem
            yield r.finding(p.path(rel), message, **details)


@rule("ACID013", "statement-id-mismatch", "error", "metadata",
      "Statement id in the bucket property differs from the directory's",
      what="In `delta_W_W_S`, insert events carry statement id S in their bucket property "
           "(BucketCodec V1). Compacted directories without S are not checked, nor delete "
           "deltas (their events copy the deleted row's property).",
      why="ROW__IDs of two statements of one transaction differ only by the statement bits; a "
          "wrong statement id lets a delete in one statement hit rows of another.",
      example="delta_0000005_0000005_0001/bucket_00000 with bucket 536870912 (statement 0)",
      fix="Re-write with the right statement id (`acidtool convert --statement-id`).",
      repair=Repair(MANUAL, 'Never automatic: changing statement ids changes which rows deletes '
                            'hit.',
                    manual='changing statement ids changes which rows deletes hit: rewrite the '
                           'data through Hive (INSERT OVERWRITE ... SELECT)'))
def _statement_mismatch(r: Rule, p: PartitionFacts, ctx: Context):
    for f in acid_files(p):
        entry = f.entry
        if entry.kind != "delta" or not isinstance(entry.parsed, Delta):
            continue
        stmt = entry.parsed.statement_id
        if stmt == NO_STATEMENT or f.footer.rows == 0:
            continue
        if f.scan is not None:
            if set(f.scan.operations) - {0}:
                continue
        elif f.operation != (0, 0):
            continue
        stmts = _other_statements(f.buckets, stmt)
        if stmts is not None:
            yield r.finding(p.path(f.rel), f"insert events carry statement id "
                            f"{', '.join(map(str, stmts))} in {entry.name} (statement "
                            f"{stmt})", found=stmts, expected=stmt)


@functools.lru_cache(maxsize=65536)
def _other_statements(values: tuple[int, ...], statement_id: int) -> list[int] | None:
    """The statement ids of the V1 bucket properties ``values``, where they are not just
    ``statement_id`` (None where they are, or where any property is of another codec)."""
    decoded = [bucket_of(v) for v in values]
    if any(codec != 1 for _, _, codec in decoded):
        return None
    stmts = sorted({s for _, s, _ in decoded if s is not None})
    return stmts if stmts and stmts != [statement_id] else None


@rule("ACID014", "write-id-out-of-range", "error", "metadata",
      "Write ids in the rows outside the directory's range",
      what="currentTransaction must lie within a delta's MIN..MAX (at most W in `base_W`), "
           "originalTransaction must not exceed the top of the range, and insert events have "
           "originalTransaction equal to currentTransaction (checked per row at --level rows).",
      why="Hive selects directories by their names and filters rows by write id; rows outside "
          "the range are read under the wrong snapshot or never.",
      example="delta_0000007_0000007_0000/bucket_00000 whose rows say currentTransaction 1",
      fix="Re-write the events with the directory's write id (`acidtool convert --write-id`).",
      repair=Repair(MANUAL, 'Never automatic: which write ids are right only the metastore knows.',
                    manual="write ids outside the directory's range: only the metastore knows "
                           'which are right; rewrite the data through Hive'))
def _write_id_range(r: Rule, p: PartitionFacts, ctx: Context):
    for f in acid_files(p):
        entry, rel, rows = f.entry, f.rel, f.scan
        if f.footer.rows == 0:
            continue
        d = entry.parsed
        lo: int | None
        if isinstance(d, Base):
            if d.write_id < -(2**62):
                continue
            lo, hi = None, d.write_id
        elif isinstance(d, Delta):
            lo, hi = d.min_write_id, d.max_write_id
        else:
            continue
        if rows is not None:
            cur = (rows.min_current, rows.max_current)
            org = (rows.min_original, rows.max_original)
        else:
            cur, org = f.current, f.original  # type: ignore[assignment]
        problems = []
        if cur and cur[0] is not None:
            if (lo is not None and cur[0] < lo) or (cur[1] is not None and cur[1] > hi):
                span = f"{lo}..{hi}" if lo is not None else f"at most {hi}"
                problems.append(f"currentTransaction {cur[0]}..{cur[1]} outside {span}")
        if org and org[1] is not None and org[1] > hi:
            problems.append(f"originalTransaction up to {org[1]} above {hi}")
        if rows is not None and rows.inserts_with_other_original and \
                entry.kind == "delta" and not is_legacy(p, ctx):
            problems.append(f"{rows.inserts_with_other_original} insert events with "
                            "originalTransaction != currentTransaction")
        if problems:
            yield r.finding(p.path(rel), "; ".join(problems))


@rule("ACID017", "wrong-operation", "error", "metadata",
      "Wrong operation for the directory in a split-update table",
      what="With split-update (Hive 3+, and Hive 2 with delete deltas) insert deltas hold only "
           "operation 0 and delete deltas only operation 2 with a null `row`. Hive 2 \"legacy\" "
           "tables (no delete_delta_ directories) may hold updates (1) and deletes (2) in "
           "deltas.",
      why="Hive 3 cannot read update events or deletes in insert deltas; a delete event with "
          "a row, or an insert in a delete delta, is applied the wrong way.",
      example="delete_delta_0000004_0000004_0000/bucket_00000 holding operation 0 events",
      fix="Major-compact under the Hive version that wrote the table, or re-write the events.",
      repair=Repair(MANUAL, 'Never automatic: wrong operations change which rows Hive returns.',
                    manual='wrong operations in a delta change which rows Hive returns: rewrite '
                           'the data through Hive'))
def _wrong_operation(r: Rule, p: PartitionFacts, ctx: Context):
    legacy = is_legacy(p, ctx)
    for f in acid_files(p):
        entry, rel = f.entry, f.rel
        if entry.kind == "base" or (entry.kind == "delta" and f.operation == (0, 0)
                                    and f.scan is None) or f.footer.rows == 0:
            continue  # (inserts in an insert delta: the usual file, and nothing to say)
        if f.scan is not None:
            ops = set(f.scan.operations)
        elif f.operation is not None:
            ops = set(f.operation)
        else:
            continue
        if entry.kind == "delta":
            bad = ops - ({0, 1, 2} if legacy else {0})
            if bad:
                yield r.finding(p.path(rel), f"operation {', '.join(map(str, sorted(bad)))} in "
                                "an insert delta of a split-update table")
        else:
            problems = []
            if ops - {2}:
                problems.append(f"operation {', '.join(map(str, sorted(ops - {2})))} in a "
                                "delete delta")
            row_fields = [t for n, t in top_fields(f.footer) if n.lower() == "row"]
            values = column_values(f.footer, "row")
            if row_fields and row_fields[0] != "struct<>" and values:
                problems.append(f"{values} events carry a row (delete events have none)")
            if problems:
                yield r.finding(p.path(rel), "; ".join(problems))


# ------------------------------------------------------------------------------------------------
# Layout rules


def _row_types(facts: FileFacts, acid: bool) -> list[str] | None:
    """The row columns' types (the ``row`` struct's, or an original file's), once per schema."""
    footer = facts.footer
    assert footer is not None, "a readable file's facts hold its footer"
    derived = footer.schema.derived
    key = "row_types_acid" if acid else "row_types_plain"
    found = derived.get(key, derived)
    if found is not derived:
        return found
    found = None
    if acid:
        for name, cid in footer.top_level():
            if name.lower() == "row":
                found = [footer.type_string(s) for s in footer.types[cid].subtypes]
                break
    else:
        found = [t for _, t in top_fields(footer)]
    derived[key] = found
    return found


def _row_types_seen(p: PartitionFacts, ctx: Context) -> list[tuple[str, list[str], list[str]]]:
    """(partition url, row column types, files) for each row layout among the live data files
    (and the original files read) of a partition: what ACID019 compares across the table.
    Grouped by layout: a partition's files nearly always share one."""
    groups: dict[int, tuple[str, list[str], list[str]]] = {}  # files of one schema share types

    def add(rel: str, types: list[str]) -> None:
        group = groups.get(id(types))
        if group is None:
            group = groups[id(types)] = (p.url, types, [])
        group[2].append(rel)

    for entry, name, rel, facts, acid in index_of(p).live_files:
        if entry.kind == "delete_delta" or facts is None or facts.error is not None:
            continue
        if not acid and file_name(name).kind != "original":
            continue
        types = _row_types(facts, acid)
        if types:
            add(rel, types)
    if p.state.base is None:
        for rel in p.state.original_files:
            facts = p.files.get(rel)
            if facts is not None and facts.error is None and not is_acid_file(facts):
                types = _row_types(facts, False)
                if types is not None:
                    add(rel, types)
    return list(groups.values())


@rule("ACID019", "row-schema-differs", "error", "metadata",
      "`row` struct differs between files of the same table (or from --schema)",
      what="The column types of the `row` struct (and of original files) compared by position "
           "across all live files of the table, or with the table schema given as --schema. "
           "Names are not compared: Hive 2.3 writes `_col0`, `_col1`... Files that lack only "
           "trailing columns other files (or --schema) have are those written before an ALTER "
           "TABLE ... ADD COLUMNS: Hive reads them with nulls there, so they are no finding (nor, "
           "without --schema, files with more trailing columns than most: written after it).",
      why="Hive reads row columns by position with the table's types: a file with another "
          "layout returns wrong values or fails to cast.",
      example="one delta with row struct<id:int,name:string>, another with struct<name:string,"
              "id:int>",
      fix="Re-write the odd files with the table's schema (`acidtool convert --schema`).",
      gather=_row_types_seen,
      repair=Repair(MANUAL, 'Never automatic: ALTER TABLE or rewrite the data.',
                    manual='row columns differ between files: ALTER TABLE or rewrite the data'))
def _row_schema(r: Rule, seen: list[tuple[str, list[str], list[str]]], ctx: Context):
    if ctx.schema:
        try:
            expected = [t for _, t in struct_fields(ctx.schema)]
        except TypeStringError:
            return
        source = "--schema"
    else:
        if not seen:
            return
        files: Counter[tuple[str, ...]] = Counter()
        first: dict[tuple[str, ...], str] = {}
        for url, types, rels in seen:
            key = tuple(types)
            files[key] += len(rels)
            path = url_of(url, min(rels))
            first[key] = min(first.get(key, path), path)
        # the layout of most files; of two as common, the one met first in path order (not
        # in the order partitions were gathered, which differs between processes)
        def rank(k: tuple[str, ...]) -> tuple[int, str]:
            return -files[k], first[k]
        best: tuple[str, ...] = min(files, key=rank)
        expected = list(best)
        source = "most files"
    wanted = [normalize(t) for t in expected]
    for url, types, rels in seen:
        mine = [normalize(t) for t in types]
        # (without --schema, a file of the majority's columns and more was written after an
        # ADD COLUMNS the majority predates)
        if not (_before_add_columns(mine, wanted) or
                (not ctx.schema and _before_add_columns(wanted, mine))):
            for rel in rels:
                yield r.finding(url_of(url, rel), f"row columns ({', '.join(types)}) differ "
                                f"from {source} ({', '.join(expected)})", found=types,
                                expected=list(expected))


def _before_add_columns(types: list[str], table: list[str]) -> bool:
    """Whether a file of these row column types is one Hive reads as the table's: the same,
    or written before an ALTER TABLE ... ADD COLUMNS (the table's first columns alone)."""
    return 0 < len(types) <= len(table) and types == table[:len(types)]

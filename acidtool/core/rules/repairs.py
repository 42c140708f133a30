"""What ``acidtool repair`` does about each rule's findings (``Rule.repair``, shown by
``acidtool explain``). The planners that do it are in ``core/repair.py``; a test checks that
every rule with a planner says so here and every other says why it is left to a person."""

from __future__ import annotations

from dataclasses import replace

from .registry import REGISTRY

REPAIRS = {
    "ACID001": "With --write-id W (a write id the metastore has committed for the table; Hive "
               "2.3: a committed transaction id), re-wraps the raw ORC file into a new "
               "delta_W_W_SSSS with convert's writer and quarantines the file. Without "
               "--write-id it is left to a person. Files that hold ACID events, or are not "
               "ORC, are left to a person.",
    "ACID002": "Quarantines the directory once nothing in it changed for --min-age (default "
               "1h): Hive never reads a directory whose name it cannot parse.",
    "ACID003": "Quarantines staging and temporary directories (.hive-staging_*, _temporary, "
               "_tmp*, _acidtool_staging_*) once unchanged for --min-age (default 1h: a "
               "running query's staging directory is young). Non-ACID and nested directories "
               "may hold data Hive reads: left to a person.",
    "ACID004": "An ACID file under another name (bucket_00000.orc, 'bucket_00000 (1)') is "
               "renamed to the bucket its rows' bucket property names, when no file has that "
               "name. Raw ORC in a delta of one write id is re-wrapped into a new delta of "
               "the same write id (the next free statement id) and quarantined. In a base or "
               "delete delta: left to a person.",
    "ACID005": "Writes the missing _orc_acid_version ('2'); one with other contents is "
               "quarantined and written anew.",
    "ACID006": "Never automatic: an unreadable file's rows are unknown.",
    "ACID007": "Raw ORC in a delta: re-wrapped as for ACID004 (same write id, next free "
               "statement id), the file quarantined. In a base or delete delta: left to a "
               "person.",
    "ACID008": "Never automatic: rewrite the data through Hive.",
    "ACID009": "Rebuilds hive.acid.key.index from the stripes' last keys (as Hive's "
               "`fixacidkeyindex --recover`): only the footer is rewritten, the stripes are "
               "byte for byte the same; the old file is quarantined.",
    "ACID010": "As ACID009. Hive 2.3's own split-update files (info) are left as they are.",
    "ACID011": "Never automatic: Hive reads the file without hive.acid.version.",
    "ACID012": "Never automatic: changing bucket properties changes which rows deletes hit.",
    "ACID013": "Never automatic: changing statement ids changes which rows deletes hit.",
    "ACID014": "Never automatic: which write ids are right only the metastore knows.",
    "ACID015": "Rewrites the file's events sorted by (originalTransaction, bucket, rowId): "
               "the same events with the same ROW__IDs, a new key index; refused if the "
               "rewrite would change a column type. The old file is quarantined.",
    "ACID016": "Never automatic: duplicate ROW__IDs decide which rows a delete hits.",
    "ACID017": "Never automatic: wrong operations change which rows Hive returns.",
    "ACID018": "Never automatic: which of two overlapping deltas is right is a decision.",
    "ACID019": "Never automatic: ALTER TABLE or rewrite the data.",
    "ACID020": "Nothing: the snapshot, not the directory, decides what is visible.",
    "ACID021": "Only with --select ACID021 and a snapshot (--write-ids, or --txns for Hive "
               "2.3): quarantines aborted directories, and obsolete ones whose covering base "
               "or delta is below every write id open in the snapshot, once unchanged for "
               "--min-age. Hive's cleaner waits for every transaction that was open when the "
               "compaction committed, readers included; a write-id snapshot does not show "
               "readers of other tables, so --min-age must exceed your longest query.",
    "ACID022": "Quarantines a _flush_length side file whose last length is the file's size "
               "(the writer finished), once unchanged for --min-age. With --select ACID022 "
               "also cuts a longer file at its last flushed length (as `orcfiledump "
               "--recover`), quarantining the file and its side file.",
    "ACID023": "Nothing: original files under a base are history Hive no longer reads.",
    "ACID024": "Nothing: run the compaction it names.",
    "ACID025": "Never automatic: rewrite the data through Hive.",
    "ACID026": "Never automatic: replace the link with its data, or remove it.",
    "ACID027": "Never automatic: check the table's transactional_properties first.",
    "ACID028": "Never automatic: which partition the data belongs to is a decision; move it "
               "there (or convert it with --partition), or out of the table.",
}

for _code, _text in REPAIRS.items():
    REGISTRY[_code] = replace(REGISTRY[_code], repair=_text)

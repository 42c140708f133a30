"""Rules judged from the listing alone (--level names): names, directories, the selection."""

from __future__ import annotations

import functools

from ..errors import InvalidNameError
from ..facts import Context, PartitionFacts
from ..halfdone import half_done
from ..names import (
    ACID_VERSION_FILE,
    ACIDTOOL_STAGING_PREFIX,
    FLUSH_LENGTH_SUFFIX,
    Delta,
    is_hidden,
    parse_dir_name,
)
from ..partitions import is_partition_component
from ..raw import file_in_dir, raw_read
from .index import (
    STAGING,
    acid_entries,
    data_files,
    file_name,
    live_acid_entries,
    raw_directory,
)
from .registry import AUTO, MANUAL, OPT_IN, Repair, Rule, rule
from .repairs import (
    clean_obsolete,
    compact_due,
    finish_streaming,
    quarantine_leftover,
    rewrap_delta_file,
    rewrap_root_file,
    write_marker,
)


@rule("ACID001", "foreign-data-file", "error", "names",
      "Data file in a table or partition root that Hive ignores or misreads",
      what="Plain files directly in a table or partition directory: names Hive never writes "
           "(DataX `name__<uuid>`, Spark `part-...`, `.orc` files), and Hive-style original "
           "files (`000000_0`) once a base directory exists.",
      why="Hive reads files in the root as *original* (pre-ACID) data. With a base present it "
          "ignores them entirely, so the rows never show up. Without a base it reads them with "
          "synthetic ROW__IDs from the bucket id in the name: `000001_0` and (Hive 3 and 4) "
          "`000001_0_copy_2` give bucket 1 and any `bucket_N` gives bucket 0. Names that carry "
          "no bucket id fail in Hive 3 and 4 with `bucketId out of range: -1`; Hive 2.3 reads "
          "them, `_copy_N` names included, with bucket -1, where no delete or update reaches "
          "them.",
      example="orders/delta_0000005_0000005_0000/ plus orders/orders__9c1d2f0e_8a7b... "
              "(a DataX hdfswriter output file)",
      fix="Move the file out of the table and load it properly: `acidtool convert` re-wraps "
          "raw ORC into a delta directory Hive reads (`--move-sources` moves the originals out).",
      repair=Repair(AUTO, 'With --write-id W (a write id the metastore has committed for the '
                          'table; Hive 2.3: a committed transaction id), re-wraps the raw ORC '
                          "file into a new delta_W_W_SSSS with convert's writer and quarantines "
                          'the file. Without --write-id it is left to a person. Files that hold '
                          'ACID events, or are not ORC, are left to a person.',
                    planner=rewrap_root_file))
def _foreign_files(r: Rule, p: PartitionFacts, ctx: Context):
    has_acid = bool(acid_entries(p))
    base = next((e.name for e in p.state.entries if e.kind == "base"), None)
    for e in p.state.entries:
        if e.is_dir or is_hidden(e.name):
            continue
        decision = raw_read(e.name, ctx.hive_version)
        if decision.bucket < 0 and not ctx.insert_only:  # insert-only: any name is data
            if base is not None:
                effect = f"Hive never reads it ({base} exists), so its rows are invisible"
            else:
                effect = f"Hive reads it as original (pre-ACID) data, but {decision.reason}"
            where = "next to ACID directories" if has_acid else "in a table directory"
            yield r.finding(p.path(e.name), f"foreign data file {where}: {effect}",
                            None if has_acid else "warning", file=e.name, size=e.size)
        elif base is not None:
            compacted = _holds_original_rows(p, base)
            if compacted:
                continue  # obsolete, not invisible: ACID021 (the base holds its rows)
            held = "" if compacted is None else (" (which holds no original files' rows, write "
                                                 "id 0: no compaction read it)")
            yield r.finding(p.path(e.name), f"original file next to {base}{held}: Hive never "
                            "reads original files once a base exists, so its rows are "
                            "invisible", file=e.name, base=base)


def _holds_original_rows(p: PartitionFacts, base: str) -> bool | None:
    """Whether the base holds rows of original files (originalTransaction 0: a compaction read
    them), by its files' statistics; None when no footer of it was read (--level names)."""
    seen = False
    for rel, ff in p.files.items():
        if rel.startswith(base + "/") and ff.event_ranges is not None:
            seen = True
            otid = ff.event_ranges[1]
            if otid is not None and otid[0] == 0:
                return True
    return False if seen else None


def _compacted_originals(p: PartitionFacts) -> list:
    """The original files and directories (a Tez ``HIVE_UNION_SUBDIR_N``) a compaction read:
    obsolete under a base that holds original files' rows."""
    base = p.state.base
    if base is None or not _holds_original_rows(p, base):
        return []
    return [e for e in p.state.entries if e.status == "obsolete"
            and (e.kind == "original_file"
                 or (e.kind == "original_dir" and not is_partition_component(e.name)))]


@rule("ACID002", "invalid-acid-dir-name", "error", "names",
      "base_/delta_/delete_delta_ directory whose name Hive cannot parse",
      what="A directory whose name starts with `base_`, `delta_` or `delete_delta_` but does not "
           "parse the way Hive parses it (Java number rules, version-specific `_v` suffix).",
      why="getAcidState does not skip such a directory: it throws (NumberFormatException, "
          "StringIndexOutOfBoundsException) and the whole query fails.",
      example="delta_abc/, delta_5/ (no max write id), base_0000010_v0000020/ under Hive 3",
      fix="Rename the directory to Hive's form (`delta_%07d_%07d_%04d`) or move it out.",
      repair=Repair(AUTO, 'Quarantines the directory once nothing in it changed for --min-age '
                          '(default 1h): Hive never reads a directory whose name it cannot parse.',
                    planner=quarantine_leftover,
                    waits_for_age=True))
def _invalid_names(r: Rule, p: PartitionFacts, ctx: Context):
    for e in p.state.entries:
        if not e.is_dir or is_hidden(e.name):
            continue
        problem = _dir_name_problem(e.name, ctx.hive_version)
        if problem is not None:
            yield r.finding(p.path(e.name), problem[0], hive_exception=problem[1])


@functools.lru_cache(maxsize=65536)
def _dir_name_problem(name: str, hive_version: str) -> tuple[str, str] | None:
    """(message, Hive's exception) where Hive cannot parse a directory name; the partitions
    of a table repeat the same few names."""
    try:
        parse_dir_name(name, hive_version)
    except InvalidNameError as exc:
        return exc.message, exc.hive_exception
    return None


@rule("ACID003", "stray-directory", "warning", "names",
      "Unknown, temporary or nested directory in a table or partition",
      what="Leftover staging and temporary directories (`.hive-staging_*`, `_temporary`, "
           "`__tmp*`, `_acidtool_staging_*`), non-ACID subdirectories next to ACID "
           "directories, and directories nested inside a base or delta.",
      why="Failed jobs leave these behind. Hive reads non-ACID subdirectories as original data "
          "and engines disagree on nested files; a staging directory of `acidtool convert` "
          "means a conversion was killed before its commit.",
      example="orders/.hive-staging_hive_2024-01-01_12-00-00_1234/, "
              "orders/delta_0000003_0000003_0000/part-1/",
      fix="Check that no job is still writing, then delete the directory.",
      repair=Repair(AUTO, 'Quarantines staging and temporary directories (.hive-staging_*, '
                          '_temporary, _tmp*, _acidtool_staging_*) once unchanged for --min-age '
                          "(default 1h: a running query's staging directory is young). Non-ACID "
                          'and nested directories may hold data Hive reads: left to a person.',
                    planner=quarantine_leftover,
                    waits_for_age=True))
def _stray_dirs(r: Rule, p: PartitionFacts, ctx: Context):
    has_acid = bool(acid_entries(p))
    compacted = {e.name for e in _compacted_originals(p)}  # obsolete (ACID021), not stray
    for e in p.state.entries:
        if not e.is_dir:
            continue
        if is_hidden(e.name):
            if e.name.startswith(ACIDTOOL_STAGING_PREFIX):
                yield r.finding(p.path(e.name), "leftover of an interrupted acidtool writer "
                                "(convert, compact, repair, a hiveacid job): nothing in it was "
                                "committed or is read; `acidtool repair --apply` quarantines "
                                "it once unchanged for --min-age", files=e.file_count)
            elif STAGING.match(e.name):
                yield r.finding(p.path(e.name), "temporary or staging directory left behind",
                                files=e.file_count)
        elif e.kind == "original_dir" and has_acid and not is_partition_component(e.name) \
                and e.name not in compacted:
            yield r.finding(p.path(e.name), "non-ACID directory next to ACID directories: Hive "
                            "reads its files as original data only while there is no base",
                            files=e.file_count)
        elif e.kind in ("base", "delta", "delete_delta"):
            nested = sorted({f.path.split("/")[0] for f in e.files if "/" in f.path
                             and not is_hidden(f.path.split("/")[0])})
            for sub in nested:
                yield r.finding(p.path(f"{e.name}/{sub}"), f"directory nested inside {e.name}: "
                                "Hive 3 ignores it, Hive 4 may read its files")


@rule("ACID004", "bad-bucket-file-name", "error", "names",
      "File in a base or delta whose name is not a bucket file",
      what="A data file inside `base_`/`delta_`/`delete_delta_` whose name is not `bucket_N` "
           "(Hive 4 also allows `bucket_N_ATTEMPT`; Hive 3+ allows original names like "
           "`000000_0` in insert directories written by LOAD DATA).",
      why="Hive derives the bucket from the file name. As Hive 3.1 and 4.0's own readers "
          "do it: a plain file in a delta whose name is not `N_M` or `N_M_copy_K` is listed "
          "and never read (its rows are lost), and in a base it fails the query with "
          "`bucketId out of range: -1`; Hive 2.3 fails on any plain file in a base or delta "
          "(`Can't find user metadata hive.acid.key.index`). In a delete delta, delete events "
          "are looked up in the wrong file.",
      example="orders/delta_0000007_0000007_0000/orders__6f1c9e2a_3b7d (a DataX file)",
      fix="Re-write the data with `acidtool convert`, which names files `bucket_%05d`.",
      repair=Repair(AUTO, "An ACID file under another name (bucket_00000.orc, 'bucket_00000 (1)') "
                          "is renamed to the bucket its rows' bucket property names, when no file "
                          'has that name. Raw ORC in a delta of one write id is re-wrapped into a '
                          'new delta of the same write id (the next free statement id) and '
                          'quarantined. In a base or delete delta: left to a person.',
                    planner=rewrap_delta_file))
def _bad_file_names(r: Rule, p: PartitionFacts, ctx: Context):
    version = ctx.hive_version
    for e in acid_entries(p):
        if ctx.insert_only and e.kind != "delete_delta":
            continue  # Hive reads every plain file of an insert-only delta, whatever its name
        names = data_files(p, e)
        raw = raw_directory(p, e, version)
        for name in names:
            fn = file_name(name)
            if fn.kind in ("acid_version", "metadata"):
                continue
            if fn.kind == "bucket" and fn.attempt_id is not None and \
                    not version.bucket_attempt_suffix:
                yield r.finding(p.path(f"{e.name}/{name}"), f"attempt-suffixed bucket file: "
                                f"Hive {version} cannot parse its bucket id")
                continue
            if e.kind == "delete_delta" or (fn.kind == "bucket" and not raw):
                if fn.kind != "bucket":
                    yield r.finding(p.path(f"{e.name}/{name}"), f"'{name}' is not a bucket "
                                    "file name: Hive gives it bucket id -1")
                continue  # (a bucket file of an ACID directory is what Hive reads)
            decision = file_in_dir(name, version, e.kind, raw)
            if decision.outcome == "acid" and (fn.kind in ("bucket", "original") or not
                                               version.raw_files_in_deltas):
                continue  # (ACID007 reports one without the ACID columns)
            if decision.outcome == "read" and decision.bucket >= 0:
                continue  # raw (LOAD DATA) layout
            why = decision.reason or "Hive reads it as ACID events (with bucket id -1)"
            yield r.finding(p.path(f"{e.name}/{name}"),
                            f"'{name}' is not a bucket file name: {why}")


@rule("ACID005", "acid-version-marker", "warning", "names",
      "Base or delta without a `_orc_acid_version` marker, or with unexpected contents",
      what="Hive 3+ writers put a one-byte file `_orc_acid_version` containing `2` in every "
           "base and delta. The rule reports directories without it (Hive 3/4 only) and, from "
           "--level metadata, markers with other contents.",
      why="Hive's own readers tolerate its absence, but some engines use it to tell the ACID "
          "format version, and its absence betrays a directory not written by Hive 3+.",
      example="orders/delta_0000003_0000003_0000/ holding only bucket_00000",
      fix="Write the marker (`printf 2 > dir/_orc_acid_version`), or let `acidtool convert` "
          "write the directory.",
      repair=Repair(AUTO, "Writes the missing _orc_acid_version ('2'); one with other contents is "
                          'quarantined and written anew.',
                    planner=write_marker))
def _acid_version_marker(r: Rule, p: PartitionFacts, ctx: Context):
    if not ctx.hive_version.writes_acid_version or ctx.insert_only:
        return
    for e in live_acid_entries(p):
        if not any(f.path == ACID_VERSION_FILE for f in e.files):
            if e.files:
                yield r.finding(p.path(e.name), f"no {ACID_VERSION_FILE} in {e.name}")
            continue
        content = p.markers.get(f"{e.name}/{ACID_VERSION_FILE}")
        if content is not None and content.strip() != b"2":
            yield r.finding(p.path(f"{e.name}/{ACID_VERSION_FILE}"),
                            f"{ACID_VERSION_FILE} holds {content[:16]!r}, expected b'2'")


# ------------------------------------------------------------------------------------------------
# Metadata level


@rule("ACID018", "overlapping-deltas", "error", "names",
      "Overlapping or duplicate deltas that no compaction explains",
      what="Two deltas of the same kind whose write-id ranges partly overlap (neither contains "
           "the other), or two directories that spell the same range and statement differently.",
      why="Compaction only produces nested ranges. Hive does not check containment: it reads "
          "both overlapping deltas, so the shared write ids are read twice.",
      example="delta_0000001_0000005/ and delta_0000003_0000008/; delta_5_5_0000/ and "
              "delta_0000005_0000005_0000/",
      fix="Find which writer produced the odd one, keep the right data, remove the other.",
      repair=Repair(MANUAL, 'Never automatic: which of two overlapping deltas is right is a '
                            'decision.',
                    manual='overlapping deltas: which one is right is a decision (run a major '
                           'compaction, or quarantine the duplicate by hand after comparing '
                           '`acidtool read`)'))
def _overlaps(r: Rule, p: PartitionFacts, ctx: Context):
    deltas = sorted((e.parsed for e in live_acid_entries(p) if isinstance(e.parsed, Delta)),
                    key=Delta.sort_key)
    seen: dict = {}
    for d in deltas:
        key = (d.delete, d.min_write_id, d.max_write_id, d.statement_id, d.visibility_txn_id)
        if key in seen:
            yield r.finding(p.path(d.name), f"{d.name} duplicates {seen[key]}", other=seen[key])
        else:
            seen[key] = d.name
    for i, a in enumerate(deltas):
        for b in deltas[i + 1:]:
            if b.min_write_id > a.max_write_id:
                break
            if a.delete == b.delete and a.min_write_id < b.min_write_id <= a.max_write_id \
                    < b.max_write_id:
                yield r.finding(p.path(b.name), f"{b.name} partly overlaps {a.name}: Hive "
                                "reads both", other=a.name)


@rule("ACID020", "invisible-directory", "warning", "names",
      "Directory the given snapshot does not see (above the high watermark, open or aborted)",
      what="With --write-ids, bases and deltas that the snapshot ignores: above its high "
           "watermark, of open or aborted write ids only, or of an uncommitted compactor.",
      why="Their data is invisible to readers of that snapshot: typically files committed to "
          "the filesystem but not to the metastore (a load whose write id was never committed).",
      example="delta_0000012_0000012_0000/ with --write-ids 'db.t:11:9223372036854775807::'",
      fix="Commit the write id in the metastore (or remove the directory if the load failed).",
      repair=Repair(MANUAL, 'Nothing: the snapshot, not the directory, decides what is visible.'))
def _invisible(r: Rule, p: PartitionFacts, ctx: Context):
    if not ctx.snapshot_given:
        return
    for e in acid_entries(p):
        if e.status == "ignored":
            yield r.finding(p.path(e.name), f"invisible in this snapshot: {e.reason}")


@rule("ACID021", "cleaner-behind", "info", "names",
      "Obsolete or aborted directories still present",
      what="Directories Hive's cleaner would delete: superseded by a base or a compacted delta, "
           "or holding only aborted writes.",
      why="Harmless for readers, but they cost listing time and space, and mean the cleaner is "
          "behind or blocked by long-running readers.",
      example="delta_0000001_0000001_0000/ next to base_0000005/",
      fix="Check the compactor and cleaner (`SHOW COMPACTIONS`); they are removed once no "
          "reader needs them.",
      repair=Repair(OPT_IN, 'Only with --select ACID021 and a snapshot (--write-ids, or --txns '
                            'for Hive 2.3): quarantines aborted directories, and obsolete ones '
                            'whose covering base or delta is below every write id open in the '
                            "snapshot, once unchanged for --min-age. Hive's cleaner waits for "
                            'every transaction that was open when the compaction committed, '
                            'readers included; a write-id snapshot does not show readers of other '
                            'tables, so --min-age must exceed your longest query.',
                    planner=clean_obsolete,
                    opt_in='quarantine obsolete and aborted directories',
                    waits_for_age=True))
def _cleaner(r: Rule, p: PartitionFacts, ctx: Context):
    # what half of a compaction hides is no cleaner's (ACID029): its rows are read nowhere else
    halves = {name for h in half_done(p.state) for name in h.hidden}
    for e in acid_entries(p):
        if e.status in ("obsolete", "aborted") and e.name not in halves:
            yield r.finding(p.path(e.name), f"{e.status}: {e.reason}", status=e.status)
    for e in _compacted_originals(p):
        what = "original file" if e.kind == "original_file" else "directory of original files"
        yield r.finding(p.path(e.name), f"obsolete: {what} compacted into {p.state.base} "
                        "(which holds original files' rows, write id 0); re-wrapping it would "
                        "duplicate its rows", status="obsolete", compacted=p.state.base)


@rule("ACID022", "open-streaming-file", "info", "names",
      "Open streaming file (`_flush_length` side file present)",
      what="A `bucket_N_flush_length` side file: a Hive streaming client has a transaction "
           "batch open on `bucket_N`.",
      why="Normal while the client writes: readers stop at the last flushed length. If no "
          "client is running, the batch was never closed and the tail of the file is not "
          "committed.",
      example="delta_0000021_0000030/bucket_00000_flush_length",
      fix="Nothing while the client runs; otherwise close or abort its transaction batch.",
      repair=Repair(AUTO, "Quarantines a _flush_length side file whose last length is the file's "
                          'size (the writer finished), once unchanged for --min-age. With '
                          '--select ACID022 also cuts a longer file at its last flushed length '
                          '(as `orcfiledump --recover`), quarantining the file and its side file.',
                    planner=finish_streaming,
                    opt_in='recover streaming files longer than their last flush',
                    waits_for_age=True))
def _open_streaming(r: Rule, p: PartitionFacts, ctx: Context):
    for e in acid_entries(p):
        for f in e.files:
            if f.path.endswith(FLUSH_LENGTH_SUFFIX) and file_name(f.name).kind == "flush_length":
                yield r.finding(p.path(f"{e.name}/{f.path}"), "open streaming file: readers "
                                "stop at its flushed length")


@rule("ACID029", "half-compaction", "error", "names",
      "Half of a compaction: one of its two directories placed, the other missing",
      what="A compacted delta_M_N without its delete_delta_M_N, or the reverse, while it hides "
           "the other kind's directories of write ids M..N.",
      why="getAcidState takes a directory of a wider range as covering every narrower one, of "
          "either kind: delete_delta_M_N alone hides the range's inserts (their rows read as "
          "deleted), delta_M_N alone hides its deletes (deleted rows come back). A compactor "
          "is between its two renames, or was killed there; acidtool read and compact refuse "
          "the partition meanwhile.",
      example="delete_delta_0000001_0000005/ next to delta_0000001_0000001_0000/ .. "
              "delta_0000005_0000005_0000/, no delta_0000001_0000005/",
      fix="Hive's compactor: let it finish (SHOW COMPACTIONS). acidtool's, killed: `acidtool "
          "undo JOURNAL`, or the next `acidtool compact` rolls it back first.",
      repair=Repair(MANUAL, 'Nothing: the compaction that placed it finishes or rolls it back; '
                            'repair quarantines none of the directories it hides (ACID021 leaves '
                            'them too).'))
def _half_compaction(r: Rule, p: PartitionFacts, ctx: Context):
    for h in half_done(p.state):
        yield r.finding(p.path(h.placed), h.message(), missing=h.missing, hidden=list(h.hidden))


@rule("ACID023", "unread-original-data", "info", "names",
      "Original data Hive will never read because a base exists",
      what="Non-ACID subdirectories (and their files) of a partition that has a base.",
      why="After a major compaction original data is obsolete and the cleaner removes it; "
          "anything copied there later is never read.",
      example="HIVE_UNION_SUBDIR_1/000000_0 next to base_0000005/",
      fix="Nothing if it was compacted; otherwise load the data properly.",
      repair=Repair(MANUAL, 'Nothing: original files under a base are history Hive no longer '
                            'reads.'))
def _unread_originals(r: Rule, p: PartitionFacts, ctx: Context):
    if p.state.base is None:
        return
    compacted = {e.name for e in _compacted_originals(p)}  # read by it: obsolete (ACID021)
    for e in p.state.entries:
        if e.kind == "original_dir" and not is_partition_component(e.name) and \
                e.name not in compacted:
            yield r.finding(p.path(e.name), f"{e.file_count} original files never read: "
                            f"{p.state.base} exists", files=e.file_count)


def _table_name(url: str, ctx: Context) -> str:
    from ..compaction import table_name_of

    return ctx.table_name or table_name_of(url)[0]


@rule("ACID024", "compaction-due", "info", "names",
      "Compaction due: too many deltas, or deltas large next to the base",
      what="What Hive's compaction Initiator decides (the same decision as `acidtool "
           "compaction-plan`): deltas larger than hive.compactor.delta.pct.threshold (0.1) of "
           "the base, or more current deltas than hive.compactor.delta.num.threshold (10). "
           "Thresholds: --delta-num-threshold, --delta-pct-threshold. The finding carries "
           "the statement.",
      why="Every delta is another file to open and merge for every read; Hive's initiator "
          "would schedule a compaction.",
      example="25 deltas on top of base_0000100/",
      fix="Run the statement in the finding (`ALTER TABLE ... COMPACT 'minor'` or 'major'), "
          "or `acidtool compact`.",
      repair=Repair(OPT_IN, 'Only with --select ACID024 and a snapshot (--write-ids, --txns for '
                            'Hive 2.3, or --metastore): runs the compaction the finding names '
                            "with `acidtool compact`'s writer (the same files, journal and undo), "
                            'after every other action of the plan; the directories it reads stay, '
                            'obsolete, for the Cleaner.',
                    planner=compact_due,
                    opt_in="compact partitions Hive's Initiator would compact"))
def _compaction_due(r: Rule, p: PartitionFacts, ctx: Context):
    from ..compaction import decide, statement

    if not p.state.deltas:
        return
    d = decide(p.state, ctx.hive_version, ctx.thresholds.settings(), insert_only=ctx.insert_only)
    if d.kind is None:
        return
    yield r.finding(p.url, f"compaction due: {d.reason}", kind=d.kind,
                    statement=statement(_table_name(p.url, ctx), p.partition, d.kind))


@rule("ACID026", "symbolic-link", "error", "names",
      "Symbolic link inside a table or partition",
      what="A file or directory below the table that is a symbolic link (local disks only: "
           "HDFS and object stores have none). acidtool lists it and never follows it, so "
           "nothing it reports or reads comes from outside the table.",
      why="Hive on HDFS never meets a link, but a Hive or Spark reading a local copy of the "
          "table follows it: a `delta_...` link to another directory makes that directory's "
          "rows part of the table, and a link to a parent (`delta_5 -> ..`) makes a loop that "
          "lists the sibling tables. A link is the mark of a copy script, not of a Hive writer.",
      example="orders/delta_0000005_0000005_0000 -> /backup/orders/delta_0000005_0000005_0000",
      fix="Replace the link by the directory or file it points to (`cp -r --remove-destination` "
          "or `rsync -L`), or remove it if its data is not part of the table.",
      repair=Repair(MANUAL, 'Never automatic: replace the link with its data, or remove it.',
                    manual='a symbolic link: replace it with the data it points to, or remove it'))
def _symbolic_links(r: Rule, p: PartitionFacts, ctx: Context):
    for link in p.links:
        yield r.finding(p.path(link), "symbolic link: acidtool does not follow it (nothing "
                        "outside the table is read); a local Hive or Spark would read what it "
                        "points to")


@rule("ACID028", "data-outside-partitions", "error", "names",
      "Data in a partitioned table outside every partition directory",
      what="A file or directory (a delta, a DataX file) directly in a partitioned table's "
           "directory, or between its partition directories, that is no partition itself.",
      why="Hive reads a partitioned table's partitions only: it never reads what lies next to "
          "them, so those rows are lost to every query, and compaction and the cleaner never "
          "see them.",
      example="orders/delta_0000005_0000005_0000/ next to orders/ds=2024-01-01/",
      fix="Move the data into the partition it belongs to (a raw file with `acidtool convert "
          "--partition k=v`), or out of the table.", stray=True,
      repair=Repair(MANUAL, 'Never automatic: which partition the data belongs to is a decision; '
                            'move it there (or convert it with --partition), or out of the table.',
                    manual='data outside every partition: move it into the partition it belongs '
                           'to (a raw file with `acidtool convert --partition k=v`), or out of '
                           'the table'))
def _outside_partitions(r: Rule, stray: list, ctx: Context):
    urls = set(stray)
    for url in sorted(urls):
        parent = url.rsplit("/", 1)[0]
        if parent in urls:
            continue  # said of the directory holding it
        name = url.rsplit("/", 1)[-1]
        yield r.finding(url, f"{name!r} lies in no partition of this partitioned table: Hive "
                        "reads only the partition directories, so it never reads this")

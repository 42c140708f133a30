"""Pure formatters: typed results in, text or JSON-ready dicts out. No IO here."""

from __future__ import annotations

import json
from collections import Counter
from json.encoder import (
    encode_basestring as _quote,  # the encoder's own, ensure_ascii=False
)
from typing import TYPE_CHECKING, Iterable, Iterator, NamedTuple

from ..core.halfdone import half_done
from ..core.listing import PathInfo
from ..core.names import NO_STATEMENT, Base, FileName
from ..core.select import STATUSES, AcidState, Entry
from .escapes import (  # noqa: F401 - escape_json_names, unescape_name: re-exported
    display,
    escape_json_names,
    escape_surrogates,
    no_commands,
    unescape_name,
)

if TYPE_CHECKING:  # annotations only: the error line needs this module, not a listing
    from ..table.ls import PartitionState, TableState

LS_SCHEMA_VERSION = 1


def count(n: int, word: str) -> str:
    """How human output says a number of things: 3,000,000 rows, 1 original file."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def tabulate(*args, **kwargs) -> str:
    """tabulate's, imported on first use: its import (it reads package metadata) took 40 ms of
    each start, and validate and dump print no table."""
    from tabulate import tabulate as table

    return table(*args, **kwargs)


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def error_json(state: AcidState) -> dict | None:
    return _error_doc(state.error)


def _error_doc(err) -> dict | None:
    if err is None:
        return None
    return {"kind": err.kind, "message": err.message, "hive_exception": err.hive_exception,
            "path": err.path}


def _file_json(f: PathInfo) -> dict:
    fn = FileName.parse(f.path.rsplit("/", 1)[-1])
    return {"path": f.path, "size": f.size, "kind": fn.kind, "bucket_id": fn.bucket_id}


def entry_json(e: Entry, with_files: bool) -> dict:
    p = e.parsed
    out: dict[str, object] = {
        "name": e.name,
        "kind": e.kind,
        "status": e.status,
        "reason": e.reason,
        "write_id": p.write_id if isinstance(p, Base) else None,
        "min_write_id": p.min_write_id if p is not None else None,
        "max_write_id": p.max_write_id if p is not None else None,
        "statement_id": (p.statement_id if p is not None and p.statement_id != NO_STATEMENT
                         else None),
        "visibility_txn_id": p.visibility_txn_id if p is not None else None,
        "is_dir": e.is_dir,
        "foreign": e.foreign,
        "files": e.file_count,
        "bytes": e.size,
    }
    if with_files:
        out["file_list"] = [_file_json(f) for f in e.files] if e.is_dir else []
    return out


def entry_text(e: Entry) -> str:
    """``_LEAF.encode(entry_json(e, False))``, byte for byte, written directly: an ls of a big
    table has one entry per child, and building then encoding a dict costs twice as much."""
    p = e.parsed
    if p is None:
        ids = _NO_IDS
    else:
        stmt = "null" if p.statement_id == NO_STATEMENT else p.statement_id
        ids = (f'"write_id": {p.write_id if isinstance(p, Base) else "null"}, '
               f'"min_write_id": {p.min_write_id}, "max_write_id": {p.max_write_id}, '
               f'"statement_id": {stmt}, "visibility_txn_id": {p.visibility_txn_id}')
    return (f'{{"name": {_quote(e.name)}, "kind": {_quote(e.kind)}, '
            f'"status": {_quote(e.status)}, "reason": {_quote(e.reason)}, {ids}, '
            f'"is_dir": {"true" if e.is_dir else "false"}, '
            f'"foreign": {"true" if e.foreign else "false"}, '
            f'"files": {len(e.files) if e.is_dir else 1}, "bytes": {e.size}}}')


_NO_IDS = ('"write_id": null, "min_write_id": null, "max_write_id": null, '
           '"statement_id": null, "visibility_txn_id": null')


def _entries_text(entries, with_files: bool) -> RawJSON:
    if with_files:
        return RawJSON([_LEAF.encode([entry_json(e, True) for e in entries])])
    return RawJSON(_entry_pieces(entries))


def _entry_pieces(entries) -> Iterator[str]:
    """The entries list in pieces of some tens of kilobytes, made as they are written: each
    piece's memory is reused for the next instead of holding megabytes of text at once."""
    yield "["
    for i in range(0, len(entries), 256):
        yield (", " if i else "") + ", ".join([entry_text(e) for e in entries[i:i + 256]])
    yield "]"


def summary(state: AcidState) -> dict:
    """Entries by status, and the files and bytes of those that are not hidden: a hidden
    entry (a name starting with '_' or '.', such as a staging directory a killed job left) is
    never data, so it does not count."""
    counts = Counter(e.status for e in state.entries)
    files, size = state.data_totals()
    return {**{status: counts.get(status, 0) for status in STATUSES}, "files": files,
            "bytes": size}


def partition_json(p: PartitionState, with_files: bool, _entries=None) -> dict:
    s = p.state
    doc = {
        "partition": p.partition,
        "path": p.location.url,
        "base": s.base,
        "deltas": list(s.deltas),
        "obsolete": list(s.obsolete),
        "aborted": list(s.aborted),
        "original_files": list(s.original_files),
        "uncompacted_aborts": s.uncompacted_aborts,
        "error": error_json(s),
        "read_error": _error_doc(p.read_error),
        "summary": summary(s),
        "entries": ([entry_json(e, with_files) for e in s.entries] if _entries is None
                    else _entries(s.entries, with_files)),
    }
    if p.links:  # only then: the schema of every other listing stays as it was
        doc["links"] = list(p.links)
    halves = half_done(s)
    if halves:  # only then, as links
        doc["half_compactions"] = [{"placed": h.placed, "missing": h.missing,
                                    "hidden": list(h.hidden), "message": h.message()}
                                   for h in halves]
    return doc


def ls_json(table: TableState, with_files: bool = False, _entries=None) -> dict:
    return {
        "schema_version": LS_SCHEMA_VERSION,
        "path": table.location.url,
        "hive_version": table.snapshot.hive_version,
        "snapshot": table.snapshot.describe(),
        "partitions": [partition_json(p, with_files, _entries) for p in table.partitions],
        "stray": [{"path": s.path, "is_dir": s.is_dir, "size": s.size} for s in table.stray],
    }


def ls_json_pieces(table: TableState, with_files: bool = False,
                   metastore: dict | None = None) -> Iterator[str]:
    """``dumps(ls_json(table, with_files))`` in pieces, with the entries written directly;
    ``metastore``: what the metastore says of the table (a "metastore" key, only then)."""
    doc = ls_json(table, with_files, _entries_text)
    if metastore:
        doc["metastore"] = metastore
    return dump_pieces(doc)


def _ids(e: Entry) -> str:
    p = e.parsed
    if p is None:
        return ""
    if isinstance(p, Base):
        return str(p.write_id)
    return f"{p.min_write_id}" if p.min_write_id == p.max_write_id else \
        f"{p.min_write_id}-{p.max_write_id}"


def partition_line(p: PartitionState) -> str:
    s = p.state
    label = display(p.partition) or "(table root)"
    if s.error is not None:
        return (f"{label}: Hive fails to read this directory: {s.error.kind}: "
                f"{display(s.error.message)}")
    parts = [f"base {s.base}" if s.base else "no base"]
    deletes = sum(1 for d in s.deltas if d.startswith("delete_delta_"))
    parts.append(f"{count(len(s.deltas), 'delta')} read"
                 + (f" ({deletes:,} delete)" if deletes else ""))
    if s.original_files:
        parts.append(f"{count(len(s.original_files), 'original file')} read")
    if s.obsolete:
        parts.append(f"{len(s.obsolete):,} obsolete")
    if s.aborted:
        parts.append(f"{len(s.aborted):,} aborted")
    foreign = sum(1 for e in s.entries if e.foreign)
    if foreign:
        parts.append(f"{foreign:,} foreign")
    files, size = s.data_totals()
    parts.append(f"{count(files, 'file')}, {human_bytes(size)}")
    line = f"{label}: " + ", ".join(parts)
    if p.read_error is not None:  # the selection succeeds; Hive's reader then fails
        line += (f"\n{label}: Hive selects as above, then fails to read: {p.read_error.kind}: "
                 f"{display(p.read_error.message)}")
    for h in half_done(s):
        line += f"\n{label}: {display(h.message())}"
    return line


def partition_failures(partitions) -> list[str]:
    """A line per partition Hive fails on (its getAcidState, or its reader after it), and per
    compaction caught between its renames."""
    return [f"{p.partition or p.location.url}: Hive would fail: "
            f"{(p.state.error or p.read_error).message}"
            for p in partitions if p.state.error is not None or p.read_error is not None] + \
        [f"{p.partition or p.location.url}: {h.message()}"
         for p in partitions for h in half_done(p.state)]


def ls_table(table: TableState, with_files: bool = False) -> str:
    blocks = []
    for p in table.partitions:
        rows = []
        for e in p.state.entries:
            p_ = e.parsed
            stmt = "" if p_ is None or p_.statement_id == NO_STATEMENT else str(p_.statement_id)
            vis = str(p_.visibility_txn_id) if p_ is not None and p_.visibility_txn_id else ""
            status = e.status + (" (foreign)" if e.foreign and e.status != "foreign" else "")
            rows.append([display(e.name) + ("/" if e.is_dir else ""), e.kind, _ids(e), stmt,
                         vis, status, e.file_count, human_bytes(e.size), display(e.reason)])
            if with_files and e.is_dir:
                for f in e.files:
                    rows.append([f"|- {display(f.path)}", FileName.parse(f.name).kind, "", "",
                                 "", "", "", human_bytes(f.size), ""])
        header = ["name", "kind", "write ids", "stmt", "vis", "status", "files", "bytes", "why"]
        table_text = tabulate(rows, headers=header, tablefmt="simple") if rows else "(empty)"
        if p.links:
            table_text += ("\nsymbolic links (never followed; validate reports them, "
                           "ACID026):\n" + "\n".join(f"  {display(x)}" for x in p.links))
        blocks.append(f"{partition_line(p)}\n{table_text}")
    if table.stray:
        blocks.append("outside any partition (Hive never reads these):\n" +
                      "\n".join(f"  {display(s.path)}" for s in table.stray))
    return "\n\n".join(blocks)


_LEAF = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "))


class RawJSON(NamedTuple):
    """JSON text already written, in pieces (any iterable, read once) that dump_pieces()
    passes on as they are."""

    pieces: Iterable[str]


def dumps(doc, max_depth: int = 3, indent: int = 2) -> str:
    """Pretty JSON whose outer levels are indented and whose deeper values (an ``ls`` entry, a
    finding) sit compactly on one line each: readable, and fast, because the leaves go through
    the C encoder (json.dumps with ``indent`` falls back to pure Python)."""
    return "".join(dump_pieces(doc, max_depth, indent))


def dump_pieces(doc, max_depth: int = 3, indent: int = 2) -> Iterator[str]:
    """dumps() as pieces to write one after the other, made as they are asked for. A big
    document is never held as one string: each megabyte copied costs fresh pages from the
    kernel."""
    leaf = _LEAF.encode  # one encoder: json.dumps with options builds a new one per call

    def enc(obj, depth: int) -> Iterator[str]:
        if isinstance(obj, RawJSON):
            yield from obj.pieces
        elif depth >= max_depth or not isinstance(obj, (dict, list)) or not obj:
            yield leaf(obj)
        else:
            pad, end = " " * (indent * (depth + 1)), " " * (indent * depth)
            is_dict = isinstance(obj, dict)
            sep = "{\n" if is_dict else "[\n"
            for item in (obj.items() if isinstance(obj, dict) else obj):
                if is_dict:
                    yield f"{sep}{pad}{leaf(item[0])}: "
                    item = item[1]
                else:
                    yield sep + pad
                yield from enc(item, depth + 1)
                sep = ",\n"
            yield f"\n{end}}}" if is_dict else f"\n{end}]"
    return enc(doc, 0)


def _stat_summary(stats: dict) -> str:
    keys = ("number_of_values", "has_null", "minimum", "maximum", "sum", "total_length")
    parts = [f"{k.replace('number_of_values', 'values')}={stats[k]}" for k in keys if k in stats]
    return ", ".join(parts)


def meta_text(m) -> str:
    from ..commands.inspect.meta import meta_json

    doc = meta_json(m)
    lines = [display(m.path),
             f"  {human_bytes(m.size)}, {count(m.rows, 'row')}, "
             f"{count(len(m.stripes), 'stripe')}, {m.compression} "
             f"(block {m.compression_block_size}), ORC {m.file_version}, writer {m.writer} "
             f"{m.writer_version}, {m.software_version}",
             f"  schema: {display(m.schema)}",
             f"  ACID event schema: {'yes' if m.acid_schema else 'no'}"]
    if m.flush_length:
        fl = m.flush_length
        lines.append(f"  open streaming file: committed {fl['committed']} of {fl['file_size']} "
                     f"bytes ({len(fl['lengths'])} flushes)")
    acid = doc["acid"]
    if acid is None:
        lines.append("  hive.acid.*: none")
    else:
        version = acid["version"] if acid["version"] is not None else "(missing)"
        lines.append(f"  hive.acid.version: {version}")
        stats = acid["stats"]
        if stats and "error" not in stats:
            lines.append(f"  hive.acid.stats: {stats['inserts']} inserts, {stats['updates']} "
                         f"updates, {stats['deletes']} deletes")
        else:
            lines.append(f"  hive.acid.stats: {acid['stats_raw']!r}"
                         + (f" ({stats['error']})" if stats else " (missing)"))
        if acid["key_index"] is None:
            lines.append("  hive.acid.key.index: " + (
                f"unparsable: {acid['key_index_error']}" if acid["key_index_error"]
                else "(missing: Hive 2/3 would read this file as an original file)"))
        else:
            n = len(acid["key_index"])
            lines.append(f"  hive.acid.key.index: {n} entr{'y' if n == 1 else 'ies'} for "
                         f"{len(m.stripes)} stripes")
            for e in acid["key_index"]:
                lines.append(f"    stripe {e['stripe']}: last key ({e['originalTransaction']}, "
                             f"{e['bucket']} = bucket {e['bucketId']} stmt {e['statementId']}, "
                             f"{e['rowId']})")
    other = {k: v for k, v in m.user_metadata.items() if not k.startswith("hive.acid.")}
    for k, v in other.items():
        lines.append(f"  user metadata {display(k)}: {display(v)}")
    stripe_rows = [[s["stripe"], s["offset"], s["length"], s["rows"]] for s in m.stripes]
    lines.append(_indent(tabulate(stripe_rows, headers=["stripe", "offset", "bytes", "rows"])))
    col_rows = [[c["id"], display(c["name"]),
                 display(c["type"] if len(c["type"]) < 40 else c["type"][:37] + "..."),
                 display(_stat_summary(c["statistics"]))] for c in m.columns]
    lines.append(_indent(tabulate(col_rows, headers=["column", "name", "type", "statistics"])))
    return "\n".join(lines)


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


# ------------------------------------------------------------------------------------------------
# validate


def finding_json(f) -> dict:
    from ..core.rules import REGISTRY

    return {"code": f.code, "name": REGISTRY[f.code].name, "severity": f.severity,
            "path": f.path, "message": f.message, "details": f.details}


def validate_json(report) -> dict:
    o = report.options
    return {
        "paths": report.paths,
        "hive_version": o.snapshot.hive_version,
        "snapshot": o.snapshot.describe(),
        "level": o.level,
        "summary": {**report.counts(), "tables": report.tables,
                    "partitions": report.partitions, "files": report.files},
        "findings": [finding_json(f) for f in report.findings],
    }


def validate_jsonl(report) -> str:
    return "".join(json.dumps(finding_json(f), ensure_ascii=False) + "\n"
                   for f in report.findings)




def validate_summary(report) -> str:
    c = report.counts()
    o = report.options
    return (f"{count(c['error'], 'error')}, {count(c['warning'], 'warning')}, "
            f"{c['info']:,} info in {count(report.tables, 'table')}, "
            f"{count(report.partitions, 'partition')}, {count(report.files, 'file')} read "
            f"(level {o.level}, Hive {o.snapshot.hive_version} rules)")


def validate_text(report) -> str:
    lines, current = [], None
    for f in report.findings:
        if f.path != current:
            if current is not None:
                lines.append("")
            lines.append(display(f.path))
            current = f.path
        lines.append(f"  {f.severity:<7} {f.code}  {display(f.message)}")
        if "statement" in f.details:
            lines.append(f"          {'':7}  {display(f.details['statement'])}")
    if lines:
        lines.append("")
    lines.append(validate_summary(report))
    return "\n".join(lines)


def _xml(text: str) -> str:
    from xml.sax.saxutils import escape

    return escape(str(text), {'"': "&quot;"})


def validate_junit(report, fail_on: str) -> str:
    """One test case per rule that ran (passing when it found nothing) and one per finding; a
    finding at or above --fail-on is a failure, one below it a skipped case. A rule that the
    chosen --level does not reach never ran: it is no case at all."""
    from ..core.facts import LEVELS
    from ..core.rules import REGISTRY, SEVERITIES

    limit = SEVERITIES.index(fail_on)
    cases, failures, skipped = [], 0, 0
    by_code: dict[str, list] = {}
    for f in report.findings:
        by_code.setdefault(f.code, []).append(f)
    level = LEVELS.index(report.options.level)
    for code in report.options.codes():
        r = REGISTRY[code]
        if LEVELS.index(r.level) > level:
            continue
        found = by_code.get(code, [])
        if not found:
            cases.append(f'  <testcase classname="acidtool.{code}" name="{code} {r.name}"/>')
        for f in found:
            name = _xml(f"{code} {display(f.path)}")
            if SEVERITIES.index(f.severity) <= limit:
                failures += 1
                body = (f'<failure type="{f.severity}" message="{_xml(display(f.message))}">'
                        f"{_xml(r.summary)}</failure>")
            else:
                skipped += 1
                body = f'<skipped message="{_xml(f.severity + ": " + display(f.message))}"/>'
            cases.append(f'  <testcase classname="acidtool.{code}" name="{name}">{body}'
                         "</testcase>")
    head = (f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="acidtool validate" '
            f'tests="{len(cases)}" failures="{failures}" errors="0" skipped="{skipped}">')
    return "\n".join([head, *cases, "</testsuite>"]) + "\n"


def _gh_escape(text: str, prop: bool = False) -> str:
    """GitHub's escapes for workflow command data (and properties), after ``display``'s for
    every other control character and byte that is not UTF-8."""
    out = str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    out = display(out)
    if prop:
        out = out.replace(":", "%3A").replace(",", "%2C")
    return out


def validate_github(report) -> str:
    """GitHub Actions workflow commands: one annotation per finding."""
    level = {"error": "error", "warning": "warning", "info": "notice"}
    from ..core.rules import REGISTRY

    return "".join(
        f"::{level[f.severity]} file={_gh_escape(f.path, True)},"
        f"title={_gh_escape(f.code + ' ' + REGISTRY[f.code].name, True)}::"
        f"{_gh_escape(f.message)}\n" for f in report.findings)


# ------------------------------------------------------------------------------------------------
# decode


def decoded_buckets_text(rows: list[dict]) -> str:
    return tabulate([[r["encoded"], r["hex"], f"V{r['codec_version']}", r["bucket_id"],
                      r["statement_id"]] for r in rows],
                    headers=["encoded", "hex", "codec", "bucket id", "statement id"])


def decoded_snapshot_json(d) -> dict:
    return {"transaction": d.transaction, "lists": d.lists} if d.transaction is not None \
        else d.lists[0]


def decoded_snapshot_text(d) -> str:
    lines = [] if d.transaction is None else [f"reader transaction: {d.transaction}"]
    what = "transactions" if d.txns else "write ids"
    for doc in d.lists:
        if doc["table"]:
            lines.append(f"table {doc['table']}:")
        hwm = doc["high_watermark"]
        lines.append(f"  high watermark: {hwm}" + ("  (everything)" if hwm == 2**63 - 1 else
                     f"  ({what} above {hwm} are invisible)"))
        lines.append(f"  lowest open: "
                     f"{doc['min_open'] if doc['min_open'] is not None else 'none'}")
        if doc.get("exceptions") is not None:
            lines.append(f"  open or aborted (2.3 does not tell them apart): "
                         f"{', '.join(map(str, doc['exceptions'])) or 'none'}")
        else:
            lines.append(f"  open:    {', '.join(map(str, doc['open'])) or 'none'}")
            lines.append(f"  aborted: {', '.join(map(str, doc['aborted'])) or 'none'}")
        lines.append(f"  compacted bases readable up to: "
                     f"{min(hwm, (doc['min_open'] or 2**63) - 1)}")
        lines.append(f"  canonical: {doc['canonical']}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------
# convert


def convert_plan_text(doc: dict) -> str:
    lines = [f"plan (dry run, nothing written): {doc['target']}/{doc['directory']}",
             f"  write id {doc['write_id']}, statement {doc['statement_id']}, Hive "
             f"{doc['hive_version']} form, {doc['compression']}",
             f"  {count(doc['rows'], 'row')} from {count(len(doc['sources']), 'source file')}:"]
    lines += [f"    {display(s['path'])} ({count(s['rows'], 'row')})" for s in doc["sources"]]
    lines += [f"    {display(d['path'])}: the same file as {display(d['same_file_as'])}, "
              "converted once" for d in doc.get("named_twice", [])]
    lines.append("  columns: " + ", ".join(
        c["column"] + (f" <- {c['source']}" if c["source"] != c["column"] else "")
        + (f" ({c['cast']})" if c["cast"] else "") for c in doc["columns"]))
    if doc["bucketing"]:
        b = doc["bucketing"]
        lines.append(f"  bucketed: {b['buckets']} buckets by {', '.join(b['by'])} "
                     f"(bucketing version {b['version']})")
    lines.append("  files: " + ", ".join(doc["files"]))
    return "\n".join(lines)


def convert_summary_text(target: str, doc: dict) -> str:
    lines = [f"committed {display(target)}/{doc['directory']}: {count(doc['rows'], 'row')} in "
             f"{count(len(doc['files']), 'file')}, {human_bytes(doc['bytes'])}, "
             f"{doc['elapsed_seconds']:.2f} s"]
    lines += [f"  {name}: {count(rows, 'row')}" for name, rows in doc["files"].items()]
    if doc["manifest"]:
        lines.append(f"  sources moved; manifest: {doc['manifest']}")
    if doc.get("journal"):
        lines.append(f"journal: {doc['journal']} (`acidtool undo {doc['journal']}` takes the "
                     "delta back out" + ("; the moved sources stay where they are)"
                                         if doc["manifest"] else ")"))
    return "\n".join(lines)

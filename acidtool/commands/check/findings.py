"""``validate --output DIR``: the findings as a Parquet dataset, for warehouses whose findings do
not fit on a console: ``DIR/findings/`` (a row per finding: table, partition, path, code,
severity, message) and ``DIR/tables/`` (a row per table: partitions with findings, errors,
warnings, info). Written under a temporary name and renamed when complete, on any filesystem
acidtool writes to."""

from __future__ import annotations

import uuid

import pyarrow as pa

from ...core.names import is_partition_component
from ...io.fs import kind_of, resolve

FINDINGS = pa.schema([("table", pa.string()), ("partition", pa.string()),
                      ("path", pa.string()), ("code", pa.string()),
                      ("severity", pa.string()), ("message", pa.string())])
TABLES = pa.schema([("table", pa.string()), ("partitions_with_findings", pa.int64()),
                    ("error", pa.int64()), ("warning", pa.int64()), ("info", pa.int64())])


def _owner(path: str, roots: list[str]) -> tuple[str, str]:
    """(the table directory a finding's path is in, the partition below it)."""
    best = ""
    for root in roots:
        if (path == root or path.startswith(root.rstrip("/") + "/")) and len(root) > len(best):
            best = root
    rest = path[len(best):].strip("/").split("/") if best else []
    part = []
    for comp in rest:
        if not is_partition_component(comp):
            break
        part.append(comp)
    return best or path, "/".join(part)


def tables_of(report) -> tuple[pa.Table, pa.Table]:
    rows: dict[str, list] = {name: [] for name in FINDINGS.names}
    per_table: dict[str, dict] = {}
    for f in report.findings:
        table, partition = _owner(f.path, report.table_roots)
        for key, value in zip(FINDINGS.names, (table, partition, f.path, f.code, f.severity,
                                               f.message)):
            rows[key].append(value)
        t = per_table.setdefault(table, {"parts": set(), "error": 0, "warning": 0, "info": 0})
        t["parts"].add(partition)
        t[f.severity] += 1
    for root in report.table_roots:
        per_table.setdefault(root, {"parts": set(), "error": 0, "warning": 0, "info": 0})
    summary = pa.Table.from_pylist(
        [{"table": t, "partitions_with_findings": len(v["parts"]), "error": v["error"],
          "warning": v["warning"], "info": v["info"]} for t, v in sorted(per_table.items())],
        schema=TABLES)
    return pa.Table.from_pydict(rows, schema=FINDINGS), summary


def write_dataset(report, directory: str) -> str:
    """Write both tables below ``directory``; its URL."""
    import pyarrow.parquet as pq

    from ...core.errors import UsageError

    loc = resolve(directory)
    if kind_of(loc) == "file":
        raise UsageError(f"--output {directory}: is a file; give a directory")
    findings, tables = tables_of(report)
    fs = loc.fs
    fs.create_dir(loc.path, recursive=True)
    for name, table in (("findings", findings), ("tables", tables)):
        final = loc.child(name)
        if kind_of(final) != "missing":
            raise UsageError(f"--output {directory}: {name}/ exists already (give a new "
                             "directory: acidtool never overwrites)")
        staging = loc.child(f".{name}-{uuid.uuid4().hex[:8]}")
        fs.create_dir(staging.path, recursive=True)
        pq.write_table(table, staging.join("part-00000.parquet"), filesystem=fs)
        fs.move(staging.path, final.path)
    return loc.url

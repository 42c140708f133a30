"""The report's HTML (one file: inline CSS, inline SVG, a few lines of inline script to sort
and filter its table and open a table's section, nothing fetched) and its JSON. Every name
is escaped: data is text."""

from __future__ import annotations

import html
import json

from ..core.rules import REGISTRY, SEVERITIES
from .escapes import escape_json_names
from .output import count, display, human_bytes, partition_line
from .svg import attr, panel, picture, text

PANELS = 12  # partitions drawn per table (ls --format svg draws svg.MAX_PANELS)
FINDINGS = 200  # findings listed per table (the JSON has them all)


def draw(p) -> tuple[str, str, int]:
    """What the report shows of one of a table's first partitions (a ``PartitionState``),
    made where validate checked it (``build_report``'s ``draw``): its ``ls`` line, as HTML,
    and its panel of the table's picture with the panel's height."""
    line = text(partition_line(p).splitlines()[0])
    return (line, *panel(p, line))


def report_json(report) -> str:
    codes = report.codes()
    doc = {
        "paths": report.paths, "hive_version": str(report.snapshot.hive_version),
        "snapshot": report.snapshot.describe(), "totals": report.totals(),
        "findings": report.counts(), "codes": codes,
        "compactions_due": len(report.due()),
        "tables": [{
            "path": t.url, "table": t.name, "findings": [_finding(f) for f in t.findings],
            "partitions": [{
                "partition": p.partition, "path": p.url, "base": p.base,
                "deltas": list(p.deltas), "obsolete": p.obsolete, "aborted": p.aborted,
                "files": p.files, "bytes": p.bytes, "error": p.error,
                **({"compaction": p.decision.as_dict()} if p.decision is not None else {}),
            } for p in t.partitions]} for t in report.tables],
        "elsewhere": [_finding(f) for f in report.elsewhere],
        **({"doctor": {name: [f.as_dict() for f in found]
                       for name, found in report.doctor.items()}}
           if report.doctor is not None else {}),
        # what the page's "Rules found" says of each rule found (acidtool explain's text)
        "rules": {c: {"name": REGISTRY[c].name, "summary": REGISTRY[c].summary,
                      "what": REGISTRY[c].what, "why": REGISTRY[c].why, "fix": REGISTRY[c].fix}
                  for c in codes if c in REGISTRY},
    }
    # a name that is not UTF-8 as every JSON output of acidtool writes it (escape_json_names)
    return escape_json_names(json.dumps(doc, indent=1, ensure_ascii=False)) + "\n"


def _finding(f) -> dict:
    return {"code": f.code, "severity": f.severity, "path": f.path, "message": f.message}


def report_html(report) -> str:
    totals, counts, codes_found = report.totals(), report.counts(), report.codes()
    due = report.due()
    def li(n: int, word: str, cls: str = "", more: str = "") -> str:
        number, _, rest = count(n, word).partition(" ")
        return f"<li{' class=' + cls if cls else ''}><b>{number}</b> {rest}{more}</li>"
    summary = ("<ul class=sum>" + li(totals["tables"], "table")
               + li(totals["partitions"], "partition")
               + li(totals["files"], "file", more=f", {human_bytes(totals['bytes'])}")
               + "".join(li(counts[s], s, s) for s in ("error", "warning"))
               + f"<li class=info><b>{counts['info']:,}</b> info</li>"
               + li(len(due), "compaction", more=" due")
               + (li(sum(map(len, report.doctor.values())), "metastore finding")
                  if report.doctor is not None else "") + "</ul>")
    codes = "".join(f"<tr><td><a href='#rule-{c}'>{c}</a></td><td>{n:,}</td>"
                    f"<td>{html.escape(REGISTRY[c].summary) if c in REGISTRY else ''}</td></tr>"
                    for c, n in codes_found.items())
    rows = []
    for i, t in enumerate(report.tables):
        # the table's name (a guess from its path, which tables may share) leads to its
        # section, its path shown on hovering
        name = f"<tr><td><a href='#t{i}' title='{attr(t.url)}'>{text(t.name)}</a></td>"
        by_partition = t.counts_by_partition()
        for p in t.partitions:
            c = by_partition.get(p.url.rstrip("/")) or _NONE
            d = p.decision
            hms = "" if report.doctor is None else "<td>" + str(sum(
                f.partition in ("", p.partition) for f in report.doctor.get(t.name, []))) + "</td>"
            rows.append(f"{name}<td>{text(p.partition or '(table root)')}</td>"
                        f"<td>{text(p.base or '')}</td><td>{len(p.deltas)}</td>"
                        f"<td>{p.obsolete}</td><td>{p.aborted}</td><td>{p.files}</td>"
                        f"<td>{p.bytes}</td><td>{c['error']}</td><td>{c['warning']}</td>"
                        f"<td>{c['info']}</td><td>{(d.kind or '') if d else 'fails'}</td>"
                        f"{hms}</tr>")
    few = len(report.tables) <= 3  # a few tables' sections open; many, collapsed
    tables = "".join(_table_section(i, t, few, report.snapshot.hive_version,
                                    None if report.doctor is None else
                                    report.doctor.get(t.name, []))
                     for i, t in enumerate(report.tables))
    glossary = "".join(
        f"<div id='rule-{c}'><h4>{c} {html.escape(REGISTRY[c].summary)}</h4>"
        f"<p>{html.escape(REGISTRY[c].what)}</p><p><i>Why:</i> {html.escape(REGISTRY[c].why)}"
        f"</p><p><i>Fix:</i> {html.escape(REGISTRY[c].fix)}</p></div>"
        for c in codes_found if c in REGISTRY)
    title = text(", ".join(display(p) for p in report.paths))
    snap = report.snapshot.describe()
    snapshot = text("everything committed (no snapshot given)" if snap["source"] == "default"
                    else f"{snap.get('write_ids') or snap.get('txns')} ({snap['source']})")
    head = ["table", "partition", "base", "deltas", "obsolete", "aborted", "files", "bytes",
            "errors", "warnings", "info", "compaction"] + (
                ["metastore"] if report.doctor is not None else [])
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>acidtool report: {title}"
            f"</title><style>{_CSS}</style></head><body><h1>acidtool report</h1>"
            f"<p class=note>{title} &middot; Hive {report.snapshot.hive_version} &middot; "
            f"snapshot {snapshot}</p><h2>Summary</h2>{summary}"
            f"<table class=codes><tr><th>code</th><th>findings</th><th>rule</th></tr>{codes}"
            f"</table><h2>Partitions</h2><input id=filter placeholder='filter: any text of a "
            f"row' size=40> <span id=shown></span><table id=parts><thead><tr>"
            + "".join(f"<th data-col={i}>{h}</th>" for i, h in enumerate(head))
            + f"</tr></thead><tbody>{''.join(rows)}</tbody></table><h2>Tables</h2>{tables}"
            + (f"<h2>Outside every table</h2><ul class=found>{_findings(report.elsewhere)}</ul>"
               if report.elsewhere else "")
            + f"<h2>Rules found</h2>{glossary}<script>{_JS}</script></body></html>\n")


_NONE = dict.fromkeys(SEVERITIES, 0)


def _findings(findings) -> str:
    found = "".join(f"<li class={f.severity}><b>{f.code}</b> {f.severity}: "
                    f"{text(f.path)}<br>{text(f.message)}</li>" for f in findings[:FINDINGS])
    if len(findings) > FINDINGS:
        found += f"<li>... {len(findings) - FINDINGS:,} more (in --format json)</li>"
    return found


def _table_section(i: int, t, opened: bool, hive_version, hms: list | None = None) -> str:
    c = t.counts()
    found = _findings(t.findings)
    plan = "".join(f"<li><b>{p.decision.kind}</b> {text(p.partition or '(table root)')}: "
                   f"{text(p.decision.reason)}</li>" for p in t.due())
    drawn = [p.drawn for p in t.partitions if p.drawn is not None]
    lines = "".join(f"<li>{line}</li>" for line, _, _ in drawn)
    pic = picture(f"{display(t.url)} (Hive {hive_version})",
                  [(body, height) for _, body, height in drawn],
                  len(t.partitions) - len(drawn))
    return (f"<details id='t{i}'{' open' if opened else ''}><summary>{text(t.name)} &middot; "
            f"{text(t.url)} &middot; "
            f"{count(len(t.partitions), 'partition')}, {count(c['error'], 'error')}, "
            f"{count(c['warning'], 'warning')}</summary><ul>{lines}</ul>"
            f"<div class=pic>{pic}</div>"
            f"<h3>Findings</h3><ul class=found>{found or '<li>none</li>'}</ul>"
            f"<h3>Compactions due</h3><ul>{plan or '<li>none</li>'}</ul>"
            + ("" if hms is None else "<h3>The metastore against the files (doctor)</h3>"
               "<ul class=found>" + ("".join(
                   f"<li class={f.severity}><b>{f.code}</b> {f.severity}: "
                   f"{text(f.partition or '(table)')}<br>{text(f.message)}</li>" for f in hms)
                   or "<li>none</li>") + "</ul>")
            + "</details>")


_CSS = """body{font-family:sans-serif;margin:20px;color:#222}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:2px 6px;font-size:12px}th{background:#eee;cursor:pointer}
.sum li{display:inline-block;margin-right:18px}.error{color:#b00}.warning{color:#a60}
.note{color:#555}details{margin:6px 0;border:1px solid #ddd;padding:4px}
summary{cursor:pointer;font-weight:bold}.pic{overflow-x:auto}.found li{margin:3px 0}"""

# Sorting by a header's click, filtering by the text field: the page's only script, over the
# page's own text (textContent), never turning data into markup.
_JS = """(function(){var body=document.querySelector('#parts tbody');
var rows=Array.prototype.slice.call(body.rows);var shown=document.getElementById('shown');
function count(){var n=rows.filter(function(r){return r.style.display!=='none'}).length;
shown.textContent=n+' of '+rows.length+' partitions';}
document.getElementById('filter').addEventListener('input',function(e){var q=e.target.value
.toLowerCase();rows.forEach(function(r){r.style.display=r.textContent.toLowerCase()
.indexOf(q)>=0?'':'none'});count();});
document.querySelectorAll('#parts th').forEach(function(th){var asc=true;
th.addEventListener('click',function(){var c=+th.dataset.col;rows.sort(function(a,b){
var x=a.cells[c].textContent,y=b.cells[c].textContent,nx=parseFloat(x),ny=parseFloat(y);
var r=(!isNaN(nx)&&!isNaN(ny))?nx-ny:x.localeCompare(y);return asc?r:-r});asc=!asc;
rows.forEach(function(r){body.appendChild(r)});});});count();
function reveal(){var d=location.hash&&document.getElementById(location.hash.slice(1));
if(d&&d.tagName==='DETAILS'){d.open=true;d.scrollIntoView();}}
window.addEventListener('hashchange',reveal);reveal();})();"""

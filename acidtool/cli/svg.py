"""``ls --format svg``: a table's history drawn, one panel a partition, on a write-id axis.

Bases, deltas and delete deltas are bars over the write ids they hold (a base from 0), lanes
stacked so that none overlaps another (two statements of one write id sit one above the
other). What the snapshot reads is solid; what it skips is pale and hatched, labelled with its
status (obsolete, aborted, ignored...); original and foreign files stand left of the axis.
Every bar has a tooltip (its name, status, reason, files and bytes). A partition of more
directories than a panel holds keeps its read directories as bars and sums the others up per
status in one bar each; a long selection is drawn as runs of deltas; more partitions than a
picture holds are counted at its foot. Every label is escaped for XML: a file name is text,
never markup. No script, no link, no external reference: the picture is inert.
"""

from __future__ import annotations

import re
from xml.sax.saxutils import escape

from .app import emit, note, write_whole
from .escapes import display, escape_surrogates
from .output import partition_line
from .svg_bars import bars_of, fit, lanes, ticks

WIDTH = 960
LEFT = 150  # the originals' column and the lane labels
RIGHT = 34
LANE = 18
MAX_PANELS = 40
COLORS = {"base": "#4c78a8", "delta": "#59a14f", "delete_delta": "#e15759"}
STATUS_STYLE = {
    "selected": "",
    "obsolete": "fill-opacity:0.25",
    "aborted": "fill-opacity:0.2;stroke:#b00;stroke-dasharray:3 2",
    "ignored": "fill-opacity:0.12;stroke-dasharray:2 2",
}


# what XML 1.0 cannot hold at all, escaped or not
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def text(value: object) -> str:
    """A value as XML character data: terminal controls and lone surrogates made visible
    (as ``ls`` prints them), characters XML cannot hold as ``\\uXXXX``, then markup
    characters escaped."""
    value = str(value)
    if value.isascii() and value.isprintable():  # the usual label, checked in C
        return escape(value)
    shown = escape_surrogates(display(value))
    return escape(_NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", shown))


def attr(value: object) -> str:
    """A value as ``text`` makes it, fit to stand in a quoted attribute (either quote)."""
    return text(value).replace('"', "&quot;").replace("'", "&#x27;")


def table_svg(table, max_panels: int = MAX_PANELS) -> str:
    """The picture of an ``ls`` report (a ``TableState``), of ``max_panels`` partitions at
    most (the others counted at its foot)."""
    shown = table.partitions[:max_panels]
    return picture(f"{display(table.location.url)} (Hive {table.snapshot.hive_version})",
                   [panel(p) for p in shown], len(table.partitions) - len(shown),
                   len(table.stray))


def picture(title: str, panels: list[tuple[str, int]], more: int = 0, stray: int = 0) -> str:
    """Panels (``panel``'s) one below the other under ``title``, then a count of the
    ``more`` partitions not drawn and of the ``stray`` paths outside every partition."""
    out, y = [], 58
    for body, height in panels:
        out.append(f'<g transform="translate(0,{y})">\n{body}\n</g>')
        y += height + 24
    if more > 0:
        out.append(f'<text x="10" y="{y + 4}" class="note">... and {more:,} more partitions '
                   "(acidtool ls --format json lists every one)</text>")
        y += 24
    if stray:
        out.append(f'<text x="10" y="{y + 4}" class="note">{stray:,} paths lie '
                   "outside every partition: Hive never reads them</text>")
        y += 24
    title = text(title)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{y + 10}" '
            f'viewBox="0 0 {WIDTH} {y + 10}" font-family="sans-serif" font-size="11">\n'
            f"<title>{title}</title>\n{_STYLE}\n"
            f'<text x="10" y="20" class="title">{title}</text>\n'
            f"{_LEGEND}\n" + "\n".join(out) + "\n</svg>\n")


_LEGEND = "".join(
    f'<rect x="{x}" y="28" width="14" height="10" fill="{fill}" stroke="#333" '
    f'stroke-width="0.5" style="{style}"/>' + (f'<rect x="{x}" y="28" width="14" height="10" '
                                               'class="skip"/>' if hatch else "")
    + f'<text x="{x + 18}" y="37" class="note">{label}</text>'
    for x, fill, style, hatch, label in (
        (10, COLORS["base"], "", False, "base"), (70, COLORS["delta"], "", False, "delta"),
        (130, COLORS["delete_delta"], "", False, "delete delta"),
        (230, "#999", "", False, "solid: read by the snapshot"),
        (420, "#999", STATUS_STYLE["obsolete"], True,
         "pale, hatched: skipped (obsolete, aborted, ignored; see its label)")))

_STYLE = """<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" \
patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#666" \
stroke-width="1"/></pattern></defs>
<style>.title{font-size:14px;font-weight:bold}.head{font-size:12px;font-weight:bold}\
.note{fill:#444;font-style:italic}.axis{stroke:#999}.lab{fill:#222}\
.skip{fill:url(#hatch)}</style>"""


def panel(p, line: str | None = None) -> tuple[str, int]:
    """A partition (a ``PartitionState``) drawn from y 0 down, and the height it takes;
    ``line``: its ``ls`` line as XML text, where the caller has it."""
    s = p.state
    if line is None:
        line = text(partition_line(p).splitlines()[0])
    out = [f'<text x="10" y="0" class="head">{text(p.partition or "(table root)")}</text>',
           f'<text x="10" y="14" class="note">{line}</text>']
    if s.error is not None:
        out.append(f'<text x="10" y="30" fill="#b00">Hive fails here: '
                   f"{text(s.error.message)}</text>")
        return "\n".join(out), 40
    bars = bars_of(s.entries)
    loose = [e for e in s.entries if e.parsed is None and e.kind not in ("hidden",)]
    high = max([b.high for b in bars] + [1])
    rows = lanes(bars)
    y0 = 28
    scale = (WIDTH - LEFT - RIGHT) / (high + 1)

    def x(w: int) -> float:
        return LEFT + w * scale

    for lane, row in enumerate(rows):
        y = y0 + lane * LANE
        for b in row:
            x1, x2 = x(b.low), x(b.high + 1)
            box = f'<rect x="{x1:.1f}" y="{y}" width="{max(x2 - x1, 2):.1f}" height="{LANE - 4}" '
            out.append(f"<g><title>{text(b.tip)}</title>{box}fill=\"{COLORS[b.kind]}\" "
                       'stroke="#333" stroke-width="0.5" '
                       f'style="{STATUS_STYLE.get(b.status, "fill-opacity:0.12")}"/>'
                       + (f'{box}class="skip"/>' if b.status != "selected" else "")
                       + f'<text x="{x1 + 3:.1f}" y="{y + 11}" class="lab">'
                       f"{text(fit(b.label, x2 - x1))}</text></g>")
    bottom = y0 + max(len(rows), 1) * LANE
    out.append(f'<line x1="{LEFT}" y1="{bottom}" x2="{WIDTH - RIGHT}" y2="{bottom}" '
               'class="axis"/>')
    for w in ticks(high):
        out.append(f'<text x="{x(w):.1f}" y="{bottom + 12}" class="note">{w}</text>')
    for i, e in enumerate(loose[:8]):
        what = "foreign" if e.foreign else e.status
        out.append(f'<g><title>{text(f"{e.name}: {what}: {e.reason}")}</title>'
                   f'<text x="10" y="{y0 + i * LANE + 11}" '
                   f'fill="{"#c60" if e.foreign else "#555"}">'
                   f"{text(fit(f'{e.name} ({what})', LEFT - 14))}</text></g>")
    if len(loose) > 8:
        out.append(f'<text x="10" y="{y0 + 8 * LANE + 11}" class="note">'
                   f"... {len(loose) - 8:,} more files</text>")
    height = max(bottom + 16, y0 + min(len(loose), 9) * LANE)
    return "\n".join(out), height


def ls_svg(path: str, snapshot, ignore_empty_files: bool, output: str | None):
    """``ls --format svg``: the picture printed, or written to ``output``; the table state."""
    from ..table.ls import inspect_table, with_read_failures

    state = with_read_failures(inspect_table(path, snapshot,
                                             ignore_empty_files=ignore_empty_files))
    picture = table_svg(state)
    if output and output != "-":  # (-: standard output, as without --output)
        write_whole(output, picture.encode())
        note(f"wrote {output}")
    else:
        emit(picture.rstrip("\n"))
    return state

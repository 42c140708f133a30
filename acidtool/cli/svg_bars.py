"""The bars of ``ls --format svg`` (``svg.py`` draws them): a directory each, or past
``MAX_BARS`` the read ones (as runs when many) and one per status for the rest; their lanes,
the axis's ticks, and labels cut to the room a bar has."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.names import Base, Delta
from .output import count, human_bytes

MAX_BARS = 60  # directories a panel draws one by one


@dataclass
class Bar:
    kind: str  # base, delta, delete_delta
    low: int
    high: int
    status: str
    label: str
    tip: str


def bars_of(entries) -> list[Bar]:
    """A bar for each directory; above MAX_BARS, the read ones (in runs, if many) and one bar
    per status for the others."""
    each = []
    for e in entries:
        d = e.parsed
        if d is None:
            continue
        if isinstance(d, Base):
            kind, low, high = "base", 0, d.write_id
        elif isinstance(d, Delta):
            kind = "delete_delta" if d.delete else "delta"
            low, high = d.min_write_id, d.max_write_id
        else:
            continue
        size = human_bytes(e.size)
        tip = f"{e.name}: {e.status}, {e.reason}; {count(e.file_count, 'file')}, {size}"
        each.append((Bar(kind, low, high, e.status, f"{e.name} {size}", tip), e.size))
    if len(each) <= MAX_BARS:
        return [b for b, _ in each]
    read = [(b, size) for b, size in each if b.status == "selected"]
    bars = _runs(read) if len(read) > MAX_BARS // 2 else [b for b, _ in read]
    by_status: dict[tuple[str, str], list] = {}
    for b, size in each:
        if b.status != "selected":
            by_status.setdefault((b.status, b.kind), []).append((b, size))
    for (status, kind), group in sorted(by_status.items()):
        low = min(b.low for b, _ in group)
        high = max(b.high for b, _ in group)
        size = sum(sz for _, sz in group)
        label = f"{len(group):,} {status} {kind} directories, {human_bytes(size)}"
        bars.append(Bar(kind, low, high, status, label,
                        f"{label}; write ids {low}..{high}"))
    return bars


def _runs(read: list) -> list[Bar]:
    """Many read directories as MAX_BARS // 2 runs of consecutive ones, per kind."""
    out = []
    for kind in ("base", "delta", "delete_delta"):
        mine = sorted((x for x in read if x[0].kind == kind), key=lambda x: x[0].low)
        if not mine:
            continue
        per = max(1, -(-len(mine) // (MAX_BARS // 2)))
        for i in range(0, len(mine), per):
            chunk = mine[i:i + per]
            low, high = chunk[0][0].low, max(b.high for b, _ in chunk)
            size = sum(sz for _, sz in chunk)
            label = f"{len(chunk):,} {kind}s, {human_bytes(size)}" if len(chunk) > 1 \
                else chunk[0][0].label
            out.append(Bar(kind, low, high, "selected", label,
                           f"{len(chunk):,} read {kind} directories, write ids {low}..{high}, "
                           f"{human_bytes(size)}"))
    return out


def lanes(bars: list[Bar]) -> list[list[Bar]]:
    """Bars in lanes, bases first, then deltas, then delete deltas, none overlapping another
    in its lane (first fit in write-id order)."""
    order = {"base": 0, "delta": 1, "delete_delta": 2}
    lanes: list[list[Bar]] = []
    kinds: list[str] = []
    for b in sorted(bars, key=lambda b: (order[b.kind], b.low, b.high)):
        for lane, kind in zip(lanes, kinds):
            if kind == b.kind and lane[-1].high < b.low:
                lane.append(b)
                break
        else:
            lanes.append([b])
            kinds.append(b.kind)
    return lanes


def ticks(high: int) -> list[int]:
    if high <= 10:
        return list(range(0, high + 1))
    step = 10 ** (len(str(high)) - 1)
    while high // step < 4:
        step //= 2 or 1
    return list(range(0, high + 1, max(step, 1)))


def fit(label: str, width: float) -> str:
    """As much of ``label`` as fits in ``width`` pixels (about 6 a character)."""
    room = int(width // 6.2)
    if room < 5:  # a fragment says nothing: the tooltip has it all
        return ""
    return label if len(label) <= room else label[:max(room - 1, 0)] + "…"

"""What ``acidtool repair`` would do about validate's findings: a plan, as a value (no IO).

Each rule declares its repair with it (``Repair(kind, text, planner)`` in ``rules/*.py``; the
planners are in ``rules/repairs.py``): AUTO and OPT_IN rules have a planner, which given a finding
and the facts of its partition returns an ``Action`` (a change proven safe from those facts) or a
``Manual`` item (what a person has to decide, and why); a MANUAL rule's findings go to a person
with its ``manual`` text. Here the planners' answers become one plan: an action per target at
most, compactions last. Nothing here reads or writes; ``commands/repair/plan.py`` gathers the
facts and ``commands/repair/apply.py`` carries a plan out. The plan's values (one class per kind
of action) are in ``actions.py``.
"""

from __future__ import annotations

from dataclasses import replace

from .actions import (  # the plan's values (re-exported)
    Action,
    Compact,
    Manual,
    Quarantine,
    RebuildKeyIndex,
    RecoverStreaming,
    RenameFile,
    Rewrap,
    SortEvents,
    WriteMarker,
)
from .facts import PartitionFacts
from .rules import REGISTRY, Finding
from .rules.registry import RepairKind
from .rules.repairs import Planned, RepairContext, relative, within

__all__ = ["OPT_IN", "QUARANTINE_DIR", "Action", "Compact", "Manual", "Planned", "Quarantine",
           "RebuildKeyIndex", "RecoverStreaming", "RenameFile", "RepairContext", "RepairKind",
           "Rewrap", "SortEvents", "WriteMarker", "plan_findings", "relative", "within"]

QUARANTINE_DIR = ".acidtool-quarantine"  # hidden from Hive by its "." (hiddenFileFilter)

# The repairs that run only when --select names their rule, and what the person opts into:
# right only when the person knows the table's readers (ACID021), accepts losing an unflushed
# tail (ACID022), or wants the compaction run (ACID024).
OPT_IN = {code: r.repair.opt_in for code, r in REGISTRY.items() if r.repair.opt_in}


def plan_findings(findings: list[tuple[Finding, PartitionFacts, str]], ctx: RepairContext
                  ) -> tuple[list[Action], list[Manual]]:
    """The plan for findings (each with its partition's facts and that partition's path below
    PATH): one action per target at most (the first finding that plans one; the others on the
    same target are ``covers``), and what is left to a person."""
    actions: dict[str, Action] = {}
    manual: list[Manual] = []
    pending_manual: list[tuple[str, Manual]] = []
    taken: set[str] = set()  # names new files and directories will have
    rewrapped: dict[str, str] = {}  # fingerprint -> the file this plan re-wraps
    for f, p, part in findings:
        rel = relative(f.path, p, part)
        if rel in actions:
            a = actions[rel]
            if f.code != a.code and f.code not in a.covers:
                actions[rel] = replace(a, covers=a.covers + (f.code,))
            continue
        repair = REGISTRY[f.code].repair
        fn = repair.planner
        if fn is None:
            if f.severity != "info":
                pending_manual.append((rel, Manual(f.code, rel,
                                                   f"{f.message}; {repair.manual}")))
            continue
        out = fn(f, p, part, replace(ctx, taken=frozenset(taken), rewrapped=dict(rewrapped)))
        if isinstance(out, Action):
            actions[rel] = replace(out, id=f"a{len(actions) + 1}")
            if out.dest:
                taken.add(out.dest)
            if isinstance(out, Rewrap) and out.source_sha256:
                rewrapped[out.source_sha256] = rel
        elif isinstance(out, Manual):
            pending_manual.append((rel, out))
    for rel, m in pending_manual:
        if rel not in actions:
            manual.append(m)
    # compactions last (they read what the other actions leave), numbered in that order
    ordered = sorted(actions.values(), key=lambda a: isinstance(a, Compact))
    return [replace(a, id=f"a{i}") for i, a in enumerate(ordered, 1)], _unique(manual)


def _unique(items: list[Manual]) -> list[Manual]:
    seen, out = set(), []
    for m in items:
        if (m.code, m.target) not in seen:
            seen.add((m.code, m.target))
            out.append(m)
    return out

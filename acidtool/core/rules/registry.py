"""The rule registry (plain declarations: code, name, severity, level, documentation, check)
and the runner that applies the selected rules to a table's facts.

A check receives its ``Rule`` and makes findings with ``rule.finding(...)``. A partition rule
checks one partition's facts; a table rule gathers values from each partition (partitions may
be read in other processes) and checks them all at once.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from ..facts import Context, PartitionFacts, TableFacts, url_of
from .index import forget_index

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str
    path: str
    message: str
    details: dict = field(default_factory=dict, compare=False)


class RepairKind(str, enum.Enum):
    AUTO = "auto"  # `repair --apply` acts (some repairs wait until a leftover is --min-age old)
    OPT_IN = "opt-in"  # it acts only when --select names the rule
    MANUAL = "manual"  # left to a person: the plan says what to do, and why


@dataclass(frozen=True)
class Repair:
    """What `acidtool repair` does about a rule's findings, declared with the rule: its kind,
    the text `acidtool explain` prints, and the planner that does it (``rules/repairs.py``;
    none for ``MANUAL``, whose ``manual`` says what goes to a person)."""

    kind: RepairKind
    text: str
    planner: Callable | None = field(default=None, repr=False, compare=False)
    manual: str = "no automatic repair for this rule"
    opt_in: str | None = None  # what --select opts into (OPT_IN, or part of an AUTO repair)
    waits_for_age: bool = False  # a leftover a running job may still own: --min-age first

    def problem(self) -> str | None:
        """What is wrong with this declaration, if anything."""
        if not self.text:
            return "does not say what `acidtool repair` does about it"
        if (self.kind is RepairKind.MANUAL) != (self.planner is None):
            return "a planner goes with an AUTO or OPT_IN repair, and only with one"
        if self.kind is RepairKind.OPT_IN and not self.opt_in:
            return "an OPT_IN repair says what --select opts into"
        if self.kind is RepairKind.MANUAL and (self.opt_in or self.waits_for_age):
            return "a MANUAL repair neither opts in nor waits"
        return None


AUTO, OPT_IN, MANUAL = RepairKind.AUTO, RepairKind.OPT_IN, RepairKind.MANUAL


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str
    level: str  # the lowest --level at which it runs
    summary: str
    what: str
    why: str
    example: str
    fix: str
    # check(rule, partition facts, ctx), or for a table rule check(rule, gathered, ctx)
    check: Callable[..., Iterable[Finding]] = field(repr=False, compare=False)
    # A table-wide rule gathers values from each partition (``gather(p, ctx)``, a list) and
    # checks them all at once (``check(gathered, ctx)``): partitions may be read in other
    # processes. A partition rule has none and checks one partition (``check(p, ctx)``).
    gather: Callable[[PartitionFacts, Context], list] | None = field(default=None, repr=False,
                                                                     compare=False)
    # What `acidtool repair` does about a finding (its kind, text and planner), or why it
    # leaves it to a person; declared by every rule, next to its check.
    repair: Repair = field(default=Repair(MANUAL, ""), compare=False)
    # A table rule over what lies in no partition of a partitioned table (``check(stray urls,
    # ctx)``): data Hive never reads, however the partitions were checked.
    stray: bool = False

    @property
    def opt_in(self) -> str | None:
        return self.repair.opt_in

    @property
    def waits_for_age(self) -> bool:
        return self.repair.waits_for_age

    def run(self, facts, ctx: Context) -> Iterable[Finding]:
        """The findings over one partition's facts (or, for a table rule, what it gathered)."""
        return self.check(self, facts, ctx)

    def finding(self, path: str, message: str, severity: str | None = None,
                **details) -> Finding:
        return Finding(self.code, severity or self.severity, path, message, details)


REGISTRY: dict[str, Rule] = {}


def rule(code, name, severity, level, summary, *, what, why, example, fix, repair: Repair,
         gather=None, stray=False):
    def register(fn):
        if code in REGISTRY:
            raise ValueError(f"rule code {code} registered twice")
        problem = repair.problem()
        if problem:
            raise ValueError(f"rule {code}'s repair {problem}")
        REGISTRY[code] = Rule(code, name, severity, level, summary, what, why, example, fix, fn,
                              gather, repair, stray)
        return fn
    return register


def in_code_order() -> None:
    """The registry in code order, whichever module registered a rule first."""
    ordered = sorted(REGISTRY.items())
    REGISTRY.clear()
    REGISTRY.update(ordered)




# ------------------------------------------------------------------------------------------------
# Running the rules


def run_rules(table: TableFacts, ctx: Context, selected: Iterable[str] | None = None
              ) -> list[Finding]:
    """Every selected rule whose level is reached, over every partition, in code order."""
    codes = sorted(REGISTRY if selected is None else selected)
    out, gathered = check_partitions(table.partitions, ctx, codes)
    out.extend(check_table(gathered, ctx, codes, [url_of(table.url, s) for s in table.stray]))
    out.sort(key=lambda f: f.code)  # stable: within a code, partitions in order
    return out


def check_partitions(partitions: Iterable[PartitionFacts], ctx: Context, codes: Iterable[str]
                     ) -> tuple[list[Finding], dict[str, list]]:
    """``check_partition`` over several partitions of one table: the findings of all, and
    what the table rules gathered from all."""
    codes = list(codes)
    out: list[Finding] = []
    gathered: dict[str, list] = {}
    for p in partitions:
        found, values = check_partition(p, ctx, codes)
        out.extend(found)
        add_gathered(gathered, values)
    return out, gathered


def check_partition(p: PartitionFacts, ctx: Context, codes: Iterable[str]
                    ) -> tuple[list[Finding], dict[str, list]]:
    """The findings of the partition rules in ``codes`` over ``p``, and what each table rule
    gathers from it (for ``check_table``, once every partition is gathered)."""
    found: list[Finding] = []
    gathered: dict[str, list] = {}
    forget_index(p)  # left by an object that had this id before, if any
    try:
        for code in codes:
            r = REGISTRY[code]
            if not ctx.at_least(r.level) or r.stray:
                continue
            if r.gather is None:
                found.extend(r.run(p, ctx))
            else:
                gathered[code] = r.gather(p, ctx)
    finally:
        forget_index(p)  # the partition's lookups are done with
    return found, gathered


def stray_values(urls: Sequence[str], ctx: Context, codes: Iterable[str]) -> dict[str, list]:
    """What a share of a table found outside every partition, as the values its stray rules
    gather (``check_table`` judges them with the rest)."""
    return {code: list(urls) for code in codes
            if REGISTRY[code].stray and ctx.at_least(REGISTRY[code].level) and urls}


def add_gathered(into: dict[str, list], values: dict[str, list]) -> None:
    for code, items in values.items():
        into.setdefault(code, []).extend(items)


def check_table(gathered: dict[str, list], ctx: Context, codes: Iterable[str],
                stray: Sequence[str] = ()) -> list[Finding]:
    """The findings of the table rules in ``codes`` over what they gathered from every
    partition of one table, and over what lies in none of its partitions (``stray``,
    URLs)."""
    out: list[Finding] = []
    for code in codes:
        r = REGISTRY[code]
        if not ctx.at_least(r.level):
            continue
        if r.stray:  # what the caller found outside every partition, and what shares did
            out.extend(r.run(list(stray) + gathered.get(code, []), ctx))
        elif r.gather is not None:
            out.extend(r.run(gathered.get(code, []), ctx))
    return out

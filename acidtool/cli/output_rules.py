"""Text and JSON of the rules: `acidtool rules` (validate's and doctor's) and `explain`."""

from __future__ import annotations

from .output import dumps, tabulate


def rules_table(fmt: str) -> str:
    """validate's rules, then doctor's (their level: "doctor", the command that runs them)."""
    from ..core.doctor import HMS_RULES
    from ..core.rules import REGISTRY

    rows = [[r.code, r.name, r.severity, r.level, r.summary] for r in REGISTRY.values()] + \
        [[r.code, r.name, r.severity, "doctor", r.summary] for r in HMS_RULES.values()]
    if fmt == "json":
        return dumps([dict(zip(("code", "name", "severity", "level", "summary"), row))
                      for row in rows], max_depth=1)
    return tabulate(rows, headers=["code", "name", "severity", "level", "summary"])


def explain_text(code: str) -> str:
    from ..core.doctor import HMS_RULES
    from ..core.rules import REGISTRY

    if code in HMS_RULES:
        h = HMS_RULES[code]
        return "\n".join([f"{h.code} {h.name} ({h.severity}, found by `acidtool doctor`)", "",
                          h.summary + ".", "", "What it checks:", "  " + h.what, "",
                          "Why Hive cares:", "  " + h.why, "", "How to fix:", "  " + h.fix])
    r = REGISTRY[code]
    return "\n".join([
        f"{r.code} {r.name} ({r.severity}, from --level {r.level})",
        "",
        r.summary + ".",
        "",
        "What it checks:", "  " + r.what,
        "",
        "Why Hive cares:", "  " + r.why,
        "",
        "Example:", "  " + r.example,
        "",
        "How to fix:", "  " + r.fix,
        "",
        f"What `acidtool repair` does ({_REPAIR_KIND[r.repair.kind.value]}):",
        "  " + r.repair.text,
    ])


_REPAIR_KIND = {"auto": "automatic", "opt-in": "only when --select names the rule",
                "manual": "left to a person"}

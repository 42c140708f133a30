"""How repair's plans, applies and undos are shown: text for people, JSON for scripts.

One ``Output`` per run, chosen once from ``--format`` (as pyiceberg's CLI chooses its output):
the command hands it results and never asks which format it is.
"""

from __future__ import annotations

from .output import count, display, tabulate


def plan_json(plan) -> dict:
    return plan.as_dict()


def _actions_table(actions) -> str:
    rows = [[a.id, a.code, a.kind, display(a.target + (f" -> {a.dest}" if a.dest else "")),
             a.result, display(a.reason)] for a in actions]
    return tabulate(rows, headers=["id", "code", "kind", "target", "result", "reason"],
                    tablefmt="plain")


def _manual_lines(manual) -> list[str]:
    return [f"  {m.code}  {display(m.target)}: {display(m.reason)}" for m in manual]


def plan_text(plan) -> str:
    head = f"{display(plan.path)} (Hive {plan.hive_version}): "
    if plan.clean:
        return head + "nothing to repair"
    lines = [head + f"{count(len(plan.actions), 'action')} planned, "
             f"{count(len(plan.manual), 'finding')} for a person"]
    if plan.actions:
        lines += ["", _actions_table(plan.actions)]
    if plan.manual:
        lines += ["", "for a person (not repaired automatically):", *_manual_lines(plan.manual)]
    if plan.actions:
        lines += ["", f"quarantine: {display(plan.quarantine.url)}",
                  f"journal:    {display(plan.journal)}",
                  "Nothing was changed. Run again with --apply to carry the plan out "
                  "(`acidtool undo JOURNAL` reverses it)."]
    return "\n".join(lines)


def apply_json(result) -> dict:
    from ..commands.repair.plan import with_results

    doc = with_results(result.plan, result.results).as_dict()
    after = result.after
    doc["left"] = [a.as_dict() for a in after.actions] if after is not None else []
    doc["manual"] = [m.as_dict() for m in after.manual] if after is not None else doc["manual"]
    doc["applied"] = True
    if not result.written:  # nothing to do: no journal, no quarantine were made
        doc["journal"] = doc["quarantine"] = None
    doc["resumed"] = result.resumed
    if result.transaction is not None:
        doc["transaction"] = result.transaction
    return doc


def apply_text(result) -> str:
    plan, after = result.plan, result.after
    if not plan.actions and not result.resumed and after is not None and after.clean:
        return f"{display(plan.path)} (Hive {plan.hive_version}): nothing to repair"
    done = sum(1 for r, _ in result.results.values() if r == "done")
    failed = sum(1 for r, _ in result.results.values() if r == "failed")
    lines = [f"{display(plan.path)} (Hive {plan.hive_version}): {done} of "
             f"{count(len(plan.actions), 'action')} done" + (f", {failed} failed (rolled back)"
                                                             if failed else "")
             + (" (an interrupted apply was finished)" if result.resumed else "")]
    if plan.actions:
        from ..commands.repair.plan import with_results

        lines += ["", _actions_table(with_results(plan, result.results).actions)]
    if after is not None and after.actions:
        lines += ["", "still to repair:", *[f"  {a.code}  {display(a.target)}: "
                                            f"{display(a.reason)}" for a in after.actions]]
    if after is not None and after.manual:
        lines += ["", "for a person (not repaired automatically):", *_manual_lines(after.manual)]
    if after is not None and after.clean:
        lines += ["", "the table validates clean for every rule repair looked at"]
    if result.written:
        lines += ["", f"quarantine: {display(plan.quarantine.url)}",
                  f"journal:    {display(plan.journal)}",
                  f"undo with:  acidtool undo {display(plan.journal)}"]
    else:
        lines += ["", "nothing was changed (no action to take): no journal was written"]
    return "\n".join(lines)


def undo_text(result) -> str:
    if not result.path:
        return (f"{display(result.journal)} is empty: the run it belongs to was stopped before "
                "it changed anything; nothing to undo")
    if result.ok and not result.reversed:
        return (f"{display(result.path)}: nothing to restore (every step the journal records "
                f"is reversed already); journal {display(result.journal)}")
    if result.ok:
        moved = (f"\nthe sources this convert moved (--move-sources) are still in "
                 f"{display(result.sources_moved_to)}, listed in its acidtool-manifest-*.jsonl: "
                 "move them back, and the manifest aside, to load them again"
                 ) if result.sources_moved_to else ""
        return (f"{display(result.path)}: restored ({count(result.reversed, 'journaled step')} "
                f"reversed); journal {display(result.journal)}{moved}")
    if result.refused:
        return "\n".join([f"{display(result.path)}: undo refused, nothing was changed: "
                          f"{result.refused}:", *[f"  {display(p)}" for p in result.problems]])
    return "\n".join([f"{display(result.path)}: NOT fully restored; "
                      f"{count(len(result.problems), 'problem')}:",
                      *[f"  {display(p)}" for p in result.problems]])

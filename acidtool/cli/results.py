"""One Output: how a command shows its result, chosen once per run from ``--format``
(``output_for``). ``Output`` writes text for people, ``JsonOutput`` the same results as JSON
documents; each has one method per kind of result, and a command hands its typed result to it.
The formatters are pure functions (``output.py``, ``output_repair.py``, ``output_writes.py``,
``output_plans.py``); the few formats only some commands have (validate's JSONL, JUnit and
GitHub annotations, SQL, SVG, HTML) are declared and written by the command itself.

A new output format is a subclass here with a method for each kind of result; a new kind of
result is a method in both classes.
"""

from __future__ import annotations

from .app import emit, emit_json, emit_pieces


class Output:
    """Results as text for people (``--format text``, or ``table`` for the listings)."""

    def ls(self, state, files: bool, metastore: dict | None = None) -> None:
        from .output import ls_table

        emit(ls_table(state, files))

    def ls_tree(self, path: str, tables: list, files: bool) -> None:
        from .output import display, ls_table

        emit("\n\n".join(f"== {display(t.location.url)}\n{ls_table(t, files)}" for t in tables))

    def meta(self, files: list) -> None:
        from .output import meta_text

        if files:
            emit("\n\n".join(meta_text(m) for m in files))

    def validate(self, report) -> None:
        from .output import validate_text

        emit(validate_text(report))

    def decoded_buckets(self, rows: list[dict]) -> None:
        from .output import decoded_buckets_text

        emit(decoded_buckets_text(rows))

    def decoded_snapshot(self, decoded) -> None:
        from .output import decoded_snapshot_text

        emit(decoded_snapshot_text(decoded))

    def compaction_plan(self, plan) -> None:
        from .output_plans import plan_text

        emit(plan_text(plan))

    def upgrade(self, report) -> None:
        from .output_plans import upgrade_text

        emit(upgrade_text(report))

    def compact(self, plan, result=None) -> None:
        from .output_writes import compact_plan_text, compact_result_text

        emit(compact_plan_text(plan) if result is None else compact_result_text(result))

    def export(self, plan, result, dry_run: bool) -> None:
        from .output_writes import export_text

        emit(export_text(plan, result, dry_run))

    def convert(self, url: str, doc: dict, planned: bool) -> None:
        from .output import convert_plan_text, convert_summary_text

        emit(convert_plan_text(doc) if planned else convert_summary_text(url, doc))

    def repair_plan(self, plan) -> None:
        from .output_repair import plan_text

        emit(plan_text(plan))

    def repair_apply(self, result) -> None:
        from .output_repair import apply_text

        emit(apply_text(result))

    def undo(self, result) -> None:
        from .output_repair import undo_text

        emit(undo_text(result))

    def doctor(self, report) -> None:
        from .output_plans import doctor_text

        emit(doctor_text(report))

    def dml(self, path: str, result: dict) -> None:
        from .output_writes import dml_text

        emit(dml_text(path, result))


class JsonOutput(Output):
    """The same results as JSON documents (``--format json``), one per run."""

    def ls(self, state, files: bool, metastore: dict | None = None) -> None:
        from .output import ls_json_pieces

        emit_pieces(ls_json_pieces(state, files, metastore))

    def ls_tree(self, path: str, tables: list, files: bool) -> None:
        from .output import ls_json

        emit_json({"path": path, "tables": [ls_json(t, files) for t in tables]}, max_depth=5)

    def meta(self, files: list) -> None:
        from ..commands.inspect.meta import meta_json

        emit_json([meta_json(m) for m in files])

    def validate(self, report) -> None:
        from .output import validate_json

        emit_json(validate_json(report))

    def decoded_buckets(self, rows: list[dict]) -> None:
        emit_json(rows if len(rows) > 1 else rows[0])

    def decoded_snapshot(self, decoded) -> None:
        from .output import decoded_snapshot_json

        emit_json(decoded_snapshot_json(decoded))

    def compaction_plan(self, plan) -> None:
        from .output_plans import plan_json

        emit_json(plan_json(plan))

    def upgrade(self, report) -> None:
        from .output_plans import upgrade_json

        emit_json(upgrade_json(report))

    def compact(self, plan, result=None) -> None:
        from .output_writes import compact_json

        emit_json(compact_json(plan, result))

    def export(self, plan, result, dry_run: bool) -> None:
        from .output_writes import export_json

        emit_json(export_json(plan, result, dry_run))

    def convert(self, url: str, doc: dict, planned: bool) -> None:
        emit_json(doc)

    def repair_plan(self, plan) -> None:
        from .output_repair import plan_json

        emit_json(plan_json(plan))

    def repair_apply(self, result) -> None:
        from .output_repair import apply_json

        emit_json(apply_json(result))

    def undo(self, result) -> None:
        emit_json(result.as_dict())

    def doctor(self, report) -> None:
        emit_json(report.as_dict())

    def dml(self, path: str, result: dict) -> None:
        emit_json(result)


def output_for(fmt) -> Output:
    """The Output of a ``--format`` value (an enum's member or its string): JSON for "json",
    text for people otherwise."""
    return JsonOutput() if getattr(fmt, "value", fmt) == "json" else Output()

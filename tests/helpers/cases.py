"""Turning a conformance case of cases.json into the inputs and expectations of ``select``."""

from __future__ import annotations

from dataclasses import dataclass

from acidtool.core.listing import Listing
from acidtool.core.snapshot import ValidTxnList, ValidWriteIdList

# cases.json error kinds -> (our JSON error kind, the Hive exception class)
ERROR_KINDS = {
    "number_format": ("invalid_name", "java.lang.NumberFormatException"),
    "string_index_out_of_bounds": ("invalid_name", "java.lang.StringIndexOutOfBoundsException"),
    "not_enough_history": ("not_enough_history", "java.io.IOException"),
    "illegal_state_metadata_version": ("invalid_metadata", "java.lang.IllegalStateException"),
    "illegal_argument_data_format": ("invalid_metadata", "java.lang.IllegalArgumentException"),
    "illegal_argument_no_valid_txn_list": ("missing_txn_list", "java.lang.IllegalArgumentException"),
}


@dataclass
class CaseInputs:
    version: str
    listing: Listing
    write_ids: ValidWriteIdList | None
    txns: ValidTxnList | None
    ignore_empty_files: bool


def hive_version(case: dict) -> str:
    return "2" if case["hive_version"] == "2.3" else case["hive_version"]


def inputs(case: dict) -> CaseInputs:
    version = hive_version(case)
    cls = case["snapshot_class"]
    sizes = {p: 0 for p in case.get("empty_files", [])}
    markers = {p: c.encode() for p, c in case.get("file_contents", {}).items()}
    listing = Listing.from_paths(case["files"], sizes=sizes, markers=markers, root="/warehouse/tbl")
    if version == "2":
        snapshot = ValidTxnList.parse(case["valid_txn_list"], legacy=True,
                                      compactor=cls.startswith("ValidCompactor"))
        write_ids, txns = None, snapshot
    else:
        write_ids = (ValidWriteIdList.parse(case["valid_write_ids"],
                                            compactor=cls == "ValidCompactorWriteIdList")
                     if case["valid_write_ids"] is not None else None)
        txns = (ValidTxnList.parse(case["valid_txn_list"])
                if version == "4" and case["valid_txn_list"] is not None else None)
    return CaseInputs(version, listing, write_ids, txns,
                      case["options"].get("ignore_empty_files", False))


def expected(case: dict) -> dict:
    """What the case expects of acidtool. For Hive 4 we follow 4.0.x, which still has the
    "base at or below minOpenWriteId is valid" shortcut (hive-exec 4.0.1 gives that answer:
    tests/test_hive_selection.py); the spec's ``expected`` is the answer after HIVE-29601."""
    if hive_version(case) == "4" and "expected_with_min_open_shortcut" in case:
        return case["expected_with_min_open_shortcut"]
    return case["expected"]


def compare(case: dict, got: dict) -> list[str]:
    """Differences between a case's expectation and a result given as a JSON-like dict with keys
    base, deltas, obsolete, aborted, original_files, error ({kind, hive_exception, message})."""
    exp = expected(case)
    version = hive_version(case)
    problems = []

    def check(key, a, b):
        if a != b:
            problems.append(f"{key}: expected {a!r}, got {b!r}")

    if exp["error"]:
        kind, exc = ERROR_KINDS[exp["error"]]
        err = got.get("error") or {}
        check("error.kind", kind, err.get("kind"))
        check("error.hive_exception", exc, err.get("hive_exception"))
        message = case.get("expected_error_message")
        if message:
            prefix, _, base = message.partition("Oldest available base: ")
            got_msg = err.get("message", "")
            if not got_msg.startswith(prefix + "Oldest available base: "):
                problems.append(f"error.message: expected to start {prefix!r}, got {got_msg!r}")
            base_name = base.replace("Path: <dir>/", "").split(";")[0]
            if base_name not in got_msg:
                problems.append(f"error.message: {base_name!r} not named in {got_msg!r}")
        return problems
    check("error", None, got.get("error"))
    check("base", exp["base"], got["base"])
    check("deltas", exp["deltas"], list(got["deltas"]))
    check("obsolete", sorted(exp["obsolete"]), sorted(got["obsolete"]))
    check("aborted", sorted(exp["aborted"]), sorted(got["aborted"]))
    if version == "2":
        check("original_files", sorted(exp["original_files"]), sorted(got["original_files"]))
    else:
        check("original_files", exp["original_files"], list(got["original_files"]))
    if "uncompacted_aborts" in case and "uncompacted_aborts" in got:
        check("uncompacted_aborts", case["uncompacted_aborts"], got["uncompacted_aborts"])
    return problems

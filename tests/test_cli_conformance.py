"""The conformance cases again, this time as real directories through ``acidtool ls --format json``."""

import pytest

from .helpers.cases import compare, expected, hive_version
from .helpers.layout import build
from .helpers.runner import run
from .helpers.shared import case_params


@pytest.mark.parametrize("case", case_params("cases", "id"))
def test_ls_json_matches_case(case, tmp_path):
    if case["snapshot_class"].startswith("ValidCompactor"):
        pytest.skip("compactor snapshot classes are internal to Hive's compactor; the core "
                    "covers them (test_conformance_core), ls takes reader snapshots only")
    table = build(tmp_path / "tbl", case["files"], empty=case.get("empty_files", ()),
                  contents=case.get("file_contents"))
    args = ["ls", table, "--format", "json", "--hive-version", hive_version(case)]
    if case["valid_write_ids"] is not None:
        args += ["--write-ids", case["valid_write_ids"]]
    if case["valid_txn_list"] is not None:
        args += ["--txns", case["valid_txn_list"]]
    if case["options"].get("ignore_empty_files"):
        args.append("--ignore-empty-files")
    result = run(*args)
    doc = result.json()
    # 1 where Hive's getAcidState fails, or its reader then does (read_error: an original
    # file Hive 3 and 4 cannot number; test_hive_raw_files judges that by Hive's own reader)
    fails = expected(case)["error"] or doc["partitions"][0]["read_error"]
    # and 1 where the selection is half of a compaction: one of delta_M_N and delete_delta_M_N
    # hides the other kind's directories without its partner (Hive selects it all the same)
    halves = doc["partitions"][0].get("half_compactions")
    assert result.code == (1 if fails or halves else 0), result.err
    assert not halves or "testMinorCompactedDeltaMakesInBetweenDelteDeltaObsolete" in case["id"]
    assert len(doc["partitions"]) == 1
    part = doc["partitions"][0]
    assert part["partition"] == ""
    assert compare(case, part) == []

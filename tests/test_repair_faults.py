"""repair --apply killed (SIGKILL) at every fault point: after each journal record and after
each filesystem step. From every such state, undo restores the tree byte for byte, and running
--apply again finishes the repair. Plus random damaged tables: apply, validate clean, undo."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .helpers.layouts import MARK, ROW, acid, build, delta, events, plain
from .helpers.runner import acidtool_process as acidtool
from .helpers.runner import run
from .test_repair import age, n_rows, rows, tree

RAW = plain(ROW, [(10, "x"), (11, "y")])

# Each damage: (layout, write id it takes, rows it adds once repaired, paths to age)
DAMAGES = {
    "datax-root": ({"part-0000.orc": RAW}, [(10, "x"), (11, "y")], []),
    "raw-in-delta": ({"delta_0000002_0000002_0000/data__abc": plain(ROW, [(20, "p")]),
                      "delta_0000002_0000002_0000/_orc_acid_version": MARK}, [(20, "p")], []),
    "renamed": ({"delta_0000003_0000003_0000/bucket_00000.orc": acid(events(3)),
                 "delta_0000003_0000003_0000/_orc_acid_version": MARK}, n_rows([0, 1]), []),
    "no-marker": (delta("delta_0000004_0000004_0000", acid(events(4)), marker=False),
                  n_rows([0, 1]), []),
    "no-key-index": (delta("delta_0000005_0000005_0000", acid(events(5, 3),
                                                              with_key_index=False)),
                     n_rows([0, 1, 2]), []),
    "unsorted": (delta("delta_0000006_0000006_0000", acid([events(6, 3)[i] for i in (2, 0, 1)])),
                 n_rows([0, 1, 2]), []),
    "staging": ({".hive-staging_hive_1/-ext-10000/000000_0": b"x"}, [],
                [".hive-staging_hive_1"]),
}
BASE = delta("delta_0000001_0000001_0000")
OPTIONS = ["--write-id", "7"]


def make(root: Path, names) -> list:
    layout, expected, aged = dict(BASE), n_rows([0, 1]), []
    for name in names:
        more, added, old = DAMAGES[name]
        layout.update(more)
        expected += added
        aged += old
    build(root, layout)
    age(root, *aged)
    return sorted(expected)



FAULT_DAMAGES = ["datax-root", "renamed", "no-marker", "no-key-index", "staging"]


@pytest.mark.slow
def test_killed_at_every_fault_point_undo_restores_and_a_rerun_finishes(tmp_path):
    kills = 0
    for n in range(1, 200):
        case = tmp_path / f"k{n}"
        expected = make(case / "t", FAULT_DAMAGES)
        before = tree(case / "t")
        shutil.copytree(case, tmp_path / f"r{n}", symlinks=True)
        killed = acidtool("repair", case / "t", *OPTIONS, "--apply", kill_at=n,
                          state=case / "state")
        if killed.returncode != -9:
            assert killed.returncode == 0, killed.stderr
            break  # fewer fault points than n: the whole apply ran
        kills += 1
        journals = list((case / "state" / "journals").glob("*.jsonl"))
        if journals:
            undone = acidtool("undo", journals[0], state=case / "state")
            assert undone.returncode == 0, (n, undone.stdout, undone.stderr)
        assert tree(case / "t") == before, f"undo after a kill at fault point {n}"
        # the same kill, then --apply again: the repair is finished
        again = tmp_path / f"r{n}"
        assert acidtool("repair", again / "t", *OPTIONS, "--apply", kill_at=n,
                        state=again / "state").returncode == -9
        done = acidtool("repair", again / "t", *OPTIONS, "--apply", "--format", "json",
                        state=again / "state")
        assert done.returncode == 0, (n, done.stdout, done.stderr)
        assert rows(again / "t") == expected, n
        checked = acidtool("validate", again / "t", "--level", "rows", state=again / "state")
        assert checked.returncode == 0, (n, checked.stdout)
        # and undo of that journal puts back the table as it was before the first apply
        journal = next((again / "state" / "journals").glob("*.jsonl"))
        assert acidtool("undo", journal, state=again / "state").returncode == 0
        assert tree(again / "t") == before, f"undo after kill {n} and a finishing re-run"
        shutil.rmtree(case)
        shutil.rmtree(again)
    assert kills >= 15  # every journal record and step of five actions was a kill point


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sets(st.sampled_from(sorted(DAMAGES)), min_size=1))
def test_random_damaged_tables_repair_and_undo(tmp_path_factory, names):
    top = tmp_path_factory.mktemp("random")
    root = top / "t"
    expected = make(root, sorted(names))
    before = tree(root)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("ACIDTOOL_STATE_DIR", str(top / "state"))
        applied = run("repair", root, *OPTIONS, "--apply", "--format", "json")
        assert applied.code == 0, applied.out
        assert run("validate", root, "--level", "rows").code == 0
        assert rows(root) == expected
        assert run("undo", applied.json()["journal"]).code == 0
        assert tree(root) == before

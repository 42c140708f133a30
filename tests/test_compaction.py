"""compaction-plan against Hive's own Initiator (2.3.10, 3.1.3, 4.0.1): layouts built around
each threshold, and random ones, judged by acidtool and by ``determineCompactionType``."""

from __future__ import annotations

import random

import pytest

from acidtool.core.compaction import DELTA_NUM, DELTA_PCT, Settings, compactor_snapshot, decide
from acidtool.core.snapshot import make_snapshot
from acidtool.table.ls import inspect_table

from .helpers.initiator import hive_decision
from .helpers.layouts import MARK, acid, build, events, plain

pytestmark = pytest.mark.spark
HIVE = {"2": "2.3.10", "3": "3.1.3", "4": "4.0.1"}


@pytest.fixture(params=["2", "3", "4"], ids=lambda v: f"hive{HIVE[v]}")
def judge(request):
    """(version, jvm, gateway, base conf) of a Hive whose Initiator judges."""
    version = request.param
    if version == "2":
        spark = request.getfixturevalue("spark")
        return version, spark._jvm, spark.sparkContext._gateway, None
    hive = request.getfixturevalue("hive31" if version == "3" else "hive40")
    return version, hive.jvm, hive.gateway, hive.conf()


def _dir(name: str, wid_lo: int, wid_hi: int, rows: int, version: str, delete=False,
         insert_only=False) -> dict:
    if insert_only:  # values that do not compress to nothing
        return {f"{name}/000000_0": plain(rows=[(i * 7919 % 100003, f"x{i * i}")
                                               for i in range(rows)])}
    v0 = version == "2"
    op = 2 if delete else 0
    data = acid(events(wid_lo, rows, v0=v0, op=op))
    out = {f"{name}/bucket_00000": data}
    if version != "2":
        out[f"{name}/_orc_acid_version"] = MARK
    return out


def layout(rng: random.Random, version: str, insert_only: bool = False) -> dict:
    """A partition: maybe a base, maybe original files, deltas and delete deltas of random
    sizes, maybe an aborted delta and an obsolete base."""
    out: dict = {}
    wid = 1
    if rng.random() < 0.25:
        out["000000_0"] = plain(rows=[(i, "o") for i in range(rng.choice([1, 50, 400]))])
    if rng.random() < 0.6:
        top = rng.randint(1, 3)
        if rng.random() < 0.3 and top > 1:  # an older base, obsolete
            out.update(_dir(f"base_{top - 1:07d}", top - 1, top - 1, 5, version,
                            insert_only=insert_only))
        out.update(_dir(f"base_{top:07d}", top, top, rng.choice([10, 200, 2000, 20000]),
                        version, insert_only=insert_only))
        wid = top + 1
    for _ in range(rng.choice([0, 1, 2, 9, 10, 11, 12])):
        name = "delete_delta" if rng.random() < 0.2 and not insert_only else "delta"
        out.update(_dir(f"{name}_{wid:07d}_{wid:07d}_0000", wid, wid, rng.choice([1, 20, 300]),
                        version, delete=name == "delete_delta", insert_only=insert_only))
        wid += 1
    return out


def _snapshots(version: str, top: int) -> tuple[str, str]:
    """(acidtool's --write-ids/--txns value, the compactor's string Hive is given)."""
    if version == "2":
        snap = make_snapshot("2", txns=f"{top}:9223372036854775807:")
    else:
        snap = make_snapshot(version, write_ids=f"db.t:{top}:9223372036854775807::")
    c = compactor_snapshot(snap)
    return snap, str(c.write_ids if c.write_ids is not None else c.txns)


SEEDS = 60
SEEN: dict[str, set] = {}


@pytest.mark.parametrize("seed", range(SEEDS))
def test_the_initiator_and_acidtool_decide_alike(judge, tmp_path, seed):
    """Random partitions around the thresholds (9 to 12 deltas against 10, ratios around the
    percentage), some insert-only (3.1 and 4.0), some with the table's own
    ``compactorthreshold.*`` properties."""
    version, jvm, gateway, base_conf = judge
    rng = random.Random(seed * 7 + int(version))
    insert_only = version != "2" and rng.random() < 0.25
    table = build(tmp_path / "t", layout(rng, version, insert_only))
    settings = {DELTA_NUM: rng.choice([10, 2]), DELTA_PCT: rng.choice([0.1, 0.5, 0.01])}
    properties = {"transactional": "true"}
    if insert_only:
        properties["transactional_properties"] = "insert_only"
    if rng.random() < 0.2:
        properties["compactorthreshold." + DELTA_NUM] = str(rng.choice([1, 3]))
    snap, compactor = _snapshots(version, 100)
    hive = hive_decision(jvm, gateway, version, table, compactor, settings=settings,
                         properties=properties, base_conf=base_conf)
    state = inspect_table(str(table), compactor_snapshot(snap)).partitions[0].state
    ours = decide(state, version, Settings.of(**settings).for_table(properties),
                  insert_only=insert_only)
    assert (ours.kind or "").upper() == (hive or ""), (ours, sorted(p.name for p in
                                                                    table.iterdir()))
    SEEN.setdefault(version, set()).add(hive)
    if seed == SEEDS - 1:  # the layouts reached more than one answer (CASES reach each)
        assert len(SEEN[version]) >= 2, SEEN


def _case(version, base_rows, deltas, *, insert_only=False, old_base=False, originals=0):
    out = {}
    if originals:
        out["000000_0"] = plain(rows=[(i * 7919 % 100003, f"o{i * i}")
                                      for i in range(originals)])
    if old_base:
        out.update(_dir("base_0000001", 1, 1, 5, version, insert_only=insert_only))
    if base_rows:
        out.update(_dir("base_0000002", 2, 2, base_rows, version, insert_only=insert_only))
    for w in range(3, 3 + deltas):
        out.update(_dir(f"delta_{w:07d}_{w:07d}_0000", w, w, 1, version,
                        insert_only=insert_only))
    return out


# (name, layout arguments, pct threshold, the answer of 2.3, 3.1, 4.0)
CASES = [
    ("many small deltas on a big base", dict(base_rows=20000, deltas=11), 0.5,
     ("MINOR", "MINOR", "MINOR")),
    ("as many deltas as the threshold", dict(base_rows=20000, deltas=10), 0.5,
     (None, None, None)),
    ("deltas large next to the base", dict(base_rows=10, deltas=3), 0.1,
     ("MAJOR", "MAJOR", "MAJOR")),
    ("no base, many deltas", dict(base_rows=0, deltas=11), 0.1, ("MAJOR", "MAJOR", "MAJOR")),
    ("no base, few deltas", dict(base_rows=0, deltas=3), 0.1, (None, None, None)),
    ("insert-only, many deltas", dict(base_rows=20000, deltas=11, insert_only=True), 0.5,
     (None, "MAJOR", "MINOR")),
    ("an obsolete base and no deltas", dict(base_rows=20000, deltas=0, old_base=True), 0.1,
     (None, None, "MAJOR")),
    ("original files are the base", dict(base_rows=0, deltas=11, originals=20000), 0.5,
     ("MINOR", "MINOR", "MINOR")),
]


@pytest.mark.parametrize("name,args,pct,answers", CASES, ids=[c[0] for c in CASES])
def test_each_threshold_as_hive_decides_it(judge, tmp_path, name, args, pct, answers):
    version, jvm, gateway, base_conf = judge
    if args.get("insert_only") and version == "2":
        pytest.skip("Hive 2.3 has no insert-only tables")
    expected = answers[int(version) - 2]
    table = build(tmp_path / "t", _case(version, **args))
    settings = {DELTA_NUM: 10, DELTA_PCT: pct}
    properties = {"transactional": "true"}
    if args.get("insert_only"):
        properties["transactional_properties"] = "insert_only"
    snap, compactor = _snapshots(version, 100)
    hive = hive_decision(jvm, gateway, version, table, compactor, settings=settings,
                         properties=properties, base_conf=base_conf)
    state = inspect_table(str(table), compactor_snapshot(snap)).partitions[0].state
    ours = decide(state, version, Settings.of(**settings), insert_only=bool(
        args.get("insert_only")))
    assert (ours.kind or "").upper() == (hive or ""), ours
    assert hive == expected, f"Hive {HIVE[version]} said {hive}"

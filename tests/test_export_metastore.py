"""`acidtool export --metastore`: a table a real metastore (2.3.10, 3.1.3, 4.0.1 on loopback)
names, exported at the metastore's snapshot; its partition columns typed as the metastore types
them; the snapshot, the Hive version and the table's name recorded; an incremental export
after another load the metastore committed."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from .helpers.metastore import create_table
from .helpers.runner import run
from .test_export import catalog
from .test_metastore import convert, raw_orc

pytestmark = pytest.mark.spark
pytest.importorskip("pyiceberg", reason="pyiceberg is not installed (pip install -e '.[iceberg]')")


def test_a_metastore_table_exports_at_its_snapshot_typed(metastore, tmp_path):
    name = f"exp{metastore.version}"
    create_table(metastore.url, "default", name, f"file://{metastore.warehouse}/{name}",
                 partition_keys=(("ds", "date"), ("h", "int")))
    full = f"default.{name}"
    for i, part in enumerate(("ds=2026-11-24/h=7", "ds=2026-11-25/h=8")):
        result = convert(metastore, raw_orc(tmp_path / f"in{i}" / "x.orc", [i, 10 + i]), full,
                         "--partition", part)
        assert result.code == 0, result.err
    lake = tmp_path / "lake"
    args = ["export", full, "--metastore", metastore.url, "--to", "iceberg", "--catalog", lake,
            "--table", "s.t", "--format", "json"]
    first = run(*args)
    assert first.code == 0, first.err
    assert first.json()["hive_version"] == metastore.version
    t = catalog(lake).load_table("s.t")
    types = {f.name: str(f.field_type) for f in t.schema().fields}
    assert (types["ds"], types["h"]) == ("date", "int")
    assert [f.name for f in t.spec().fields] == ["ds", "h"]
    props = t.current_snapshot().summary.additional_properties
    assert props["acidtool.hive-table"] == full
    assert props["acidtool.hive-version"] == metastore.version
    key = "acidtool.txns" if metastore.version == "2" else "acidtool.write-ids"
    assert props[key] == first.json()["snapshot"]
    rows = sorted((r["id"], r["ds"], r["h"]) for r in t.scan().to_arrow().to_pylist())
    assert rows == [(0, dt.date(2026, 11, 24), 7), (1, dt.date(2026, 11, 25), 8),
                    (10, dt.date(2026, 11, 24), 7), (11, dt.date(2026, 11, 25), 8)]
    # another load the metastore commits; then an incremental export, then nothing to do
    assert convert(metastore, raw_orc(tmp_path / "in9" / "x.orc", [99]), full,
                   "--partition", "ds=2026-11-24/h=7").code == 0
    second = run(*args, "--incremental")
    assert second.code == 0, second.err
    assert (second.json()["rows_added"], second.json()["rows_deleted"]) == (1, 0)
    read = run("read", full, "--metastore", metastore.url)
    want = sorted((r["id"], r["ds"], r["h"]) for r in map(json.loads, read.out.splitlines()))
    t = catalog(lake).load_table("s.t")
    got = sorted((r["id"], r["ds"].isoformat(), r["h"]) for r in t.scan().to_arrow().to_pylist())
    assert got == [(i, d, int(h)) for i, d, h in want]
    assert run(*args, "--incremental").json()["action"] == "nothing"

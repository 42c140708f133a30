"""Check an export: the Iceberg table's rows against the Hive table's at the snapshot the export
recorded in the Iceberg snapshot's summary.

Usage: python iceberg_check.py CATALOG_DIR NAMESPACE.TABLE
"""

import os
import sys

from pyiceberg.catalog.sql import SqlCatalog

import acidtool

lake, name = os.path.abspath(sys.argv[1]), sys.argv[2]
# the local catalog acidtool makes in a directory: SQLite, its tables filed as "default", as pyiceberg names a catalog by default
catalog = SqlCatalog("default", uri=f"sqlite:///{lake}/catalog.db", warehouse=f"file://{lake}")
table = catalog.load_table(name)
props = table.current_snapshot().summary.additional_properties
print({k: v for k, v in props.items() if k.startswith("acidtool.")})

iceberg_rows = table.scan().to_arrow()
hive_rows = acidtool.open_table(props["acidtool.source"]).snapshot(
    props["acidtool.write-ids"], hive_version=props["acidtool.hive-version"],
    with_row_id=True).to_arrow()
print(f"Iceberg: {iceberg_rows.num_rows} rows; Hive at {props['acidtool.write-ids']}: "
      f"{hive_rows.num_rows} rows")
ids = sorted(tuple(r["_hive_row_id"].values()) for r in iceberg_rows.to_pylist())
print("same ROW__IDs:", ids == sorted(tuple(r["ROW__ID"].values())
                                      for r in hive_rows.to_pylist()))

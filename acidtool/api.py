"""The public Python API: ``acidtool.open_table(url).snapshot(...).to_arrow()``.

A ``Table`` is a table or partition directory on any filesystem acidtool reads; its ``snapshot``
is a ``Snapshotted``: the rows Hive would return for it, as Arrow tables, batches or pandas.
Both live in the table layer (``acidtool.table.snapshot``), which every command stands on; this
module hands them on.
"""

from __future__ import annotations

from .table.snapshot import ROW_BYTES, Snapshotted, Table

__all__ = ["ROW_BYTES", "Snapshotted", "Table"]

"""acidtool: look inside Hive ACID table directories the way Hive does, without a running Hive."""

from .core.version import __version__

__all__ = ["__version__", "open_table", "write_delta"]


def open_table(url: str, metastore: str | None = None):
    """A Hive ACID table or partition directory on any filesystem acidtool reads::

        import acidtool
        t = acidtool.open_table("s3://bucket/warehouse/shop.db/orders")
        arrow = t.snapshot(write_ids="shop.orders:41:9223372036854775807::").to_arrow()

    With ``metastore="thrift://HOST:PORT"``, ``url`` may be ``db.table`` and the snapshot,
    Hive version and column names are the metastore's.

    See ``acidtool.api.Table``.
    """
    from .table.snapshot import Table

    return Table(url, metastore)


def write_delta(df, table: str, *args, **options):
    """A PySpark DataFrame written as the delta Hive would write for an INSERT, committed with
    one rename (``convert --spark`` from your own Spark code)::

        import acidtool
        summary = acidtool.write_delta(df, "hdfs://nn/warehouse/shop.db/orders", write_id=42,
                                       buckets=4, bucket_by=["id"], order_by=["id"])

    See ``acidtool.commands.convert.spark.write_delta`` for the options.
    """
    from .commands.convert.spark import write_delta as _write

    return _write(df, table, *args, **options)

"""acidtool: look inside Hive ACID table directories the way Hive does, without a running Hive."""

__version__ = "0.1.0"


def open_table(url: str):
    """A Hive ACID table or partition directory on any filesystem acidtool reads::

        import acidtool
        t = acidtool.open_table("s3://bucket/warehouse/shop.db/orders")
        arrow = t.snapshot(write_ids="shop.orders:41:9223372036854775807::").to_arrow()

    See ``acidtool.api.Table``.
    """
    from .api import Table

    return Table(url)

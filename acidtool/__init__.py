"""acidtool: look inside Hive ACID table directories the way Hive does, without a running Hive."""

__version__ = "0.1.0"

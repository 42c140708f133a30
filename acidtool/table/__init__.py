"""The table layer, between the byte adapters (``io``) and the commands: what every command
stands on to see a table as Hive does. A table's partitions listed and selected (``ls``), the
target a command is given (``target``: a path, or a metastore's table and snapshot), the
partition reader and its delete keys (``read``, ``deletekeys``, ``rownames``), the facts of its
files and rows (``facts``, ``rowscan``), the snapshot of a whole table as Arrow
(``snapshot``: what ``acidtool.open_table`` hands on) and the Spark-free read plan of the
``hiveacid`` source and the export (``readplan``, ``options``)."""

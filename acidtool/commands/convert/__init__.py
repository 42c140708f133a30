"""convert: raw ORC into the delta Hive would write. ``delta``: plan, write, commit in process;
``schema``: the sources' columns onto the table's; ``sources``: finding and fingerprinting
sources, the provenance records; ``spark``: the same on Spark; ``txn``: the metastore
transaction of --write-id auto; ``run``: which of them runs."""

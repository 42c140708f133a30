"""export --to iceberg: ``run`` plans (create, incremental, nothing) and commits once; ``schema``:
Hive's types as Iceberg's; ``spark``: the groups on Spark's executors."""

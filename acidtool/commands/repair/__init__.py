"""repair and undo: ``plan`` (read-only: what repair would do), ``build`` (the bytes of new
files), ``apply`` (the journaled apply, and undo), ``txn`` (the metastore transaction of
--write-id auto)."""

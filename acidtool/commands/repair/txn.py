"""``repair --write-id auto --metastore ...``: foreign files re-wrapped under a write id the
metastore allocates, in a transaction that commits only when a re-wrap was done.

The plan (without ``--apply``) shows the write id the next allocation would give (the table's
high watermark plus one; Hive 2.3: the next transaction id): provisional, since another
writer may take it first. ``--apply`` opens the transaction, locks the table (shared write, as
an INSERT), allocates the write id, heartbeats while it works, and runs the journaled apply with
that id. The transaction commits when at least one re-wrap was carried out, and is aborted
otherwise, or on any failure, SIGINT or SIGTERM; a re-wrap under an aborted write id is never
read by Hive, and ``acidtool undo`` puts the table back as it was before either way.
"""

from __future__ import annotations

from dataclasses import replace

from ...core.catalog import MetastoreError
from ...core.repair import Rewrap
from ...table.target import Target
from ..convert.txn import Transaction


def provisional_write_id(target: Target) -> int:
    """What the next allocation would give: the snapshot's high watermark plus one."""
    snap = target.snapshot
    ids = snap.write_ids if snap.write_ids is not None else snap.txns
    return ids.high_watermark + 1


def apply_in_transaction(path: str, opts, target: Target, progress=None):
    """``apply`` with the write id of a metastore transaction (see the module's text)."""
    from ...io.metastore import Metastore
    from .apply import apply

    if target.table is None or target.metastore is None:
        raise MetastoreError("--write-id auto needs the table the metastore knows: name it as "
                             "db.table, or give --table")
    with Metastore(target.metastore) as client:
        txn = Transaction(target.metastore, target.table, None).open(
            client, target.snapshot.hive_version)
        try:
            result = apply(path, replace(opts, write_id=txn.write_id, write_id_allocated=True),
                           progress=progress)
        except BaseException:
            txn.abort(client)
            raise
        if any(isinstance(a, Rewrap) and a.write_id == txn.write_id and
               result.results.get(a.id, ("",))[0] == "done" for a in result.plan.actions):
            txn.commit(client)
        else:
            txn.abort(client)
    result.transaction = txn.txn if txn.committed else None
    if txn.committed and result.after is not None:
        # planned again at the snapshot that sees the transaction: the re-wrapped delta is
        # above the one taken before it
        from ...table.target import resolve
        from .plan import plan_repair

        now = resolve(path, metastore=target.metastore,
                      insert_only=target.snapshot.insert_only,
                      table=target.table.full_name).snapshot
        result.after = plan_repair(path, replace(opts, snapshot=now, write_id=None))
    return result

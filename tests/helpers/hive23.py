"""Hive 2.3's own ACID writer (OrcRecordUpdater) and reader (OrcInputFormat), through py4j.

These are the classes in the pyspark wheel's hive-exec-2.3.10-core.jar; the test session puts
hive-common first on the classpath (see ../shared/hive23-notes.md)."""

from __future__ import annotations

from .hivejvm import acidtool_rows, compaction_inputs, merged_scan, wait_for_output


class Hive23:
    def __init__(self, spark):
        self.jvm = spark._jvm
        self.gateway = spark.sparkContext._gateway
        j = self.jvm
        self.conf = j.org.apache.hadoop.conf.Configuration()
        self.conf.set("orc.compress", "ZLIB")
        self.factory = j.org.apache.hadoop.hive.serde2.objectinspector.primitive.\
            PrimitiveObjectInspectorFactory
        structs = j.org.apache.hadoop.hive.serde2.objectinspector.ObjectInspectorFactory
        f = self.factory
        rid = structs.getStandardStructObjectInspector(
            self._list("transactionid", "bucketid", "rowid"),
            self._list(f.writableLongObjectInspector, f.javaIntObjectInspector,
                       f.writableLongObjectInspector))
        self.row_oi = structs.getStandardStructObjectInspector(
            self._list("ROW__ID", "id", "name"),
            self._list(rid, f.javaIntObjectInspector, f.javaStringObjectInspector))

    def _list(self, *items):
        out = self.jvm.java.util.ArrayList()
        for item in items:
            out.add(item)
        return out

    def row_id(self, txn: int, bucket: int, row: int):
        w = self.jvm.org.apache.hadoop.io.LongWritable
        return self._list(w(txn), bucket, w(row))

    def row(self, id_: int, name: str, rid=None):
        return self._list(rid, id_, name)

    def updater(self, table: str, txn: int, *, bucket: int = 0, statement: int = 0,
                split_update: bool = True):
        j = self.jvm
        props = j.java.util.Properties()
        props.setProperty("transactional", "true")
        if split_update:
            props.setProperty("transactional_properties", "default")
        options = (j.org.apache.hadoop.hive.ql.io.AcidOutputFormat.Options(self.conf)
                   .inspector(self.row_oi).bucket(bucket).minimumTransactionId(txn)
                   .maximumTransactionId(txn).statementId(statement).writingBase(False)
                   .recordIdColumn(0).tableProperties(props)
                   .finalDestination(j.org.apache.hadoop.fs.Path(table)))
        return j.org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat().getRecordUpdater(
            j.org.apache.hadoop.fs.Path(table), options)

    def read(self, table: str, txns: str, *, buckets: int = 1, split_update: bool = True):
        """[((txn, bucket, rowId), [id, name])] as Hive's merged ACID scan returns them."""
        j = self.jvm
        job = j.org.apache.hadoop.mapred.JobConf()
        job.set("mapreduce.input.fileinputformat.inputdir", "file://" + table)
        for key in ("columns", "schema.evolution.columns"):
            job.set(key, "id,name")
        for key in ("columns.types", "schema.evolution.columns.types"):
            job.set(key, "int:string")
        job.setBoolean("hive.transactional.table.scan", True)
        job.set("hive.txn.valid.txns", txns)
        job.set("transactional", "true")
        if split_update:
            job.set("transactional_properties", "default")
            job.setInt("hive.txn.operational.properties", 1)
        job.set("bucket_count", str(buckets))
        job.set("hive.orc.splits.include.fileid", "false")
        return merged_scan(j, job, TRANSACTION_KEY)


BUCKETS = 2


def write_history(hive: Hive23, table, transactions, split_update: bool) -> None:
    """Write ``transactions`` (each a list of (op, bucket, count) statements: insert, update or
    delete of rows committed earlier) with Hive 2.3's OrcRecordUpdater, the way Hive's SQL
    layer does: one bucket per statement, its events in ROW__ID order."""
    live: dict[int, list[tuple[int, int]]] = {b: [] for b in range(BUCKETS)}  # (txn, rowId)
    next_id = 0
    for txn, statements in enumerate(transactions, start=1):
        used_buckets = set()
        added: dict[int, list[tuple[int, int]]] = {b: [] for b in range(BUCKETS)}
        for stmt, (op, bucket, count) in enumerate(statements):
            if bucket in used_buckets:
                continue  # Hive 2.3 row ids of one bucket would repeat across statements
            targets = sorted(live[bucket])[:count] if op != "insert" else []
            if op != "insert" and not targets:
                continue
            used_buckets.add(bucket)
            u = hive.updater(str(table), txn, bucket=bucket, statement=stmt,
                             split_update=split_update)
            if op == "insert":
                for row_id in range(count):
                    u.insert(txn, hive.row(next_id, f"t{txn}-{row_id}"))
                    added[bucket].append((txn, row_id))
                    next_id += 1
            else:
                for otid, row_id in targets:
                    rid = hive.row_id(otid, bucket, row_id)
                    if op == "update":
                        u.update(txn, hive.row(next_id, f"updated in {txn}", rid))
                        next_id += 1
                    else:
                        u.delete(txn, hive.row(0, "", rid))
                    live[bucket].remove((otid, row_id))
            u.close(False)
        for b in range(BUCKETS):
            live[b].extend(added[b])


def compact(hive: Hive23, table: str, kind: str, txns: str, timeout: float = 90.0) -> None:
    """Run Hive 2.3's own MR compactor (CompactorMR, on Hadoop's LocalJobRunner) on ``table``.

    CompactorMR.run is package-private and reports the job id to the metastore's TxnStore; there
    is no metastore here, so it is invoked by reflection with none, fails right after submitting
    the job (NullPointerException at setHadoopJobId) and the job itself finishes on its own
    thread: wait for its output directory."""
    import os

    j = hive.jvm
    conf, t, sd = compaction_inputs(j, table)
    info = j.org.apache.hadoop.hive.metastore.txn.CompactionInfo(
        "db", "t", None, j.org.apache.hadoop.hive.metastore.api.CompactionType.valueOf(kind))
    method = [m for m in j.java.lang.Class.forName(
        "org.apache.hadoop.hive.ql.txn.compactor.CompactorMR").getDeclaredMethods()
        if m.getName() == "run"][0]
    method.setAccessible(True)
    gateway = hive.gateway
    args = gateway.new_array(j.java.lang.Object, 8)
    for i, value in enumerate((conf, "acidtool-test-compaction", t, sd,
                               j.org.apache.hadoop.hive.common.ValidReadTxnList(txns), info,
                               None, None)):
        args[i] = value
    before = set(os.listdir(table))
    try:
        method.invoke(j.org.apache.hadoop.hive.ql.txn.compactor.CompactorMR(), args)
    except Exception as exc:  # noqa: BLE001 - the expected NPE once the job is submitted
        if "setHadoopJobId" not in str(exc):
            raise
    wait_for_output(table, before, timeout)


def acidtool_read(table, txns: str):
    """``acidtool read`` of a Hive 2 table, in the shape ``Hive23.read`` returns."""
    return acidtool_rows(table, "2", "--txns", txns)


def TRANSACTION_KEY(rid) -> tuple[int, int, int]:
    """Hive 2.3's RecordIdentifier: (transaction id, bucket id, row id)."""
    return rid.getTransactionId(), rid.getBucketId(), rid.getRowId()

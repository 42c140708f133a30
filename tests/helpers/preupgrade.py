"""Hive's pre-upgrade tool (``PreUpgradeTool.needsCompaction``) as the judge of
``upgrade-check``. The tool's jar (hive-pre-upgrade) is not on Maven Central, so its decision is
made here step by step with Hive 2.3.10's own classes (Spark's JVM): the FileSystem listing,
``AcidUtils.getAcidState`` with a ``ValidCompactorTxnList``, ORC's reader and its
``hive.acid.stats``, ``getContentSummary``. Only the loop around them is Python."""

from __future__ import annotations


class ToolFailed(Exception):
    """Where the tool itself throws (no hive.acid.stats, an unreadable file, getAcidState)."""


def needs_compaction(jvm, location: str, compactor_txns: str) -> tuple[bool, int]:
    """(does the partition need a major compaction, the bytes the tool adds for it)."""
    j = jvm
    conf = j.org.apache.hadoop.conf.Configuration()
    # Every file counts, as on HDFS (the checksum filesystem would hide Hadoop's .crc files
    # from getContentSummary while they lie in the directory).
    conf.set("fs.file.impl", "org.apache.hadoop.fs.RawLocalFileSystem")
    conf.setBoolean("fs.file.impl.disable.cache", True)
    path = j.org.apache.hadoop.fs.Path("file://" + location)
    fs = path.getFileSystem(conf)
    names = [s.getPath().getName() for s in fs.listStatus(path)]
    if not any(n.startswith(("delta_", "delete_delta_")) for n in names):
        return False, 0
    try:
        state = j.org.apache.hadoop.hive.ql.io.AcidUtils.getAcidState(
            path, conf, j.org.apache.hadoop.hive.common.ValidCompactorTxnList(compactor_txns))
    except Exception as exc:  # noqa: BLE001 - py4j's error for the Java exception
        raise ToolFailed(f"getAcidState: {exc}") from None
    orc = j.org.apache.hadoop.hive.ql.io.orc.OrcFile
    for delta in state.getCurrentDirectories():
        buckets = sorted((s.getPath() for s in fs.listStatus(delta.getPath())
                          if s.getPath().getName().startswith("bucket_")),
                         key=lambda p: p.getName())  # HDFS lists in name order
        for bucket in buckets:
            if bucket.getName().endswith("_flush_length"):
                break
            try:
                reader = orc.createReader(bucket, orc.readerOptions(conf).filesystem(fs))
            except Exception as exc:  # noqa: BLE001
                raise ToolFailed(f"{bucket.getName()}: {exc}") from None
            if not reader.hasMetadataValue("hive.acid.stats"):
                raise ToolFailed(f"AcidStats missing in {bucket}")
            raw = reader.getMetadataValue("hive.acid.stats").duplicate()
            text = j.java.nio.charset.StandardCharsets.UTF_8.decode(raw).toString()
            parts = text.split(",")
            if int(parts[1]) > 0 or int(parts[2]) > 0:
                size = fs.getContentSummary(path).getLength()
                for original in state.getOriginalFiles():
                    size += original.getFileStatus().getLen()  # 2.3: HdfsFileStatusWithId
                return True, size
    return False, 0

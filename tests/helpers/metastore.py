"""Real Hive metastores on loopback: 2.3.10 from the pyspark wheel's jars, 3.1.3 and 4.0.1 from
the standalone metastore's binary distribution on Maven Central (``hive-standalone-metastore``
3.1.3 and ``hive-standalone-metastore-server`` 4.0.1, ``tar.gz`` ``bin``; Hadoop's shaded client
jars beside them). One JVM per version per test session, on embedded Derby in a temporary
directory, stopped by its process id.

None of the stock launchers is used: 2.3's and 3.1's ``HiveMetaStore.main`` bind the wildcard
address. The JVM is started by py4j (as the Hive judges are), and the handler the stock server
would build (``newRetryingHMSHandler``, 4.0's ``newHMSHandler``) is served by a Thrift
``TThreadPoolServer`` over a ``TServerSocket`` bound to 127.0.0.1 on a port the kernel picks,
binary protocol, unframed, no SASL: what a metastore without Kerberos speaks.

The transaction tables: 2.3's and 3.1's ``TxnDbUtil.prepDb``; 4.0 has none outside its tests,
so its schema tool runs the Derby script of its own distribution. No housekeeping runs (no
compactor, no reaper): open transactions never time out, aborted ones stay.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
import threading
from dataclasses import dataclass

from .hivejvm import HADOOP, M2, built_once, jar_path, stop_jvm

DISTRIBUTIONS = {
    "3": ("org.apache.hive", "hive-standalone-metastore", "3.1.3", "tar.gz", "bin"),
    "4": ("org.apache.hive", "hive-standalone-metastore-server", "4.0.1", "tar.gz", "bin"),
}
# What the distribution expects a Hadoop installation to bring (the tests' judges use them too)
HADOOP_JARS = [("org.apache.hadoop", "hadoop-client-api", HADOOP),
               ("org.apache.hadoop", "hadoop-client-runtime", HADOOP),
               ("org.slf4j", "slf4j-api", "1.7.36"), ("org.slf4j", "slf4j-nop", "1.7.36"),
               ("commons-logging", "commons-logging", "1.2"),
               ("commons-collections", "commons-collections", "3.2.2"),
               ("commons-io", "commons-io", "2.11.0"),
               ("javax.servlet", "javax.servlet-api", "3.1.0"),
               ("org.apache.httpcomponents", "httpclient", "4.5.13"),
               ("org.apache.httpcomponents", "httpcore", "4.4.13"),
               ("org.apache.hadoop", "hadoop-hdfs", HADOOP)]  # 4.0 checks for HDFS snapshots
CACHE = os.path.join(os.path.expanduser("~/.cache"), "acidtool-tests")


def wanted(version: str) -> list[tuple]:
    """The Maven artifacts a metastore of ``version`` needs (2: none, the wheel has them)."""
    if version == "2":
        return []
    return [DISTRIBUTIONS[version], *HADOOP_JARS,
            ("org.apache.hive", "hive-exec", DISTRIBUTIONS[version][2])]


def _unpacked(version: str) -> str:
    """The distribution's directory, unpacked once into the cache."""
    coordinates = DISTRIBUTIONS[version]
    name = f"apache-hive-metastore-{coordinates[2]}-bin"

    def unpack(into: str) -> None:
        with tarfile.open(jar_path(*coordinates)) as tar:
            tar.extractall(into, filter="data")
        for entry in os.listdir(os.path.join(into, name)):
            os.rename(os.path.join(into, name, entry), os.path.join(into, entry))
        os.rmdir(os.path.join(into, name))

    return built_once(os.path.join(CACHE, name), name, unpack)


def classpath(version: str) -> list[str]:
    if version == "2":
        from .spark import pyspark_jars

        jars = sorted(os.path.join(pyspark_jars(), n) for n in os.listdir(pyspark_jars()))
        # hive-common 2.3 ahead of hive-storage-api (which holds Hive 3's ValidReadTxnList)
        return sorted(jars, key=lambda j: "hive-common-2.3" not in j)
    lib = os.path.join(_unpacked(version), "lib")
    # hive-exec last: the metastore's validation of a transactional table loads its
    # OrcInputFormat (a deployed metastore has it too); the distribution's classes come first
    return ([os.path.join(lib, n) for n in sorted(os.listdir(lib)) if n.endswith(".jar")] +
            [jar_path(*a) for a in HADOOP_JARS] +
            [jar_path("org.apache.hive", "hive-exec", DISTRIBUTIONS[version][2])])


def _settings(base: str) -> dict[str, str]:
    url = f"jdbc:derby:;databaseName={base}/metastore_db;create=true"
    warehouse = f"file://{base}/warehouse"
    out = {}
    for prefix in ("javax.jdo.option.", "metastore.jdo.option."):  # 2.3 / 3.1+ names
        out[prefix + "ConnectionURL"] = url
        out[prefix + "ConnectionDriverName"] = "org.apache.derby.jdbc.EmbeddedDriver"
    for key, value in (("hive.metastore.warehouse.dir", warehouse),
                       ("metastore.warehouse.dir", warehouse),
                       ("datanucleus.schema.autoCreateAll", "true"),
                       ("hive.metastore.schema.verification", "false"),
                       ("metastore.schema.verification", "false"),
                       ("datanucleus.connectionPoolingType", "HikariCP"),
                       ("hive.async.log.enabled", "false"),
                       ("hive.compactor.initiator.on", "false"),
                       ("metastore.compactor.initiator.on", "false"),
                       ("hive.compactor.worker.threads", "0"),
                       ("metastore.compactor.worker.threads", "0"),
                       ("hive.support.concurrency", "true"),
                       ("hive.txn.manager", "org.apache.hadoop.hive.ql.lockmgr.DbTxnManager"),
                       ("metastore.housekeeping.threads.on", "false"),
                       ("metastore.event.db.notification.api.auth", "false"),
                       ("hive.metastore.event.db.notification.api.auth", "false"),
                       ("metastore.try.direct.sql", "true"),
                       # 4.0: no translation of tables for clients without "capabilities"
                       ("metastore.metadata.transformer.class", " "),
                       # 3.1 names a class of hive-exec among its tasks (none is started here)
                       ("metastore.task.threads.always",
                        "org.apache.hadoop.hive.metastore.events.EventCleanerTask"),
                       # the standalone default (the stock one is a class of hive-exec)
                       ("metastore.expression.proxy",
                        "org.apache.hadoop.hive.metastore.DefaultPartitionExpressionProxy")):
        out[key] = value
    return out


@dataclass
class Metastore:
    """A metastore of one Hive version on 127.0.0.1:``port``."""

    version: str  # "2", "3", "4"
    gateway: object
    process: subprocess.Popen
    server: object
    port: int
    base: str  # Derby and the warehouse

    @property
    def url(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"

    @property
    def warehouse(self) -> str:
        return os.path.join(self.base, "warehouse")

    @classmethod
    def start(cls, version: str) -> "Metastore":
        from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway

        base = tempfile.mkdtemp(prefix=f"acidtool-hms{version}-")
        os.makedirs(os.path.join(base, "warehouse"))
        port, proc = launch_gateway(
            classpath=os.pathsep.join(classpath(version)), die_on_exit=True, return_proc=True,
            javaopts=["-Xmx512m", "-Djava.net.preferIPv4Stack=true", "-Duser.timezone=UTC",
                      f"-Dderby.system.home={base}", "-Dlog4j2.level=ERROR"],
            redirect_stderr=_log(base), redirect_stdout=_log(base))
        gateway = JavaGateway(gateway_parameters=GatewayParameters(
            address="127.0.0.1", port=port, auto_convert=True))
        try:
            server, bound = _serve(gateway, version, base)
        except Exception as exc:
            why = _java_error(exc)
            stop_jvm(gateway, proc)
            raise RuntimeError(f"the Hive {version} metastore did not start: {why} "
                               f"(its log: {base}/jvm.log)") from None
        return cls(version, gateway, proc, server, bound, base)

    def stop(self) -> None:
        import logging

        # the serving thread's py4j connection breaks when the JVM goes: not worth a log line
        logging.getLogger("py4j").setLevel(logging.CRITICAL)
        try:
            self.server.stop()
        except Exception:  # noqa: BLE001 - the JVM is stopped next anyway
            pass
        stop_jvm(self.gateway, self.process)
        shutil.rmtree(self.base, ignore_errors=True)


def _serve(gateway, version: str, base: str):
    j = gateway.jvm
    settings = _settings(base)
    if version == "2":
        conf = j.org.apache.hadoop.hive.conf.HiveConf()
    else:
        conf = j.org.apache.hadoop.hive.metastore.conf.MetastoreConf.newMetastoreConf()
    for key, value in settings.items():
        conf.set(key, value)
    if version == "4":
        _init_schema_40(gateway, version, settings)
    handler = _handler(gateway, version, conf)
    if version != "4":
        j.org.apache.hadoop.hive.metastore.txn.TxnDbUtil.prepDb(conf)
    thrift = j.org.apache.thrift
    socket = thrift.transport.TServerSocket(j.java.net.InetSocketAddress("127.0.0.1", 0))
    args = (thrift.server.TThreadPoolServer.Args(socket)
            .processor(j.org.apache.hadoop.hive.metastore.TSetIpAddressProcessor(handler))
            .transportFactory(thrift.transport.TTransportFactory())
            .protocolFactory(thrift.protocol.TBinaryProtocol.Factory())
            .minWorkerThreads(2).maxWorkerThreads(32))
    server = thrift.server.TThreadPoolServer(args)
    port = socket.getServerSocket().getLocalPort()
    # serve() blocks for the server's life: it runs on a py4j connection of its own
    threading.Thread(target=_quietly(server.serve), daemon=True).start()
    return server, port


def _java_error(exc: Exception) -> str:
    """The Java exception and its causes, one line, from a py4j error."""
    java = getattr(exc, "java_exception", None)
    parts = []
    while java is not None and len(parts) < 5:
        parts.append(str(java.toString()))
        java = java.getCause()
    return "; caused by ".join(parts) or str(exc)


def _quietly(call):
    def run():
        try:
            call()
        except Exception:  # noqa: BLE001 - the JVM went away at the end of the session
            pass
    return run


def _handler(gateway, version: str, conf):
    """The handler the stock server builds, by reflection where it is package-private."""
    j = gateway.jvm
    cls = j.java.lang.Class.forName("org.apache.hadoop.hive.metastore.HiveMetaStore")
    name = "newHMSHandler" if version == "4" else "newRetryingHMSHandler"
    arity = 1 if version == "4" else 3
    first = "Configuration" if version == "4" else "String"
    method = next(m for m in cls.getDeclaredMethods()
                  if m.getName() == name and len(m.getParameterTypes()) == arity and
                  m.getParameterTypes()[0].getSimpleName() == first)
    method.setAccessible(True)
    args = gateway.new_array(j.java.lang.Object, arity)
    for i, value in enumerate([conf] if version == "4" else ["acidtool-test", conf, False]):
        args[i] = value
    return method.invoke(None, args)


def _init_schema_40(gateway, version: str, settings: dict) -> None:
    """4.0's whole Derby schema, transaction tables included, from its distribution's script."""
    j = gateway.jvm
    home = _unpacked(version)
    tool = j.org.apache.hadoop.hive.metastore.tools.schematool.MetastoreSchemaTool()
    conf = j.org.apache.hadoop.hive.metastore.conf.MetastoreConf.newMetastoreConf()
    for key, value in settings.items():
        conf.set(key, value)
    words = ["-initSchema", "-dbType", "derby", "-url",
             settings["metastore.jdo.option.ConnectionURL"], "-driver",
             settings["metastore.jdo.option.ConnectionDriverName"],
             "-userName", "APP", "-passWord", "mine"]
    args = gateway.new_array(j.java.lang.String, len(words))
    for i, word in enumerate(words):
        args[i] = word
    status = tool.run(home, args, j.org.apache.commons.cli.OptionGroup(), conf)
    if status != 0:
        raise RuntimeError(f"Hive 4.0's schema tool failed ({status})")


def problem(version: str) -> str | None:
    """Why a metastore of ``version`` cannot start here, or None."""
    from .hivejvm import fetch
    from .spark import java_problem

    found = java_problem()
    if found is None:
        try:
            import py4j  # noqa: F401 - with pyspark
        except ImportError:
            found = "py4j is not installed (pip install -e '.[spark]')"
    if found is None and version != "2":
        found = fetch("", wanted=wanted(version))
    return found


__all__ = ["Metastore", "problem", "wanted", "M2"]


def _log(base: str):
    """The JVM's own output, kept beside its Derby database for a failure's post-mortem."""
    return open(os.path.join(base, "jvm.log"), "a", encoding="utf-8", errors="replace")


# -- what a test sets up through the metastore ------------------------------------------------

def create_table(url: str, db: str, name: str, location: str, *,
                 columns=(("id", "int"), ("name", "string")), partition_keys=(),
                 buckets: int = 2, bucket_cols=("id",), params: dict | None = None,
                 transactional: bool = True) -> None:
    """CREATE TABLE through the metastore's Thrift API (its validation listener runs: 2.3
    wants ORC and bucketing for a transactional table)."""
    from acidtool.io.metastore import Metastore as Client
    from acidtool.io.thrift import BOOL, I32, LIST, MAP, STRING, STRUCT

    properties = {"transactional": "true"} if transactional else {}
    properties.update(params or {})
    orc = "org.apache.hadoop.hive.ql.io.orc."
    fields = lambda cols: [[(1, STRING, c), (2, STRING, t)] for c, t in cols]  # noqa: E731
    sd = [(1, LIST, (STRUCT, fields(columns))), (2, STRING, location),
          (3, STRING, orc + "OrcInputFormat"), (4, STRING, orc + "OrcOutputFormat"),
          (5, BOOL, False), (6, I32, buckets if bucket_cols else -1),
          (7, STRUCT, [(2, STRING, orc + "OrcSerde"), (3, MAP, (STRING, STRING, {}))]),
          (8, LIST, (STRING, list(bucket_cols))), (9, LIST, (STRUCT, [])),
          (10, MAP, (STRING, STRING, {}))]
    table = [(1, STRING, name), (2, STRING, db), (3, STRING, "acidtool"), (4, I32, 0),
             (5, I32, 0), (6, I32, 0), (7, STRUCT, sd),
             (8, LIST, (STRUCT, fields(partition_keys))),
             (9, MAP, (STRING, STRING, properties)), (12, STRING, "MANAGED_TABLE")]
    with Client(url) as client:
        result = client.conn.call("create_table", [(1, STRUCT, table)])
    errors = {k: v for k, v in result.items() if k != 0}
    if errors:
        raise RuntimeError(f"create_table {db}.{name}: {errors}")


def create_database(url: str, name: str, location: str) -> None:
    from acidtool.io.metastore import Metastore as Client
    from acidtool.io.thrift import MAP, STRING, STRUCT

    with Client(url) as client:
        result = client.conn.call("create_database", [(1, STRUCT, [
            (1, STRING, name), (2, STRING, ""), (3, STRING, location),
            (4, MAP, (STRING, STRING, {}))])])
    if {k: v for k, v in result.items() if k != 0}:
        raise RuntimeError(f"create_database {name}: {result}")

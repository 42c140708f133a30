"""A real HDFS on loopback: Hadoop's MiniDFSCluster (``hadoop-client-minicluster`` from Maven
Central, in ~/.m2 like Hive's jars) in a JVM of its own, driven through py4j, with one NameNode
and one DataNode bound to 127.0.0.1 and WebHDFS on. acidtool reaches it as
``webhdfs://127.0.0.1:PORT/...`` (fsspec's WebHDFS client: no native libhdfs needed).

The shaded minicluster's WebHDFS servlet (Jersey 1) needs JAXB, which Java 11 dropped from the
JDK: jaxb-api, jaxb-impl and javax.activation go on the class path too."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from .hivejvm import HADOOP, jar_path, stop_jvm

HADOOP_MINICLUSTER = HADOOP
ARTIFACTS = [("org.apache.hadoop", "hadoop-client-minicluster", HADOOP),
             ("org.apache.hadoop", "hadoop-client-api", HADOOP),
             ("org.apache.hadoop", "hadoop-client-runtime", HADOOP),
             ("org.slf4j", "slf4j-api", "1.7.36"), ("org.slf4j", "slf4j-nop", "1.7.36"),
             ("commons-logging", "commons-logging", "1.2"), ("log4j", "log4j", "1.2.17"),
             ("javax.xml.bind", "jaxb-api", "2.3.1"), ("com.sun.xml.bind", "jaxb-impl", "2.3.3"),
             ("javax.activation", "javax.activation-api", "1.2.0")]
LOOPBACK = ("dfs.namenode.rpc-bind-host", "dfs.namenode.http-bind-host",
            "dfs.namenode.servicerpc-bind-host")


@dataclass
class MiniDFS:
    gateway: object
    process: subprocess.Popen
    cluster: object
    base: str  # the cluster's storage on the local disk

    @classmethod
    def start(cls) -> "MiniDFS":
        from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway

        port, proc = launch_gateway(
            classpath=os.pathsep.join(jar_path(*a) for a in ARTIFACTS), die_on_exit=True,
            return_proc=True, javaopts=["-Xmx512m", "-Djava.net.preferIPv4Stack=true"],
            redirect_stderr=subprocess.DEVNULL)
        gateway = JavaGateway(gateway_parameters=GatewayParameters(
            address="127.0.0.1", port=port, auto_convert=True))
        j = gateway.jvm
        conf = j.org.apache.hadoop.conf.Configuration()
        base = tempfile.mkdtemp(prefix="acidtool-minidfs-")
        conf.set("hdfs.minidfs.basedir", base)
        for key in LOOPBACK:
            conf.set(key, "127.0.0.1")
        for key in ("dfs.datanode.address", "dfs.datanode.http.address",
                    "dfs.datanode.ipc.address", "dfs.namenode.http-address"):
            conf.set(key, "127.0.0.1:0")
        conf.setBoolean("dfs.webhdfs.enabled", True)
        conf.setBoolean("dfs.permissions.enabled", False)
        conf.setInt("dfs.replication", 1)  # one DataNode: a write waits for no other copy
        cluster = j.org.apache.hadoop.hdfs.MiniDFSCluster.Builder(conf).numDataNodes(1).build()
        cluster.waitActive()
        return cls(gateway, proc, cluster, base)

    @property
    def http_port(self) -> int:
        return self.cluster.getNameNode().getHttpAddress().getPort()

    @property
    def rpc_port(self) -> int:
        return self.cluster.getNameNodePort()

    def url(self, path: str) -> str:
        return f"webhdfs://127.0.0.1:{self.http_port}/{path.lstrip('/')}"

    def filesystem(self):
        import fsspec

        return fsspec.filesystem("webhdfs", host="127.0.0.1", port=self.http_port,
                                 user="root")

    def stop(self) -> None:
        try:
            self.cluster.shutdown()
        finally:
            stop_jvm(self.gateway, self.process)
            shutil.rmtree(self.base, ignore_errors=True)

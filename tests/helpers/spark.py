"""One Spark session (and so one JVM) for every test that needs Java.

The JVM gives us the real Java classes that settle questions: Double.toString, java.sql.Timestamp,
storage-api's HiveDecimalWritable, ORC Java's reader, and Hive 2.3's own ACID classes from the
pyspark wheel. Tests that use it are marked ``spark`` and skip when pyspark or Java 17 is missing.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import sys

import pytest


def java_problem() -> str | None:
    java = shutil.which("java") or (os.environ.get("JAVA_HOME") and
                                    os.path.join(os.environ["JAVA_HOME"], "bin", "java"))
    if not java:
        return "Java 17 is not installed (see README.md)"
    proc = subprocess.run([java, "-version"], capture_output=True, text=True)
    if proc.returncode != 0:
        return "java -version failed"
    return None


def pyspark_jars() -> str:
    import pyspark

    return os.path.join(os.path.dirname(pyspark.__file__), "jars")


@functools.lru_cache(maxsize=1)
def spark_session():
    """local[2], UTC, Hive 2.3's hive-common ahead of hive-storage-api on the driver classpath."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        pytest.skip("pyspark is not installed (pip install -e '.[spark]')")
    problem = java_problem()
    if problem:
        pytest.skip(problem)
    jars = pyspark_jars()
    hive_common = glob.glob(os.path.join(jars, "hive-common-2.3.*.jar"))
    options = "--add-opens=java.base/java.net=ALL-UNNAMED -Duser.timezone=UTC"
    builder = (SparkSession.builder.master("local[2]").appName("acidtool-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.driver.extraJavaOptions", options)
               .config("spark.executor.extraJavaOptions", options))
    if hive_common:
        builder = builder.config("spark.driver.extraClassPath", hive_common[0])
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers import acidtool
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    jvm = spark._jvm
    jvm.java.util.TimeZone.setDefault(jvm.java.util.TimeZone.getTimeZone("UTC"))
    return spark


def warm() -> None:
    """``make test``'s last step before the tests: one Spark session of acidtool's own, so that
    its JVM writes Spark's class archive (acidtool/io/classcache.py) while the tests start,
    and the Spark sessions the tests start later map it (a fresh machine has none)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print("Spark class archive: no pyspark, nothing to warm")
        return
    if java_problem():
        print(f"Spark class archive: {java_problem()}, nothing to warm")
        return
    from acidtool.io.classcache import ready
    from acidtool.io.spark import session

    if ready():
        print("Spark class archive: ready")
        return
    session("local[1]").range(1).count()
    print("Spark class archive: being written (the JVM writes it as it exits)")


if __name__ == "__main__" and sys.argv[1:] == ["warm"]:
    warm()

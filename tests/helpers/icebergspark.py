"""Spark with Apache Iceberg's own runtime, as a judge of what `acidtool export` writes.

No ``iceberg-spark-runtime`` on Maven Central loads in the Spark acidtool tests with (4.3: the
4.1 runtime fails on ``SparkView``), so the judge is a Spark 4.1 of its own: a virtual
environment with ``pyspark==4.1.4`` (``~/.cache/acidtool/spark41``, made once by ``python -m
tests.helpers.icebergspark fetch``, which ``make test`` runs), Iceberg's Spark 4.1 runtime and
the SQLite JDBC driver from Maven Central (in ``~/.m2``). ``read_tables`` starts it once for a
list of tables, on 127.0.0.1, and reads each through Iceberg's JDBC catalog over the very
SQLite file pyiceberg's catalog keeps; the rows come back normalized by ``normal``, as
pyiceberg's are in the tests, so the two can be compared.

This file is also the script that runs inside that environment (``__main__`` with ``read``):
it imports nothing of acidtool.
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import subprocess
import sys

PYSPARK = "4.1.4"
RUNTIME = ("org.apache.iceberg", "iceberg-spark-runtime-4.1_2.13", "1.12.0")
SQLITE = ("org.xerial", "sqlite-jdbc", "3.51.1.0")
VENV = os.environ.get("ACIDTOOL_SPARK41_VENV",
                      os.path.expanduser("~/.cache/acidtool/spark41"))


def normal(value):
    """A value as JSON can hold it the same from Spark's rows and from pyiceberg's Arrow: maps
    as sorted [key, value] pairs, bytes as hex, times in ISO form, decimals as text."""
    if isinstance(value, dict):
        return {k: normal(v) for k, v in value.items()}
    if isinstance(value, list) and value and all(isinstance(i, tuple) and len(i) == 2
                                                 for i in value):
        return sorted(([normal(k), normal(v)] for k, v in value), key=repr)
    if isinstance(value, (list, tuple)):
        return [normal(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, float) and value != value:
        return "NaN"
    return value


def python() -> str:
    return os.path.join(VENV, "bin", "python")


def problem(install: bool = False) -> str | None:
    """Why the judge cannot run here (None: it can). ``install`` (``make test``'s fetch):
    make the environment first; the tests only look, so that a failed install is not tried
    again inside CI's time."""
    from .hivejvm import fetch, jar_path
    from .spark import java_problem

    why = java_problem()
    if why:
        return why
    if not install:
        ready = os.path.exists(python()) and subprocess.run(
            [python(), "-c", "import pyspark"], capture_output=True).returncode == 0
        if not ready:
            return (f"no pyspark {PYSPARK} environment at {VENV} (made by `make test`: "
                    "python -m tests.helpers.icebergspark fetch)")
    if not os.path.exists(python()):
        proc = subprocess.run([sys.executable, "-m", "venv", VENV], capture_output=True,
                              text=True)
        if proc.returncode:
            return f"cannot make a virtual environment at {VENV}: {proc.stderr.strip()[-200:]}"
    check = subprocess.run([python(), "-c", "import pyspark"], capture_output=True)
    if check.returncode:
        proc = subprocess.run([python(), "-m", "pip", "install", "-q", f"pyspark=={PYSPARK}"],
                              capture_output=True, text=True, timeout=1800)
        if proc.returncode:
            return f"pip install pyspark=={PYSPARK} failed: {proc.stderr.strip()[-200:]}"
    why = fetch("", wanted=[RUNTIME, SQLITE])
    if why:
        return why
    missing = [a for a in (RUNTIME, SQLITE) if not os.path.exists(jar_path(*a))]
    return f"not in ~/.m2: {missing}" if missing else None


def read_tables(tables: list[tuple[str, str]], timeout: float = 600) -> list[list[dict]]:
    """[(catalog directory, NAMESPACE.TABLE)] -> each table's rows, normalized, as Spark with
    Iceberg's runtime reads them. Iceberg's JDBC catalog finds tables under its own name, so
    a Spark catalog named ``default`` reads acidtool's local catalog: one directory at a time
    (Spark keeps a catalog once loaded), so the tables are best in one catalog."""
    from .hivejvm import jar_path

    jars = ",".join(jar_path(*a) for a in (RUNTIME, SQLITE))
    proc = subprocess.run([python(), __file__, "read", jars, json.dumps(tables)],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYSPARK_PYTHON": python(),
                               "SPARK_LOCAL_IP": "127.0.0.1"})
    if proc.returncode:
        raise AssertionError(f"Spark with Iceberg's runtime failed: {proc.stderr[-3000:]}")
    out: list[list[dict]] = [[] for _ in tables]
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            doc = json.loads(line)
            out[doc["i"]].append(doc["row"])
    return out


def _read(jars: str, tables: list) -> None:
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[1]").appName("iceberg-judge")
             .config("spark.jars", jars)
             .config("spark.ui.enabled", "false")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    lakes = {lake for lake, _ in tables}
    if len(lakes) != 1:
        raise SystemExit(f"one catalog directory at a time, not {sorted(lakes)}")
    cat = "default"  # the name acidtool's local catalog files its tables under
    for key, value in (("", "org.apache.iceberg.spark.SparkCatalog"), (".type", "jdbc"),
                       (".uri", f"jdbc:sqlite:{tables[0][0]}/catalog.db"),
                       (".warehouse", f"file://{tables[0][0]}")):
        spark.conf.set(f"spark.sql.catalog.{cat}{key}", value)
    for i, (_, name) in enumerate(tables):
        for row in spark.table(f"{cat}.{name}").collect():
            print(json.dumps({"i": i, "row": normal(_plain(row))}, sort_keys=True))
    spark.stop()


def _plain(row):
    """A Spark Row as dicts and lists (structs as dicts, maps as [key, value] pairs)."""
    from pyspark.sql import Row

    if isinstance(row, Row):
        return {k: _plain(v) for k, v in row.asDict(recursive=False).items()}
    if isinstance(row, dict):
        return [(_plain(k), _plain(v)) for k, v in row.items()]
    if isinstance(row, list):
        return [_plain(v) for v in row]
    return row


if __name__ == "__main__":
    if sys.argv[1] == "read":
        _read(sys.argv[2], json.loads(sys.argv[3]))
    elif sys.argv[1] == "fetch":  # make test, as -m: the judge made ready (a line, never fails)
        why = problem(install=True)
        print(f"Spark {PYSPARK} with Iceberg's runtime: " + (why or f"ready in {VENV}"))

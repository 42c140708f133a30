"""The Spark session acidtool's jobs run on: the active one, or a new one whose JVM keeps its
start-up lines and log out of the console; and what is missing for one (pyspark, Java)."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Collection


def quoted(name: str) -> str:
    """A column name as Spark SQL reads it, whatever it holds: in backquotes, a backquote
    inside doubled."""
    return "`" + name.replace("`", "``") + "`"


def spark_problem(needs: str = "--spark needs") -> str | None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return f"{needs} pyspark: pip install 'acidtool[spark]'"

    java_home = os.environ.get("JAVA_HOME")
    if not shutil.which("java") and not (java_home and os.path.exists(
            os.path.join(java_home, "bin", "java"))):
        return (f"{needs} Java 17 (e.g. `apt-get install openjdk-17-jre-headless`, or "
                "set JAVA_HOME)")
    return None


def require_spark(needs: str = "--spark needs") -> None:
    """Refuse (a UsageError: exit 2, one line) where a Spark job cannot start: before any
    lock is taken or anything written. ``needs``: the message's subject and verb, for a
    command that runs on Spark without --spark ("delete runs on Spark and needs")."""
    from ..core.errors import UsageError

    problem = spark_problem(needs)
    if problem:
        raise UsageError(problem)


def session(master: str | None = None, verbose: bool = False):
    """The active session, or a new one. Unless ``verbose``, the JVM's own output (its start-up
    lines, log4j's WARN lines) goes to a log file, not the console: acidtool's lines are the
    ones a person reads, and Spark's errors still reach Python as exceptions."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    if sys.stderr.isatty():  # the JVM's start takes seconds, and says nothing (its log is aside)
        sys.stderr.write(f"acidtool: starting Spark ({master or 'local[*]'})...\n")
        sys.stderr.flush()
    from .classcache import discard, driver_options

    options = "--add-opens=java.base/java.net=ALL-UNNAMED"
    archive = driver_options()
    builder = (SparkSession.builder.appName("acidtool convert")
               .master(master or "local[*]")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.extraJavaOptions", f"{options} {archive}".strip())
               .config("spark.executor.extraJavaOptions", options))
    if (master or "local").startswith("local"):
        # Local workers run this interpreter, which has acidtool and pyarrow (Spark would
        # start whatever `python3` is on PATH). PySpark reads only the environment for it.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    try:
        spark = _start(builder, verbose)
    except Exception:
        if not discard(archive):
            raise
        # a damaged class archive (a truncated file the JVM maps: SIGBUS) is not the user's
        # problem: removed, and the JVM started without it
        spark = _start(builder.config("spark.driver.extraJavaOptions", options), verbose)
    spark.sparkContext.setLogLevel("WARN" if verbose else "ERROR")
    return spark


def _start(builder, verbose: bool):
    if verbose:
        return builder.getOrCreate()
    with _output_to(_spark_log()):
        return builder.getOrCreate()  # the JVM it starts keeps the log as its stderr


def _spark_log() -> str:
    """A new temporary file for the JVM's output, removed when this process ends unless it
    holds an error (a session of every run would otherwise leave one behind each time)."""
    import atexit
    import tempfile

    fd, path = tempfile.mkstemp(prefix="acidtool-spark-", suffix=".log")
    os.close(fd)
    atexit.register(_drop_quiet_log, path)
    return path


def _drop_quiet_log(path: str) -> None:
    """Remove ``path`` unless it holds an error (an ERROR line, an exception, a Java error):
    kept for a person to read."""
    try:
        with open(path, "rb") as log:
            if not any(word in line.lower() for line in log for word in (b"error", b"exception")):
                os.unlink(path)
    except OSError:
        pass


@contextlib.contextmanager
def _output_to(path: str):
    """File descriptors 1 and 2 point at ``path`` inside the block, for the processes it
    starts: the JVM writes nothing for a person, and a pipe reading acidtool's output must
    not wait for a JVM still writing its class archive after acidtool ended."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(path, "ab") as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
    try:
        yield
    finally:
        for fd, old in zip((1, 2), saved):
            os.dup2(old, fd)
            os.close(old)


def input_files(frame, like: Collection[str | None] = ()) -> set[str]:
    """``frame.inputFiles()`` in few calls into Spark's JVM, where the session has one:
    pyspark's list of them takes a call a file (0.2-0.3 ms each), and an answer of more
    than py4j's 8 KB buffer waits 40 ms on the socket (800 files of 78 characters: 76 ms a
    file a call, 48 ms in one call, 13 ms in slices of 100, 224 ms in slices of 150). So
    slices of files, each answer under 6,000 characters if no string is longer than those
    ``like`` them (the strings expected)."""
    jdf = getattr(frame, "_jdf", None)
    if jdf is None:  # (Spark Connect)
        return set(frame.inputFiles())
    width = max((len(s or "") for s in like), default=100)
    sep, per = "\u0000", max(1, 6000 // (width + 1))  # (no path holds a NUL)
    out: set[str] = set()
    try:
        files = frame.sparkSession._jvm.scala.collection.immutable.ArraySeq.unsafeWrapArray(
            jdf.inputFiles())
        count = files.length()
        for i in range(0, count, per):
            out.update(files.slice(i, min(count, i + per)).mkString(sep).split(sep))
    except Exception:  # (a JVM without Scala 2.13's ArraySeq)
        return set(frame.inputFiles())
    return out - {""}

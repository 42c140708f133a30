"""A class-data archive (Java's AppCDS) for the Spark driver's JVM: Spark starts sooner.

A new Spark session spends most of its start loading and verifying Spark's classes (thousands,
from hundreds of jars). Java can keep them parsed and verified in an archive mapped at the next
start. Measured with pyspark 4 on 2 cores, a session and its first job: 10.4-11.0 s and
5.0-5.1 s without, 5.8-6.6 s and 2.4-2.7 s with one; `acidtool delete` of one row from the
command line (a session each time) 17.9-19.7 s without, 11.7-12.2 s with.

The first session without an archive has its JVM write one when it exits
(``-XX:ArchiveClassesAtExit``, about 160 MB, 20-35 s of one core after the command ended),
under a name of its own and one run at a time; a later start takes a finished one. The JVM
writes an archive's header last, so one killed while writing leaves a file Java refuses; and
Java checks the archive against its own build and class path at each start, and loads the
classes as usual when it does not fit: never an error. The archive's name holds what it
depends on (the java binary, the Spark jars, the class path given): an upgrade makes a new
one. Linux only; ``ACIDTOOL_SPARK_CDS=0`` turns it off; a cache directory that cannot be
written leaves it off.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"  # (an archive Java cannot use is not an error)
SETTLED = 10.0  # seconds after its last write a JVM's archive is taken as finished (taken
# early, it is still one Java refuses: its header, written last, is not there yet)
CLAIMED = 600.0  # seconds one run has to write the archive before another may


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "acidtool" / "spark-cds"


def driver_options(class_path: str = "") -> str:
    """JVM options for a new Spark driver: start from the archive, or write one at exit; ""
    where there can be none. ``class_path``: the session's ``spark.driver.extraClassPath``."""
    if os.environ.get("ACIDTOOL_SPARK_CDS", "1") == "0" or not sys.platform.startswith("linux"):
        return ""
    key = _key(class_path)
    if key is None:
        return ""
    final = _settle(key)
    if final is not None:  # (a JVM that crashes writes its report aside, not in cwd)
        crash = os.path.join(tempfile.gettempdir(), "acidtool-jvm-crash-%p.log")
        return f"-XX:SharedArchiveFile={final} -XX:ErrorFile={crash} {QUIET}"
    where = cache_dir()
    if not _claim(where / f"spark-{key}.claim"):
        return ""  # another run is writing it (or the cache cannot be written)
    return f"-XX:ArchiveClassesAtExit={where / f'spark-{key}.{os.getpid()}.part'} {QUIET}"


def _claim(claim: Path) -> bool:
    """Whether this run writes the archive: one run at a time does (each costs its JVM 20-35 s
    of CPU after the command has ended, and 150 MB), until its archive is settled or
    ``CLAIMED`` seconds have passed without one."""
    for _ in range(2):
        try:
            claim.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            return True
        except FileExistsError:
            try:
                if time.time() - claim.stat().st_mtime < CLAIMED:
                    return False
                claim.unlink()  # its run made no archive: this one tries
            except OSError:
                return False
        except OSError:
            return False
    return False


def ready(class_path: str = "") -> bool:
    """Whether a new driver would start from an archive (nothing claimed or written)."""
    key = _key(class_path)
    return key is not None and _settle(key) is not None


def _key(class_path: str) -> str | None:
    """What the archive depends on, hashed: the java the driver runs, the Spark jars, the
    class path given (None: no java or no pyspark found)."""
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    try:
        import pyspark

        jars = os.path.join(os.environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__),
                            "jars")
        real = os.path.realpath(java or "")
        parts = [real, str(os.stat(real).st_mtime_ns), jars, class_path,
                 *(f"{os.path.basename(p)}:{os.path.getsize(p)}"
                   for p in sorted(glob.glob(os.path.join(jars, "*.jar"))))]
    except (ImportError, OSError):
        return None
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _settle(key: str) -> Path | None:
    """A finished archive of another run put in place, others' removed once finished. The
    archive, if there is one now."""
    where = cache_dir()
    final = where / f"spark-{key}.jsa"
    now = time.time()
    for part in sorted(where.glob(f"spark-{key}.*.part")):
        try:
            if now - part.stat().st_mtime < SETTLED:
                continue
            if not final.exists():
                os.replace(part, final)
            else:
                part.unlink()
        except OSError:
            continue
    if not final.is_file():
        return None
    with contextlib.suppress(OSError):
        (where / f"spark-{key}.claim").unlink()
    return final


def discard(options: str) -> bool:
    """Remove the archive ``options`` (``driver_options``'s) start from, after a JVM failed to
    start with it: whether there was one."""
    for option in options.split():
        if option.startswith("-XX:SharedArchiveFile="):
            with contextlib.suppress(OSError):
                os.unlink(option.split("=", 1)[1])
            return True
    return False

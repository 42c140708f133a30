"""The Spark driver's class-data archive (acidtool/io/classcache.py): one run writes it, a later
run starts from it once it is finished, and nothing else is ever changed or refused."""

from __future__ import annotations

import os
import sys
import time

import pytest

from acidtool.io import classcache

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    pytest.importorskip("pyspark")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("ACIDTOOL_SPARK_CDS", raising=False)
    if classcache._key("") is None:
        pytest.skip("no java found")
    return tmp_path / "cache" / "acidtool" / "spark-cds"


def _aged(path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_the_first_run_writes_the_archive_and_a_second_meanwhile_does_not(cache):
    key = classcache._key("")
    first = classcache.driver_options()
    part = cache / f"spark-{key}.{os.getpid()}.part"
    assert first == f"-XX:ArchiveClassesAtExit={part} {classcache.QUIET}"
    assert (cache / f"spark-{key}.claim").exists()
    assert classcache.driver_options() == ""  # claimed: one JVM writes at a time


def test_a_finished_archive_is_taken_and_the_claim_released(cache):
    key = classcache._key("")
    assert classcache.driver_options().startswith("-XX:ArchiveClassesAtExit=")
    part = cache / f"spark-{key}.12345.part"
    part.write_bytes(b"archive")
    assert classcache.driver_options() == ""  # still being written (or just finished)
    _aged(part, classcache.SETTLED + 5)
    final = cache / f"spark-{key}.jsa"
    assert classcache.driver_options().startswith(f"-XX:SharedArchiveFile={final} ")
    assert final.read_bytes() == b"archive" and not part.exists()
    assert not (cache / f"spark-{key}.claim").exists()
    other = cache / f"spark-{key}.777.part"  # a second writer's, later: removed once settled
    other.write_bytes(b"other")
    _aged(other, classcache.SETTLED + 5)
    assert classcache.driver_options().startswith("-XX:SharedArchiveFile=")
    assert not other.exists() and final.read_bytes() == b"archive"


def test_a_claim_whose_run_made_no_archive_is_taken_over(cache):
    key = classcache._key("")
    cache.mkdir(parents=True)
    claim = cache / f"spark-{key}.claim"
    claim.write_bytes(b"")
    assert classcache.driver_options() == ""
    _aged(claim, classcache.CLAIMED + 5)
    assert classcache.driver_options().startswith("-XX:ArchiveClassesAtExit=")


def test_the_archive_is_per_java_spark_and_class_path(cache, tmp_path, monkeypatch):
    assert classcache._key("") == classcache._key("")
    assert classcache._key("/x/hive-common.jar") != classcache._key("")
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-such-java"))
    assert classcache._key("") is None and classcache.driver_options() == ""


def test_off_when_asked_or_when_the_cache_cannot_be_written(cache, tmp_path, monkeypatch):
    monkeypatch.setenv("ACIDTOOL_SPARK_CDS", "0")
    assert classcache.driver_options() == ""
    monkeypatch.delenv("ACIDTOOL_SPARK_CDS")
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))  # not a directory
    assert classcache.driver_options() == ""


@pytest.mark.slow
def test_a_damaged_archive_is_removed_and_spark_starts_without_it(cache, tmp_path):
    """A truncated archive whose header is whole makes the JVM die mapping it (SIGBUS): the
    session starts again without it and removes it; the crash report is not left in the
    working directory."""
    import shutil
    import subprocess

    from .helpers.spark import java_problem

    if java_problem():
        pytest.skip(java_problem())
    whole = tmp_path / "whole.jsa"
    subprocess.run([shutil.which("java") or "java", f"-XX:ArchiveClassesAtExit={whole}",
                    "-Xlog:cds=off", "-version"], capture_output=True, timeout=120)
    if not whole.exists():
        pytest.skip("this java writes no class archive")
    final = cache / f"spark-{classcache._key('')}.jsa"
    cache.mkdir(parents=True)
    final.write_bytes(whole.read_bytes()[:whole.stat().st_size // 2])
    work = tmp_path / "work"
    work.mkdir()
    code = ("from acidtool.io.spark import session\n"
            "print(session('local[1]').range(3).count())\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=work, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "3", proc.stderr[-2000:]
    assert not final.exists()
    assert not list(work.iterdir())  # no hs_err_pid*.log

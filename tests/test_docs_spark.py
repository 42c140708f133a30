"""The example output of the docs pages that start Spark (export.md, spark.md) is what the
tool prints today: a module of its own, so that it runs beside the other pages' check."""

import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.mark.slow
def test_spark_pages_examples_are_current():
    proc = subprocess.run([sys.executable, str(DOCS / "update.py"), "--check", "--group", "spark"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr

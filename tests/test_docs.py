"""Every command has a docs page, and the example output in docs/ is what the tool prints today."""

import subprocess
import sys
from pathlib import Path

import pytest

from acidtool.cli.main import app

DOCS = Path(__file__).resolve().parents[1] / "docs"


def check_group(group: str) -> None:
    """docs/update.py --check of one group of pages (their example output is today's)."""
    proc = subprocess.run([sys.executable, str(DOCS / "update.py"), "--check", "--group", group],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slow
def test_docs_examples_are_current():
    """Every page but the Spark ones (tests/test_docs_spark.py)."""
    check_group("rest")


def test_every_command_has_a_page():
    import typer.main

    group = typer.main.get_command(app)
    for name in group.commands:
        assert (DOCS / f"{name}.md").exists(), f"docs/{name}.md is missing"

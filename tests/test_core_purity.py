"""The core imports only the standard library (no pyarrow, pyorc, fsspec, pyspark, typer)."""

import subprocess
import sys
from pathlib import Path

import acidtool.core

FORBIDDEN = ("pyarrow", "pyorc", "fsspec", "pyspark", "typer", "tabulate", "numpy")


def test_core_modules_import_no_third_party_package():
    core = Path(acidtool.core.__file__).parent
    modules = sorted(f"acidtool.core.{p.stem}" for p in core.glob("*.py") if p.stem != "__init__")
    assert "acidtool.core.select" in modules
    code = (
        "import sys\n"
        f"for m in {modules!r}: __import__(m)\n"
        f"bad = sorted(k for k in sys.modules if k.split('.')[0] in {FORBIDDEN!r})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""

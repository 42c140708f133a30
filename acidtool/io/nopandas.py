"""Keeping pandas out of a process that never hands pandas objects to pyarrow.

pyarrow's pandas shim imports pandas, when it is installed, the first time any value becomes an
Arrow scalar (pyarrow.dataset's import, pc.fill_null): a third of a second of every dump and
read, for nothing. Once pandas cannot be imported, the shim takes it as missing and pyarrow no
longer recognises pandas objects, which is why a library process never does this: only the
command line, for its reading commands.
"""

from __future__ import annotations

import sys


def leave_pandas_out() -> None:
    """pandas cannot be imported in this process from now on."""
    if not any(isinstance(finder, _NoPandas) for finder in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())


class _NoPandas:
    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("pandas is left out of this process (acidtool.io.nopandas)")
        return None

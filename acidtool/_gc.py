"""Pausing Python's cyclic garbage collector around allocation-heavy, cycle-free work.

Listing a table makes a few objects per file and no reference cycles; with tens of thousands of
files the collector's repeated generation scans cost about a third of the time (measured by
benchmarks/bench_ls.py). Reference counting still frees everything as usual.
"""

import contextlib
import gc


@contextlib.contextmanager
def paused_gc():
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()

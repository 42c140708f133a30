"""Progress on long work: one bar on stderr, only when stderr is a terminal (a pipe, a file or
a CI log gets nothing). Redrawn at most ten times a second; when the work is done the line is
cleared, so that what the command prints next starts on a clean line.

    acidtool: [##########..........]  50%  1,234/2,468 files read
"""

from __future__ import annotations

import sys
import threading
import time

WIDTH = 20
EVERY = 0.1  # seconds between two drawings


class Progress:
    """``tick`` from any thread; ``what`` names what is counted ("files read")."""

    def __init__(self, total: int, enabled: bool | None = None, what: str = "done",
                 stream=None):
        self.stream = stream or sys.stderr
        if enabled is None:
            enabled = self.stream.isatty()
        self.total, self.done, self.what = total, 0, what
        self.wanted = bool(enabled)
        self.enabled = self.wanted and total > 0
        self.lock = threading.Lock()
        self.last = 0.0

    def tick(self, count: int = 1) -> None:
        if not self.enabled:
            return
        with self.lock:
            self.done += count
            now = time.monotonic()
            if self.done < self.total and now - self.last < EVERY:
                return
            self.last = now
            self.stream.write("\r\x1b[K" if self.done >= self.total else
                              "\r" + self.line())
            self.stream.flush()

    def at(self, done: int, total: int | None = None) -> None:
        """The count set rather than added to (a callback given ``(done, total)``)."""
        if total is not None and total != self.total:
            self.total = total
            self.enabled = self.wanted and total > 0
        self.tick(done - self.done)

    def line(self) -> str:
        share = min(self.done / self.total, 1.0) if self.total else 1.0
        full = int(share * WIDTH)
        return (f"acidtool: [{'#' * full}{'.' * (WIDTH - full)}] {share:4.0%}  "
                f"{self.done:,}/{self.total:,} {self.what}")



def ticker(what: str):
    """A ``progress(done, total)`` callback drawing the bar on a terminal (nothing where
    stderr is not one)."""
    return Progress(0, None, what).at

"""Every error acidtool raises on purpose, in one tree, and the exit statuses they map to.

``AcidToolError`` is the base. The CLI turns each error into one line on stderr and the
``exit_status`` of its class; anything else that escapes is a bug and exits
``ExitStatus.INTERNAL``, so that a CI gate can tell a broken table from a broken tool.

``AcidStateError`` and its subclasses are the failures of getAcidState, as values the CLI can
report (and JSON can carry). Each maps one Hive exception to a stable ``kind`` used in
``acidtool ls --format json``:

=================  ==================================================================
kind               Hive behaviour
=================  ==================================================================
invalid_name       NumberFormatException / StringIndexOutOfBoundsException while
                   parsing a base_/delta_/delete_delta_ directory name
not_enough_history IOException "Not enough history available for (...)"
invalid_metadata   IllegalStateException / IllegalArgumentException / IOException
                   from a ``_metadata_acid`` marker
missing_txn_list   Hive 4: IllegalArgumentException "No ValidTxnList for ..."
read_fails         the reader, after the selection: IllegalArgumentException "bucketId out
                   of range: -1" for a selected original file whose name gives no bucket id
=================  ==================================================================
"""

from __future__ import annotations

import enum


class ExitStatus(enum.IntEnum):
    """The exit statuses of every command."""

    OK = 0
    FINDINGS = 1  # Hive would fail, validate found something, a file is not readable ORC
    USAGE = 2  # a bad option or argument, an unreadable input path
    INTERNAL = 3  # a bug in acidtool: the message asks for a report
    AFTER_COMMIT = 4  # a write was committed, and what was to follow it failed (said plainly)
    INTERRUPTED = 130  # SIGINT (128 + 2); SIGTERM exits 143


class AcidToolError(Exception):
    """Base class of every expected acidtool failure."""

    exit_status: int = ExitStatus.USAGE


class UsageError(AcidToolError, ValueError):
    """A bad option value or argument (malformed write-id list, unknown Hive version...)."""


class PathError(AcidToolError, OSError):
    """A path that cannot be listed or read: missing, not a directory, no permission."""


class DependencyError(AcidToolError, ImportError):
    """An optional dependency or native library is missing; the message says what to install."""


class OrcReadError(AcidToolError):
    """A file that is not readable ORC (bad magic, truncated, zero bytes)."""

    exit_status = ExitStatus.FINDINGS


class AfterCommitError(AcidToolError):
    """The write was committed; a step after the commit failed (the message says which)."""

    exit_status = ExitStatus.AFTER_COMMIT


class Interrupted(AcidToolError):
    """SIGINT or SIGTERM; the message says what was committed and what was cleaned up."""

    def __init__(self, message: str, signal_number: int = 2) -> None:
        super().__init__(message)
        self.exit_status = 128 + signal_number


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the process is, so that cleanup runs as for Ctrl-C."""


# The SIGTERMs and SIGINTs the process received, as the CLI's handlers record them. Python drops
# an exception raised where it cannot propagate (in a weakref callback of the import machinery,
# for one): a writer asks ``raise_if_terminated`` before its commit, so that such a signal is
# not lost.
TERMINATED: list[int] = []
INTERRUPTED: list[int] = []
# Non-empty while a writer rolls back or releases its lock (``io.commit.shielded``): the CLI's
# handlers then record a signal without raising it, and the writer honours it afterwards.
SHIELD: list[int] = []
# (table, journal) of the last writer's run that ended in this process (io.commit.Commit.end):
# an interruption after it is not said as if nothing were written
COMMITTED: list[tuple[str, str]] = []


def raise_if_terminated() -> None:
    if TERMINATED:
        raise Terminated()
    if INTERRUPTED:
        raise KeyboardInterrupt()


class AcidStateError(AcidToolError):
    """Hive would fail to compute the directory state (and so fail the query)."""

    kind = "error"
    exit_status = ExitStatus.FINDINGS

    def __init__(self, message: str, *, hive_exception: str, path: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hive_exception = hive_exception
        self.path = path

    def __reduce__(self):
        # pickle rebuilds an exception from its positional args only, and this one's fields
        # are keyword-only: without this, unpickling it failed (a worker process's answer
        # holding one hung validate's pool, whose result thread died on it)
        return (_state_error, (type(self), self.message, self.hive_exception, self.path))


def _state_error(cls: type, message: str, hive_exception: str, path: str | None
                 ) -> AcidStateError:
    return cls(message, hive_exception=hive_exception, path=path)


class InvalidNameError(AcidStateError, ValueError):
    kind = "invalid_name"


class NotEnoughHistoryError(AcidStateError):
    kind = "not_enough_history"


class InvalidMetadataError(AcidStateError):
    kind = "invalid_metadata"


class MissingTxnListError(AcidStateError):
    kind = "missing_txn_list"


class ReadFailsError(AcidStateError):
    """The selection succeeds, but Hive's reader fails on a file it selected (an original file
    whose name gives no bucket id: ``bucketId out of range: -1``)."""

    kind = "read_fails"


class HalfCompactionError(AcidToolError):
    """A partition holds half of a compaction (one of its two directories placed, the other
    not): its rows would be read wrong, so nothing reads or rewrites them."""

    exit_status = ExitStatus.FINDINGS


class MixedSchemaError(AcidToolError):
    """The files a read takes hold rows of different schemas (not only columns added at the
    end): their rows cannot be read as Hive would without the table's own columns."""

    exit_status = ExitStatus.FINDINGS

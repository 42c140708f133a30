"""Typed errors. Every error acidtool raises on purpose derives from AcidToolError.

The CLI turns each into one line on stderr and an exit status: usage and path problems exit 2,
problems Hive itself would fail on (AcidStateError) exit 1.
"""


class AcidToolError(Exception):
    """Base class of every expected acidtool failure."""

    exit_code = 2


class UsageError(AcidToolError, ValueError):
    """A bad option value or argument (malformed write-id list, unknown Hive version...)."""


class PathError(AcidToolError, OSError):
    """A path that cannot be listed or read: missing, not a directory, no permission."""


class DependencyError(AcidToolError, ImportError):
    """An optional dependency or native library is missing; the message says what to install."""


class OrcReadError(AcidToolError):
    """A file that is not readable ORC (bad magic, truncated, zero bytes)."""

    exit_code = 1

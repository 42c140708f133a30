"""Failures of getAcidState, as values the CLI can report (and JSON can carry).

Each maps one Hive exception to a stable ``kind`` used in ``acidtool ls --format json``:

=================  ==================================================================
kind               Hive behaviour
=================  ==================================================================
invalid_name       NumberFormatException / StringIndexOutOfBoundsException while
                   parsing a base_/delta_/delete_delta_ directory name
not_enough_history IOException "Not enough history available for (...)"
invalid_metadata   IllegalStateException / IllegalArgumentException / IOException
                   from a ``_metadata_acid`` marker
missing_txn_list   Hive 4: IllegalArgumentException "No ValidTxnList for ..."
=================  ==================================================================
"""


class AcidStateError(Exception):
    """Hive would fail to compute the directory state (and so fail the query)."""

    kind = "error"

    def __init__(self, message: str, *, hive_exception: str, path: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hive_exception = hive_exception
        self.path = path


class InvalidNameError(AcidStateError, ValueError):
    kind = "invalid_name"


class NotEnoughHistoryError(AcidStateError):
    kind = "not_enough_history"


class InvalidMetadataError(AcidStateError):
    kind = "invalid_metadata"


class MissingTxnListError(AcidStateError):
    kind = "missing_txn_list"

"""The Hive version whose rules apply, as a value with its behaviour switches.

Only the major line matters for layout semantics: 2 (2.x, read as 2.3), 3 and 4. A
``HiveVersion`` is a ``str`` (``"2"``, ``"3"``, ``"4"``), so it prints, sorts and goes into JSON as
the number users type; code asks it what it does instead of comparing that number.
"""

from __future__ import annotations

import enum


class HiveVersion(str, enum.Enum):
    V2 = "2"
    V3 = "3"
    V4 = "4"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def of(cls, value: "str | int | HiveVersion") -> "HiveVersion":
        """'2.3' -> V2, 3 -> V3. Raises ValueError for anything else."""
        try:
            return _MEMBERS[value]  # a member, or its exact spelling: one look-up
        except (KeyError, TypeError):
            pass
        text = str(value).strip()
        found = _ALIASES.get(text) or (text[0] if text[:2] in ("2.", "3.", "4.") else None)
        if found is None:
            raise ValueError(f"unknown Hive version {value!r}: use 2, 3 or 4")
        return cls(found)

    # --- naming and numbering ---------------------------------------------------------------
    @property
    def has_write_ids(self) -> bool:
        """Hive 3 numbers directories by per-table write ids; 2.3 by global transaction ids,
        with the transaction list itself as the snapshot."""
        return self is not HiveVersion.V2

    @property
    def bucket_codec(self) -> bool:
        """Hive 3 encodes the bucket column with BucketCodec V1 (bucket id and statement id);
        2.3 writes the plain bucket id."""
        return self is not HiveVersion.V2

    @property
    def writes_acid_version(self) -> bool:
        """Hive 3 writes ``_orc_acid_version`` files and the ``hive.acid.version`` footer key."""
        return self is not HiveVersion.V2

    @property
    def visibility_suffix(self) -> bool:
        """Hive 4 suffixes compacted directories with ``_v<txn>`` and needs a ValidTxnList."""
        return self is HiveVersion.V4

    @property
    def bucket_attempt_suffix(self) -> bool:
        """Hive 4 direct inserts may name files ``bucket_N_A`` (an attempt id)."""
        return self is HiveVersion.V4

    @property
    def copy_file_names(self) -> bool:
        """Hive 3 and 4 parse a bucket id from original files named ``N_M_copy_K``."""
        return self is not HiveVersion.V2

    @property
    def raw_files_in_deltas(self) -> bool:
        """Hive 3 and 4's LOAD DATA moves plain files into a ``delta_`` directory (read with
        synthetic ROW__IDs); to 2.3 any file there is a bucket file."""
        return self is not HiveVersion.V2

    # --- getAcidState --------------------------------------------------------------------------
    @property
    def reads_base_markers(self) -> bool:
        """Hive 3 and 4 read ``_metadata_acid`` to tell compacted bases from INSERT OVERWRITE
        ones; 2.3 takes every base as compacted."""
        return self is not HiveVersion.V2

    @property
    def has_insert_only(self) -> bool:
        """Insert-only (micro-managed) transactional tables came with Hive 3."""
        return self is not HiveVersion.V2

    def tracks_aborted(self, insert_only: bool) -> bool:
        """getAcidState lists the deltas whose write ids all aborted: Hive 4 always, 3.1 for an
        insert-only table (the reader passes its table properties; hive-exec 3.1.3)."""
        return self.tracks_aborted_ranges or (insert_only and self is HiveVersion.V3)

    @property
    def history_error_needs_compacted_base(self) -> bool:
        """Hive 4 fails with "Not enough history" only when the oldest base is a compactor's;
        2.3 and 3.1 (hive-exec 3.1.3, whatever the spec's branch-3 copy says) whenever some
        base exists and none is valid, an INSERT OVERWRITE or aborted base included."""
        return self is HiveVersion.V4

    @property
    def base_below_min_open_is_valid(self) -> bool:
        """Hive 4.0's isValidBase takes any base whose write id is at or below the snapshot's
        minimum open write id, before it looks at the compacted flag (seen with hive-exec
        4.0.1; HIVE-29601 removes it from later releases because it ignores the high
        watermark)."""
        return self is HiveVersion.V4

    @property
    def sorts_originals(self) -> bool:
        """Hive 3 and 4 sort the original files they read by path; 2.3 keeps listing order."""
        return self is not HiveVersion.V2

    @property
    def skips_empty_nested_originals(self) -> bool:
        """Hive 3 and 4 also skip zero-length original files inside subdirectories."""
        return self is not HiveVersion.V2

    @property
    def skips_dirs_without_files(self) -> bool:
        """Hive 4 builds getAcidState from a recursive listing of files (off HDFS, or with
        file ids off): a base or delta holding no file it lists (an empty one, or one holding
        only hidden files) is never seen. 2.3 and 3.1 list directories, and take an empty
        base (hive-exec 2.3.10, 3.1.3, 4.0.1)."""
        return self is HiveVersion.V4

    @property
    def tracks_aborted_ranges(self) -> bool:
        """Hive 4 asks the snapshot whether a delta's whole range is aborted (and base
        visibility by transaction); 3 and 2.3 judge by the range's ends."""
        return self is HiveVersion.V4

    @property
    def split_update(self) -> bool:
        """Hive 3 and 4 always write updates as a delete plus an insert (delete_delta); 2.3 may
        also keep update and delete events in the delta itself (the "legacy" layout)."""
        return self is not HiveVersion.V2

    @property
    def key_index_may_skip_last_stripe(self) -> bool:
        """Hive 2.3's writer may leave the last stripe out of ``hive.acid.key.index``."""
        return self is HiveVersion.V2


_ALIASES = {"2": "2", "2.3": "2", "2.x": "2", "3": "3", "3.1": "3", "3.x": "3", "4": "4",
            "4.x": "4"}

# a member hashes and compares as its value
_MEMBERS: dict[object, HiveVersion] = {v.value: v for v in HiveVersion}
HIVE_VERSIONS = tuple(v.value for v in HiveVersion)
DEFAULT_HIVE_VERSION = HiveVersion.V4


def normalize_hive_version(value: str | int | HiveVersion) -> HiveVersion:
    """'2.3' -> HiveVersion.V2, 3 -> HiveVersion.V3. Raises ValueError for anything else."""
    return HiveVersion.of(value)

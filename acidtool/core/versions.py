"""Hive version labels. Only the major line matters for layout semantics: 2 (2.x, read as 2.3), 3, 4."""

HIVE_VERSIONS = ("2", "3", "4")
DEFAULT_HIVE_VERSION = "4"

_ALIASES = {"2": "2", "2.3": "2", "2.x": "2", "3": "3", "3.1": "3", "3.x": "3", "4": "4", "4.x": "4"}


def normalize_hive_version(value: str | int) -> str:
    """'2.3' -> '2', 3 -> '3'. Raises ValueError for anything else."""
    text = str(value).strip()
    try:
        return _ALIASES[text]
    except KeyError:
        if text[:2] in ("2.", "3.", "4."):
            return text[0]
        raise ValueError(f"unknown Hive version {value!r}: use 2, 3 or 4") from None

"""Names of ACID directories and of the files inside them, parsed as Hive parses them.

Directory names (spec §2): ``base_W[_vT]``, ``delta_MIN_MAX[_STMT][_vT]``,
``delete_delta_MIN_MAX[_STMT][_vT]``. Numbers go through Java's Long.parseLong / Integer.parseInt
(any width, leading zeros, a sign), and a malformed name is an error, never skipped: Hive's
getAcidState fails the whole read on it. The ``_vT`` visibility suffix exists only in Hive 4; Hive 2.3
and 3 fail on it.

Parsed values are frozen and keep their raw spelling; ``str()`` gives Hive's canonical spelling
(``%07d`` ids, ``%04d`` statement ids).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import InvalidNameError
from .javanum import JavaNumberFormatError, java_string_key, parse_int, parse_long
from .versions import HiveVersion, normalize_hive_version

BASE_PREFIX = "base_"
DELTA_PREFIX = "delta_"
DELETE_DELTA_PREFIX = "delete_delta_"
BUCKET_PREFIX = "bucket_"
FLUSH_LENGTH_SUFFIX = "_flush_length"
ACID_VERSION_FILE = "_orc_acid_version"
METADATA_FILE = "_metadata_acid"
VISIBILITY_INFIX = "_v"
NO_STATEMENT = -1
# Writers' own spelling; 18 digits always fit a long and 9 an int.
_CANONICAL_DELTA = re.compile(r"(delete_)?delta_([0-9]{1,18})_([0-9]{1,18})(?:_([0-9]{1,9}))?")

# Hive's original-file (pre-ACID / LOAD DATA) naming: "000000_0" and "000000_0_copy_1".
_ORIGINAL = re.compile(r"([0-9]+)_[0-9]+")
_ORIGINAL_COPY = re.compile(r"([0-9]+)_[0-9]+_copy_([0-9]+)")
# Hive 4 AcidUtils.parseBucketId: the whole name, with an optional direct-insert attempt suffix.
_BUCKET_V4 = re.compile(r"bucket_([0-9]+)(_[0-9]+)?")


HIDDEN_PREFIXES = ("_", ".")  # Hive's hiddenFileFilter
# The staging directory of a convert in progress (or killed): hidden from Hive by its "_".
ACIDTOOL_STAGING_PREFIX = "_acidtool_staging_"


def is_hidden(name: str) -> bool:
    """Hive's hiddenFileFilter: names starting with '_' or '.' are never data."""
    return name.startswith(HIDDEN_PREFIXES)


def is_partition_component(name: str) -> bool:
    """A ``key=value`` directory name (key not empty, not hidden): a partition's."""
    key, sep, _ = name.partition("=")
    return bool(sep and key) and not is_hidden(name)


def _number(parse, text: str, name: str) -> int:
    try:
        return parse(text)
    except JavaNumberFormatError as exc:
        raise InvalidNameError(
            f"invalid name {name!r}: {exc}",
            hive_exception="java.lang.NumberFormatException",
            path=name,
        ) from None


def _visibility(name: str, version: HiveVersion) -> tuple[str, int]:
    """Hive 4 cuts the name at the first '_v' and parses what follows as the visibility txn id."""
    if not version.visibility_suffix:
        return name, 0
    idx = name.find(VISIBILITY_INFIX)
    if idx < 0:
        return name, 0
    return name[:idx], _number(parse_long, name[idx + len(VISIBILITY_INFIX):], name)


def _canonical_suffix(visibility_txn_id: int) -> str:
    # _v0000000 means "no suffix" and writers omit it.
    return f"_v{visibility_txn_id:07d}" if visibility_txn_id else ""


@dataclass(frozen=True)
class Base:
    """``base_W[_vT]``: a complete snapshot as of write id W."""

    write_id: int
    visibility_txn_id: int = 0
    raw: str | None = field(default=None, compare=False)

    kind = "base"

    @property
    def name(self) -> str:
        return self.raw if self.raw is not None else str(self)

    @property
    def min_write_id(self) -> int:
        return self.write_id

    @property
    def max_write_id(self) -> int:
        return self.write_id

    statement_id = NO_STATEMENT

    def __str__(self) -> str:
        return f"{BASE_PREFIX}{self.write_id:07d}{_canonical_suffix(self.visibility_txn_id)}"

    @classmethod
    def parse(cls, name: str, hive_version: str = "4") -> Base:
        if not name.startswith(BASE_PREFIX):
            raise InvalidNameError(f"not a base directory name: {name!r}",
                                   hive_exception="java.lang.IllegalArgumentException", path=name)
        version = normalize_hive_version(hive_version)
        head, visibility = _visibility(name, version)
        return cls(_number(parse_long, head[len(BASE_PREFIX):], name), visibility, name)


@dataclass(frozen=True)
class Delta:
    """``delta_MIN_MAX[_STMT][_vT]`` or, with ``delete=True``, ``delete_delta_...``."""

    min_write_id: int
    max_write_id: int
    statement_id: int = NO_STATEMENT
    visibility_txn_id: int = 0
    delete: bool = False
    raw: str | None = field(default=None, compare=False)

    @property
    def kind(self) -> str:
        return "delete_delta" if self.delete else "delta"

    @property
    def name(self) -> str:
        return self.raw if self.raw is not None else str(self)

    def __str__(self) -> str:
        prefix = DELETE_DELTA_PREFIX if self.delete else DELTA_PREFIX
        stmt = f"_{self.statement_id:04d}" if self.statement_id != NO_STATEMENT else ""
        return (f"{prefix}{self.min_write_id:07d}_{self.max_write_id:07d}{stmt}"
                f"{_canonical_suffix(self.visibility_txn_id)}")

    def sort_key(self) -> tuple:
        """Hive's ParsedDelta.compareTo: min ascending, max DESCENDING (a wider, compacted delta
        first), statement id ascending with "none" (-1) first, then the path, which puts
        ``delete_delta_x_y`` before ``delta_x_y``."""
        return (self.min_write_id, -self.max_write_id, self.statement_id, java_string_key(self.name))

    @classmethod
    def parse(cls, name: str, hive_version: str = "4") -> Delta:
        fast = _fast_delta(name)
        if fast is not None:
            return fast
        if name.startswith(DELETE_DELTA_PREFIX):
            prefix, delete = DELETE_DELTA_PREFIX, True
        elif name.startswith(DELTA_PREFIX):
            prefix, delete = DELTA_PREFIX, False
        else:
            raise InvalidNameError(f"not a delta directory name: {name!r}",
                                   hive_exception="java.lang.IllegalArgumentException", path=name)
        version = HiveVersion.of(hive_version)
        head, visibility = _visibility(name, version)
        rest = head[len(prefix):]
        first = rest.find("_")
        if first < 0:
            # Hive does rest.substring(0, rest.indexOf('_')) without checking for -1.
            raise InvalidNameError(
                f"invalid ACID directory name {name!r}: no '_' between min and max write id",
                hive_exception="java.lang.StringIndexOutOfBoundsException", path=name)
        low = _number(parse_long, rest[:first], name)
        second = rest.find("_", first + 1)
        if second < 0:
            high = _number(parse_long, rest[first + 1:], name)
            stmt = NO_STATEMENT
        else:
            high = _number(parse_long, rest[first + 1:second], name)
            stmt = _number(parse_int, rest[second + 1:], name)
        return cls(low, high, stmt, visibility, delete, name)


AcidDir = Base | Delta


def _fast_delta(name: str) -> Delta | None:
    """The names writers produce (plain digits, no suffix), parsed without the general path;
    anything else returns None and goes through Delta.parse's Java-faithful rules. Builds the
    frozen value through its __dict__ (a table can have tens of thousands of deltas)."""
    m = _CANONICAL_DELTA.fullmatch(name)
    if m is None:
        return None
    delete, low, high, stmt = m.groups()
    d = object.__new__(Delta)
    d.__dict__.update(min_write_id=int(low), max_write_id=int(high),
                      statement_id=int(stmt) if stmt else NO_STATEMENT, visibility_txn_id=0,
                      delete=delete is not None, raw=name)
    return d


def parse_dir_name(name: str, hive_version: str = "4") -> AcidDir | None:
    """Parse a directory name, or return None when it has no ACID prefix (an original directory).

    Prefixes are case sensitive, as in Hive (``BASE_5`` is an ordinary directory)."""
    if name[:1] == "d":
        fast = _fast_delta(name)  # the common case, before any other work
        if fast is not None:
            return fast
    hive_version = normalize_hive_version(hive_version)
    if name.startswith(BASE_PREFIX):
        return Base.parse(name, hive_version)
    if name.startswith((DELTA_PREFIX, DELETE_DELTA_PREFIX)):
        return Delta.parse(name, hive_version)
    return None


# ---------------------------------------------------------------------------------------------
# File names


@dataclass(frozen=True)
class FileName:
    """What a file name says, independent of Hive version.

    kind: ``bucket`` (bucket_N or bucket_N_ATTEMPT), ``flush_length`` (bucket_N_flush_length),
    ``acid_version`` (_orc_acid_version), ``metadata`` (_metadata_acid), ``original``
    (000000_0, 000000_0_copy_1), ``hidden`` (other names starting with _ or .), ``other``.
    """

    name: str
    kind: str
    bucket_id: int | None = None
    attempt_id: int | None = None
    copy: int | None = None

    @classmethod
    def parse(cls, name: str) -> FileName:
        if name == ACID_VERSION_FILE:
            return cls(name, "acid_version")
        if name == METADATA_FILE:
            return cls(name, "metadata")
        if is_hidden(name):
            return cls(name, "hidden")
        if name.startswith(BUCKET_PREFIX) and name.endswith(FLUSH_LENGTH_SUFFIX):
            digits = name[len(BUCKET_PREFIX):-len(FLUSH_LENGTH_SUFFIX)]
            if digits.isascii() and digits.isdigit() and int(digits) <= 2**31 - 1:
                return cls(name, "flush_length", int(digits))
            return cls(name, "other")
        m = _BUCKET_V4.fullmatch(name)
        if m:
            bucket = int(m.group(1))
            if bucket > 2**31 - 1:
                return cls(name, "other")
            attempt = int(m.group(2)[1:]) if m.group(2) else None
            return cls(name, "bucket", bucket, attempt)
        m = _ORIGINAL_COPY.fullmatch(name)
        if m:
            return cls(name, "original", _int_or_none(m.group(1)), copy=int(m.group(2)))
        m = _ORIGINAL.fullmatch(name)
        if m:
            return cls(name, "original", _int_or_none(m.group(1)))
        return cls(name, "other")


def _int_or_none(digits: str) -> int | None:
    value = int(digits)
    return value if value <= 2**31 - 1 else None


def original_file_name(bucket_id: int, copy: int | None = None) -> str:
    """What Hive's task writers call a plain data file: ``%06d_0`` (a copy: ``_copy_N``)."""
    return f"{bucket_id:06d}_0" + (f"_copy_{copy}" if copy else "")


def bucket_file_name(bucket_id: int, attempt_id: int | None = None) -> str:
    """What writers call a bucket file: ``bucket_%05d`` (4.x direct insert adds ``_%d``)."""
    return f"{BUCKET_PREFIX}{bucket_id:05d}" + (f"_{attempt_id}" if attempt_id is not None else "")


def parse_bucket_id(name: str, hive_version: str = "4") -> tuple[int, int | None]:
    """The bucket id Hive derives from a data file name, and the attempt id (Hive 4 only).

    -1 means "no bucket id". Raises InvalidNameError where Hive's parser throws:
    Hive 2.3 and 3 parse everything after ``bucket_`` as an int, so ``bucket_00001_1`` and
    ``bucket_00001_flush_length`` fail there; Hive 4 matches ``bucket_N(_A)?`` and returns -1 for
    other names. Hive 2.3 has no ``_copy_N`` pattern.
    """
    version = normalize_hive_version(hive_version)
    if version.bucket_attempt_suffix:
        m = _BUCKET_V4.fullmatch(name)
        if m:
            attempt = _number(parse_int, m.group(2)[1:], name) if m.group(2) else None
            return _number(parse_int, m.group(1), name), attempt
    elif name.startswith(BUCKET_PREFIX):
        return _number(parse_int, name[len(BUCKET_PREFIX):], name), None
    pattern_ok = _ORIGINAL.fullmatch(name) or (version.copy_file_names and _ORIGINAL_COPY.fullmatch(name))
    if pattern_ok:
        return _number(parse_int, name[: name.index("_")], name), None
    return -1, None


def is_original_name(name: str) -> bool:
    """``N_M`` or ``N_M_copy_K``: what Hive's originalBucketFilter passes."""
    return name[:1].isdigit() and bool(_ORIGINAL.fullmatch(name) or
                                       _ORIGINAL_COPY.fullmatch(name))


def is_copy_name(name: str) -> bool:
    return _ORIGINAL_COPY.fullmatch(name) is not None


ACID_DIR_PREFIXES = ("base_", "delta_", "delete_delta_")


def files_in_acid_dirs(paths):
    """(file, its directory's name) of each file directly in a ``base_``, ``delta_`` or
    ``delete_delta_`` directory of a listing (``PathInfo``s, relative paths), at any depth;
    hidden paths and streaming side files left out."""
    for p in paths:
        if p.is_dir:
            continue
        parts = p.path.split("/")
        if len(parts) < 2 or not parts[-2].startswith(ACID_DIR_PREFIXES) \
                or any(is_hidden(c) for c in parts) or parts[-1].endswith(FLUSH_LENGTH_SUFFIX):
            continue
        yield p, parts[-2]


def original_files(paths):
    """Each file of a listing (``PathInfo``s, relative paths) named as Hive names original
    files (``000000_0``, ``N_M_copy_K``) outside every ACID directory, hidden paths left
    out: a table's data from before it was converted to ACID."""
    for p in paths:
        parts = p.path.split("/")
        if not p.is_dir and is_original_name(parts[-1]) and not any(
                c.startswith(ACID_DIR_PREFIXES) or is_hidden(c) for c in parts):
            yield p


def kind_from_files(paths) -> str | None:
    """What a table's listing (``PathInfo``s, relative paths) says of its kind: "full" where a
    base or delta holds a ``bucket_N`` file (an ACID event file's name), "insert_only" where
    its bases and deltas hold only plain files named as Hive's writers name them (``N_M``),
    None where they hold no data file. (A full-ACID table whose only deltas came from LOAD
    DATA looks insert-only: only the metastore tells them apart.)"""
    plain = False
    for p, _ in files_in_acid_dirs(paths):
        name = p.path.rsplit("/", 1)[-1]
        if name.startswith(BUCKET_PREFIX):
            return "full"
        plain = plain or is_original_name(name)
    return "insert_only" if plain else None


def kind_problem(paths, insert_only: bool) -> str | None:
    """What is wrong with ``insert_only`` (the flag a writer or reader was given) for a table
    whose listing is ``paths``, or None: the table's kind from its files
    (``kind_from_files``)."""
    kind = kind_from_files(paths)
    if kind == "insert_only" and not insert_only:
        return ("its bases and deltas hold only plain files, an insert-only table's: give "
                "--insert-only (Hive reads a full-ACID file's six event columns as rows of an "
                "insert-only table; a full-ACID table whose deltas all came from LOAD DATA "
                "looks so too: --metastore reads its kind)")
    if kind == "full" and insert_only:
        return ("--insert-only, but its bases and deltas hold ACID event files (bucket_N), a "
                "full-ACID table's: drop --insert-only")
    return None

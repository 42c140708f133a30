"""The DataFrame of a ``NativePlan`` (native.py): one Spark SQL statement over views of its
ORC scans (``_Scans``), so that Spark analyses the whole plan once. Names reach the text only
through ``_q`` (backquotes doubled), values only through ``_literal``, types through
``_sql_type``; file paths go to Spark's reader as lists, and reach the text only as
``_literal``s of the ``_metadata.file_path`` a partition reads a shared relation by."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from ..core.snapshot import LONG_MAX, IdList
from ..io.spark import input_files
from ..io.spark import quoted as _q
from .native import ANTI_PAST, EVENTS, KEY, MASK_BITS, ONE_TASK_PAST, NativePlan, Part, Scan


def session_unfit(spark, plan: NativePlan) -> str | None:
    """Why this Spark session cannot read the plan's rows as they are (None: it can). Spark's
    ORC reader reads a Hive timestamp (a wall-clock time) as an instant in the JVM's time
    zone, and the DataFrame's TIMESTAMP_NTZ is that instant's wall clock in the session's."""
    if not any(_wall_clock(f.type) for f in plan.schema):
        return None
    session = spark.conf.get("spark.sql.session.timeZone")
    try:
        jvm = spark.sparkContext._jvm.java.util.TimeZone.getDefault().getID()
    except Exception:  # (a Spark Connect session has no JVM of its own to ask)
        return "timestamp columns, and this session does not say its JVM's time zone"
    if session == jvm:
        return None
    return (f"timestamp columns, and the session's time zone ({session}) is not the JVM's "
            f"({jvm}): Spark's ORC reader would shift them")


def _wall_clock(kind: pa.DataType) -> bool:
    """Whether a type is, or holds, a timestamp without a time zone."""
    if pa.types.is_timestamp(kind):
        return kind.tz is None
    if pa.types.is_struct(kind):
        return any(_wall_clock(kind.field(i).type) for i in range(kind.num_fields))
    if pa.types.is_map(kind):
        return _wall_clock(kind.key_type) or _wall_clock(kind.item_type)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _wall_clock(kind.value_type)
    return False


def _as_read(kind):
    """The Spark type its ORC reader reads a column of the DataFrame's type as: TIMESTAMP for
    TIMESTAMP_NTZ (cast back after)."""
    from pyspark.sql.types import ArrayType, MapType, StructField, StructType, TimestampNTZType, TimestampType

    if isinstance(kind, TimestampNTZType):
        return TimestampType()
    if isinstance(kind, StructType):
        return StructType([StructField(f.name, _as_read(f.dataType), f.nullable)
                           for f in kind.fields])
    if isinstance(kind, ArrayType):
        return ArrayType(_as_read(kind.elementType), kind.containsNull)
    if isinstance(kind, MapType):
        return MapType(_as_read(kind.keyType), _as_read(kind.valueType), kind.valueContainsNull)
    return kind


def to_frame(spark, plan: NativePlan):
    """The DataFrame of the plan, built of Spark's own operators: one SQL statement over a view
    of each scan. (Spark analyses a DataFrame at each step, and each step and each expression
    is a call into its JVM: built step by step, a table of ten partitions took a second to
    plan, and its analysis grew with the plan; one statement is analysed once.)"""
    from pyspark.sql.pandas.types import from_arrow_schema

    target = from_arrow_schema(plan.schema)
    if not plan.parts:
        return spark.createDataFrame([], target)
    scans = _Scans(spark, plan.folders)
    statement = _joined_sql(plan, target, scans) or \
        _union([_part_sql(part, plan, target, scans) for part in plan.parts])
    try:
        return spark.sql(scans.made(statement))
    finally:  # (the DataFrame holds the views' plans, not their names)
        scans.drop()


class _Scans:
    """The ORC scans a statement reads, asked for while it is written (calling it with a
    schema and files gives a token to read FROM) and made after (``made``) as few of Spark's
    relations as may be.

    A relation costs the driver about 5 ms, 0.3 ms a directory and 3-4 ms a file it is given
    (as one glob: ``sparkpaths.one_glob``). So the scans of one
    schema (data files of one shape, or delete deltas) share a relation across partitions,
    given as directories where those hold no directory (``NativePlan.folders``), up to
    Spark's parallelPartitionDiscovery.threshold paths (past it, Spark lists them with a job,
    0.46 s for 40). Each partition reads its own files of it by ``_metadata.file_path``,
    which prunes the other files before one is opened. Where ``inputFiles()`` does not hold
    the files as ``sparkpaths`` says (a URL Spark qualifies by its own lights), or a shape
    has a column named ``_metadata``, each partition's scan is a relation of its own."""

    def __init__(self, spark, folders: Mapping[str, frozenset[str]] | None = None):
        self.spark = spark
        self.folders = folders or {}
        self.asked: dict[str, tuple[Any, tuple[str, ...]]] = {}  # token: (schema, files)
        self.given: dict[str, list[str]] = {}  # token: the paths Spark is given for its files
        self.views: list[str] = []

    def __call__(self, schema, files) -> str:
        import uuid

        token = f"__acid_ask_{uuid.uuid4().hex}"
        self.asked[token] = (schema, tuple(files))
        self.given[token] = _through(list(files), self.folders)
        return token

    def made(self, statement: str) -> str:
        """The statement, each scan's token replaced by the view (or the SELECT of a view)
        it reads."""
        import re

        limit = int(self.spark.conf.get(
            "spark.sql.sources.parallelPartitionDiscovery.threshold", "32"))
        shapes: dict[str, list[str]] = {}
        for token, (schema, _) in self.asked.items():
            shapes.setdefault(schema.json(), []).append(token)
        reads: dict[str, str] = {}  # token: what it reads FROM
        for tokens in shapes.values():
            group: list[str] = []
            count = 0  # the paths Spark is given for the group's files
            for token in tokens:
                size = len(self.given[token])
                count += size
                if group and count > limit:
                    self._relation(group, reads)
                    group, count = [], size
                group.append(token)
            self._relation(group, reads)
        return re.sub(r"__acid_ask_[0-9a-f]{32}", lambda m: reads[m.group(0)], statement)

    def _relation(self, tokens: list[str], reads: dict[str, str]) -> None:
        """One relation of Spark's for the scans (or, where they cannot share one, one each),
        and what each of them reads FROM. Where it may, it hands Spark the files' directories
        (``NativePlan.folders``) rather than the files: a relation costs the driver 3-4 ms a
        file it is given, 0.3 ms a directory, and past the listing threshold a job."""
        from .sparkpaths import file_path

        schema = self.asked[tokens[0]][0]
        files = [f for t in tokens for f in self.asked[t][1]]
        if len(tokens) == 1:  # its files alone, and no filter to run on each row: the
            # directories whose files Spark lists are the scan's, the other files themselves
            where = self._given(files)
            if where == files or not self._view(tokens, where, reads, None, exact=files):
                self._view(tokens, files, reads, None)
            return
        paths = {f: file_path(f) for f in files}
        if None not in paths.values() and \
                "_metadata" not in {f.name.lower() for f in schema.fields} and \
                self._view(tokens, list(dict.fromkeys(p for t in tokens for p in self.given[t])),
                           reads, paths):
            return
        for token in tokens:
            self._relation([token], reads)

    def _view(self, tokens: list[str], where: list[str], reads: dict[str, str],
              paths: dict[str, str | None] | None, exact: list[str] | None = None) -> bool:
        """A view of Spark's reading of ``where`` (files, or directories of them) for the
        scans; with ``paths`` (each file's ``_metadata.file_path``), each scan reads its own
        files of it. No view is made (False) where Spark's ``inputFiles()`` do not hold the
        files as ``sparkpaths`` says they would, or (``exact``) are not those files."""
        from .sparkpaths import input_file, to_read

        frame = self.spark.read.schema(self.asked[tokens[0]][0]).orc(
            to_read(where, checked=paths is not None or exact is not None))
        if paths is not None:
            frame = frame.selectExpr("*", "_metadata.file_path AS __acid_file")
            wanted = {input_file(f) for f in paths}
            if not wanted <= input_files(frame, wanted):
                return False
        if exact is not None:
            wanted = {input_file(f) for f in exact}
            if input_files(frame, wanted) != wanted:
                return False
        view = f"__acid_scan_{tokens[0][11:]}"
        frame.createOrReplaceTempView(view)
        self.views.append(view)
        for token in tokens:
            reads[token] = view
            if paths is not None:
                names = ", ".join(_literal(paths[f]) for f in self.asked[token][1])
                reads[token] = f"(SELECT * FROM {view} WHERE __acid_file IN ({names}))"
        return True

    def whole(self, schema, files: list[str]) -> list[str] | None:
        """Views that read exactly these files (of any partitions), each row with its file's
        ``_metadata.file_path`` as ``__acid_file``: as few as Spark's listing threshold
        allows, each given whole directories where it may (``NativePlan.folders``). None
        where Spark's ``inputFiles()`` would not be the files as ``sparkpaths`` says."""
        import uuid

        from .sparkpaths import input_file, to_read

        if "_metadata" in {f.name.lower() for f in schema.fields}:
            return None
        given = self._given(files)
        limit = max(1, int(self.spark.conf.get(
            "spark.sql.sources.parallelPartitionDiscovery.threshold", "32")))
        views = []
        for i in range(0, len(given), limit):
            chunk = given[i:i + limit]
            held = set(chunk)
            read = [f for f in files if f in held or f.rsplit("/", 1)[0] in held]
            frame = self.spark.read.schema(schema).orc(to_read(chunk, checked=True)) \
                .selectExpr("*", "_metadata.file_path AS __acid_file")
            wanted = {input_file(f) for f in read}
            if input_files(frame, wanted) != wanted:
                return None
            views.append(f"__acid_scan_{uuid.uuid4().hex}")
            frame.createOrReplaceTempView(views[-1])
            self.views.append(views[-1])
        return views

    def _given(self, files: list[str]) -> list[str]:
        """What Spark is given to read exactly these files: the directory of those that are
        all Spark lists in it (``NativePlan.folders``), the others themselves."""
        mine: dict[str, set[str]] = {}
        for f in files:
            mine.setdefault(f.rsplit("/", 1)[0], set()).add(f)
        return _through(files, {d: self.folders[d] for d, held in mine.items()
                                if self.folders.get(d) == held})

    def drop(self) -> None:
        for view in self.views:
            self.spark.catalog.dropTempView(view)


def _through(files: list[str], folders: Mapping[str, frozenset[str]]) -> list[str]:
    """What Spark is given to read the files: the directory of those in ``folders`` (once),
    the others themselves."""
    out: dict[str, None] = {}
    for f in files:
        folder = f.rsplit("/", 1)[0]
        out[folder if folder in folders else f] = None
    return list(out)


def _part_sql(part: Part, plan: NativePlan, target, scans: _Scans) -> str:
    """One partition's rows as a SELECT of the DataFrame's columns."""
    from pyspark.sql.types import StructType

    rows = _union([_scan_sql(s, part, plan, target, scans(_scan_schema(s, part), s.files))
                   for s in part.scans])
    if part.legacy:
        rows = _latest(rows)
    output = ", ".join(_output(part, plan, target))
    if not part.deletes:
        return f"SELECT {output} FROM ({rows})"
    deletes = _deletes(part, plan.ids, [scans(_event_schema(StructType([])), part.deletes)])
    return _join(part, output, rows, deletes, _keys(part))


def _join(part: Part, output: str, rows: str, deletes: str, keys: list[str]) -> str:
    """The rows the deletes leave, as a SELECT of the DataFrame's columns (``output``): an
    anti join on the keys, with the masks' also on the row's bit being set (each key's mask
    is one row: the same rows as a left outer join and a filter, 0.07-0.16 s sooner on
    10M rows with 1M deletes)."""
    if _anti(part):
        return (f"SELECT /*+ BROADCAST(__acid_dead) */ {output} FROM ({rows}) LEFT ANTI JOIN "
                f"({deletes}) AS __acid_dead USING ({', '.join(keys)})")
    on = " AND ".join(f"__acid_rows.{k} = __acid_masks.{k}" for k in keys)
    return (f"SELECT /*+ BROADCAST(__acid_masks) */ {output} FROM ({rows}) AS __acid_rows "
            f"LEFT ANTI JOIN ({deletes}) AS __acid_masks ON {on} AND {_DELETED}")


def _joined_sql(plan: NativePlan, target, scans: _Scans) -> str | None:
    """A table of many partitions as one SELECT: each row shape's files of every partition
    one scan, whose rows are told apart by their file's path (``__acid_part``: the position
    of the partition's directory among the partitions', found by comparing the row's
    ``_metadata.file_path`` with them), and one join of its rows with every partition's
    delete events on that and their keys. Spark plans a branch a partition for about 40 ms
    (10-20 partitions: 0.3-0.5 s before a row is read); this costs it one, and a row 2-4
    string comparisons. A filter on a partition column becomes one on the file's path,
    which Spark prunes the files by before one is opened, and it reaches the deletes' scan
    through the join's equal ``__acid_part``. None: a branch a partition instead (Hive 2.3's
    legacy layout, partitions of different kinds, a directory inside another's, or files
    Spark would not name as ``sparkpaths`` says)."""
    from pyspark.sql.types import StructType

    from .sparkpaths import file_path

    parts = plan.parts
    if not plan.joined:
        return None
    folders = [file_path(p.folder) for p in parts]
    if None in folders:
        return None
    prefixes = [f"{f}/" for f in folders if f is not None]
    order = sorted(range(len(parts)), key=prefixes.__getitem__)
    bounds = [prefixes[i] for i in order]
    if any(b.startswith(a) for a, b in zip(bounds, bounds[1:])) or any(
            not (file_path(f) or "").startswith(prefixes[i]) for i, p in enumerate(parts)
            for f in (*(f for s in p.scans for f in s.files), *p.deletes)):
        return None
    first = (f"{_position(bounds, 0, len(bounds))} AS __acid_part",)
    ranges = [p.delete_ranges for p in parts if p.deletes]
    known = [r for r in ranges if r is not None]
    # (the delete step of all the partitions' events: read whole, 10 partitions of 100,000
    # deletes took 2.1-2.3 s with masks against 3.2-3.6 s with the anti join; filtered to one,
    # 0.51-0.56 s against 0.48-0.64 s)
    whole = Part((), (), tuple(f for p in parts for f in p.deletes), parts[0].row_names,
                 delete_events=sum(p.delete_events for p in parts), plain=parts[0].plain,
                 delete_ranges=tuple((min(r[k][0] for r in known), max(r[k][1] for r in known))
                                     for k in range(3)) if known == ranges and known else None,
                 delete_buckets=None if any(p.deletes and p.delete_buckets is None for p in parts)
                 else tuple(sorted({b for p in parts for b in p.delete_buckets or ()})))
    shapes: dict[tuple, list[str]] = {}
    for part in parts:
        for scan in part.scans:
            shapes.setdefault((scan.names, scan.types), []).extend(scan.files)
    selects = []
    for (names, types), files in shapes.items():
        scan = Scan(tuple(files), names, types)
        views = scans.whole(_scan_schema(scan, whole), files)
        if views is None:
            return None
        selects += [_scan_sql(scan, whole, plan, target, v, first, narrow=True) for v in views]
    output = ", ".join(_output(whole, plan, target, [parts[i] for i in order]))
    if not whole.deletes:
        return f"SELECT {output} FROM ({_union(selects)})"
    views = scans.whole(_event_schema(StructType([])), list(whole.deletes))
    if views is None:
        return None
    deletes = _deletes(whole, plan.ids, views, first, narrow=True)
    return _join(whole, output, _union(selects), deletes, ["__acid_part", *_keys(whole)])


def _position(bounds: list[str], lo: int, hi: int) -> str:
    """SQL of the position of the row's file's partition among ``bounds[lo:hi]`` (their
    directories' paths, each ending in '/', sorted and none the start of another): a
    binary search of ``__acid_file`` among them."""
    if hi - lo == 1:
        return str(lo)
    mid = (lo + hi) // 2
    return (f"IF(__acid_file < {_literal(bounds[mid])}, {_position(bounds, lo, mid)}, "
            f"{_position(bounds, mid, hi)})")


def _latest(rows: str) -> str:
    """Hive 2.3's merge: of each row's events (by its ROW__ID) the one of the highest
    currentTransaction, then statement id, wins; a row whose winner is a delete is gone."""
    order = ("row_number() OVER (PARTITION BY __acid_writeid, __acid_bucket, __acid_rowid "
             "ORDER BY __acid_current DESC, __acid_statement DESC) AS __acid_n")
    return f"SELECT * FROM (SELECT *, {order} FROM ({rows})) WHERE __acid_n = 1 AND " \
        "__acid_op <> 2"


def _union(selects: list[str]) -> str:
    """One SELECT of many, their UNION ALL nested as a balanced tree (a statement of thousands
    of partitions stays shallow for Spark's parser and analyser)."""
    while len(selects) > 1:
        selects = [f"SELECT * FROM ({a}) UNION ALL SELECT * FROM ({b})" if b is not None else a
                   for a, b in zip(selects[::2], selects[1::2] + [None])]
    return selects[0]


def _event_schema(row):
    from pyspark.sql.types import IntegerType, LongType, StructField, StructType

    kinds = (IntegerType(), LongType(), IntegerType(), LongType(), LongType())
    return StructType([StructField(n, t) for n, t in zip(EVENTS, kinds)]
                      + [StructField("row", row)])


def _sql_type(kind) -> str:
    """A Spark type as SQL text (field names quoted)."""
    from pyspark.sql.types import ArrayType, MapType, StructType

    if isinstance(kind, StructType):
        return "STRUCT<" + ", ".join(f"{_q(f.name)}: {_sql_type(f.dataType)}"
                                     for f in kind.fields) + ">"
    if isinstance(kind, ArrayType):
        return f"ARRAY<{_sql_type(kind.elementType)}>"
    if isinstance(kind, MapType):
        return f"MAP<{_sql_type(kind.keyType)}, {_sql_type(kind.valueType)}>"
    return kind.simpleString()


def _always(column: str) -> str:
    """A test that holds for every value, null or not, that Spark keeps: the column is read."""
    return f"({column} IS NULL OR {column} IS NOT NULL)"


def _events_filter(operation: int | None, ids: IdList, row: str) -> str:
    """The events of one kind (None: of every kind) whose currentTransaction the snapshot sees
    (isWriteIdValid: a null is not valid), each event column (and ``row`` by ``row``)
    touched."""
    test = [f"operation = {operation}" if operation is not None else _always("operation"),
            "currentTransaction IS NOT NULL"]
    if ids.high_watermark < LONG_MAX:
        test.append(f"currentTransaction <= {ids.high_watermark}")
    if ids.exceptions:
        test.append(f"currentTransaction NOT IN ({', '.join(map(str, ids.exceptions))})")
    test += [_always(name) for name in KEY] + [_always(row)]
    return " AND ".join(test)


def _scan_schema(scan: Scan, part: Part):
    """The schema Spark's reader is given for the scan's files: the row's, or the events'."""
    from pyspark.sql.pandas.types import from_arrow_type
    from pyspark.sql.types import StructField, StructType

    row = StructType([StructField(n, _as_read(from_arrow_type(t)))
                      for n, t in zip(scan.names, scan.types)])
    return row if part.plain else _event_schema(row)


def _scan_sql(scan: Scan, part: Part, plan: NativePlan, target, source: str,
              first: tuple[str, ...] = (), narrow: bool = False) -> str:
    """A scan's rows, read FROM ``source``, as a SELECT: the ``first`` columns, then the row
    columns cast to the DataFrame's types, and (of ACID events) the ROW__ID's columns and
    the join's keys."""
    columns = list(first)
    if part.plain:  # an insert-only table's files: the rows themselves, every one read
        prefix, where = "", ""
    else:
        where = " WHERE " + _events_filter(None if part.legacy else 0, plan.ids,
                                           f"row.{_q(scan.names[0])}")
        prefix = "row."
        columns += [f"{old} AS {new}" for old, new in KEY.items()]
        if part.legacy:  # what the merge orders and judges by
            columns += ["operation AS __acid_op", "currentTransaction AS __acid_current",
                        f"{scan.statement} AS __acid_statement"]
        if part.deletes:
            columns += _key_columns(part, rows=True, narrow=narrow)
    # the file's row columns by the names the table gives them (by position when there are
    # as many, as acidtool read does), each cast to the DataFrame's type
    names = part.row_names if part.row_names and len(part.row_names) == len(scan.names) \
        else scan.names
    by_name = dict(zip(names, scan.names))
    for field in _row_fields(plan, target):
        value = f"{prefix}{_q(by_name[field.name])}" if field.name in by_name else "NULL"
        columns.append(f"CAST({value} AS {_sql_type(field.dataType)}) AS {_q(field.name)}")
    return f"SELECT {', '.join(columns)} FROM {source}{where}"


def _row_fields(plan: NativePlan, target) -> list:
    """The DataFrame's row columns (not the ROW__ID, not the partition columns)."""
    skip = set(plan.partition_columns) | {"ROW__ID"}
    return [f for f in target.fields if f.name not in skip]


# The delete step, of two kinds. Few delete events (up to ANTI_PAST a join): the events
# themselves are broadcast and the rows anti joined to them. Many: each event is a bit of a
# mask of 64 consecutive row ids of one (originalTransaction, bucket); the masks, not the
# events, are broadcast, and a row is anti joined to its mask where its bit is set. Hive's
# writers number a delta's rows 0, 1, 2...: a DELETE of many rows of a write leaves several
# bits a mask, and Spark's broadcast, which costs by the entry, costs that much less; the
# masks are made in one task up to ONE_TASK_PAST events, else after a shuffle (one partition
# of 1,000,000 deletes: the anti join 2.9 s, masks 1.9 s, in one task 1.55-1.73 s). Where the
# delete files' statistics bound the three keys in 62 bits, the key is one bigint (a row
# outside the bounds gets none: no delete names it), which Spark's hash join takes fastest
# (LongHashedRelation). Measured with a delete event every tenth row: 2.37x a plain read for
# an anti join on three keys, 1.85x for the masks, 1.45-1.65x with the one-bigint key.
_BITS = MASK_BITS
_GROUP = ("__acid_writeid", "__acid_bucket", "__acid_block")
_DELETED = (f"(shiftright(__acid_masks.__acid_mask, CAST(pmod(__acid_rows.__acid_rowid, "
            f"{1 << _BITS}) AS INT)) & 1) = 1")


def _anti(part: Part) -> bool:
    """Whether the delete step is the anti join of the events (not masks): of one partition,
    or of all a joined plan reads."""
    return part.delete_events <= ANTI_PAST


def _packed(part: Part, bits: int = _BITS, narrow: bool = False) -> str | None:
    """The one-bigint key of an event's block of ``1 << bits`` row ids, as SQL over its
    columns (None: the statistics do not bound the keys in 62 bits); ``narrow``: an INT
    where the keys fit one (Spark packs it and an INT beside it in one bigint)."""
    if part.delete_ranges is None:
        return None
    (w0, w1), (b0, b1), (r0, r1) = part.delete_ranges
    k0, k1 = r0 >> bits, r1 >> bits
    nk = k1 - k0 + 1
    bucket, nb, same = f"(CAST(bucket AS BIGINT) - {b0})", b1 - b0 + 1, ""
    rest = {_signed(b & _NOT_ID) for b in part.delete_buckets or ()}
    if part.delete_buckets and len(rest) == 1:
        # every delete's bucket property differs from the others only in its bucket id (bits
        # 16-27): the key takes the id alone (a row whose other bits differ gets none), not
        # the property, whose ids are 65,536 apart
        ids = [(b >> 16) & 0xFFF for b in part.delete_buckets]
        bucket, nb = f"((shiftright(bucket, 16) & 4095) - {min(ids)})", max(ids) - min(ids) + 1
        same = f"(bucket & {_signed(_NOT_ID)}) = {rest.pop()} AND "
    if (w1 - w0 + 1) * nb * nk >= 1 << 62:
        return None
    block = f"shiftright(rowId, {bits})" if bits else "rowId"
    # (each expression once: Spark 4 makes a repeated one a column of its own, passing
    # `row` whole beside it, and the scan would read all of `row`)
    key = (f"CASE WHEN originalTransaction >= {w0} AND originalTransaction <= {w1} AND {same}"
           f"bucket >= {b0} AND bucket <= {b1} AND rowId >= {k0 << bits} AND "
           f"rowId <= {(k1 << bits) | ((1 << bits) - 1)} THEN ((originalTransaction - {w0})"
           f" * {nb} + {bucket}) * {nk} + ({block} - {k0}) END")
    return f"CAST({key} AS INT)" if narrow and (w1 - w0 + 1) * nb * nk < 1 << 31 else key


# a bucket property's bits but its bucket id's (Hive's BucketCodec: bits 16-27)
_NOT_ID = 0xF000FFFF


def _signed(value: int) -> int:
    """A 32-bit pattern as the signed INT Spark holds it."""
    return ((value & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000


def _bits(part: Part) -> int:
    """The row ids' bits a key leaves out: a mask's (0: the anti join's keys are events')."""
    return 0 if _anti(part) else _BITS


def _keys(part: Part) -> list[str]:
    """The names of the columns the rows and the deletes are joined on."""
    if _packed(part, _bits(part)):
        return ["__acid_key"]
    return [*_GROUP[:2], KEY["rowId"]] if _anti(part) else list(_GROUP)


def _key_columns(part: Part, rows: bool = False, narrow: bool = False) -> list[str]:
    """The join's key columns as SQL over an event's columns (for the ``rows`` side, those
    its ``KEY`` columns are not already)."""
    packed = _packed(part, _bits(part), narrow)
    if packed:
        return [f"{packed} AS __acid_key"]
    ids = [] if rows else [f"originalTransaction AS {_GROUP[0]}", f"bucket AS {_GROUP[1]}"]
    if _anti(part):
        return ids + ([] if rows else [f"rowId AS {KEY['rowId']}"])
    return ids + [f"shiftright(rowId, {_BITS}) AS {_GROUP[2]}"]


def _deletes(part: Part, ids: IdList, sources: list[str], first: tuple[str, ...] = (),
             narrow: bool = False) -> str:
    """The delete events, read FROM ``sources``, as a SELECT of the ``first`` columns and the
    join's keys: of each event (the anti join), or of each mask of 64 row ids of a
    (writeid, bucket), with the mask of its deleted row ids (made in one task up to
    ONE_TASK_PAST events)."""
    columns = ", ".join([*first, *_key_columns(part, narrow=narrow)])
    where = _events_filter(2, ids, "row")
    if _anti(part):
        return _union([f"SELECT {columns} FROM {src} WHERE {where}" for src in sources])
    keys = ", ".join([c.rsplit(" AS ", 1)[1] for c in first] + _keys(part))
    bits = _union([f"SELECT {columns}, shiftleft(1L, CAST(pmod(rowId, {1 << _BITS}) AS INT)) "
                   f"AS __acid_bit FROM {src} WHERE {where}" for src in sources])
    if part.delete_events <= ONE_TASK_PAST:
        bits = f"SELECT /*+ COALESCE(1) */ * FROM ({bits})"
    return f"SELECT {keys}, bit_or(__acid_bit) AS __acid_mask FROM ({bits}) GROUP BY {keys}"


def _output(part: Part, plan: NativePlan, target, parts: list[Part] | None = None) -> list[str]:
    """The DataFrame's columns of a partition's rows, as SQL; with ``parts``, of the rows of
    them all, each row's partition values those of the part at its ``__acid_part``."""
    values = dict(part.values)
    if parts is not None:
        values = {k: None for k in plan.partition_columns}
    # a column every row has, for a test that always holds (below)
    fields = _row_fields(plan, target)
    anchor = KEY["rowId"] if not part.plain else _q(fields[0].name) if fields else None
    out = []
    for field in target.fields:
        if field.name == "ROW__ID":
            value = "named_struct('writeid', {}, 'bucketid', {}, 'rowid', {})".format(
                *KEY.values())
        elif field.name in values and parts is not None:
            each = ", ".join(_literal(dict(p.values).get(field.name)) for p in parts)
            # (``get``, which may be null as the source's column may, and which Spark's
            # optimizer leaves whole: a filter on it is one on ``__acid_part``, and the join
            # gives that to the deletes' scan)
            out.append(f"CAST(get(array({each}), __acid_part) AS {_sql_type(field.dataType)})"
                       f" AS {_q(field.name)}")
            continue
        elif field.name in values:
            value = _literal(values[field.name])
        else:
            out.append(_q(field.name))  # (cast already)
            continue
        # a literal or a struct Spark makes is never null; the source's columns may be: the
        # same schema through a CASE whose test always holds
        column = f"CASE WHEN {_always(anchor)} THEN {value} END" if anchor else value
        out.append(f"CAST({column} AS {_sql_type(field.dataType)}) AS {_q(field.name)}")
    return out


def _literal(value: Any) -> str:
    """A partition value as Spark SQL text (cast to the column's type after)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = value.isoformat(sep=" ") if hasattr(value, "hour") else str(value)
    if any(c in text for c in "'\\$"):  # as bytes: whatever the session's escaping, and
        # no ${...} for Spark's variable substitution to replace
        return f"CAST(X'{text.encode().hex()}' AS STRING)"
    return f"'{text}'"

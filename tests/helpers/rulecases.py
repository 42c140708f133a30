"""Rule cases as data: ``tests/fixtures/rules/ACIDnnn.yml``, one file per rule.

A file names its rule and lists cases; each case is a table layout, the paths where the rule must
fire (``fires_at``, relative to the table; ``[]``: it must stay quiet) and extra ``args`` for
``acidtool validate``. A layout maps paths to contents; ``{D1}``, ``{D2}`` and ``{BASE}`` in a
path stand for the directories of the shared valid layout, which ``include: [valid]`` adds.

A content is one of (each a mapping with one main key, plus optional modifiers):

- ``{acid: {events: [...], row_type, hive_version, key_index_text, with_key_index,
  with_acid_version}}``: an ACID file written by our own writer. An event is either the
  arguments of ``layouts.events`` (``{wid: 2, n: 3, bucket: 1, stmt: 0, op: 1, current: 3,
  v0: true, start: 5}``: ``n`` events) or one event spelt out, ``[op, otid, bucket, rowId,
  current, [row values] or null]``.
- ``{plain: {schema, rows}}``: a plain (non-ACID) ORC file; ``{orc: {schema, rows, metadata}}``:
  any ORC file written by pyorc, user metadata included.
- ``{link: TARGET}``: a symbolic link to TARGET (relative to the link's directory).
- ``{text: "..."}``: these bytes (YAML escapes; each character one byte).
- ``{flush_lengths: [n, {length_of: CONTENT}, ...]}``: a ``_flush_length`` side file.
- ``{delta: CONTENT}`` under a directory name ending in ``/``: the directory with that file as
  ``bucket_00000`` and its ``_orc_acid_version`` marker (``marker: false`` leaves it out).
- modifiers: ``truncate_by: N`` (drop the last N bytes), ``append_text: "..."``,
  ``damage_first_stripe: true``.

A case where the rule fires may carry what ``acidtool repair`` must do about it (as sqlfluff's
rule cases carry ``fix_str``): ``repair: {args, actions: {code: kind}, present: [paths],
absent: [paths]}``. ``tests/test_repair_cases.py`` ages the layout, plans (the actions
expected, nothing written), applies (the rule quiet after, ``present`` there and ``absent``
gone), and undoes (the layout byte for byte).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from acidtool.io.acidwrite import Event

from .layouts import (
    DIR,
    MARK,
    Link,
    acid,
    delta,
    events,
    orc_with_schema,
    plain,
    with_damaged_stripe,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rules"
NAMES = {"D1": "delta_0000001_0000001_0000", "D2": "delta_0000002_0000002_0000",
         "BASE": "base_0000002"}


def valid_layout() -> dict:
    """The layout every rule must stay quiet on: two inserts."""
    return {**delta(NAMES["D1"]), **delta(NAMES["D2"], acid(events(2)))}


def _events(specs: list) -> list[Event]:
    out = []
    for spec in specs:
        if isinstance(spec, dict):
            kw = dict(spec)
            first, reverse = kw.pop("first", None), kw.pop("reverse", False)
            evs = events(**kw)[:first]
            out.extend(reversed(evs) if reverse else evs)
        else:
            op, otid, bucket, row_id, current, row = spec
            out.append(Event(op, otid, bucket, row_id, current,
                             tuple(row) if row is not None else None))
    return out


def content(spec) -> bytes:
    """The bytes a content spec stands for."""
    if spec == "dir":
        return DIR
    if "link" in spec:
        return Link(spec["link"])
    data = _base(spec)
    if spec.get("damage_first_stripe"):
        data = with_damaged_stripe(data)
    if "truncate_by" in spec:
        data = data[:-spec["truncate_by"]]
    if "append_text" in spec:
        data = data + spec["append_text"].encode("latin-1")
    return data


def _base(spec: dict) -> bytes:
    if "acid" in spec:
        kw = dict(spec["acid"] or {})
        evs = _events(kw.pop("events")) if "events" in kw else None
        return acid(evs, **kw)
    if "plain" in spec:
        kw = dict(spec["plain"] or {})
        if "rows" in kw:
            kw["rows"] = [tuple(r) for r in kw["rows"]]
        return plain(**kw)
    if "orc" in spec:
        o = spec["orc"]
        rows = [_tuples(r) for r in o["rows"]]
        meta = {k: v.encode() for k, v in (o.get("metadata") or {}).items()}
        return orc_with_schema(o["schema"], rows, meta)
    if "text" in spec:
        return spec["text"].encode("latin-1")
    if "flush_lengths" in spec:
        return b"".join((n if isinstance(n, int) else len(content(n["length_of"])))
                        .to_bytes(8, "big") for n in spec["flush_lengths"])
    raise ValueError(f"unknown content {spec!r}")


def _tuples(value):
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def layout(case: dict) -> dict:
    out = {}
    for name in case.get("include", []):
        if name != "valid":
            raise ValueError(f"unknown layout {name!r}")
        out.update(valid_layout())
    for path, spec in (case.get("layout") or {}).items():
        path = path.format(**NAMES)
        if path.endswith("/"):  # a directory: its bucket_00000 and its marker
            spec = dict(spec or {})
            marker = spec.pop("marker", True)
            data = content(spec) if spec else None
            out.update(delta(path.rstrip("/"), data, marker=marker))
        else:
            out[path] = content(spec)
    return out


def load() -> list[tuple[str, dict]]:
    """(rule code, case) of every case of every file, in file order."""
    cases = []
    for path in sorted(FIXTURES.glob("ACID*.yml")):
        doc = yaml.safe_load(path.read_text())
        assert doc["rule"] == path.stem, path
        for case in doc["cases"]:
            case["fires_at"] = [p.format(**NAMES) for p in case.get("fires_at", [])]
            cases.append((doc["rule"], case))
    return cases


MARKER = MARK  # the contents of a correct _orc_acid_version

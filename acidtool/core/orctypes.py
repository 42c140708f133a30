"""ORC type strings (``struct<id:int,name:string>``): split into fields, compared by position."""

from __future__ import annotations


class TypeStringError(ValueError):
    pass


def split_top(text: str, sep: str = ",") -> list[str]:
    """``text`` split at each ``sep`` outside brackets and backquoted names."""
    parts, depth, start, quoted = [], 0, 0, False
    for i, ch in enumerate(text):
        if ch == "`":
            quoted = not quoted
        elif quoted:
            continue
        elif ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
            if depth < 0:
                raise TypeStringError(f"unbalanced brackets in {text!r}")
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth or quoted:
        raise TypeStringError(f"unbalanced brackets or quotes in {text!r}")
    parts.append(text[start:])
    return parts


def normalize(type_text: str) -> str:
    """A type string to compare: no whitespace, all lower case (Hive's names are
    case-insensitive), quoted names too."""
    return "".join(type_text.split()).lower()


def canonical(type_text: str) -> str:
    """A type string to parse: no whitespace and lower case but for backquoted names, which
    keep their spaces and case (a file's nested fields are named as written)."""
    return _squeeze(type_text, lower=True)


def _squeeze(text: str, lower: bool = False) -> str:
    """``text`` without whitespace (and lower-cased, with ``lower``) outside backquotes: a
    quoted name keeps its spaces and case (`` `x y` ``; a doubled backquote is one)."""
    out, quoted = [], False
    for ch in text:
        if ch == "`":
            quoted = not quoted
        elif not quoted:
            if ch.isspace():
                continue
            ch = ch.lower() if lower else ch
        out.append(ch)
    return "".join(out)


def _quoted_name(part: str) -> tuple[str, str]:
    """(name, the rest) of a field that starts with a backquoted name."""
    i = 1
    while True:
        end = part.find("`", i)
        if end < 0:
            raise TypeStringError(f"unclosed quote in {part!r}")
        if part[end + 1:end + 2] != "`":
            return part[1:end].replace("``", "`"), part[end + 1:]
        i = end + 2


def struct_fields(type_text: str) -> list[tuple[str, str]]:
    """[(name, type)] of a ``struct<...>`` type string."""
    text = _squeeze(type_text)
    if not (text.lower().startswith("struct<") and text.endswith(">")):
        raise TypeStringError(f"{type_text!r} is not a struct<...> type")
    inner = text[len("struct<"):-1]
    if not inner:
        return []
    out = []
    for part in split_top(inner):
        if part.startswith("`"):
            name, rest = _quoted_name(part)
        else:
            name, _, rest = part.partition(":")
            rest = ":" + rest
        if not rest.startswith(":") or len(rest) < 2:
            raise TypeStringError(f"field {part!r} in {type_text!r} has no type")
        out.append((name, canonical(rest[1:])))
    return out

"""ORC type strings (``struct<id:int,name:string>``): split into fields, compared by position."""

from __future__ import annotations


class TypeStringError(ValueError):
    pass


def _split_top(text: str, sep: str = ",") -> list[str]:
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
    return "".join(type_text.split()).lower()


def struct_fields(type_text: str) -> list[tuple[str, str]]:
    """[(name, type)] of a ``struct<...>`` type string."""
    text = "".join(type_text.split())
    if not (text.lower().startswith("struct<") and text.endswith(">")):
        raise TypeStringError(f"{type_text!r} is not a struct<...> type")
    inner = text[len("struct<"):-1]
    if not inner:
        return []
    out = []
    for part in _split_top(inner):
        if part.startswith("`"):
            end = part.index("`", 1)
            name, rest = part[1:end], part[end + 1:]
        else:
            name, _, rest = part.partition(":")
            rest = ":" + rest
        if not rest.startswith(":") or len(rest) < 2:
            raise TypeStringError(f"field {part!r} in {type_text!r} has no type")
        out.append((name, normalize(rest[1:])))
    return out

"""Names from outside, escaped for each output: text for people, JSON for programs.

File names are data from other teams' tools. In text output a name may not break a line, move
the cursor or colour the terminal, nor start a line with "::" (GitHub Actions reads workflow
commands from any step's output). Control characters (C0, DEL, C1) become \\n, \\r, \\t or
\\xNN, and bytes that are not UTF-8 (which Python reads as U+DC80..U+DCFF) become \\xNN. JSON
output stays valid Unicode that strict parsers accept, and reversible (``escape_json_names``).
"""

from __future__ import annotations

import os
import re

_CONTROLS = {**{c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))},
             **{c: f"\\x{c - 0xDC00:02x}" for c in range(0xDC80, 0xDD00)},
             0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\udc80-\udcff]")
_COMMAND_LINE = re.compile(r"^::", re.M)


def display(text: str) -> str:
    """``text`` with every character that could break or steer a terminal line escaped."""
    text = str(text)
    if text.isprintable():  # the usual name, checked in C: nothing to escape
        return text
    return text.translate(_CONTROLS) if _UNSAFE.search(text) else text


_SURROGATES = re.compile("[\ud800-\udfff]")


def escape_surrogates(text: str) -> str:
    """Any lone surrogate left in text output, as its JSON escape (text output escapes names
    through ``display`` first, so none is expected)."""
    if text.isascii() or _SURROGATES.search(text) is None:  # isascii: the usual case, in C
        return text
    return _SURROGATES.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


# MirBSD's OPTU-8 mapping: the byte 0xNN that is not UTF-8 as the private-use character
# U+EF00+NN (0x80..0xFF -> U+EF80..U+EFFF).
_TO_PRIVATE = {0xDC80 + i: 0xEF80 + i for i in range(128)}
_FROM_PRIVATE = {v: k for k, v in _TO_PRIVATE.items()}


def escape_json_names(json_text: str) -> str:
    """JSON output in which every string is valid Unicode, whatever bytes a name held.

    A name that is not UTF-8 reaches Python with each undecodable byte as a lone surrogate,
    U+DC80..U+DCFF (PEP 383), which strict JSON parsers refuse. In JSON output each such byte
    0xNN is written as the private-use character U+EF00+NN (U+EF80..U+EFFF, the mapping of
    MirBSD's OPTU-8): every string stays exact where it was valid UTF-8 (a path, an SQL
    statement), and ``unescape_name`` gives back a name's exact bytes."""
    if json_text.isascii() or _SURROGATES.search(json_text) is None:
        return json_text
    return escape_surrogates(json_text.translate(_TO_PRIVATE))


def unescape_name(text: str) -> bytes:
    """The exact bytes of a name as JSON output wrote it (``escape_json_names``)."""
    return os.fsencode(text.translate(_FROM_PRIVATE))


def no_commands(text: str) -> str:
    """Text output in which no line starts with "::" (a GitHub Actions workflow command)."""
    return _COMMAND_LINE.sub(r"\\x3a:", text) if "::" in text else text

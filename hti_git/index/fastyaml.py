"""A fast reader for the YAML subset hti-git's own emitter writes in front-matter.

ruamel's pure-Python safe loader takes about 10 ms for a 3 KB page, which is most of the time of
`show`, `verify` and navigation on a large index. Pages that hti-git wrote use a small subset: block
mappings with plain keys, block sequences, one-line flow collections of scalars, and one-line plain,
single- or double-quoted scalars. This reader handles exactly that subset and returns UNSUPPORTED
for anything else (anchors, aliases, tags, block scalars, multi-line scalars, comments, explicit
keys, duplicate keys, complex keys, deep nesting, escapes JSON lacks), so the caller falls back to
the safe ruamel loader, which keeps every safety rule (it refuses aliases and tags). It builds only
dicts, lists, str, int, float, bool and None. Plain scalars are typed by ruamel's own YAML 1.2
resolver, so both readers give equal values (tests/core/test_fastyaml.py compares them).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver

UNSUPPORTED = object()
MAX_DEPTH = 64
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]+\Z")
_PLAIN_START_BAD = set("&*!|>%@`#'\"[]{},?:-")  # indicators a plain scalar may not start with here
_RESOLVER = VersionedResolver(version=(1, 2))
_OTHER_BREAKS = ("\r", "\x85", "\u2028", "\u2029", "\ufeff")
_FLOW_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_.\-]*): ")
_FLOW_PLAIN = re.compile(r"[^,\[\]{}]*")


class _Unsupported(Exception):
    pass


@lru_cache(maxsize=4096)
def _plain(value: str) -> Any:
    """A plain scalar typed as ruamel's YAML 1.2 resolver types it (or _Unsupported)."""
    if not value or value != value.strip() or value[0] in _PLAIN_START_BAD or " #" in value or ": " in value \
            or value.endswith(":") or "\t" in value:
        raise _Unsupported
    tag = str(_RESOLVER.resolve(ScalarNode, value, (True, False)))
    kind = tag.rpartition(":")[2]
    if kind == "str":
        return value
    if kind == "int" and _INT.match(value):
        return int(value)
    if kind == "float" and _FLOAT.match(value):
        return float(value)
    if kind == "bool":
        return value.lower() == "true"
    if kind == "null" and value in ("null", "~"):
        return None
    raise _Unsupported


def _single(text: str, pos: int) -> tuple[str, int]:
    """A single-quoted scalar starting at text[pos] == "'": (value, position after it)."""
    out = []
    i = pos + 1
    while True:
        j = text.find("'", i)
        if j < 0:
            raise _Unsupported  # runs onto another line
        out.append(text[i:j])
        if text.startswith("''", j):
            out.append("'")
            i = j + 2
            continue
        return "".join(out), j + 1


_DQ_ESCAPES = set('"\\/bfnrtu')


def _double(text: str, pos: int) -> tuple[str, int]:
    i = pos + 1
    while True:
        j = text.find('"', i)
        if j < 0:
            raise _Unsupported
        k = j - 1
        while k > pos and text[k] == "\\":
            k -= 1
        if (j - 1 - k) % 2 == 0:  # an even number of backslashes: the quote closes the scalar
            break
        i = j + 1
    body = text[pos + 1: j]
    for m in re.finditer(r"\\(.)", body):
        if m.group(1) not in _DQ_ESCAPES:
            raise _Unsupported  # YAML escapes JSON lacks (\x, \e, \N, \_, \L, \P, \U, \0, \a, ...)
    try:
        value = json.loads(f'"{body}"', strict=False)
    except ValueError:
        raise _Unsupported from None
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        raise _Unsupported  # lone surrogates: leave them to ruamel
    return value, j + 1


def _flow(text: str, pos: int, depth: int) -> tuple[Any, int]:
    """A flow sequence or mapping on one line, of scalars and nested flow collections."""
    if depth > MAX_DEPTH:
        raise _Unsupported
    closer = "]" if text[pos] == "[" else "}"
    is_map = closer == "}"
    out_list: list[Any] = []
    out_map: dict[str, Any] = {}
    i = pos + 1
    if text.startswith(closer, i):
        return (out_map if is_map else out_list), i + 1
    while True:
        key = None
        if is_map:
            m = _FLOW_KEY.match(text, i)
            if not m:
                raise _Unsupported
            key = m.group(1)
            if not isinstance(_plain(key), str) or key in out_map:
                raise _Unsupported
            i = m.end()
        value, i = _flow_value(text, i, depth)
        if is_map:
            out_map[key] = value
        else:
            out_list.append(value)
        if text.startswith(", ", i):
            i += 2
            if text.startswith(closer, i) or text.startswith(",", i):
                raise _Unsupported
            continue
        if text.startswith(closer, i):
            return (out_map if is_map else out_list), i + 1
        raise _Unsupported


def _flow_value(text: str, i: int, depth: int) -> tuple[Any, int]:
    if i >= len(text):
        raise _Unsupported
    ch = text[i]
    if ch in "[{":
        return _flow(text, i, depth + 1)
    if ch == "'":
        return _single(text, i)
    if ch == '"':
        return _double(text, i)
    m = _FLOW_PLAIN.match(text, i)
    raw = m.group(0)
    if not raw or raw != raw.rstrip():
        raise _Unsupported
    return _plain(raw), m.end()


def _inline(text: str, depth: int) -> Any:
    """The value written after 'key: ' or '- ' on the same line (the whole rest of the line)."""
    ch = text[0]
    if ch in "[{":
        value, end = _flow(text, 0, depth + 1)
    elif ch == "'":
        value, end = _single(text, 0)
    elif ch == '"':
        value, end = _double(text, 0)
    else:
        return _plain(text)
    if end != len(text):
        raise _Unsupported
    return value


class _Reader:
    def __init__(self, lines: list[tuple[int, str]]):
        self.lines = lines

    def block(self, i: int, indent: int, depth: int) -> tuple[Any, int]:
        if depth > MAX_DEPTH:
            raise _Unsupported
        ind, content = self.lines[i]
        if ind != indent:
            raise _Unsupported
        if content == "-" or content.startswith("- "):
            return self.sequence(i, indent, depth)
        return self.mapping(i, indent, depth)

    def _line(self, i: int, indent: int) -> str | None:
        """Line i's content when it is at `indent`; None when the block ended before it."""
        if i >= len(self.lines) or self.lines[i][0] < indent:
            return None
        if self.lines[i][0] > indent:
            raise _Unsupported
        return self.lines[i][1]

    def sequence(self, i: int, indent: int, depth: int) -> tuple[list[Any], int]:
        out: list[Any] = []
        while (content := self._line(i, indent)) is not None:
            if not (content == "-" or content.startswith("- ")):
                break
            rest = content[2:]
            if not rest:
                if i + 1 < len(self.lines) and self.lines[i + 1][0] > indent:
                    value, i = self.block(i + 1, self.lines[i + 1][0], depth + 1)
                else:
                    raise _Unsupported
            elif rest.startswith(("- ", "-\n")) or rest == "-":
                raise _Unsupported
            elif _is_key_line(rest):
                # "- key: value": a mapping whose first line shares the dash's line
                self.lines[i] = (indent + 2, rest)
                value, i = self.mapping(i, indent + 2, depth + 1)
            else:
                value = _inline(rest, depth)
                i += 1
            out.append(value)
        return out, i

    def mapping(self, i: int, indent: int, depth: int) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        while (content := self._line(i, indent)) is not None:
            key, sep, rest = content.partition(":")
            if not sep or not _KEY.match(key) or not isinstance(_plain(key), str) or key in out:
                raise _Unsupported
            if rest.startswith(" "):
                rest = rest[1:]
                if not rest or rest.startswith(" "):
                    raise _Unsupported
                out[key] = _inline(rest, depth)
                i += 1
                continue
            if rest:
                raise _Unsupported  # "key:value" is not a key in YAML's block style
            nxt = self.lines[i + 1] if i + 1 < len(self.lines) else None
            if nxt is not None and (nxt[0] > indent or (nxt[0] == indent and nxt[1].startswith("- "))):
                out[key], i = self.block(i + 1, nxt[0], depth + 1)
            else:
                out[key] = None
                i += 1
        return out, i


def _is_key_line(text: str) -> bool:
    key, sep, rest = text.partition(":")
    return bool(sep) and bool(_KEY.match(key)) and (rest == "" or rest.startswith(" "))


def load(text: str) -> Any:
    """The front-matter `text` as Python values, or UNSUPPORTED when it is outside the subset."""
    if any(ch in text for ch in _OTHER_BREAKS):
        return UNSUPPORTED  # line breaks to YAML readers, not to str.split("\n")
    lines: list[tuple[int, str]] = []
    for line in text.split("\n"):
        if not line:
            continue
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#") or stripped.startswith("\t") or line != line.rstrip() \
                or stripped.startswith(("---", "...")) or "\r" in line:
            return UNSUPPORTED
        lines.append((len(line) - len(stripped), stripped))
    if not lines:
        return UNSUPPORTED
    if text.count("\n\n") or not text.endswith("\n"):
        return UNSUPPORTED  # a blank line belongs to a multi-line scalar
    try:
        value, end = _Reader(lines).block(0, 0, 0)
    except (_Unsupported, RecursionError):
        return UNSUPPORTED
    if end != len(lines) or not isinstance(value, dict):
        return UNSUPPORTED
    return value

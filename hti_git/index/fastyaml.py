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
_BAD_LINE = re.compile(r"^ *(?:#|\t|---|\.\.\.)|\r", re.MULTILINE)
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]+\Z")
_PLAIN_START_BAD = set("&*!|>%@`#'\"[]{},?:-")  # indicators a plain scalar may not start with here
_RESOLVER = VersionedResolver(version=(1, 2))
# first characters the resolver has an implicit type for (int, float, bool, null, timestamp, merge,
# value ...); ruamel looks its implicit resolvers up by a scalar's first character, so a plain
# scalar starting with any other character is a string
_RESOLVED_FIRST = frozenset(k for k in _RESOLVER.versioned_resolver if k)
_TYPED_ANY_FIRST = None in _RESOLVER.versioned_resolver  # resolvers for every first character: no shortcut
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
    if value[0] not in _RESOLVED_FIRST and not _TYPED_ANY_FIRST:
        return value  # no implicit type starts with this character: a string
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
_SURROGATE = re.compile("[\ud800-\udfff]")


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
    if _SURROGATE.search(value):
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


_INT_LIST = re.compile(r"\[(?:-?(?:0|[1-9][0-9]{0,17})(?:, -?(?:0|[1-9][0-9]{0,17}))*)?\]\Z")


def _inline(text: str, depth: int) -> Any:
    """The value written after 'key: ' or '- ' on the same line (the whole rest of the line)."""
    ch = text[0]
    if ch == "[" and _INT_LIST.match(text):  # a span or page list: [120, 180]
        return [int(x) for x in text[1:-1].split(", ")] if len(text) > 2 else []
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
            m = _KEY_LINE.match(content)
            if m is None:
                raise _Unsupported
            key, rest = m.group(1), m.group(2)
            if key in out or (key not in _STR_KEYS and not _str_key(key)):
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


_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_.\-]*):(.*)\Z", re.DOTALL)
_STR_KEYS: set[str] = set()  # keys seen to read as strings (not true, null, 1e3 ...)


def _str_key(key: str) -> bool:
    try:
        ok = isinstance(_plain(key), str)
    except _Unsupported:
        return False
    if ok and len(_STR_KEYS) < 4096:
        _STR_KEYS.add(key)
    return ok


def _is_key_line(text: str) -> bool:
    key, sep, rest = text.partition(":")
    return bool(sep) and bool(_KEY.match(key)) and (rest == "" or rest.startswith(" "))


def load(text: str) -> Any:
    """The front-matter `text` as Python values, or UNSUPPORTED when it is outside the subset."""
    if any(ch in text for ch in _OTHER_BREAKS):
        return UNSUPPORTED  # line breaks to YAML readers, not to str.split("\n")
    if _BAD_LINE.search(text):
        return UNSUPPORTED  # comments, tabs, document markers, carriage returns
    lines: list[tuple[int, str]] = []
    for line in text.split("\n"):
        if not line:
            continue
        if line[-1].isspace():  # trailing whitespace (what str.rstrip removes), or a blank line of spaces
            return UNSUPPORTED
        stripped = line.lstrip(" ")
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


# -- writing ---------------------------------------------------------------------------------------
#
# The writer mirrors ruamel's round-trip emitter as page.dump_yaml configures it (width 4096, mapping
# indent 2, sequence indent 4 with offset 2, unicode kept, collections of scalars inline) for the
# same subset: block mappings with identifier keys, block sequences, inline collections of scalars,
# and one-line strings, ints and booleans. ruamel dumps a page in about 20 ms (nine tenths of a
# `fast` compile); this writes the same bytes in well under 1 ms. Scalar styles follow ruamel's
# Emitter.analyze_scalar and choose_scalar_style for one-line text: plain when the text reads back as
# the same string, else single-quoted, else (an apostrophe) double-quoted. Anything else (floats,
# multi-line or control characters, text ruamel forces into double quotes, None outside a mapping
# value, nested block sequences, keys that are not identifiers, lines long enough to be wrapped)
# returns UNSUPPORTED and the caller dumps with ruamel. tests/core/test_fastyaml.py compares both.

_MAX_LINE = 4000  # ruamel wraps past column 4096; lines this short are never wrapped
_DUMP_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*\Z")
# characters ruamel writes as they are (allow_unicode): printable ASCII and printable Unicode, no BOM
_UNSAFE_CHAR = re.compile("[^\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_BLOCK_INDICATOR = re.compile(r".:(?: |\Z)| #")
_FIRST_INDICATORS = set("#,[]{}&*!|>'\"%@`")
_STR_TAG = "tag:yaml.org,2002:str"


@lru_cache(maxsize=8192)
def _reads_as_str(value: str) -> bool:
    if value and value[0] not in _RESOLVED_FIRST and not _TYPED_ANY_FIRST:
        return True
    return str(_RESOLVER.resolve(ScalarNode, value, (True, False))) == _STR_TAG


@lru_cache(maxsize=16384)
def _scalar_text(value: str, flow: bool) -> str:
    """The text ruamel writes for a one-line string in block (or flow) context, or _Unsupported."""
    if value == "":
        return "''"
    if value[0] in "?:" or any(ch in value for ch in "\x85\u2028\u2029"):
        raise _Unsupported  # page._plain forces these into double quotes; other breaks are single-quoted
    if _UNSAFE_CHAR.search(value):  # a line break or a character written escaped: always double-quoted
        return _double_quoted(value)
    block_indicators = (value.startswith(("---", "...")) or value[0] in _FIRST_INDICATORS
                        or (value[0] == "-" and (len(value) == 1 or value[1] == " "))
                        or _BLOCK_INDICATOR.search(value) is not None)
    flow_indicators = block_indicators or any(ch in ",[]{}" for ch in value[1:])
    plain_ok = value[0] != " " and value[-1] != " " and not (flow_indicators if flow else block_indicators)
    if plain_ok and _reads_as_str(value):
        return value
    if "'" in value:
        return _double_quoted(value)
    return "'" + value + "'"


_DQ_ESCAPE = re.compile('[^\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|["\\\\\x85\u2028\u2029\ufeff]')
_DQ_NAMED = {"\0": "0", "\x07": "a", "\x08": "b", "\t": "t", "\n": "n", "\x0b": "v", "\x0c": "f", "\r": "r",
             "\x1b": "e", '"': '"', "\\": "\\", "\x85": "N", "\xa0": "_", "\u2028": "L", "\u2029": "P"}


def _escape(match: re.Match) -> str:
    ch = match.group()
    if ch in _DQ_NAMED:
        return "\\" + _DQ_NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02X}" if code <= 0xFF else f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"


def _double_quoted(value: str) -> str:
    """ruamel's write_double_quoted for text on one line (named escapes, else \\xXX, \\uXXXX)."""
    return '"' + _DQ_ESCAPE.sub(_escape, value) + '"'


def _scalar(value: Any, flow: bool) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return str(value)
    if type(value) is str:
        return _scalar_text(value, flow)
    if value is None and flow:
        return "null"
    raise _Unsupported


def _is_scalar(value: Any) -> bool:
    return value is None or type(value) in (str, int, bool)


def _key(key: Any) -> str:
    if type(key) is not str or len(key) > 100 or not _DUMP_KEY.match(key) or not _reads_as_str(key):
        raise _Unsupported
    return key


def _flow_collection(value: Any) -> str | None:
    """Inline text of a dict or list holding only scalars (ruamel writes those inline), else None."""
    if isinstance(value, dict):
        if not all(_is_scalar(v) for v in value.values()):
            return None
        return "{" + ", ".join(f"{_key(k)}: {_scalar(v, True)}" for k, v in value.items()) + "}"
    if not all(_is_scalar(v) for v in value):
        return None
    return "[" + ", ".join(_scalar(v, True) for v in value) + "]"


def _dump_mapping(mapping: dict, indent: int, out: list[str], lead: str | None = None) -> None:
    pad = " " * indent
    for i, (key, value) in enumerate(mapping.items()):
        head = (lead if lead is not None and i == 0 else pad) + _key(key) + ":"
        if isinstance(value, tuple):
            value = list(value)
        if value is None:
            out.append(head)
        elif isinstance(value, (dict, list)):
            inline = _flow_collection(value)
            if inline is not None:
                out.append(f"{head} {inline}")
            else:
                out.append(head)
                if isinstance(value, dict):
                    _dump_mapping(value, indent + 2, out)
                else:
                    _dump_sequence(value, indent + 2, out)
        else:
            out.append(f"{head} {_scalar(value, False)}")


def _dump_sequence(items: list, indent: int, out: list[str]) -> None:
    dash = " " * indent + "- "
    for item in items:
        if isinstance(item, tuple):
            item = list(item)
        if isinstance(item, (dict, list)):
            inline = _flow_collection(item)
            if inline is not None:
                out.append(dash + inline)
            elif isinstance(item, dict):
                _dump_mapping(item, indent + 2, out, lead=dash)
            else:
                raise _Unsupported  # a block sequence directly inside a sequence
        elif item is None:
            raise _Unsupported
        else:
            out.append(dash + _scalar(item, False))


def dump(value: Any) -> Any:
    """YAML text of a non-empty mapping as page.dump_yaml writes it with ruamel, or UNSUPPORTED."""
    if not isinstance(value, dict) or not value:
        return UNSUPPORTED
    out: list[str] = []
    try:
        _dump_mapping(value, 0, out)
    except (_Unsupported, RecursionError):
        return UNSUPPORTED
    if any(len(line) > _MAX_LINE for line in out):
        return UNSUPPORTED
    return "\n".join(out) + "\n"

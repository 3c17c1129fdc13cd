"""A page: YAML front-matter (the facts) + a Markdown body (the same facts, for people).

Front-matter is the source of truth that navigation, diff and verify read; the body is rendered
from it so pages read well on GitHub. Rendering is deterministic: the same page gives the same bytes.
"""

from __future__ import annotations

import io
import posixpath
import threading
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedSeq
from ruamel.yaml.composer import Composer, ComposerError
from ruamel.yaml.error import YAMLError
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from hti_git.errors import PageFormatError
from hti_git.index import fastyaml

FENCE = "---\n"
MAX_YAML_DEPTH = 64  # nesting; pages are about 5 levels deep
# The emitter writes text starting with '?' or ':' ("? x", ":x") as a plain scalar that the loader
# then rejects or reads as a mapping key, so a page with such a title would not parse back; and a
# NEL (U+0085) inside single quotes reads back as a space. Both are written double-quoted instead.
_MISREAD_FIRST = ("?", ":")


class _NoAliasComposer(Composer):
    """Refuses YAML aliases. hti-git never writes them, and an alias of an alias of ... (the
    'billion laughs' pattern) loads as a few shared lists that explode into gigabytes as soon as
    anything walks or prints the value."""

    def compose_document(self):
        # ruamel keeps one composer per YAML object and only unwinds its depth counter on success,
        # so a load that failed mid-document would count against every later one: start afresh.
        self.depth = 0
        return super().compose_document()

    def return_alias(self, a):
        raise ComposerError(None, None, "YAML aliases (*name) are not allowed in hti-git files", a.start_mark)


def safe_yaml() -> YAML:
    """The loader for every YAML file hti-git reads (front-matter, hti.yaml, schema.yaml): safe
    types only (no Python tags), no aliases, bounded nesting. Errors are YAMLError."""
    yaml = YAML(typ="safe", pure=True)  # the C loader misreads some plain scalars the emitter writes
    yaml.Composer = _NoAliasComposer
    yaml.max_depth = MAX_YAML_DEPTH
    return yaml


def _yaml(block_lists: bool = False) -> YAML:
    yaml = YAML(typ="rt", pure=True)
    yaml.width = 4096  # never re-wrap values: a changed word must show as a one-line diff
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.default_flow_style = False if block_lists else None
    yaml.allow_unicode = True
    return yaml


_LOCAL = threading.local()  # ruamel's YAML objects keep state while dumping: one per thread


def _dumper(block_lists: bool = False) -> YAML:
    name = "block_dumper" if block_lists else "dumper"
    if not hasattr(_LOCAL, name):
        setattr(_LOCAL, name, _yaml(block_lists))
    return getattr(_LOCAL, name)


def _loader() -> YAML:
    if not hasattr(_LOCAL, "loader"):
        _LOCAL.loader = safe_yaml()
    return _LOCAL.loader


def load_yaml(text: str) -> Any:
    """YAML that hti-git wrote (or a person did): its own subset read fast, anything else by the safe
    loader (this thread's). Errors are YAMLError."""
    value = fastyaml.load(text)
    return _loader().load(text) if value is fastyaml.UNSUPPORTED else value


def dump_yaml(value: Any, block_lists: bool = False) -> str:
    """YAML text of `value` as hti-git writes every file: fixed key order, no re-wrapping.

    Short lists are written inline; `block_lists` puts each item on its own line instead, which
    suits files reviewed line by line such as schema.yaml.
    """
    if not block_lists:
        text = fastyaml.dump(value)  # hti-git's own subset, the same bytes, fast; else ruamel below
        if text is not fastyaml.UNSUPPORTED:
            return text
    buf = io.StringIO()
    _dumper(block_lists).dump(value if block_lists else _plain(value), buf)
    return buf.getvalue()


@dataclass
class Page:
    """A stored file of the index: its repository path, front-matter and Markdown body."""

    path: str
    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""

    @property
    def kind(self) -> str:
        return str(self.meta.get("kind", ""))

    @property
    def title(self) -> str:
        return str(self.meta.get("title", ""))

    @property
    def summary(self) -> str:
        return str(self.meta.get("summary", ""))

    def render(self) -> bytes:
        """The page's bytes: '---', YAML front-matter, '---', blank line, body."""
        front = dump_yaml(self.meta)
        body = self.body.rstrip("\n") + "\n"
        # A model's JSON may hold a lone surrogate (a "\ud800" escape), which UTF-8 cannot carry:
        # front-matter writes it escaped; in the body it becomes '?' instead of failing the compile.
        return (FENCE + front + FENCE + "\n" + body).encode("utf-8", "replace")

    def resolve(self, link: str) -> str:
        """The repository path a relative link on this page points to (anchor dropped)."""
        target = link.split("#", 1)[0]
        return posixpath.normpath(posixpath.join(posixpath.dirname(self.path), target))

    def links(self) -> list[dict[str, Any]]:
        """The page's child links from front-matter (title, link, summary, kind)."""
        return list(self.meta.get("children") or [])


def parse_page(path: str, data: bytes | str) -> Page:
    """Parse bytes produced by Page.render (or hand-edited in the same shape)."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    if not text.startswith(FENCE):
        return Page(path=path, meta={}, body=text)
    end = text.find("\n" + FENCE, len(FENCE) - 1)
    if end == -1:
        raise PageFormatError(f"{path}: front-matter is not closed by '---'")
    front = text[len(FENCE): end + 1]
    try:
        meta = load_yaml(front) or {}
    except YAMLError as exc:
        raise PageFormatError(f"{path}: invalid front-matter ({str(exc).splitlines()[0]})") from None
    if not isinstance(meta, dict):
        raise PageFormatError(f"{path}: front-matter must be a mapping")
    body = text[end + 1 + len(FENCE):]
    return Page(path=path, meta=meta, body=body.removeprefix("\n"))


def _plain(value: Any) -> Any:
    """Tuples become lists, short lists of numbers (a span, pages) go inline, odd strings get quoted."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_plain(v) for v in value]
        if items and all(isinstance(v, int) for v in items) and len(items) <= 4:
            seq = CommentedSeq(items)
            seq.fa.set_flow_style()
            return seq
        return items
    if isinstance(value, str) and (value[:1] in _MISREAD_FIRST or "\x85" in value):
        return DoubleQuotedScalarString(value)
    return value

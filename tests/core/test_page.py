"""Page format: deterministic render, parse round-trip, relative links, safe slugs."""

from __future__ import annotations

import pytest

from hti_git.errors import PageFormatError
from hti_git.index.page import Page, parse_page
from hti_git.index.slug import doc_slug, slugify, unique_slug


def _page() -> Page:
    meta = {
        "hti": 1,
        "kind": "subject",
        "title": "7.10 Governing Law: \"New York\"",
        "summary": "This Agreement is governed by the laws of the State of New York. " * 3,
        "aliases": ["Section 7.10"],
        "fields": [{"name": "text", "values": [{"text": "line one\nline two", "spans": [[10, 20], [30, 41]], "pages": [2]}]}],
    }
    return Page("doc/clauses/governing-law.md", meta, "# 7.10 Governing Law\n\nbody\n")


def test_render_is_deterministic_and_round_trips():
    page = _page()
    data = page.render()
    assert data.startswith(b"---\nhti: 1\n")
    assert data == _page().render()
    again = parse_page(page.path, data)
    assert again.meta == page.meta
    assert again.body == page.body
    assert again.render() == data


def test_long_values_are_not_rewrapped():
    data = _page().render().decode()
    summary_lines = [line for line in data.splitlines() if line.startswith("summary:")]
    assert len(summary_lines) == 1


def test_resolve_relative_links():
    page = _page()
    assert page.resolve("index.md") == "doc/clauses/index.md"
    assert page.resolve("../source.txt#L3-L4") == "doc/source.txt"


def test_unclosed_front_matter_is_a_clear_error():
    with pytest.raises(PageFormatError, match="not closed"):
        parse_page("x.md", b"---\ntitle: x\n")


@pytest.mark.parametrize(
    "text,expected",
    [("../../etc/passwd", "etc-passwd"), ("Governing Law", "governing-law"), ("", "item"), ("index", "index-1"),
     ("Ünïcödé — name", "unicode-name"), (".git", "git")],
)
def test_slugs_cannot_escape(text, expected):
    assert slugify(text) == expected


def test_unique_slug_and_doc_slug():
    taken: set[str] = set()
    assert [unique_slug("Term", taken) for _ in range(3)] == ["term", "term-2", "term-3"]
    assert doc_slug("My Contract v2.PDF") == "my-contract-v2"

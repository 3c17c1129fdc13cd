"""The fast front-matter reader gives exactly what the safe ruamel loader gives, or steps aside."""

from __future__ import annotations

import pytest

from hti_git.compile.pipeline import compile_path
from hti_git.config import Settings
from hti_git.errors import PageFormatError
from hti_git.index import fastyaml
from hti_git.index.page import Page, dump_yaml, parse_page, safe_yaml

TRICKY = [
    "plain words", "? x", ": x", "a: b", "#x", "x #y", "x#y", "- x", "-x", "'q'", '"dq"', "it's", 'say "hi"',
    "yes", "no", "on", "true", "True", "FALSE", "null", "Null", "~", "007", "12", "-3", "1_000", "0x1F", "0o17",
    "2020-05-27", "2001-12-14 21:59:43.10 -5", "1e3", "0.5", ".inf", "-.inf", ".nan", "<<", "=", "x\ny", "x\n\ny",
    "nel\x85here", "ls\u2028here", "tab\tx", " lead", "trail ", "back\\slash", "\\x41", "[a]", "{a: b}", "&a", "*a",
    "!tag", "!!python/object:os.system", "%x", "@x", "`x", "a, b", "a,b", "a]b", "é ü 中文 🙂", "", " ", "|", ">",
    "x" * 5000, "sha256:abc", "http://x.y/z?q=1#f", "L12-L14", "[12, 40]", "1.2.3", "+1", "-", "--- x", "... x",
    "\u00a0nbsp\u00a0", "\x07bell", "\ufeffbom", "a\\\"b", "\"", "'",
]


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b or (a != a and b != b)


def _front(page: Page) -> str:
    text = page.render().decode("utf-8")
    return text[4: text.find("\n---\n", 3) + 1]


def _check(front: str) -> bool:
    """True when the fast reader handled it (and agreed with ruamel), False when it stepped aside."""
    fast = fastyaml.load(front)
    if fast is fastyaml.UNSUPPORTED:
        return False
    assert _same(fast, safe_yaml().load(front)), front[:300]
    return True


def test_compiled_pages_are_read_fast_and_equal(index_repo, contract_text):
    compile_path(index_repo, contract_text, Settings())
    snap = index_repo.snapshot("HEAD")
    doc = snap.docs()[0]
    fronts = [_front(parse_page(p, snap.read_bytes(p))) for p in snap.blob_shas(doc) if p.endswith(".md")]
    assert len(fronts) > 30
    assert all(_check(f) for f in fronts)  # every page hti-git wrote takes the fast path


@pytest.mark.parametrize("value", TRICKY)
def test_tricky_values_agree_or_fall_back(value):
    meta = {
        "hti": 1, "kind": "subject", "title": value, "aliases": [value, "other"], "keywords": [value],
        "info": {"name": value, "n": 3}, "nested": {"deep": {"value": value, "list": [1, 2]}},
        "fields": [{"name": "text", "values": [{"text": value, "spans": [[0, 5], [7, 9]]}]}],
        "empty": [], "nothing": None, "flag": True, "ratio": 0.25,
    }
    front = _front(Page("doc/x.md", meta, "body"))
    handled = _check(front)
    assert parse_page("doc/x.md", Page("doc/x.md", meta, "body").render()).meta == safe_yaml().load(front)
    if value in ("plain words", "it's", "a: b", "é ü 中文 🙂", "yes", "12", "x#y", "sha256:abc"):
        assert handled, front


def test_most_tricky_values_still_take_the_fast_path():
    handled = sum(_check(_front(Page("d/x.md", {"title": v, "keywords": [v]}, ""))) for v in TRICKY)
    assert handled >= len(TRICKY) * 0.6, handled


@pytest.mark.parametrize("front", [
    "a: &x [1, 2]\nb: *x\n",  # anchors and aliases
    "a: !!python/object/apply:os.system [echo]\n",  # tags
    "a: |\n  block\n",  # block scalars
    "a: 1\na: 2\n",  # duplicate keys
    "? a\n: b\n",  # explicit keys
    "a: b # comment\n",
    "a: 'multi\n  line'\n",
    "a:\n  - [1, [2, {b: *c}]]\n",
    "{a: 1}\n",  # not a block mapping
    "a: 1\n  b: 2\n",  # bad indentation
    "- 1\n- 2\n",  # not a mapping
])
def test_outside_the_subset_steps_aside(front):
    assert fastyaml.load(front) is fastyaml.UNSUPPORTED


def test_unsafe_yaml_is_still_refused_by_the_page_reader():
    bomb = "---\na: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n---\n\nbody\n"
    with pytest.raises(PageFormatError, match="aliases"):
        parse_page("d/x.md", bomb)
    with pytest.raises(PageFormatError):
        parse_page("d/x.md", "---\na: !!python/object/apply:os.system [echo hi]\n---\n")


def test_deep_nesting_steps_aside():
    front = "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 80)) + "  " * 80 + "v: 1\n"
    assert fastyaml.load(front) is fastyaml.UNSUPPORTED
    assert fastyaml.load(dump_yaml({"a": {"b": [{"c": [1, 2]}]}})) == {"a": {"b": [{"c": [1, 2]}]}}


# -- the writer: the same bytes as ruamel, or it steps aside --------------------------------------

def _ruamel(meta) -> str:
    import io

    from hti_git.index import page as page_module

    buf = io.StringIO()
    page_module._dumper(False).dump(page_module._plain(meta), buf)
    return buf.getvalue()


def _written_same(meta) -> bool:
    """True when the fast writer handled `meta` (asserting ruamel's bytes), False when it stepped aside."""
    fast = fastyaml.dump(meta)
    if fast is fastyaml.UNSUPPORTED:
        return False
    assert fast == _ruamel(meta), meta
    return True


def test_compiled_pages_are_written_fast_with_ruamels_bytes(contract_text):
    from hti_git.compile.fast import compile_fast
    from hti_git.compile.pipeline import method_identity, provenance_for
    from hti_git.index.layout import LayoutOptions, build_pages
    from hti_git.sources import load_source

    for path in (contract_text, contract_text.with_name("alcostoresinc-12-14-2005-ex-10-26-agency-agreement.pdf")):
        source = load_source(path, 10**8)  # the PDF's values hold line breaks: written double-quoted
        settings = Settings()
        provenance = provenance_for(source, method_identity("fast", settings), "sha256:x", {"calls": 0})
        pages = build_pages("doc", compile_fast(source), source, provenance,
                            LayoutOptions(settings.page_budget, settings.fanout))
        assert len(pages) > 30
        assert all(_written_same(p.meta) for p in pages)  # every page takes the fast path


@pytest.mark.parametrize("value", TRICKY + ["a\nb", "x\ty", "lone \ud800 surrogate", "nb\u00a0sp", "it's\nx", "é'\"\\"])
def test_tricky_values_are_written_as_ruamel_writes_them_or_step_aside(value):
    meta = {
        "hti": 1, "kind": "subject", "title": value, "aliases": [value, "other"], "keywords": [value],
        "info": {"name": value, "n": 3, "none": None, "yes": True}, "nested": {"deep": {"value": value, "list": [1, 2]}},
        "fields": [{"name": "text", "values": [{"text": value, "spans": [[0, 5], [7, 9]], "pages": [1, 2, 3, 4, 5]}]}],
        "empty": [], "empty_map": {}, "nothing": None, "flag": False, "items": [{}, {"a": [value]}, [value, 1]],
    }
    handled = _written_same(meta)
    if value in ("plain words", "it's", "a: b", "é ü 中文 🙂", "yes", "12", "x#y", "sha256:abc", "a\nb", ""):
        assert handled


@pytest.mark.parametrize("meta", [
    {"ratio": 0.25},  # floats
    {"a": [[[1]]]},  # a block sequence inside a sequence
    {"a": [None, {"b": 1}]},  # None as a block sequence item
    {"not an identifier": 1},
    {1: "x"},
    {"title": "? x"}, {"title": ": x"}, {"t": "nel\x85x"}, {"t": "ls\u2028x"},  # ruamel's own quoting rules
    {"t": "x " * 2100},  # long enough for ruamel to wrap
    {}, [1, 2],
])
def test_writer_steps_aside_outside_its_subset(meta):
    assert fastyaml.dump(meta) is fastyaml.UNSUPPORTED
    assert parse_page("d/x.md", Page("d/x.md", meta if isinstance(meta, dict) else {"v": meta}, "b").render())


def test_writer_matches_ruamel_on_random_text():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    text = st.text(st.characters(blacklist_categories=("Cs",)) | st.sampled_from(list(":#-'\"\\ ,[]{}?!&*|>%@`\n\t")),
                   max_size=40)

    @settings(max_examples=400, deadline=None)
    @given(st.lists(text, min_size=1, max_size=4), st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True),
                                                                   text | st.integers() | st.booleans(), max_size=3))
    def check(words, mapping):
        _written_same({"title": words[0], "keywords": words, "info": mapping, "items": [{"text": w} for w in words]})

    check()

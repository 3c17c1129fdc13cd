"""Hostile model output: whatever a model (or a document) says, paths stay safe and pages parse back.

Covers the slug function, the page renderer/parser round trip, layout of a hostile record into a
real commit, the standard compile through the scripted provider, and broken replies through the
OpenAI-compatible stub (invalid JSON, wrong shape, truncated output).
"""

from __future__ import annotations

import json
import re
import subprocess
import unicodedata

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rel_support import CONTRACT, assert_fsck_clean, stub_handler

from hti_git.cli import main
from hti_git.compile.pipeline import compile_path
from hti_git.compile.standard import StandardOptions
from hti_git.config import Settings
from hti_git.index.layout import LayoutOptions, build_pages
from hti_git.index.model import Category, FieldValue, Record, Subject
from hti_git.index.page import Page, parse_page
from hti_git.index.slug import DOC_RESERVED, RESERVED, doc_slug, slugify, unique_slug
from hti_git.llm import ScriptedProvider
from hti_git.review.verify import verify_snapshot
from hti_git.sources import load_source
from hti_git.store import IndexRepo
from tests.compile import standard_stub
from tests.support.openai_stub import OpenAIStub, reply

HOSTILE = [
    "../../etc/passwd", "..", ".", "/abs/path", "a/b/c", "back\\slash", "nul\x00byte", "ctrl\x01\x07\x1b[31m",
    "line\nbreak\r\nwin", "tab\there", "---", "---\nkind: root\n---", "key: value", "- item", "? complex",
    "&anchor value", "*alias", "!!python/object/apply:os.system ['id']", "!tag x", "%YAML 1.1", "# comment",
    "'single' \"double\"", "{flow: map}", "[flow, seq]", "| block", "> folded", "@at `tick`",
    "[click](https://evil.example/x)", "![img](http://evil.example/p.png)", "<script>alert(1)</script>",
    "<a href='javascript:alert(1)'>x</a>", "[up](../../../../outside.md)", "](../../x) [", "\ufeffBOM",
    "\u202eRLO override", "zero\u200bwidth", "lone \ud800 surrogate", "é ñ 漢字 🙂", "CON", "index", "source", " ", "", ".git", "~",
]
SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
RAW_HTML = re.compile(r"(?<!\\)<[a-zA-Z/!]")  # a tag not escaped as \<
EXTERNAL_LINK = re.compile(r"(?<!\\)\]\((?:[a-z]+:|//)")  # ](scheme: or ](// not escaped as \]
_INDICATORS = st.text(alphabet="?:-#&*!|>'\"%@`[]{},~= \t\n", max_size=6)


def assert_inert(body: str) -> None:
    assert not RAW_HTML.search(body), body[:2000]
    assert not EXTERNAL_LINK.search(body), body[:2000]


# -- slugs -------------------------------------------------------------------------------------

@given(st.text(max_size=300), st.integers(min_value=1, max_value=100))
@settings(max_examples=300, deadline=None)
def test_slug_is_always_one_safe_segment(text, max_len):
    slug = slugify(text, max_len)
    assert SLUG.match(slug), slug
    assert len(slug) <= max(max_len, len("item")) + 2  # a reserved name gets "-1"
    assert slug not in RESERVED


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_names_give_safe_slugs(text):
    taken: set[str] = set()
    for _ in range(3):
        slug = unique_slug(text, taken)
        assert SLUG.match(slug) and slug not in RESERVED
    assert len(taken) == 3
    assert _doc_segment(doc_slug(text + ".pdf"))


def _doc_segment(name: str) -> bool:
    """A document folder name: letters, marks and digits of any script in '-'-joined runs (so 契約
    stays 契約), never a dot, slash, control, space or reserved name."""
    runs = name.split("-")
    return (all(runs) and all(unicodedata.category(ch)[0] in "LMN" for run in runs for ch in run)
            and name not in DOC_RESERVED and len(name.encode("utf-8")) <= 200)


# -- page round trip -----------------------------------------------------------------------------

_TEXT = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=200), st.builds(str.__add__, _INDICATORS, st.text(max_size=20)))
_META = st.fixed_dictionaries({
    "title": _TEXT,
    "summary": _TEXT,
    "aliases": st.lists(_TEXT, max_size=3),
    "fields": st.lists(st.fixed_dictionaries({
        "name": _TEXT,
        "values": st.lists(st.fixed_dictionaries({"text": _TEXT}), max_size=2)}), max_size=2),
})


@given(_META, _TEXT)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_text_round_trips_through_front_matter(meta, body):
    page = Page("doc/x.md", {"hti": 1, "kind": "subject", **meta}, body)
    data = page.render()
    back = parse_page(page.path, data)
    assert back.meta == parse_page(page.path, data).meta
    assert back.meta["kind"] == "subject"
    assert back.meta == _expected(page.meta)
    assert back.body.rstrip("\n") == _no_surrogates(body).rstrip("\n")
    assert back.render() == data  # stable bytes


def _no_surrogates(text: str) -> str:
    return text.encode("utf-8", "replace").decode("utf-8")


def _expected(value):
    """What a value reads back as: exactly what was written (tuples read back as lists)."""
    if isinstance(value, dict):
        return {k: _expected(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_expected(v) for v in value]
    return value


def test_enormous_value_round_trips():
    huge = ("word " * 100_000) + "---\n" + "x: y\n"
    page = Page("doc/x.md", {"kind": "subject", "title": "T", "fields": [{"name": "f", "values": [{"text": huge}]}]})
    assert parse_page(page.path, page.render()).meta["fields"][0]["values"][0]["text"] == huge


# -- a hostile record laid out and committed ------------------------------------------------------

def _hostile_record(source_len: int) -> Record:
    subjects = []
    for i, name in enumerate(HOSTILE):
        subjects.append(Subject(
            name=name or "(empty)", slug=slugify(name), summary=HOSTILE[-1 - i],
            aliases=[HOSTILE[(i + 3) % len(HOSTILE)]],
            fields={HOSTILE[(i + 5) % len(HOSTILE)] or "field": [FieldValue(HOSTILE[(i + 7) % len(HOSTILE)] or "v",
                                                                                 [(i, min(i + 10, source_len))])]}))
    slugs: set[str] = set()
    for s in subjects:
        s.slug = unique_slug(s.name, slugs)
    return Record(title="<b>Title</b> [x](https://evil.example)", overview="---\nkind: evil\n---",
                  categories=[Category(name="../cat\x00", slug=slugify("../cat\x00"), summary="]: [", subjects=subjects)])


def test_hostile_record_becomes_safe_pages_in_a_clean_commit(index_path):
    source = load_source(CONTRACT)
    pages = build_pages("contract", _hostile_record(len(source.text)), source, {"format": 1}, LayoutOptions())
    for page in pages:
        assert page.path.startswith("contract/") and ".." not in page.path.split("/")
        assert all(SLUG.match(part.removesuffix(".md").split("--")[0]) for part in page.path.split("/"))
        back = parse_page(page.path, page.render())
        assert back.meta == _expected(page.meta)
        assert_inert(page.body)
        for target in re.findall(r"(?<!\\)\]\(([^)]*)\)", page.body):
            assert not re.match(r"[a-z]+:", target), target  # no scheme: every link is relative
            assert page.resolve(target).startswith("contract/"), target
    repo = IndexRepo(index_path)
    with repo.lock():
        files = {p.path: p.render() for p in pages}
        files["contract/source.txt"] = source.text.encode()
        result = repo.commit(files, "hostile", replace_dirs=("contract",))
    assert result.sha
    snapshot = repo.snapshot()
    for page in pages:
        assert snapshot.page(page.path).meta == _expected(page.meta)
    repo.close()
    assert_fsck_clean(index_path)


@pytest.mark.parametrize("bad", ["../escape.md", "a/../../escape.md", "doc/\x00nul.md", "doc/.git/config",
                                 "doc/.GIT/config", "/abs.md", "doc//x.md"])
def test_store_refuses_unsafe_paths(index_path, bad):
    from hti_git.errors import StoreError

    repo = IndexRepo(index_path)
    with repo.lock(), pytest.raises(StoreError, match="unsafe path"):
        repo.commit({bad: b"x"}, "bad")
    repo.close()
    assert_fsck_clean(index_path)


# -- the standard compile with a hostile model ---------------------------------------------------

def _hostile_reply(messages):
    answer = standard_stub.reply(messages)
    system = messages[0]["content"]
    if system.startswith("You fill in"):
        text = standard_stub.document_text(messages[-1]["content"])
        quote = " ".join(text.split()[:12])
        for i, name in enumerate(HOSTILE):
            answer["subjects"].append({
                "category": "clauses", "name": name, "aliases": [HOSTILE[-1 - i]], "summary": HOSTILE[(i + 4) % len(HOSTILE)],
                "fields": [{"field": "text", "value": HOSTILE[(i + 9) % len(HOSTILE)] or "x", "anchor": quote}]})
    elif isinstance(answer, dict) and "summary" in answer:
        answer["summary"] = "<script>x</script> [evil](https://evil.example) ---\nkind: root\n\x00"
    if isinstance(answer, dict) and "title" in answer:
        answer["title"] = "../../" + answer["title"] + " ![p](http://evil.example/p.png)"
    return answer


def test_standard_compile_with_hostile_model_output(index_path):
    repo = IndexRepo(index_path)
    result = compile_path(repo, CONTRACT, Settings(model="hostile", max_output_tokens=100_000), method="standard",
                          standard=StandardOptions(provider=ScriptedProvider(default=_hostile_reply)))
    assert result.status == "committed"
    files = subprocess.run(["git", "-C", str(index_path), "ls-files"], capture_output=True, text=True).stdout.split()
    doc = result.doc
    assert all(f.startswith((doc + "/", "templates/", "hti.yaml", ".gitattributes", ".gitignore", "catalog/")) for f in files)
    snapshot = repo.snapshot()
    for path in snapshot.blob_shas(doc):
        if path.endswith(".md"):
            page = snapshot.page(path)
            assert_inert(page.body)
    report = verify_snapshot(snapshot)
    assert report.ok, [p.line() for p in report.problems]
    repo.close()
    assert_fsck_clean(index_path)


# -- broken replies over HTTP ----------------------------------------------------------------------

class _TruncatingStub(OpenAIStub):
    """Answers every request with finish_reason 'length' (the model hit max_tokens)."""

    def _completion(self, body, content):
        data = super()._completion(body, content)
        data["choices"][0]["finish_reason"] = "length"
        data["choices"][0]["message"]["content"] = data["choices"][0]["message"]["content"][:25]
        return data


@pytest.mark.parametrize("case", ["invalid-json", "wrong-shape", "truncated", "enormous"])
def test_broken_model_replies_fail_with_one_line(index_path, monkeypatch, case):
    runner = CliRunner()
    assert runner.invoke(main, ["-C", str(index_path), "compile", "--method", "fast", str(CONTRACT)]).exit_code == 0
    stub_class = _TruncatingStub if case == "truncated" else OpenAIStub
    with stub_class(stub_handler) as stub:
        if case == "invalid-json":
            stub.always = reply("{not json")
        elif case == "wrong-shape":
            stub.always = reply({"unexpected": [1, 2, 3]})
        elif case == "enormous":
            stub.always = reply("x" * 2_000_000)
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("HTI_MODEL", "stub-model")
        (index_path / "hti.yaml").write_text("max_retries: 1\n")
        for args in (["compile", "--method", "standard", "--doc", "llm", str(CONTRACT)],
                     ["ask", "--method", "llm", "--no-cache", "Who are the parties?"]):
            result = runner.invoke(main, ["-C", str(index_path), *args])
            assert result.exit_code == 1, (args, result.output[-500:])
            assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
            errors = [line for line in result.output.splitlines() if line.startswith("hti-git: error:")]
            assert len(errors) == 1 and len(errors[0]) < 1000, result.output[-1500:]
            if case == "truncated":
                assert "max_output_tokens" in errors[0], errors
    assert not (index_path / "llm").exists()
    assert [r["doc"] for r in json.loads(runner.invoke(main, ["-C", str(index_path), "ls", "--json"]).output)] \
        == [doc_slug(CONTRACT.name)]
    assert_fsck_clean(index_path)

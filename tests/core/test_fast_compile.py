"""The fast compile: structure found, spans true to the source, budget kept, deterministic commits."""

from __future__ import annotations

import subprocess

import pytest

from hti_git.compile.fast import compile_fast
from hti_git.compile.pipeline import compile_path
from hti_git.compile.structure import find_headings
from hti_git.config import Settings
from hti_git.errors import DirtyTreeError, SourceError
from hti_git.index.tree import list_documents
from hti_git.sources import load_source
from hti_git.sources.chunk import chunk_text
from hti_git.sources.passages import split_passages
from hti_git.store import IndexRepo
from hti_git.tokens import estimate_tokens
from hti_git.workspace import init_index


def _git(path, *args) -> str:
    return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(index_repo):
    return index_repo


def test_headings_of_every_style():
    text = (
        "# Title\n\nARTICLE IV TERMINATION\n\n4.1 Termination for Cause. Either party may end it.\n\n"
        "Section 5.2 Notices\n\nINT. KITCHEN - NIGHT\n\nGENERAL PROVISIONS\n"
    )
    titles = [h.title for h in find_headings(text)]
    assert titles[0] == "Title"
    assert "Article IV Termination" in titles
    assert "4.1 Termination for Cause" in titles
    assert "Section 5.2 Notices" in titles
    assert "INT. KITCHEN - NIGHT" in titles
    assert "General Provisions" in titles


def test_passages_cover_text_and_split_long_paragraphs():
    text = "First short paragraph.\n\n" + " ".join(f"Sentence number {i} is here." for i in range(80))
    spans = split_passages(text, 0, len(text), max_chars=300)
    assert spans[0] == (0, len("First short paragraph."))
    assert all(e - s <= 600 for s, e in spans)
    assert " ".join(text[s:e] for s, e in spans[1:]) == text[spans[1][0]:]


def test_chunks_overlap_and_cover():
    text = ("word " * 5000).strip()
    chunks = chunk_text(text, size=3000, overlap=500)
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    for a, b in zip(chunks, chunks[1:]):
        assert b.start < a.end  # overlap
        assert a.text == text[a.start:a.end]


def test_contract_record_has_clauses_parties_terms_with_true_spans(contract_text):
    source = load_source(contract_text)
    record = compile_fast(source)
    names = [c.name for c in record.categories]
    assert names == ["Clauses", "Exhibits and annexes", "Parties", "Defined terms"]
    parties = {s.name for s in record.categories[2].subjects}
    assert {"Company", "Consultant"} <= parties
    # the annexed warrant ("9 Annex A THIS WARRANT AND ...", a page run into one line) is its own branch
    assert record.categories[1].children[0].name == "Annex A"

    def subjects(category):
        yield from category.subjects
        for child in category.children:
            yield from subjects(child)

    all_subjects = [s for c in record.categories for s in subjects(c)]
    titles = {s.name for s in all_subjects}
    assert "7.10 Governing Law" in titles
    for subject in all_subjects:
        for values in subject.fields.values():
            for value in values:
                for start, end in value.spans:
                    assert source.text[start:end] == value.text


def test_compile_commits_pages_within_budget(repo, contract_text):
    result = compile_path(repo, contract_text, Settings(page_budget=800, fanout=6))
    assert result.status == "committed" and result.pages > 20
    snap = repo.snapshot()
    doc = result.doc
    for path in snap.blob_shas(doc):
        if not path.endswith(".md"):
            continue
        page = snap.page(path)
        assert len(page.links()) <= 6
        values = [v for f in page.meta.get("fields", []) for v in f["values"]]
        assert all(v.get("spans") for v in values), f"{path}: a fast value without a span"
        if len(values) > 1:  # a single value is moved whole, never cut
            assert estimate_tokens(page.body) <= 800 * 1.5
        for child in page.links():
            assert snap.exists(page.resolve(child["link"]))
    rows = list_documents(snap)
    assert rows[0]["doc"] == doc and rows[0]["method"] == "fast"
    assert _git(repo.root, "status", "--porcelain") == ""


def test_compile_is_deterministic(tmp_path, contract_text):
    trees = []
    for name in ("a", "b"):
        init_index(tmp_path / name)
        with IndexRepo(tmp_path / name) as r:
            compile_path(r, contract_text, Settings())
            trees.append(_git(r.root, "rev-parse", "HEAD^{tree}"))
            again = compile_path(r, contract_text, Settings())
            assert again.status == "unchanged" and again.commit is None
            assert _git(r.root, "rev-list", "--count", "HEAD").strip() == "2"
    assert trees[0] == trees[1]


def test_new_layout_settings_recompile_to_a_branch(repo, contract_text):
    first = compile_path(repo, contract_text, Settings())
    head = _git(repo.root, "rev-parse", "HEAD")
    second = compile_path(repo, contract_text, Settings(page_budget=500))
    assert second.status == "branch" and second.branch.startswith(f"hti/{first.doc}/")
    assert _git(repo.root, "rev-parse", "HEAD") == head
    assert _git(repo.root, "status", "--porcelain") == ""
    tip = _git(repo.root, "rev-parse", second.branch)
    again = compile_path(repo, contract_text, Settings(page_budget=500))  # the branch holds it already
    assert again.status == "unchanged" and again.branch == second.branch and again.commit is None
    assert _git(repo.root, "rev-parse", second.branch) == tip
    third = compile_path(repo, contract_text, Settings(page_budget=500), in_place=True)
    assert third.status == "committed" and third.branch == "main"


def test_edited_source_recompiles_in_place(repo, contract_text, tmp_path):
    copy = tmp_path / "contract.txt"
    copy.write_text(contract_text.read_text())
    compile_path(repo, copy, Settings())
    copy.write_text(copy.read_text().replace("State of New York", "State of Delaware"))
    result = compile_path(repo, copy, Settings())
    assert result.status == "committed" and 0 < result.changed < 10


def test_uncommitted_edits_in_doc_folder_are_refused(repo, contract_text):
    result = compile_path(repo, contract_text, Settings())
    page = repo.root / result.doc / "index.md"
    page.write_text(page.read_text() + "my note\n")
    head = _git(repo.root, "rev-parse", "HEAD")
    with pytest.raises(DirtyTreeError):
        compile_path(repo, contract_text, Settings(page_budget=900), in_place=True)
    assert _git(repo.root, "rev-parse", "HEAD") == head
    assert page.read_text().endswith("my note\n")


def test_interrupted_compile_leaves_repository_unchanged(repo, contract_text):
    head = _git(repo.root, "rev-parse", "HEAD")
    index = (repo.git_dir / "index").read_bytes()

    def kill():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        compile_path(repo, contract_text, Settings(), before_ref_move=kill)
    assert _git(repo.root, "rev-parse", "HEAD") == head
    assert (repo.git_dir / "index").read_bytes() == index
    assert _git(repo.root, "status", "--porcelain", "--untracked-files=all") == ""


def test_bad_input_changes_nothing(repo, tmp_path):
    head = _git(repo.root, "rev-parse", "HEAD")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    for path, reason in [(tmp_path / "missing.txt", "no such file"), (empty, "empty")]:
        with pytest.raises(SourceError, match=reason):
            compile_path(repo, path, Settings())
    assert _git(repo.root, "rev-parse", "HEAD") == head
    assert _git(repo.root, "status", "--porcelain", "--untracked-files=all") == ""


def test_parallel_documents_share_the_model_call_bound(repo, tmp_path, monkeypatch):
    import hti_git.compile.batch as batch

    seen = []
    real = batch.prepare_compile

    def spy(r, path, settings, **kw):
        seen.append(settings.concurrency)
        return real(r, path, settings, **kw)

    monkeypatch.setattr(batch, "prepare_compile", spy)
    for i in range(4):
        (tmp_path / f"d{i}.md").write_text(f"# Doc {i}\n\nSome text number {i} for the index.\n")
    result = batch.compile_many(repo, [str(tmp_path / f"d{i}.md") for i in range(4)], Settings(concurrency=8), jobs=4)
    assert len(result.results) == 4 and not result.failures
    assert seen == [2, 2, 2, 2]  # 8 calls in flight in all, shared by 4 documents


def test_keywords_of_text_outside_the_vocabulary_do_not_fail():
    from hti_git.compile.fast import _Vocabulary

    vocab = _Vocabulary("The distributor sells widgets.\n\nThe distributor buys gadgets.\n")
    assert set(vocab.keywords("utor widgets")) == {"widgets", "utor"}  # a cut word shows as itself

"""The CLI as a user drives it: init, compile (single and batch), ask, show, ls; errors and help."""

from __future__ import annotations

import json

import click
import pytest

from hti_git.cli import main
from tests.support.cli import git_out as _git
from tests.support.cli import run
from tests.support.pdfgen import pdf_bytes


@pytest.fixture
def idx(tmp_path):
    run("init", tmp_path / "idx")
    return tmp_path / "idx"


def _state(path):
    return (_git(path, "rev-parse", "HEAD"), (path / ".git" / "index").read_bytes(),
            _git(path, "status", "--porcelain", "--untracked-files=all"), _git(path, "for-each-ref"))


def test_every_command_has_help_with_an_example():
    for name, command in main.commands.items():
        result = run(name, "--help")
        assert "Example" in result.output, f"{name} --help has no example"
        assert command.help and command.help.strip()


def test_init_twice_changes_nothing(idx):
    head = _git(idx, "rev-parse", "HEAD")
    result = run("init", idx)
    assert "Nothing to do" in result.output
    assert _git(idx, "rev-parse", "HEAD") == head
    assert (idx / "hti.yaml").read_text().startswith("# hti-git settings")
    assert (idx / ".gitattributes").read_text().startswith("*.md diff=markdown")
    assert (idx / "templates").is_dir()


def test_main_workflow(idx, contract_text):
    out = run("-C", idx, "compile", contract_text).output
    assert "fast" in out and "committed" in out
    rows = json.loads(run("-C", idx, "ls", "--json").output)
    assert rows[0]["doc"] == "slingerbaginc-05-27-2020-ex-10-7-consulting-agreement"
    assert rows[0]["pages"] > 10 and rows[0]["method"] == "fast"
    tree = run("-C", idx, "show").output
    assert "Governing Law" in tree
    page = run("-C", idx, "show", "slingerbag/index.md").output
    assert page.startswith("# ")
    answer = json.loads(run("-C", idx, "ask", "--json", "Which state's law governs this agreement?").output)
    assert answer["found"] and "New York" in answer["answer"]
    assert set(answer) >= {"answer", "found", "citations", "usage", "trace"}
    assert answer["citations"][0]["lines"][0] >= 1
    text = run("-C", idx, "ask", "--trace", "Which state's law governs this agreement?").output
    assert "Citations" in text and "source.txt#L" in text and "Cost: 0 model calls" in text
    again = run("-C", idx, "compile", contract_text).output
    assert "unchanged" in again


def test_not_found_names_the_closest_passages_read(idx, contract_text):
    """A `fast` "not found" says where it looked: the first pages it read, so the reader can check."""
    run("-C", idx, "compile", contract_text)
    question = "Does the contract include liquidated damages?"
    answer = json.loads(run("-C", idx, "ask", "--json", question).output)
    assert not answer["found"]
    read = [s["page"] for s in answer["trace"] if s["action"] == "read"]
    text = run("-C", idx, "ask", question).output
    assert text.startswith("Not found in the index or the source.")
    listed = text.split("Closest passages read", 1)[1].split("Cost:", 1)[0]
    assert read and read[0] in listed
    assert len([line for line in listed.splitlines() if line.startswith("  - ")]) == min(3, len(dict.fromkeys(read)))


def test_ask_at_an_older_revision(idx, contract_text, tmp_path):
    run("-C", idx, "compile", contract_text)
    amended = tmp_path / contract_text.name
    amended.write_text(contract_text.read_text().replace("State of New York", "State of Delaware"))
    run("-C", idx, "compile", "--replace", amended)  # another file of the same name replaces only when asked
    now = json.loads(run("-C", idx, "ask", "--json", "Which state's law governs?").output)
    old = json.loads(run("-C", idx, "ask", "--json", "--rev", "HEAD~1", "Which state's law governs?").output)
    assert "Delaware" in now["answer"] and "New York" in old["answer"]


@pytest.mark.parametrize("name,content,reason", [
    ("missing.txt", None, "no such file"),
    ("empty.txt", b"", "empty"),
    ("tool.exe", b"MZ\x90\x00", "unsupported file type"),
    ("picture.png", b"\x89PNG\r\n\x1a\n", "unsupported file type"),
    ("binary.txt", b"\x00\x01\x02\x03" * 100, "binary"),
    ("broken.pdf", b"%PDF-1.4\n1 0 obj\n<<", "PDF"),
])
def test_bad_input_is_one_line_and_changes_nothing(idx, tmp_path, name, content, reason):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    before = _state(idx)
    result = run("-C", idx, "compile", path, ok=False)
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.startswith("hti-git: error")]
    assert len(lines) == 1 and name in lines[0] and reason in lines[0]
    assert "Traceback" not in result.output
    assert _state(idx) == before


def _scanned_pdf() -> bytes:
    import io

    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument.new()
    doc.new_page(612, 792)
    buf = io.BytesIO()
    doc.save(buf)
    doc.close()
    return buf.getvalue()


@pytest.mark.parametrize("name,make,reason", [
    ("locked.pdf", lambda: pdf_bytes([["Secret terms"]], encrypted=True), "encrypted"),
    ("scan.pdf", _scanned_pdf, "OCR"),
    ("cut.pdf", lambda: pdf_bytes([["Page one"], ["Page two"]])[:-40], "PDF"),
])
def test_unreadable_pdfs_are_refused_and_change_nothing(idx, tmp_path, name, make, reason):
    path = tmp_path / name
    path.write_bytes(make())
    before = _state(idx)
    result = run("-C", idx, "compile", path, ok=False)
    assert result.exit_code == 1
    assert result.output.count("hti-git: error") == 1 and name in result.output and reason in result.output
    assert _state(idx) == before


def test_too_large_document_is_refused(idx, tmp_path):
    (idx / "hti.yaml").write_text("max_text_bytes: 100\n")
    _git(idx, "commit", "-qam", "small limit")
    doc = tmp_path / "big.txt"
    doc.write_text("word " * 100)
    before = _state(idx)
    result = run("-C", idx, "compile", doc, ok=False)
    assert result.exit_code == 1 and "limit" in result.output
    assert _state(idx) == before


def test_batch_compiles_the_good_and_names_the_bad(idx, tmp_path, contract_text):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.md").write_text("# Notes\n\nThe launch is planned for March.\n\n# Budget\n\nTen thousand euros.\n")
    (folder / "empty.txt").write_text("")
    result = run("-C", idx, "compile", "--json", "-j", 2, contract_text, folder, ok=False)
    assert result.exit_code == 1
    rows = json.loads(result.output)
    statuses = sorted(r["status"] for r in rows)
    assert statuses == ["committed", "committed", "failed"]
    failed = [r for r in rows if r["status"] == "failed"][0]
    assert "empty.txt" in failed["error"]
    assert _git(idx, "rev-list", "--count", "HEAD").strip() == "3"  # init + one commit per document
    assert _git(idx, "status", "--porcelain") == ""


def test_batch_one_commit_and_globs(idx, tmp_path):
    for i in range(3):
        (tmp_path / f"memo{i}.md").write_text(f"# Memo {i}\n\nMemo number {i} says hello to team {i}.\n")
    run("-C", idx, "compile", "--one-commit", str(tmp_path / "memo*.md"))
    assert _git(idx, "rev-list", "--count", "HEAD").strip() == "2"
    rows = json.loads(run("-C", idx, "ls", "--json").output)
    assert [r["doc"] for r in rows] == ["memo0", "memo1", "memo2"]


def test_not_a_repository_is_a_clear_error(tmp_path):
    result = run("-C", tmp_path, "ls", ok=False)
    assert result.exit_code == 1
    assert "not a Git repository" in result.output and "hti-git init" in result.output


def test_unknown_revision_is_a_clear_error(idx):
    result = run("-C", idx, "ask", "--rev", "nope", "anything", ok=False)
    assert result.exit_code != 0 and "unknown revision" in result.output


def test_version():
    assert "hti-git" in run("--version").output
    assert isinstance(main, click.Group)


def test_jobs_flag_bounds_model_calls(idx, contract_text, monkeypatch):
    import hti_git.compile.batch as batch

    seen = []
    real = batch.prepare_compile
    monkeypatch.setattr(batch, "prepare_compile", lambda r, p, s, **kw: seen.append(s.concurrency) or real(r, p, s, **kw))
    run("-C", idx, "compile", "-j", 3, contract_text)
    run("-C", idx, "compile", "--in-place", "--doc", "again", contract_text)
    assert seen == [3, 8]  # -j 3 for one document: 3 calls in flight; no -j: hti.yaml's concurrency

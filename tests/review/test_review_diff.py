"""Semantic diff over real index repositories: amended sources, renames, schema/model changes, docs."""

from __future__ import annotations

import json

from click.testing import CliRunner
from review_support import CLAUSES, commit_files, contract, edit_page

from hti_git.cli import main
from hti_git.config import Settings
from hti_git.index.page import parse_page
from hti_git.review.diff import FORMAT, diff_revisions
from hti_git.review.render import render_text
from hti_git.review.words import plain, word_diff
from hti_git.text import canonical_sha256

DOC = "services"


def _doc(result, name=DOC):
    return next(d for d in result["docs"] if d["doc"] == name)


def _titles(items):
    return sorted(i["title"] for i in items)


def test_identical_revisions_give_an_empty_diff_and_exit_0(repo, compile_text):
    sha = compile_text(contract())
    result = diff_revisions(repo, sha, "HEAD")
    assert result["identical"] is True
    assert result["docs"] == [] and result["other_files"] == []
    assert all(v == 0 for v in result["totals"].values())

    runner = CliRunner()
    out = runner.invoke(main, ["-C", str(repo.root), "diff", "HEAD", "HEAD"], catch_exceptions=False)
    assert out.exit_code == 0 and out.output == ""
    out = runner.invoke(main, ["-C", str(repo.root), "diff", "HEAD", sha, "--format", "json"], catch_exceptions=False)
    assert out.exit_code == 0 and json.loads(out.output)["identical"] is True


def test_amended_source_one_clause_changed_one_added_one_removed(repo, compile_text):
    before = compile_text(contract())
    clauses = dict(CLAUSES)
    clauses[6] = ("Governing Law", CLAUSES[6][1].replace("New York", "Delaware"))
    del clauses[5]
    clauses[7] = ("Notices", "All notices under this Agreement must be in writing and delivered by courier or email.")
    after = compile_text(contract(clauses))

    result = diff_revisions(repo, before, after)
    d = _doc(result)
    assert d["status"] == "recompiled"
    assert d["change"] == "source changed"
    assert "source.sha256" in {p["key"] for p in d["provenance"]}
    subjects = d["subjects"]
    assert _titles(subjects["added"]) == ["7 Notices"]
    assert _titles(subjects["removed"]) == ["5 Confidentiality"]
    assert subjects["renamed"] == []
    changed = {c["title"]: c for c in subjects["changed"]}
    assert "6 Governing Law" in changed
    value = next(c for c in changed["6 Governing Law"]["changes"] if c["what"] == "value")
    assert value["op"] == "changed" and value["field"] == "text"
    assert "New York" in value["a"]["text"] and "Delaware" in value["b"]["text"]
    assert value["a"]["spans"] and value["b"]["spans"]  # evidence travels with the values
    assert plain(value["diff"]).count("[-New York-]") == 1 and "{+Delaware+}" in plain(value["diff"])
    # The clause listing's summary changed too, reported as a compact word diff.
    summary = next(s for s in d["summaries"] if s["page"] == f"{DOC}/clauses/index.md")
    assert ["-", "5 Confidentiality;"] in summary["diff"] or any(op == "-" for op, _ in summary["diff"])
    assert result["totals"]["subjects_added"] == 1 and result["totals"]["subjects_removed"] == 1

    text = render_text(result)
    assert "+ 7 Notices" in text and "- 5 Confidentiality" in text
    assert "[-New York-] {+Delaware+}" in text


def test_renamed_subject_is_matched_by_aliases_and_spans_not_reported_as_add_remove(repo, compile_text):
    before = compile_text(contract())
    clauses = dict(CLAUSES)
    clauses[4] = ("Termination for Convenience", CLAUSES[4][1])
    after = compile_text(contract(clauses))

    d = _doc(diff_revisions(repo, before, after))
    subjects = d["subjects"]
    assert subjects["added"] == [] and subjects["removed"] == []
    [renamed] = subjects["renamed"]
    assert renamed["a"]["title"] == "4 Termination"
    assert renamed["b"]["title"] == "4 Termination for Convenience"
    assert renamed["a"]["page"] != renamed["b"]["page"]  # the slug (file name) changed
    assert {"aliases", "spans"} <= set(renamed["matched_by"])  # "Section 4" alias and overlapping evidence
    # The clause text did not change: no value edit, only its evidence moved with the longer heading.
    assert not [c for c in renamed["changes"] if c["what"] == "value" and c["field"] == "text"]


def test_same_source_new_model_and_schema_from_hand_edited_pages(repo, compile_text):
    before = compile_text(contract())
    snap = repo.snapshot("HEAD")
    schema_path = f"{DOC}/schema.yaml"
    schema_text = snap.read_text(schema_path)
    # A different schema: a field renamed in Clauses, a category added.
    new_schema_text = schema_text.replace("- name: text\n", "- name: clause text\n") + (
        "  - name: Obligations\n    slug: obligations\n    fields:\n      - obligor\n      - duty\n")
    from ruamel.yaml import YAML

    new_schema = YAML(typ="safe", pure=True).load(new_schema_text)
    schema_sha = canonical_sha256({k: v for k, v in new_schema.items() if k not in ("hti", "method")})
    root_path = f"{DOC}/index.md"
    root = parse_page(root_path, snap.read_bytes(root_path))
    prov = root.meta["provenance"]
    prov.update(method="standard", schema_sha256=schema_sha, prompts={"extract": "sha256:" + "1" * 64},
                model={"provider": "openai", "name": "gpt-5-mini", "temperature": 0.0})
    prov["usage"] = {"calls": 12, "cached_calls": 0, "input_tokens": 48000, "output_tokens": 5200}
    fees_path = f"{DOC}/clauses/2-fees.md"
    fees = parse_page(fees_path, snap.read_bytes(fees_path))
    for fld in fees.meta["fields"]:
        if fld["name"] == "text":
            fld["name"] = "clause text"
    after = commit_files(repo, {root_path: root.render(), schema_path: new_schema_text.encode(),
                                fees_path: fees.render()}, "Recompile services (standard)")

    d = _doc(diff_revisions(repo, before, after))
    assert d["status"] == "recompiled"
    assert d["change"].startswith("same source, new model")
    assert "new schema" in d["change"] and "new prompts" in d["change"] and "new method" in d["change"]
    keys = {p["key"]: p for p in d["provenance"]}
    assert keys["model.name"]["a"] is None and keys["model.name"]["b"] == "gpt-5-mini"
    assert keys["method"]["a"] == "fast" and keys["method"]["b"] == "standard"
    assert d["usage"]["a"]["input_tokens"] == 0 and d["usage"]["b"]["input_tokens"] == 48000
    schema = d["schema"]
    assert schema["categories_added"] == ["Obligations"]
    assert {"category": "Clauses", "a": "text", "b": "clause text"} in schema["fields_renamed"]
    fees_changes = next(c for c in d["subjects"]["changed"] if c["title"] == "2 Fees")["changes"]
    assert {c["field"] for c in fees_changes if c["what"] == "value"} == {"text", "clause text"}


def test_recompile_on_a_branch_with_new_layout(repo, compile_text):
    text = contract()
    compile_text(text)
    tip = compile_text(text, settings=Settings(fanout=3), branch="hti/services/narrow")
    d = _doc(diff_revisions(repo, "main", "hti/services/narrow"))
    assert d["change"] == "same source, new layout"
    # Subjects moved into part-NN sub-categories: same subjects, new places, nothing added or removed.
    assert d["subjects"]["added"] == [] and d["subjects"]["removed"] == []
    assert d["subjects"]["moved"] and all(m["page_a"] != m["page"] for m in d["subjects"]["moved"])
    assert d["categories"]["added"]
    assert tip == repo.resolve("hti/services/narrow").hexsha


def test_documents_added_and_removed(repo, compile_text):
    first = compile_text(contract())
    second = compile_text(contract({1: CLAUSES[1], 2: CLAUSES[2]}), name="short")
    result = diff_revisions(repo, first, second)
    assert [(d["doc"], d["status"]) for d in result["docs"]] == [("short", "added")]
    assert result["docs"][0]["counts"]["b"]["subjects"] > 0
    assert result["totals"]["docs_added"] == 1

    removed = commit_files(repo, {}, "Remove services", replace_dirs=(DOC,))
    result = diff_revisions(repo, second, removed)
    assert [(d["doc"], d["status"]) for d in result["docs"]] == [(DOC, "removed")]
    assert result["docs"][0]["usage"]["b"] is None
    # --doc limits the diff to one document.
    only = diff_revisions(repo, first, removed, doc="short")
    assert [d["doc"] for d in only["docs"]] == ["short"]


def test_hand_edit_without_provenance_change_is_modified_and_other_files_listed(repo, compile_text):
    before = compile_text(contract())

    def retitle(page):
        page.meta["summary"] = "Who pays whom, and when."

    edit_page(repo, f"{DOC}/clauses/2-fees.md", retitle)
    after = commit_files(repo, {"hti.yaml": repo.snapshot("HEAD").read_bytes("hti.yaml") + b"\n# note\n"})
    result = diff_revisions(repo, before, after)
    d = _doc(result)
    assert d["status"] == "modified" and d["change"] == "pages edited"
    [changed] = d["subjects"]["changed"]
    assert changed["changes"][0]["what"] == "summary"
    assert result["other_files"] == [{"status": "M", "path": "hti.yaml"}]


def test_json_is_stable_and_follows_the_documented_shape(repo, compile_text):
    before = compile_text(contract())
    clauses = dict(CLAUSES)
    clauses[2] = ("Fees", CLAUSES[2][1].replace("$10,000", "$12,500"))
    after = compile_text(contract(clauses))
    runner = CliRunner()
    args = ["-C", str(repo.root), "diff", before, after, "--format", "json"]
    first = runner.invoke(main, args, catch_exceptions=False)
    second = runner.invoke(main, args, catch_exceptions=False)
    assert first.exit_code == 0 and first.output == second.output
    data = json.loads(first.output)
    assert data["format"] == FORMAT
    assert set(data) == {"format", "a", "b", "identical", "totals", "docs", "other_files"}
    assert set(data["docs"][0]) == {"doc", "status", "change", "title", "provenance", "usage", "counts", "schema",
                                    "summaries", "categories", "subjects"}
    assert set(data["docs"][0]["subjects"]) == {"added", "removed", "renamed", "changed", "moved", "shifted"}


def test_text_is_coloured_only_when_asked(repo, compile_text):
    before = compile_text(contract())
    clauses = dict(CLAUSES)
    del clauses[3]
    after = compile_text(contract(clauses))
    result = diff_revisions(repo, before, after)
    assert "\x1b[" in render_text(result, color=True)
    out = CliRunner().invoke(main, ["-C", str(repo.root), "diff", before, after], catch_exceptions=False)
    assert out.exit_code == 0 and "\x1b[" not in out.output  # CliRunner's stdout is not a terminal
    assert "- 3 Term" in out.output


def test_unknown_revision_is_a_one_line_error(repo, compile_text):
    compile_text(contract())
    out = CliRunner().invoke(main, ["-C", str(repo.root), "diff", "no-such-rev", "HEAD"])
    assert out.exit_code == 1
    assert out.output.strip() == "hti-git: error: unknown revision 'no-such-rev'"


def test_word_diff_keeps_context_and_elides_the_rest():
    a = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
    b = a.replace("eight", "EIGHT")
    assert plain(word_diff(a, b, context=2)) == "… six seven [-eight-] {+EIGHT+} nine ten …"
    assert word_diff("Law", "Law;") == [["=", "Law"], ["+", ";"]]


def test_changed_blobs_gives_both_shas_and_read_blob_reads_them(repo, compile_text):
    before = compile_text(contract())
    clauses = dict(CLAUSES)
    del clauses[3]
    after = compile_text(contract(clauses))
    rows = {path: (status, a, b) for status, path, a, b in repo.changed_blobs(before, after)}
    assert set(rows) == {path for _, path in repo.changed_paths(before, after)}
    status, sha_a, sha_b = rows[f"{DOC}/source.txt"]
    assert status == "M"
    assert repo.read_blob(sha_a) == repo.snapshot(before).read_bytes(f"{DOC}/source.txt")
    assert repo.read_blob(sha_b) == repo.snapshot(after).read_bytes(f"{DOC}/source.txt")
    assert rows[f"{DOC}/clauses/3-term.md"][0] == "D" and rows[f"{DOC}/clauses/3-term.md"][2] is None
    assert repo.changed_blobs(after, after) == []

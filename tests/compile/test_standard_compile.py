"""The standard compile end to end with a scripted model: pages, provenance, verify, branches,
edits, budgets and hostile model output."""

from __future__ import annotations

import subprocess

import pytest
from standard_stub import reply
from standard_support import DOC, assert_verified, compile_standard, kinds, settings

from hti_git.compile.schema import load_schema_file
from hti_git.errors import BudgetExceededError, ModelError
from hti_git.llm import ScriptedProvider
from hti_git.review.diff import diff_revisions
from hti_git.tokens import estimate_tokens


def _git(repo, *args) -> str:
    return subprocess.run(["git", "-C", str(repo.root), *args], check=True, capture_output=True, text=True).stdout


def _pages(repo, rev="HEAD") -> dict[str, bytes]:
    snap = repo.snapshot(rev)
    return {p: snap.read_bytes(p) for p in snap.blob_shas(DOC)}


def test_standard_compile_writes_a_verified_index_with_provenance(repo, model, contract_text):
    result = compile_standard(repo, contract_text, model)
    assert result.status == "committed" and result.method == "standard"
    assert result.usage["calls"] == len(model.calls) > 3
    assert kinds(model)[0] == "discover" and kinds(model)[-1] == "root"
    assert_verified(repo)
    snap = repo.snapshot("HEAD")
    root = snap.page(f"{DOC}/index.md")
    prov = root.meta["provenance"]
    assert prov["method"] == "standard" and prov["model"]["name"] == "model-a"
    assert set(prov["prompts"]) == {"discover", "extract", "summarize", "category", "overview", "group"}
    assert prov["usage"]["stages"]["extract"]["calls"] == 3  # 33k characters: three chunks
    assert root.meta["summary"] and root.meta["title"] == "Exhibit 10.7 CONSULTING AGREEMENT"
    schema = snap.read_text(f"{DOC}/schema.yaml")
    assert schema.startswith("hti: 1\nmethod: standard\noverview:")
    governing = [p for p in snap.blob_shas(DOC) if p.endswith("7-10-governing-law.md")]
    page = snap.page(governing[0])
    assert "State of New York" in page.body and "source.txt#L" in page.body
    assert page.meta["aliases"] == ["Section 7.10"]
    log = _git(repo, "log", "-1", "--format=%B")
    assert "HTI-Method: standard" in log and "HTI-Model: model-a" in log


def test_same_settings_and_source_make_zero_calls_and_no_commit(repo, model, contract_text):
    compile_standard(repo, contract_text, model)
    head = _git(repo, "rev-parse", "HEAD")
    again = ScriptedProvider(default=reply)
    result = compile_standard(repo, contract_text, again)
    assert result.status == "unchanged" and again.calls == []
    assert _git(repo, "rev-parse", "HEAD") == head


def test_a_different_model_recompiles_onto_a_branch_leaving_the_current_one_alone(repo, model, contract_text):
    compile_standard(repo, contract_text, model)
    head, status = _git(repo, "rev-parse", "HEAD"), _git(repo, "status", "--porcelain")
    result = compile_standard(repo, contract_text, ScriptedProvider(default=reply), settings(model="model-b"))
    assert result.status == "branch" and result.branch.startswith(f"hti/{DOC}/model-b-")
    assert _git(repo, "rev-parse", "HEAD") == head and _git(repo, "status", "--porcelain") == status
    assert repo.current_branch() == "main"
    assert repo.snapshot(result.branch).page(f"{DOC}/index.md").meta["provenance"]["model"]["name"] == "model-b"
    assert_verified(repo, result.branch)
    (doc,) = diff_revisions(repo, "main", result.branch)["docs"]
    assert doc["change"] == "same source, new model" and doc["usage"]["b"]["calls"] > 3
    in_place = compile_standard(repo, contract_text, ScriptedProvider(default=reply), settings(model="model-c"),
                                in_place=True)
    assert in_place.status == "committed" and in_place.branch == "main"


def test_editing_a_prompt_template_is_a_new_identity_and_a_new_branch(repo, model, contract_text):
    compile_standard(repo, contract_text, model)
    template = repo.root / "templates" / "extract.md"
    template.write_text(template.read_text() + "Prefer fewer, larger subjects.\n")
    again = ScriptedProvider(default=reply)
    result = compile_standard(repo, contract_text, again)
    assert result.status == "branch"
    assert kinds(again).count("extract") == 3  # the prompt changed: no cache hits for extraction
    prov = repo.snapshot(result.branch).page(f"{DOC}/index.md").meta["provenance"]
    assert prov["prompts"]["extract"] != repo.snapshot("HEAD").page(f"{DOC}/index.md").meta["provenance"]["prompts"]["extract"]


def test_a_one_paragraph_edit_re_extracts_only_the_changed_chunks(repo, model, contract_text, tmp_path):
    small = settings(chunk_size=6000, chunk_overlap=500)
    source = tmp_path / contract_text.name
    text = contract_text.read_text(encoding="utf-8")
    source.write_text(text, encoding="utf-8")
    compile_standard(repo, source, model, small)
    chunks = kinds(model).count("extract")
    assert chunks >= 5
    before = _pages(repo)
    # amend one paragraph near the end: the warrant's governing law
    old = "This Warrant shall be governed by and construed in accordance with the laws of the State of New York"
    assert text.count(old) == 1
    source.write_text(text.replace(old, old.replace("New York", "Delaware, and the parties submit to its courts")),
                      encoding="utf-8")
    again = ScriptedProvider(default=reply)
    result = compile_standard(repo, source, again, small)
    assert result.status == "committed"
    calls = kinds(again)
    assert "discover" not in calls  # the index's own schema is reused for a new version of the source
    assert 1 <= calls.count("extract") <= 2
    assert result.usage["cached_calls"] >= chunks - 2
    assert_verified(repo)
    after = _pages(repo)
    edit_at = text.index(old)
    unchanged = [p for p, data in before.items() if p in after and after[p] == data]
    assert len(unchanged) > 20
    # every subject page whose evidence lies wholly before the edit keeps its bytes
    snap = repo.snapshot("HEAD~1")
    for path in before:
        if not path.endswith(".md") or path.endswith("index.md"):
            continue
        page = snap.page(path)
        spans = [s for f in page.meta.get("fields", []) for v in f["values"] for s in v.get("spans", [])]
        if spans and max(e for _, e in spans) < edit_at:
            assert after.get(path) == before[path], path
    diff = _git(repo, "diff", "--stat", "HEAD~1", "HEAD")
    assert "source.txt" in diff and "governing-law" in diff


def test_max_tokens_stops_before_the_budget_is_spent_and_commits_nothing(repo, model, contract_text):
    head = _git(repo, "rev-parse", "HEAD")
    with pytest.raises(BudgetExceededError, match="limit of 3000"):
        compile_standard(repo, contract_text, model, max_tokens=3000)
    assert _git(repo, "rev-parse", "HEAD") == head and _git(repo, "branch", "--list") == "* main\n"
    assert _git(repo, "status", "--porcelain") == ""


def test_a_reviewed_schema_file_skips_discovery(repo, model, contract_text, tmp_path):
    path = tmp_path / "schema.yaml"
    path.write_text("hti: 1\noverview: Contracts.\ncategories:\n  - name: Clauses\n    fields:\n"
                    "      - name: text\n        description: what it says\n  - name: Defined terms\n"
                    "    fields:\n      - name: definition\n")
    result = compile_standard(repo, contract_text, model, schema=load_schema_file(path))
    assert result.status == "committed" and "discover" not in kinds(model)
    prov = repo.snapshot("HEAD").page(f"{DOC}/index.md").meta["provenance"]
    assert "discover" not in prov["prompts"]
    assert load_schema_file(repo.root / DOC / "schema.yaml").to_dict() == load_schema_file(path).to_dict()
    assert_verified(repo)


def _record(i: int) -> str:
    return f"Record {i}: " + " ".join(f"the Consultant shall keep ledger {i}-{j}." for j in range(6))


def _hostile(messages):
    """The stub's answers, plus what a careless or hostile model might return in each chunk."""
    answer = reply(messages)
    if messages[0]["content"].startswith("You fill in"):
        records = [{"field": field, "value": _record(i), "anchor": "made up"}
                   for field in ("text", "section") for i in range(12)]
        answer["subjects"] += [
            {"category": "weather", "name": "Rain", "aliases": [], "summary": "", "fields": []},
            {"category": "clauses", "name": "../../etc/passwd", "aliases": ["../.git/config"], "summary": "x",
             "fields": [{"field": "text", "value": "pwned", "anchor": "this sentence is not in the contract"}]},
            {"category": "clauses", "name": "Records", "aliases": [], "summary": "Records.",
             "fields": records},
            {"category": "clauses", "name": "Essay", "aliases": [], "summary": "An essay.",
             "fields": [{"field": "text", "value": "word " * 5000, "anchor": "made up"}]},
        ]
    return answer


def test_hostile_model_output_is_contained(repo, contract_text):
    model = ScriptedProvider(default=_hostile)
    # a server that allows long replies: what it sends is contained, however much of it there is
    result = compile_standard(repo, contract_text, model, settings(max_output_tokens=200_000))
    assert any("unknown category 'weather'" in w for w in result.warnings)
    report = assert_verified(repo)
    assert report.unverified_skipped >= 2
    files = _git(repo, "ls-files").split()
    assert all(f.startswith((DOC + "/", "templates/", "hti.yaml", ".gitattributes", ".gitignore", "catalog/")) for f in files)
    assert not any(".." in f or "/etc/" in f for f in files)
    passwd = [f for f in files if f.endswith("/etc-passwd.md")]
    assert passwd
    page = repo.snapshot("HEAD").page(passwd[0])
    assert page.meta["fields"][0]["values"][0] == {"text": "pwned", "unverified": True}
    assert "unverified: evidence not found in source" in page.body
    records = sorted(f for f in files if "/records" in f)
    assert len(records) >= 2 and any("--" in f for f in records)  # continuation pages
    budget = settings().page_budget
    pieces = []
    for f in sorted(records, key=lambda f: (len(f), f)):
        page = repo.snapshot("HEAD").page(f)
        assert estimate_tokens(page.body) <= budget * 1.5
        pieces += [v["text"] for fld in page.meta["fields"] for v in fld["values"] if v.get("unverified")]
    assert pieces == [_record(i) for i in range(12)] * 2  # every value whole, in order, on some page
    essay = repo.snapshot("HEAD").page(next(f for f in files if f.endswith("/essay.md")))
    value = essay.meta["fields"][0]["values"][0]["text"]
    assert value.endswith("…") and len(value) <= 300  # a value is a short reading, not an essay


def test_a_model_finding_nothing_gives_a_root_only_index(repo, contract_text):
    def empty(messages):
        return {"subjects": []} if messages[0]["content"].startswith("You fill in") else reply(messages)

    result = compile_standard(repo, contract_text, ScriptedProvider(default=empty))
    assert result.status == "committed" and result.subjects == 0
    assert any("no subjects" in w for w in result.warnings)
    assert_verified(repo)


def test_a_model_proposing_no_schema_is_an_error(repo, contract_text):
    bad = ScriptedProvider(default=lambda m: {"overview": "", "categories": []})
    with pytest.raises(ModelError, match="no usable schema"):
        compile_standard(repo, contract_text, bad)


def test_an_overflowing_category_is_grouped_by_the_model(repo, model, contract_text):
    result = compile_standard(repo, contract_text, model, settings(fanout=6))
    assert "group" in kinds(model)
    snap = repo.snapshot("HEAD")
    clauses = snap.page(f"{DOC}/clauses/index.md")
    assert [c["title"] for c in clauses.meta["children"]][:2] == ["Part 1", "Part 2"]
    assert all(len(snap.page(p).meta.get("children", [])) <= 6 for p in snap.blob_shas(DOC) if p.endswith("index.md"))
    assert result.status == "committed"
    assert_verified(repo)

"""`hti-git eval` with a model: the real openai SDK over HTTP to the local stub, answering and judging."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from eval_support import DOC, cuad_questions, write_questions

from hti_git.cli import main
from tests.query.model_stub import decide
from tests.support.openai_stub import OpenAIStub

CATEGORIES = ("Governing Law", "Termination For Convenience", "Audit Rights")


def handler(body: dict) -> dict:
    """Navigation and answers as tests/query/model_stub decides them; the judge rules by word overlap."""
    messages = body.get("messages", [])
    if "You grade answers" in messages[0]["content"]:
        user = messages[-1]["content"]
        reference = re.search(r"Reference answer: (.*)", user).group(1).strip().lower()
        candidate = user.split("<answer>", 1)[1].lower()
        ok = reference == "yes" and "not found" not in candidate or reference in candidate
        return {"equivalent": ok, "reason": "stub ruling"}
    return decide(messages)


@pytest.fixture
def stub(monkeypatch):
    with OpenAIStub(handler) as s:
        monkeypatch.setenv("OPENAI_BASE_URL", s.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy")
        monkeypatch.setenv("HTI_MODEL", "stub-model")
        yield s


def test_model_run_measures_tokens_judges_and_resumes(repo, stub, tmp_path):
    qa = write_questions(tmp_path / "qa.jsonl", [q for q in cuad_questions() if q["category"] in CATEGORIES])
    args = ["-C", str(repo.root), "eval", str(qa), "--baseline", "full-document", "--baseline", "chunks",
            "--judge-model", "judge-model", "--context-tokens", "6000", "--out", str(tmp_path / "out"), "--json"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["mode"] == "model" and data["model"] == "stub-model"
    assert data["judge"]["status"] == "used" and data["judge"]["model"] == "judge-model"

    judged = [r for r in stub.requests if "You grade answers" in r.messages[0]["content"]]
    answering = [r for r in stub.requests if r not in judged]
    assert judged and all(r.body["model"] == "judge-model" for r in judged)
    assert all(r.body["model"] == "stub-model" for r in answering)
    assert all("sk-dummy" not in json.dumps(r.body) for r in stub.requests)
    assert data["judge"]["calls"] == len(judged)

    systems = {s["system"]: s for s in data["systems"]}
    for s in systems.values():
        assert s["tokens_basis"] == "measured" and s["calls"] >= 3 and s["accuracy"] is not None
    assert sum(s["calls"] for s in systems.values()) == len(answering)
    assert sum(s["input_tokens"] for s in systems.values()) == sum(_prompt_tokens(r) for r in answering)
    assert systems["chunks"]["tokens_per_question"] < systems["full-document"]["tokens_per_question"]
    assert systems["full-document"]["truncated"] == 3
    full_prompts = [r for r in answering if "From " + DOC + "/source.txt" in r.messages[-1]["content"]
                    and len(r.messages[-1]["content"]) > 5000]
    assert full_prompts and all(_prompt_tokens(r) <= 6000 for r in full_prompts)

    rows = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 9 and sum(r["rule"] == "judge" for r in rows) == len(judged)
    for r in rows:  # the stub's answers are plausible, not right: what matters is who decided, and how
        assert r["rule"] in ("judge", "containment", "yes-no", "not found")
        if r["rule"] == "judge":
            assert r["judge_reason"] == "stub ruling"
            ref = r["reference"].lower()
            assert r["correct"] == ((ref == "yes" and r["found"]) or ref in r["answer"].lower())
    assert all(r["tokens_basis"] == "measured" for r in rows)
    report = (tmp_path / "out" / "report.md").read_text()
    assert "**Answering: model `stub-model`**" in report and "**Judge: `judge-model`**" in report
    assert "truncated to the context on 3" in report

    before = len(stub.requests)
    again = json.loads(CliRunner().invoke(main, args, catch_exceptions=False).output)
    assert len(stub.requests) == before  # answers and rulings come from .git/hti/eval/
    assert again["systems"] == data["systems"] and again["judge"]["calls"] == 0


def _prompt_tokens(request) -> int:
    """What the stub reported as prompt tokens for a request (it estimates from the messages)."""
    from hti_git.tokens import estimate_tokens

    return sum(estimate_tokens(str(m.get("content", ""))) for m in request.messages)


def test_no_judge_flag_scores_deterministically_with_a_model(repo, stub, tmp_path):
    qa = write_questions(tmp_path / "qa.jsonl", [q for q in cuad_questions() if q["category"] in CATEGORIES])
    result = CliRunner().invoke(main, ["-C", str(repo.root), "eval", str(qa), "--no-judge", "--out",
                                       str(tmp_path / "out")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "Judge off" in result.output
    assert not [r for r in stub.requests if "You grade answers" in r.messages[0]["content"]]


def test_questions_answered_in_worker_processes_give_the_same_report(repo, stub, tmp_path):
    """-j 3: each question in a spawned worker that opens the repository itself, over HTTP to the stub."""
    qa = write_questions(tmp_path / "qa.jsonl", cuad_questions())

    def run(jobs: int, out: str) -> list[dict]:
        stub.reset()
        result = CliRunner().invoke(main, ["-C", str(repo.root), "eval", str(qa), "--no-judge", "--no-cache",
                                           "-j", str(jobs), "--out", str(tmp_path / out), "--json"],
                                    catch_exceptions=False)
        assert result.exit_code == 0, result.output
        rows = [json.loads(line) for line in (tmp_path / out / "results.jsonl").read_text().splitlines()]
        assert len(stub.requests) == sum(r["usage"]["calls"] for r in rows) > len(rows)
        return rows

    one, three = run(1, "one"), run(3, "three")
    assert len(one) == len(cuad_questions()) >= 10
    assert [r["question"] for r in three] == [r["question"] for r in one]  # question order, not finishing order
    for a, b in zip(one, three):
        assert (a["answer"], a["found"], a["correct"], a["citations"], a["usage"]) == \
               (b["answer"], b["found"], b["correct"], b["citations"], b["usage"])

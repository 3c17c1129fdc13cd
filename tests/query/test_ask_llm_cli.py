"""`hti-git ask` end to end: the real openai SDK over HTTP to the local stub, through the CLI."""

from __future__ import annotations

import json

from click.testing import CliRunner
from model_stub import stub_handler
from query_support import DOC

from hti_git.cli import main
from tests.support.openai_stub import bad_request, stub_fixtures

Q = "Which state's laws govern this agreement?"


stub, model_env = stub_fixtures(stub_handler)


def _ask(repo, *args):
    return CliRunner().invoke(main, ["-C", str(repo.root), "ask", *args], catch_exceptions=False)


def test_ask_uses_the_model_when_one_is_configured(repo, stub, model_env):
    result = _ask(repo, "--json", Q)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["method"] == "llm" and data["found"] and not data["fallback"]
    assert "New York" in data["answer"]
    # the governing-law clause is among the pages a word search shows with the root: one call
    assert data["usage"]["calls"] == len(stub.requests) == 1
    assert [s["action"] for s in data["trace"] if s["action"] in ("read", "suggest")][:2] == ["read", "suggest"]
    assert data["usage"]["input_tokens"] > 0
    text = (repo.root / DOC / "source.txt").read_text()
    for c in data["citations"]:
        assert text[c["start"]:c["end"]] == c["text"]
    bodies = [r.body for r in stub.requests]
    assert all(b["response_format"]["type"] == "json_schema" for b in bodies)
    assert all("sk-dummy" not in json.dumps(b) for b in bodies)


def test_text_output_has_citations_cost_line_and_trace(repo, stub, model_env):
    result = _ask(repo, "--trace", "--no-cache", Q)
    assert result.exit_code == 0, result.output
    assert "New York" in result.output
    assert f"{DOC}/source.txt#L" in result.output
    assert "Cost: " in result.output and "model calls" in result.output and "(llm, at HEAD" in result.output
    assert "tokens=" in result.output and "suggest" in result.output  # the page a word search showed


def test_second_ask_is_served_from_the_cache(repo, stub, model_env):
    first = json.loads(_ask(repo, "--json", Q).output)
    calls = len(stub.requests)
    second = json.loads(_ask(repo, "--json", Q).output)
    assert len(stub.requests) == calls
    assert second["usage"]["calls"] == 0 and second["usage"]["cached_calls"] == first["usage"]["calls"]
    assert second["answer"] == first["answer"]


def test_method_fast_and_no_model_stay_offline(repo, stub, monkeypatch):
    data = json.loads(_ask(repo, "--json", Q).output)  # no model configured: the fast path
    assert data["method"] == "fast" and data["usage"]["calls"] == 0
    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
    monkeypatch.setenv("HTI_MODEL", "stub-model")
    data = json.loads(_ask(repo, "--json", "--method", "fast", Q).output)
    assert data["method"] == "fast" and not stub.requests


def test_a_failing_endpoint_is_one_line_not_a_traceback(repo, stub, model_env):
    stub.always = bad_request("model 'stub-model' does not exist")  # not retried: fails at once
    result = CliRunner().invoke(main, ["-C", str(repo.root), "ask", "--no-cache", Q])
    assert result.exit_code != 0
    assert "hti-git: error:" in result.output and "Traceback" not in result.output

"""`hti-git compile` (standard) and `hti-git schema discover` end to end: the real openai SDK over
HTTP to the local stub server, through the CLI."""

from __future__ import annotations

import json
import subprocess

import pytest
from click.testing import CliRunner
from standard_stub import stub_handler
from standard_support import DOC, assert_verified

from hti_git.cli import main
from hti_git.store import IndexRepo
from tests.support.openai_stub import stub_fixtures

stub, model_env = stub_fixtures(stub_handler)


@pytest.fixture
def idx(tmp_path):
    result = CliRunner().invoke(main, ["init", str(tmp_path / "idx")], catch_exceptions=False)
    assert result.exit_code == 0
    return tmp_path / "idx"


def hti(idx, *args):
    return CliRunner().invoke(main, ["-C", str(idx), *map(str, args)], catch_exceptions=False)


def _git(path, *args) -> str:
    return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, text=True).stdout


def test_compile_uses_the_model_when_one_is_configured(idx, stub, model_env, contract_text):
    result = hti(idx, "compile", contract_text)
    assert result.exit_code == 0, result.output
    assert "committed" in result.output and "standard" in result.output and "calls" in result.output
    bodies = [r.body for r in stub.requests]
    assert len(bodies) >= 5
    assert all(b["response_format"]["type"] == "json_schema" for b in bodies)
    assert all("sk-dummy" not in json.dumps(b) for b in bodies)
    assert all("<document>" in b["messages"][-1]["content"] for b in bodies)  # document text fenced as data
    with IndexRepo(idx) as repo:
        assert_verified(repo)
    assert hti(idx, "verify").exit_code == 0

    stub.reset()
    again = hti(idx, "compile", contract_text)
    assert again.exit_code == 0 and "unchanged" in again.output and stub.requests == []


def test_a_recompile_with_another_model_lands_on_a_branch(idx, stub, model_env, contract_text):
    assert hti(idx, "compile", contract_text).exit_code == 0
    head = _git(idx, "rev-parse", "HEAD")
    result = hti(idx, "compile", contract_text, "--model", "other-model", "--json")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    assert row["status"] == "branch" and row["branch"].startswith(f"hti/{DOC}/other-model-")
    assert _git(idx, "rev-parse", "HEAD") == head
    text = hti(idx, "compile", contract_text, "--model", "third-model")
    assert "review it: hti-git diff main hti/" in text.output


def test_estimate_calls_nothing_and_commits_nothing(idx, stub, model_env, contract_text):
    head = _git(idx, "rev-parse", "HEAD")
    result = hti(idx, "compile", contract_text, "--estimate")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"estimate   {DOC}: ") and "model calls" in result.output
    rows = json.loads(hti(idx, "compile", contract_text, "--estimate", "--json").output)
    assert rows[0]["calls"] >= 4 and rows[0]["chunks"] == 3 and rows[0]["input_tokens"] > rows[0]["document_tokens"]
    assert stub.requests == [] and _git(idx, "rev-parse", "HEAD") == head

    assert hti(idx, "compile", contract_text).exit_code == 0
    stub.reset()
    rows = json.loads(hti(idx, "compile", contract_text, "--estimate", "--json").output)
    assert rows[0]["unchanged"] and rows[0]["calls"] == 0 and stub.requests == []


def test_max_tokens_stops_cleanly_with_nothing_committed(idx, stub, model_env, contract_text):
    head = _git(idx, "rev-parse", "HEAD")
    result = hti(idx, "compile", contract_text, "--max-tokens", "2500")
    assert result.exit_code == 1
    assert "over the limit of 2500" in result.output and "Traceback" not in result.output
    assert _git(idx, "rev-parse", "HEAD") == head and _git(idx, "status", "--porcelain") == ""
    # what was paid for is in the cache: the retry without a limit resumes from it
    spent = len(stub.requests)
    stub.reset()
    assert hti(idx, "compile", contract_text).exit_code == 0
    assert spent >= 1 and len(stub.requests) >= 1


def test_schema_discover_then_compile_against_the_reviewed_schema(idx, stub, model_env, contract_text, tmp_path):
    out = tmp_path / "schema.yaml"
    result = hti(idx, "schema", "discover", contract_text, "-o", out)
    assert result.exit_code == 0, result.output
    assert "Wrote" in result.output and "2 categories (Clauses, Defined terms)" in result.output
    assert len(stub.requests) == 1 and out.read_text().startswith("hti: 1\noverview:")
    stub.reset()
    compiled = hti(idx, "compile", contract_text, "--schema", out)
    assert compiled.exit_code == 0, compiled.output
    systems = [r.messages[0]["content"] for r in stub.requests]
    assert not any(s.startswith("You design") for s in systems)


def test_schema_discover_without_a_model_or_with_a_bad_schema_file_explains(idx, contract_text, tmp_path):
    result = hti(idx, "schema", "discover", contract_text)
    assert result.exit_code == 1 and "no usable model endpoint" in result.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("categories: []\n")
    result = hti(idx, "compile", contract_text, "--method", "standard", "--schema", bad)
    assert result.exit_code == 2 and "no usable categories" in result.output

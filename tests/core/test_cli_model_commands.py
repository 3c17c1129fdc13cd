"""`hti-git check` and `hti-git cache` through the real openai SDK against a local stub server."""

from __future__ import annotations

import json
import subprocess

import pytest
from click.testing import CliRunner

from hti_git.cli import main
from hti_git.workspace import init_index
from tests.support.openai_stub import OpenAIStub, server_error


def _invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_check_reports_structured_output(tmp_path, monkeypatch):
    init_index(tmp_path / "idx")
    with OpenAIStub() as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
        result = _invoke("-C", tmp_path / "idx", "check", "--model", "stub-model", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["ok"] and report["structured_output"] is True and report["model"] == "stub-model"
    assert report["latency_ms"] >= 0
    assert "sk-test" not in result.output


def test_check_falls_back_to_json_mode(tmp_path, monkeypatch):
    with OpenAIStub(reject_json_schema=True) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        result = _invoke("-C", tmp_path, "check", "--model", "m")
    assert result.exit_code == 0, result.output
    assert "JSON mode fallback" in result.output


def test_check_failure_exits_non_zero(tmp_path, monkeypatch):
    with OpenAIStub() as stub:
        stub.always = server_error(400)
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        result = _invoke("-C", tmp_path, "check", "--model", "m")
    assert result.exit_code == 1
    assert "failed" in result.output


def test_check_without_endpoint_says_how_to_configure(tmp_path):
    result = _invoke("-C", tmp_path, "check")
    assert result.exit_code == 1
    assert "OPENAI_API_KEY" in result.output


@pytest.mark.parametrize("where", ["no repository", "a Git repository", "an index", "a bare index"])
def test_check_and_schema_discover_read_settings_alike_wherever_they_run(tmp_path, monkeypatch, where):
    """Both take an index's hti.yaml, or the environment alone outside one, and fail alike without a model."""
    doc = tmp_path / "memo.txt"
    doc.write_text("The launch is planned for March.\n")
    here = tmp_path / "here"
    if where == "a Git repository":
        subprocess.run(["git", "init", "-q", str(here)], check=True)
    elif where in ("an index", "a bare index"):
        init_index(tmp_path / "idx")
        if where == "an index":
            here = tmp_path / "idx"
        else:
            subprocess.run(["git", "clone", "-q", "--bare", str(tmp_path / "idx"), str(here)], check=True)
    here.mkdir(exist_ok=True)
    missing = "no usable model endpoint: set OPENAI_API_KEY and HTI_MODEL"
    for command in (["check"], ["schema", "discover", doc]):
        result = _invoke("-C", here, *command)
        assert result.exit_code == 1 and result.output.startswith(f"hti-git: error: {missing}"), result.output
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # an endpoint, but no model anywhere
    for command in (["check"], ["schema", "discover", doc]):
        result = _invoke("-C", here, *command)
        assert result.exit_code == 1 and "OPENAI_BASE_URL is set but no model" in result.output, result.output


def test_check_and_schema_discover_take_the_index_settings_or_refuse_a_bad_one(tmp_path):
    init_index(tmp_path / "idx")
    doc = tmp_path / "memo.txt"
    doc.write_text("The launch is planned for March.\n")
    config = tmp_path / "idx" / "hti.yaml"
    config.write_text(config.read_text().replace("model:            #", "model: from-hti-yaml  #"))
    for command in (["check"], ["schema", "discover", doc]):
        result = _invoke("-C", tmp_path / "idx", *command)
        assert result.exit_code == 1 and "model 'from-hti-yaml' is set but no endpoint" in result.output
    config.write_text("fanout: lots\n")
    for command in (["check"], ["schema", "discover", doc]):
        result = _invoke("-C", tmp_path / "idx", *command)
        assert result.exit_code == 1 and "fanout" in result.output and "no usable model" not in result.output


def test_cache_stats_and_clear(tmp_path):
    from hti_git.llm.cache import ResponseCache
    from hti_git.llm.provider import Completion

    init_index(tmp_path / "idx")
    store = ResponseCache(tmp_path / "idx" / ".git" / "hti" / "cache.sqlite")
    store.put("sha256:abc", Completion("x", model="m"))
    store.close()
    stats = json.loads(_invoke("-C", tmp_path / "idx", "cache", "stats", "--json").output)
    assert stats["entries"] == 1
    assert "Removed 1" in _invoke("-C", tmp_path / "idx", "cache", "clear").output
    assert json.loads(_invoke("-C", tmp_path / "idx", "cache", "stats", "--json").output)["entries"] == 0

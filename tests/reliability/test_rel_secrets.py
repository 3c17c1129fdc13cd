"""Secrets: the API key and base-URL credentials never land in files, objects, the cache or output.

Every command runs against the local OpenAI-compatible stub with a key and a base URL that carries
a user:password, then the whole repository (working tree, every Git object, .git/ including the
SQLite cache and reflogs) and every stdout/stderr are scanned for both.
"""

from __future__ import annotations

import json
import socket
import subprocess

import pytest
from click.testing import CliRunner
from rel_support import CONTRACT, stub_handler

from hti_git.cli import main
from tests.support.openai_stub import Behaviour, OpenAIStub

KEY = "sk-test-SECRET-7f3a9c2e1b"
PASSWORD = "pw-SECRET-d41d8cd9"
SECRETS = (KEY, PASSWORD, "Bearer ")


@pytest.fixture
def stub():
    with OpenAIStub(stub_handler) as s:
        yield s


def _with_credentials(url: str) -> str:
    return url.replace("http://", f"http://hti-user:{PASSWORD}@")


def _scan(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} leaked into {where}"


def _scan_repository(root) -> int:
    """Scan every file (working tree and .git) and every Git object; returns files scanned."""
    count = 0
    for path in root.rglob("*"):
        if path.is_file():
            _scan(path.read_bytes().decode("utf-8", "replace"), str(path.relative_to(root)))
            count += 1
    objects = subprocess.run(["git", "-C", str(root), "cat-file", "--batch-all-objects", "--batch"],
                             capture_output=True, check=True).stdout
    _scan(objects.decode("utf-8", "replace"), "a Git object")
    return count


def _run(runner: CliRunner, root, *args: str):
    result = runner.invoke(main, ["-C", str(root), *args], catch_exceptions=False)
    _scan(result.output, f"the output of hti-git {' '.join(args)}")
    assert "Traceback" not in result.output
    return result


def test_no_secret_in_repository_cache_or_output(index_path, stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", _with_credentials(stub.base_url))
    monkeypatch.setenv("HTI_MODEL", "stub-model")
    runner = CliRunner()
    results = [
        _run(runner, index_path, "check"),
        _run(runner, index_path, "check", "--json"),
        _run(runner, index_path, "compile", "--json", str(CONTRACT)),
        _run(runner, index_path, "compile", "--method", "fast", "--doc", "fast-copy", str(CONTRACT)),
        _run(runner, index_path, "ask", "--json", "Which state's law governs this agreement?"),
        _run(runner, index_path, "ask", "--trace", "Who are the parties?"),
        _run(runner, index_path, "ls", "--json"),
        _run(runner, index_path, "log", "--json"),
        _run(runner, index_path, "verify", "--json"),
        _run(runner, index_path, "diff", "HEAD~1", "HEAD", "--format", "json"),
        _run(runner, index_path, "cache", "stats", "--json"),
    ]
    assert [r.exit_code for r in results] == [0] * len(results), [r.output[-300:] for r in results if r.exit_code]
    assert json.loads(results[2].output)[0]["status"] == "committed"
    assert json.loads(results[4].output)["method"] == "llm"
    assert len(stub.requests) > 5  # the model was really called
    assert _scan_repository(index_path) > 50
    message = subprocess.run(["git", "-C", str(index_path), "log", "--format=%B%n%(trailers)", "--all"],
                             capture_output=True, text=True, check=True).stdout
    assert "HTI-Model: stub-model" in message
    _scan(message, "commit messages and trailers")


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_no_secret_in_error_messages(index_path, stub, monkeypatch):
    """Failures quote the endpoint; they must quote it without its credentials."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("HTI_MODEL", "stub-model")
    runner = CliRunner()
    _run(runner, index_path, "compile", "--method", "fast", str(CONTRACT))
    monkeypatch.setenv("OPENAI_BASE_URL", _with_credentials(_closed_port_url()))
    (index_path / "hti.yaml").write_text("max_retries: 0\ntimeout: 2\n")
    failures = [
        _run(runner, index_path, "check"),
        _run(runner, index_path, "check", "--json"),
        _run(runner, index_path, "ask", "--method", "llm", "--json", "Who are the parties?"),
        _run(runner, index_path, "compile", "--method", "standard", "--doc", "other", str(CONTRACT)),
        _run(runner, index_path, "compile", "--method", "standard", "--doc", "other", "--json", str(CONTRACT)),
    ]
    assert all(r.exit_code != 0 for r in failures), [r.output for r in failures]
    assert any("127.0.0.1" in r.output for r in failures)  # the endpoint is named, without credentials
    # The same through a server that rejects the key.
    monkeypatch.setenv("OPENAI_BASE_URL", _with_credentials(stub.base_url))
    stub.always = Behaviour("status", 401, message="Incorrect API key provided: sk-test-S***")
    rejected = [_run(runner, index_path, "check", "--json"),
                _run(runner, index_path, "ask", "--method", "llm", "--no-cache", "Who are the parties?")]
    assert all(r.exit_code != 0 for r in rejected)
    assert any("401" in r.output for r in rejected)
    _scan_repository(index_path)

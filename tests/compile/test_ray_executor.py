"""compile --executor ray on a local Ray instance: the same bytes as a local compile, the driver's
response cache and one concurrency limit across workers, and a one-line error without Ray."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
import ray
from click.testing import CliRunner
from standard_stub import stub_handler

from hti_git.cli import main
from hti_git.compile.batch import compile_many
from hti_git.compile.standard import StandardOptions
from hti_git.config import Settings
from hti_git.llm.cache import CACHE_FILE, ResponseCache
from hti_git.store import IndexRepo
from hti_git.workspace import init_index
from tests.support.openai_stub import OpenAIStub
from tests.support.shared import SHARED

CONTRACTS = SHARED / "data" / "cuad" / "contracts"


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray instance for the module (the executor joins it instead of starting its own)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def _repo(path) -> IndexRepo:
    init_index(path)
    return IndexRepo(path)


def _tree(repo: IndexRepo) -> str:
    return subprocess.run(["git", "-C", str(repo.root), "rev-parse", "HEAD^{tree}"], check=True,
                          capture_output=True, text=True).stdout.strip()


def _documents(contract_text, tmp_path, n: int = 4) -> list[str]:
    """A few distinct text documents: the fixture contract and the shared ones when present."""
    paths = sorted(CONTRACTS.glob("*.txt"))[:n - 1] if CONTRACTS.exists() else []
    docs = tmp_path / "docs"
    docs.mkdir()
    out = []
    for path in [contract_text, *paths]:
        target = docs / path.name
        if not target.exists():
            shutil.copy(path, target)
            out.append(str(target))
    if len(out) < 2:  # without the shared data: a second, distinct document from the fixture
        copy = docs / "copy.txt"
        copy.write_text(contract_text.read_text() + "\nA second copy.\n")
        out.append(str(copy))
    return out


@pytest.mark.parametrize("one_commit", [False, True])
def test_fast_compile_on_ray_commits_the_same_bytes_as_a_local_compile(local_ray, tmp_path, contract_text, one_commit):
    docs = _documents(contract_text, tmp_path)
    here, there = _repo(tmp_path / "here"), _repo(tmp_path / "there")
    local = compile_many(here, docs, Settings(), jobs=2, one_commit=one_commit, method="fast")
    remote = compile_many(there, docs, Settings(), jobs=2, one_commit=one_commit, method="fast", executor="ray")
    assert not local.failures and not remote.failures
    assert {r.doc for r in remote.results} == {r.doc for r in local.results}
    assert all(r.status == "committed" for r in remote.results)
    assert _tree(there) == _tree(here)  # every page, source.txt, schema.yaml and catalogue shard
    commits = subprocess.run(["git", "-C", str(there.root), "rev-list", "--count", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
    assert int(commits) == 1 + (1 if one_commit else len(docs))  # init, then one writer's commits
    again = compile_many(there, docs, Settings(), jobs=2, method="fast", executor="ray")
    assert {r.status for r in again.results} == {"unchanged"}  # planned by the driver: nothing sent


def test_a_document_that_fails_on_a_worker_is_reported_and_the_others_commit(local_ray, tmp_path, contract_text,
                                                                            monkeypatch):
    docs = _documents(contract_text, tmp_path, n=2)
    repo = _repo(tmp_path / "idx")
    bad = tmp_path / "docs" / "empty.txt"
    bad.write_text("   \n")
    batch = compile_many(repo, [*docs, str(bad)], Settings(), jobs=2, method="fast", executor="ray")
    assert len(batch.results) == len(docs)
    assert len(batch.failures) == 1 and "empty" in batch.failures[0]["source"]


def test_standard_compile_on_ray_shares_the_cache_and_the_concurrency_limit(local_ray, tmp_path, contract_text):
    docs = _documents(contract_text, tmp_path, n=2)
    with OpenAIStub(stub_handler, latency=0.05) as stub:
        settings = Settings(model="stub-model", base_url=stub.base_url, concurrency=2)
        local = _repo(tmp_path / "local")
        compile_many(local, docs, settings, jobs=2, method="standard", standard=StandardOptions())
        local_calls = len(stub.requests)
        stub.reset()

        first = _repo(tmp_path / "first")
        batch = compile_many(first, docs, settings, jobs=2, method="standard", standard=StandardOptions(),
                             executor="ray")
        assert not batch.failures, batch.failures
        assert len(stub.requests) == local_calls  # the same calls, made by the workers
        assert stub.peak_in_flight <= 2  # -j 2 holds across both workers
        assert _tree(first) == _tree(local)  # the same bytes as the local compile
        stored = ResponseCache(first.hti_dir / CACHE_FILE)
        assert stored.stats()["entries"] == local_calls  # the workers' responses, stored by the driver
        stored.close()

        stub.reset()
        second = _repo(tmp_path / "second")
        for part in first.hti_dir.glob(CACHE_FILE + "*"):  # the database and its write-ahead log
            shutil.copy(part, second.hti_dir / part.name)
        batch = compile_many(second, docs, settings, jobs=2, method="standard", standard=StandardOptions(),
                             executor="ray")
        assert not batch.failures
        assert stub.requests == []  # every answer came from the driver's cache, through its actor
        assert sum(r.usage.get("cached_calls", 0) for r in batch.results) == local_calls


def test_cli_compiles_with_the_ray_executor(local_ray, tmp_path, contract_text):
    idx = tmp_path / "idx"
    init_index(idx)
    result = CliRunner().invoke(main, ["-C", str(idx), "compile", str(contract_text), "--method", "fast",
                                       "--executor", "ray", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert '"status": "committed"' in result.output


def test_without_ray_installed_the_error_is_one_line(tmp_path, contract_text):
    idx = tmp_path / "idx"
    init_index(idx)
    code = ("import sys; sys.modules['ray'] = None\n"  # what an environment without Ray looks like to import
            "from hti_git.cli import main; main()")
    proc = subprocess.run([sys.executable, "-c", code, "-C", str(idx), "compile", str(contract_text),
                           "--executor", "ray"], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines == ["hti-git: error: --executor ray needs Ray, which is not installed: pip install 'hti-git[ray]'"]
    assert "Traceback" not in proc.stderr
    assert IndexRepo(idx).snapshot("HEAD").docs() == []

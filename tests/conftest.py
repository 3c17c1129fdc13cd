"""Shared fixtures: real Git repositories in tmp_path with pinned identities, no model endpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
from tests.support.shared import CONTRACTS, SHARED  # noqa: E402, F401

FIXTURES = Path(__file__).resolve().parent / "fixtures"

_IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.com",
    "GIT_AUTHOR_DATE": "1767225600 +0000",
    "GIT_COMMITTER_DATE": "1767225600 +0000",
}


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path_factory):
    """No model endpoint, a fixed Git identity, and no user/system Git config leaking in."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HTI_MODEL", "HTI_METHOD"):
        monkeypatch.delenv(name, raising=False)
    for name, value in _IDENTITY.items():
        monkeypatch.setenv(name, value)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))


@pytest.fixture
def contract_text() -> Path:
    """A small real contract (CUAD, CC BY 4.0) as plain text."""
    return FIXTURES / "slingerbaginc-05-27-2020-ex-10-7-consulting-agreement.txt"


@pytest.fixture
def index_repo(tmp_path):
    """A fresh index repository (hti-git init) in tmp_path/idx."""
    from hti_git.store import IndexRepo
    from hti_git.workspace import init_index

    init_index(tmp_path / "idx")
    repo = IndexRepo(tmp_path / "idx")
    yield repo
    repo.close()


@pytest.fixture
def compiled_repo(index_repo, contract_text):
    """An index repository holding the fixture contract compiled with `fast`."""
    from hti_git.compile.pipeline import compile_path
    from hti_git.config import Settings

    compile_path(index_repo, contract_text, Settings())
    return index_repo


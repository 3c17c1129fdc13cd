"""Fixtures for review tests: real index repositories in tmp_path built with the offline `fast` compile."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hti_git.compile.pipeline import compile_path
from hti_git.config import Settings
from hti_git.store import IndexRepo
from hti_git.workspace import init_index


@pytest.fixture(autouse=True)
def _pinned_env(monkeypatch):
    """A fixed Git identity and no model endpoint, whatever the developer's shell has."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HTI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Review Tests")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "review@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Review Tests")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "review@example.com")


@pytest.fixture
def repo(tmp_path) -> IndexRepo:
    """A fresh index repository (hti.yaml, templates/ committed on main)."""
    init_index(tmp_path / "idx")
    with IndexRepo(tmp_path / "idx") as index_repo:
        yield index_repo


@pytest.fixture
def compile_text(repo, tmp_path) -> Callable[..., str]:
    """Write `text` to <name>.txt and compile it (fast); returns the commit sha (or the branch tip)."""

    def run(text: str, name: str = "services", settings: Settings | None = None, **kwargs) -> str:
        path = tmp_path / "sources" / f"{name}.txt"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        result = compile_path(repo, path, settings or Settings(), method="fast", **kwargs)
        return result.commit or repo.resolve(result.branch or "HEAD").hexsha

    return run

"""Fixtures for the standard compile: a real index repository and a scripted model."""

from __future__ import annotations

import pytest
from standard_stub import reply

from hti_git.compile.pipeline import compile_path
from hti_git.compile.standard import StandardOptions
from hti_git.config import Settings
from hti_git.llm import ScriptedProvider
from hti_git.review.verify import verify_snapshot

DOC = "slingerbaginc-05-27-2020-ex-10-7-consulting-agreement"


@pytest.fixture
def repo(index_repo):
    return index_repo


@pytest.fixture
def model():
    """A scripted model answering every standard-compile prompt like standard_stub does."""
    return ScriptedProvider(default=reply, model="scripted")


def settings(**overrides) -> Settings:
    return Settings(model="model-a").with_overrides(**overrides)


def compile_standard(repo, path, provider, settings_=None, **options):
    """compile_path with the standard method and a scripted provider."""
    standard = StandardOptions(provider=provider, **{k: options.pop(k) for k in list(options)
                                                     if k in ("schema", "no_cache", "max_tokens")})
    return compile_path(repo, path, settings_ or settings(), method="standard", standard=standard, **options)


def assert_verified(repo, rev="HEAD"):
    report = verify_snapshot(repo.snapshot(rev))
    assert report.ok, "\n".join(p.line() for p in report.problems)
    return report


def kinds(provider) -> list[str]:
    """The stage of every call the provider received, recognised from the system prompt."""
    out = []
    for call in provider.calls:
        system = call["messages"][0]["content"]
        out.append(next(k for p, k in (("You design", "discover"), ("You fill in", "extract"),
                                        ("You write the one-line", "subject"), ("You summarize sections", "category"),
                                        ("You write the root", "root"), ("A section of a document", "group"))
                        if system.startswith(p)))
    return out

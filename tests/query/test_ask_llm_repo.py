"""Model answering against real repositories: older revisions, routing across documents, two asks
at once (two processes), and the repository left untouched."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from model_stub import decide, stub_handler
from query_support import DOC, citations_hold, client_for

from hti_git.compile.pipeline import compile_path
from hti_git.config import Settings
from hti_git.llm import ModelClient, ScriptedProvider, build_client
from hti_git.query.answer_llm import ask_llm
from tests.support.openai_stub import OpenAIStub

Q = "Which state's laws govern this agreement?"


def test_older_revision_answers_from_the_older_index(repo, tmp_path, contract_text):
    amended = tmp_path / contract_text.name
    amended.write_text(contract_text.read_text().replace("State of New York", "State of Delaware"))
    compile_path(repo, amended, Settings(), replace=True)  # another file of the same name
    new = ask_llm(repo.snapshot("HEAD"), Q, ModelClient(ScriptedProvider(default=decide)))
    old_snap = repo.snapshot("HEAD~1")
    old = ask_llm(old_snap, Q, ModelClient(ScriptedProvider(default=decide)))
    assert new.found and "Delaware" in new.answer
    assert old.found and "New York" in old.answer and "Delaware" not in old.answer
    assert old.commit == old_snap.sha != new.commit
    citations_hold(old_snap, old)
    assert all("New York" in c.text for c in old.citations)


def test_routing_picks_the_document_from_root_summaries(repo, tmp_path):
    notes = tmp_path / "recipe-notes.txt"
    notes.write_text("1. Ingredients\n\nThe secret ingredient of the soup is saffron harvested at dawn.\n\n"
                     "2. Method\n\nSimmer the broth for two hours before serving.\n")
    compile_path(repo, notes, Settings())
    snap = repo.snapshot()
    assert len(snap.docs()) == 2
    provider = ScriptedProvider(default=decide)
    answer = ask_llm(snap, "What is the secret ingredient of the soup?", ModelClient(provider))
    route = [s for s in answer.trace if s.action == "route"]
    assert len(route) == 1 and "kept recipe-notes" in route[0].note and route[0].tokens > 0
    assert answer.found and "saffron" in answer.answer
    assert all(c.doc == "recipe-notes" for c in answer.citations)
    assert not any(s.page.startswith(DOC) for s in answer.trace)
    citations_hold(snap, answer)
    # --doc skips routing.
    provider = ScriptedProvider(default=decide)
    answer = ask_llm(snap, Q, ModelClient(provider), docs=[DOC])
    assert not any(s.action == "route" for s in answer.trace) and answer.found


def test_routing_to_no_document_falls_back_over_all_sources(repo, tmp_path):
    notes = tmp_path / "recipe-notes.txt"
    notes.write_text("1. Ingredients\n\nThe secret ingredient of the soup is saffron harvested at dawn.\n")
    compile_path(repo, notes, Settings())
    client, provider = client_for({"docs": [], "reason": "nothing fits"},
                                  default=lambda m: decide(m))
    answer = ask_llm(repo.snapshot(), "What is the secret ingredient of the soup?", client)
    assert answer.fallback and answer.found and answer.citations[0].page == "recipe-notes/source.txt"


def test_two_asks_at_once_share_the_cache_and_leave_the_repository_alone(repo):
    """Two `hti-git ask` processes against the stub server at the same time, then a cached re-ask."""
    head = repo.repo.head.commit.hexsha
    questions = (Q, "Who is the consultant?")
    with OpenAIStub(stub_handler, latency=0.02) as stub:
        env = {**os.environ, "OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "sk-dummy", "HTI_MODEL": "stub-model"}
        procs = [subprocess.Popen([sys.executable, "-m", "hti_git", "-C", str(repo.root), "ask", "--json", q],
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for q in questions]
        outputs = [p.communicate(timeout=60) for p in procs]
        assert stub.peak_in_flight >= 1
    for (out, err), proc in zip(outputs, procs):
        assert proc.returncode == 0, err
        data = json.loads(out)
        assert data["found"] and data["method"] == "llm" and data["usage"]["calls"] > 0
    assert repo.repo.head.commit.hexsha == head
    assert repo.repo.git.status("--porcelain") == ""
    # Asked again, the same question is served from the cache the two processes wrote.
    settings = Settings(model="stub-model")  # the same model and parameters, so the same cache keys
    client = build_client(settings, repo.hti_dir / "cache.sqlite", provider=ScriptedProvider())
    again = ask_llm(repo.snapshot(), Q, client)
    client.cache.close()
    assert again.usage["calls"] == 0 and again.usage["cached_calls"] > 0 and again.found
    assert all(s.tokens == 0 for s in again.trace)

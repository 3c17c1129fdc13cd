"""The standard compile within a real model's limits: replies that fit max_output_tokens, chunks
that split when a reply is cut off anyway, prompts that fit a small context window, and an
estimate that predicts what the compile spends.

The stub (standard_stub) answers like a capable model: its replies grow with the passage (one
subject per ~600 characters, up to the prompt's cap), and the server side cuts any reply at
max_tokens with finish_reason "length", as real servers do.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from standard_stub import SCHEMA, reply, stub_handler
from standard_support import DOC, assert_verified, compile_standard, settings

from hti_git.compile.schema import schema_from_data
from hti_git.compile.sizing import extraction_size, max_subjects
from hti_git.compile.standard import compile_standard as build_standard
from hti_git.compile.standard import estimate_standard
from hti_git.config import Settings, settings_from_mapping
from hti_git.errors import ConfigError, ModelError
from hti_git.llm import ScriptedProvider
from hti_git.sources import load_source
from hti_git.tokens import estimate_tokens
from tests.support.openai_stub import OpenAIStub, configure_env

SHARED = Path(os.environ.get("HTI_SHARED", Path(__file__).resolve().parents[3] / "shared"))
LONGEST = SHARED / "data/cuad/contracts/microgenics-corporation-collaborative-development-and-commer.txt"


def _extract_calls(model: ScriptedProvider) -> list[str]:
    return [c["messages"][-1]["content"] for c in model.calls if c["messages"][0]["content"].startswith("You fill in")]


def test_chunks_are_sized_from_the_output_limit_and_the_context_window():
    text = "The Company shall pay the fee. " * 4000
    default = extraction_size(Settings(), text, 900)
    small = extraction_size(Settings(max_output_tokens=1024), text, 900)
    assert small.chunk_chars < default.chunk_chars and small.max_subjects < default.max_subjects
    local = extraction_size(Settings(context_window=8192, max_output_tokens=2048), text, 900)
    # the passage fits what the window leaves after the prompt and the reply
    assert estimate_tokens(text[:local.chunk_chars]) <= 8192 - 2048 - 900
    assert extraction_size(Settings(chunk_size=12_000), text, 900).chunk_chars == 12_000
    assert max_subjects(4096) * 140 <= 0.75 * 4096  # room for a verbose model's subjects


def test_hti_yaml_takes_auto_chunks_and_refuses_a_window_smaller_than_its_replies():
    assert settings_from_mapping({"chunk_size": "auto"}).chunk_size is None
    with pytest.raises(ConfigError, match="context_window"):
        settings_from_mapping({"context_window": 4096, "max_output_tokens": 4096})


def test_a_reply_cut_off_at_the_limit_splits_the_chunk_and_the_compile_completes(repo, contract_text):
    def long_winded(messages):
        answer = reply(messages)
        if messages[0]["content"].startswith("You fill in") and len(messages[-1]["content"]) > 9_000:
            for s in answer["subjects"]:  # a verbose model: every summary runs long on a big passage
                s["summary"] = (s["summary"] + " ") * 12
        return answer

    model = ScriptedProvider(default=long_winded)
    result = compile_standard(repo, contract_text, model)
    assert result.status == "committed"
    assert any("hit the output-token limit; extracted its halves" in n for n in result.warnings)
    extract = result.usage["stages"]["extract"]
    assert extract["calls"] == len(_extract_calls(model)) > 2  # the cut-off calls are counted (and billed)
    assert_verified(repo)


def test_a_reply_that_never_fits_fails_in_one_line_and_changes_nothing(repo, contract_text):
    def endless(messages):
        answer = reply(messages)
        if messages[0]["content"].startswith("You fill in"):
            answer["subjects"][0]["summary"] = "word " * 20_000
        return answer

    head = repo.snapshot("HEAD").sha
    with pytest.raises(ModelError, match="cut off at the output-token limit") as err:
        compile_standard(repo, contract_text, ScriptedProvider(default=endless))
    assert "\n" not in str(err.value)
    assert repo.snapshot("HEAD").sha == head


def test_values_show_whole_sentences_and_readings_on_pages(repo, contract_text):
    compile_standard(repo, contract_text, ScriptedProvider(default=reply))
    snap = repo.snapshot("HEAD")
    page = snap.page(next(p for p in snap.blob_shas(DOC) if p.endswith("governing-law.md")))
    value = page.meta["fields"][0]["values"][0]
    assert value["text"].startswith("This Agreement") and value["text"].endswith(".")  # the whole sentence
    assert value["value"] and value["value"] != value["text"]  # the model's short reading beside it
    assert f"**{value['value']}**" in page.body


@pytest.mark.slow
def test_the_longest_shared_contract_compiles_with_default_settings_over_http(repo, monkeypatch):
    if not LONGEST.exists():
        pytest.skip(f"the shared CUAD contracts are not at {LONGEST.parent} (set HTI_SHARED); CI has them")
    with OpenAIStub(stub_handler) as stub:
        configure_env(monkeypatch, stub)
        result = compile_standard(repo, LONGEST, provider=None, settings_=Settings(model="stub-model"))
        cut = [r for r in stub.requests if r.body.get("max_tokens") and
               estimate_tokens(str(stub_handler(r.body))) > r.body["max_tokens"]]
    assert result.status == "committed"
    document = estimate_tokens(load_source(LONGEST).text)
    usage = result.usage
    # passages of ~0.7x the output limit (sizing.PASSAGE_PER_OUTPUT): the stub's replies fill their
    # subject cap, as capable models' did, and each chunk's prompt is paid about twice as often as at 1.25x
    assert usage["output_tokens"] <= 1.25 * document
    assert usage["input_tokens"] <= 1.8 * document
    assert len(stub.requests) == usage["calls"]
    assert not cut or any("halves" in n for n in result.warnings)
    assert_verified(repo)


@pytest.mark.parametrize("name", ["europeanmicroholdingsinc-03-06-1998-ex-10-6-distributor-agre",
                                  "slingerbaginc-05-27-2020-ex-10-7-consulting-agreement"])
def test_the_estimate_is_within_a_quarter_of_what_the_compile_spends(name):
    path = SHARED / f"data/cuad/contracts/{name}.txt"
    if not path.exists():
        pytest.skip(f"the shared CUAD contracts are not at {path.parent} (set HTI_SHARED); CI has them")
    source, config, schema = load_source(path), settings(), schema_from_data(SCHEMA)
    estimate = estimate_standard(source, config, None, schema=schema)
    from hti_git.compile.standard import StandardOptions

    build = build_standard(source, config, None, None,
                           options=StandardOptions(provider=ScriptedProvider(default=reply), schema=schema))
    for key in ("input_tokens", "output_tokens"):
        assert abs(estimate[key] / build.usage[key] - 1) <= 0.25, (key, estimate[key], build.usage[key])
    # calls follow from how a model groups subjects; the stub groups more sparsely than the estimate assumes
    assert abs(estimate["calls"] / build.usage["calls"] - 1) <= 0.4, (estimate["calls"], build.usage["calls"])

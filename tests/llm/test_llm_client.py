import asyncio

import pytest

from hti_git.config import Settings
from hti_git.errors import BudgetExceededError, ConfigError, ModelError
from hti_git.llm.cache import ResponseCache
from hti_git.llm.client import PLACEHOLDER_API_KEY, ModelClient, build_client, run_batch
from hti_git.llm.ledger import UsageLedger
from hti_git.llm.provider import Completion, TransientModelError, Usage
from hti_git.llm.scripted import ScriptedProvider

SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def msgs(text="hello"):
    return [{"role": "user", "content": text}]


def make_client(provider, tmp_path=None, **kwargs):
    sleeps = []

    async def fake_sleep(seconds):
        sleeps.append(seconds)

    cache = ResponseCache(tmp_path / "cache.sqlite") if tmp_path else None
    client = ModelClient(provider, cache, UsageLedger(), model="m", sleep=fake_sleep, **kwargs)
    client.sleeps = sleeps
    return client


def test_scripted_provider_kinds_and_history():
    provider = ScriptedProvider(["text", {"ok": True}, Completion("c", usage=Usage(1, 2)), lambda m: m[0]["content"].upper()])
    results = run_batch([provider.complete(msgs()) for _ in range(3)] + [provider.complete(msgs("abc"))])
    assert [r.text for r in results] == ["text", '{"ok": true}', "c", "ABC"]
    assert results[1].json == {"ok": True}
    assert len(provider.calls) == 4 and provider.calls[0]["messages"] == msgs()


def test_scripted_provider_validates_against_the_schema():
    provider = ScriptedProvider([{"ok": "yes"}])
    with pytest.raises(ModelError, match=r"\$.ok: expected boolean"):
        run_batch([provider.complete(msgs(), SCHEMA)])


def test_cache_hit_makes_no_call_and_counts_as_cached(tmp_path):
    provider = ScriptedProvider(default={"ok": True})
    client = make_client(provider, tmp_path)
    first = client.run([client.complete("extract", msgs(), SCHEMA, label="doc chunk 1")])[0]
    second = client.run([client.complete("extract", msgs(), SCHEMA, label="doc chunk 1")])[0]
    assert len(provider.calls) == 1
    assert first.json == second.json == {"ok": True} and second.cached and not first.cached
    stage = client.ledger.stage("extract")
    assert (stage.calls, stage.cached_calls) == (1, 1)
    # a new client over the same cache file (a re-run) makes zero calls
    again = make_client(ScriptedProvider(), tmp_path)
    assert again.run([again.complete("extract", msgs(), SCHEMA)])[0].json == {"ok": True}
    assert again.ledger.to_dict()["total"]["input_tokens"] == 0


def test_params_and_schema_are_part_of_the_key(tmp_path):
    provider = ScriptedProvider(default={"ok": True})
    a = make_client(provider, tmp_path, params={"temperature": 0})
    b = make_client(provider, tmp_path, params={"temperature": 1})
    a.run([a.complete("x", msgs())])
    b.run([b.complete("x", msgs())])
    a.run([a.complete("x", msgs(), SCHEMA)])
    assert len(provider.calls) == 3
    assert provider.calls[0]["params"] == {"temperature": 0}


def test_ledger_per_stage():
    provider = ScriptedProvider([Completion("a", usage=Usage(10, 1)), Completion("b", usage=Usage(20, 2, 5))])
    client = make_client(provider)
    client.run([client.complete("navigate", msgs("1")), client.complete("answer", msgs("2"))])
    assert client.ledger.stage("navigate").input_tokens == 10
    assert client.ledger.stage("answer").cached_tokens == 5


def test_transient_errors_are_retried_with_backoff():
    provider = ScriptedProvider([TransientModelError("HTTP 500"), TransientModelError("429", retry_after=7.0), "ok"])
    client = make_client(provider, max_retries=3, backoff_base=1.0, backoff_cap=10.0)
    assert client.run([client.complete("extract", msgs())])[0].text == "ok"
    assert len(provider.calls) == 3
    assert 0.5 <= client.sleeps[0] <= 1.0  # first backoff: base with jitter
    assert client.sleeps[1] == 7.0  # Retry-After honoured


def test_retry_after_is_capped_and_backoff_bounded():
    client = make_client(ScriptedProvider(), backoff_base=1.0, backoff_cap=4.0, retry_after_cap=2.0)
    assert client.backoff_delay(0, retry_after=3600) == 2.0
    assert all(2.0 <= client.backoff_delay(10) <= 4.0 for _ in range(20))


def test_exhausted_retries_name_stage_and_label():
    provider = ScriptedProvider(default=TransientModelError("HTTP 503 from the model server"))
    client = make_client(provider, max_retries=2)
    with pytest.raises(ModelError) as err:
        client.run([client.complete("extract", msgs(), label="contract.pdf chunk 3/12")])
    assert len(provider.calls) == 3
    assert str(err.value) == (
        "extract (contract.pdf chunk 3/12): model call failed after 3 attempt(s): HTTP 503 from the model server"
    )
    assert client.ledger.to_dict()["total"]["calls"] == 0


def test_permanent_errors_are_not_retried():
    provider = ScriptedProvider([ModelError("HTTP 401: bad key")])
    client = make_client(provider)
    with pytest.raises(ModelError, match=r"^summarize \(doc\): HTTP 401: bad key$"):
        client.run([client.complete("summarize", msgs(), label="doc")])
    assert len(provider.calls) == 1


def test_budget_exceeded_before_the_call():
    provider = ScriptedProvider(default=Completion("x", usage=Usage(40, 10)))
    client = make_client(provider, max_total_tokens=60)
    client.run([client.complete("extract", msgs("one two"))])  # spent 50
    with pytest.raises(BudgetExceededError, match="^extract: .*over the limit of 60$"):
        client.run([client.complete("extract", msgs("three four five six seven eight nine ten"))])
    assert len(provider.calls) == 1


def test_budget_counts_calls_in_flight():
    provider = ScriptedProvider(default="x", delay=0.01)
    client = make_client(provider, max_total_tokens=25, concurrency=4)
    # each prompt is ~10 tokens: two fit, the third would pass 25 while the first two are in flight
    with pytest.raises(BudgetExceededError):
        client.run([client.complete("extract", msgs(f"a b c d e f {i}")) for i in range(3)])


def test_budget_ignores_cache_hits(tmp_path):
    provider = ScriptedProvider(default=Completion("x", usage=Usage(40, 10)))
    client = make_client(provider, tmp_path, max_total_tokens=60)
    client.run([client.complete("extract", msgs())])
    client.run([client.complete("extract", msgs()) for _ in range(5)])
    assert client.ledger.stage("extract").cached_calls == 5


def test_concurrency_bound():
    provider = ScriptedProvider(default="ok", delay=0.02)
    client = make_client(provider, concurrency=3)
    results = client.run([client.complete("extract", msgs(str(i))) for i in range(12)])
    assert len(results) == 12 and provider.peak_in_flight == 3


def test_client_works_across_event_loops():
    provider = ScriptedProvider(default="ok", delay=0.001)
    client = make_client(provider, concurrency=2)
    for _ in range(3):
        assert len(client.run([client.complete("x", msgs(str(i))) for i in range(4)])) == 4
    assert asyncio.run(client.complete("x", msgs("solo"))).text == "ok"


def test_run_batch_propagates_the_first_error():
    async def boom():
        raise ModelError("nope")

    async def fine():
        return 1

    with pytest.raises(ModelError):
        run_batch([fine(), boom()])
    assert run_batch([fine(), fine()]) == [1, 1]


def test_build_client_needs_an_endpoint(monkeypatch):
    monkeypatch.delenv("HTI_TEST_KEY", raising=False)
    with pytest.raises(ConfigError, match="HTI_TEST_KEY"):
        build_client(Settings(model="m", api_key_env="HTI_TEST_KEY"), None)
    with pytest.raises(ConfigError, match="no model configured"):
        build_client(Settings(base_url="http://127.0.0.1:1/v1", api_key_env="HTI_TEST_KEY"), None)
    with pytest.raises(ConfigError, match="unknown provider"):
        build_client(Settings(model="m", provider="bedrock"), None)


def test_build_client_from_settings(monkeypatch, tmp_path):
    monkeypatch.delenv("HTI_TEST_KEY", raising=False)
    settings = Settings(model="m", base_url="http://127.0.0.1:1/v1", api_key_env="HTI_TEST_KEY", concurrency=3)
    client = build_client(settings, tmp_path / "hti" / "cache.sqlite")
    assert client.provider._api_key == PLACEHOLDER_API_KEY
    assert client.concurrency == 3 and client.cache.enabled
    assert client.params == {"temperature": 0.0, "max_output_tokens": 4096}
    monkeypatch.setenv("HTI_TEST_KEY", "sk-secret")
    client = build_client(settings, tmp_path / "c.sqlite", no_cache=True)
    assert client.provider._api_key == "sk-secret" and not client.cache.enabled
    scripted = ScriptedProvider()
    assert build_client(Settings(), None, provider=scripted).provider is scripted

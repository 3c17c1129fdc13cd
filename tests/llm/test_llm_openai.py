"""The OpenAI-compatible provider through the real openai SDK, over HTTP, against the local stub."""

import json
import socket
import time

import pytest

from hti_git.config import Settings
from hti_git.errors import ModelError
from hti_git.llm.cache import ResponseCache
from hti_git.llm.check import check_endpoint
from hti_git.llm.client import ModelClient, build_client
from hti_git.llm.ledger import UsageLedger
from hti_git.llm.openai_provider import OpenAIProvider, _retry_after
from tests.support.openai_stub import (
    OpenAIStub,
    bad_request,
    empty_choices,
    malformed,
    rate_limit,
    reply,
    server_error,
    slow,
    user_text,
)

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["name", "count"],
    "additionalProperties": False,
}


def msgs(text="Name the party."):
    return [{"role": "system", "content": "You extract."}, {"role": "user", "content": text}]


@pytest.fixture
def stub():
    with OpenAIStub(lambda req: {"name": user_text(req), "count": 1}) as server:
        yield server


def client_for(stub, tmp_path=None, *, timeout=5.0, max_retries=3, concurrency=4, **kwargs):
    provider = OpenAIProvider("test-model", api_key="sk-test", base_url=stub.base_url, timeout=timeout)
    cache = ResponseCache(tmp_path / "cache.sqlite") if tmp_path else ResponseCache.disabled()
    return ModelClient(
        provider,
        cache,
        UsageLedger(),
        concurrency=concurrency,
        max_retries=max_retries,
        params={"temperature": 0.0, "max_output_tokens": 256},
        backoff_base=0.001,
        backoff_cap=0.01,
        **kwargs,
    )


def one(client, stage="extract", messages=None, schema=SCHEMA, label="doc.pdf chunk 1"):
    return client.run([client.complete(stage, messages or msgs(), schema, label=label)])[0]


def test_structured_output(stub):
    client = client_for(stub)
    completion = one(client)
    assert completion.json == {"name": "Name the party.", "count": 1}
    assert client.provider.structured_output is True
    body = stub.requests[0].body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"] == {"name": "response", "schema": SCHEMA, "strict": True}
    assert body["model"] == "test-model" and body["max_tokens"] == 256 and body["temperature"] == 0.0
    assert client.ledger.stage("extract").input_tokens > 0
    assert client.ledger.stage("extract").output_tokens > 0


def test_plain_text_completion(stub):
    stub.handler = lambda req: "plain answer"
    assert one(client_for(stub), schema=None).text == "plain answer"
    assert "response_format" not in stub.requests[0].body


def test_cached_tokens_are_mapped(tmp_path):
    with OpenAIStub(lambda req: {"name": "x", "count": 1}, cached_tokens=3) as server:
        client = client_for(server)
        assert one(client).usage.cached_tokens == 3


def test_json_mode_fallback_with_repair():
    answers = iter(['{"name": "Acme"}', '{"name": "Acme", "count": 2}', '{"name": "B", "count": 3}'])
    with OpenAIStub(lambda req: next(answers), reject_json_schema=True) as server:
        client = client_for(server)
        completion = one(client)
        assert completion.json == {"name": "Acme", "count": 2}
        statuses = [(r.response_format, r.status) for r in server.requests]
        assert statuses == [("json_schema", 400), ("json_object", 200), ("json_object", 200)]
        fallback, repair = server.requests[1].body["messages"], server.requests[2].body["messages"]
        assert "JSON Schema" in fallback[0]["content"] and fallback[0]["role"] == "system"
        assert repair[-2] == {"role": "assistant", "content": '{"name": "Acme"}'}
        assert "missing required property 'count'" in repair[-1]["content"]
        # remembered: the next call goes straight to JSON mode
        assert client.provider.structured_output is False
        assert one(client, messages=msgs("other")).json == {"name": "B", "count": 3}
        assert server.requests[3].response_format == "json_object"
        # both HTTP calls of the repaired completion are counted in its usage
        assert client.ledger.stage("extract").calls == 2


def test_repair_failure_is_a_clear_error():
    with OpenAIStub(lambda req: "not json at all", reject_json_schema=True) as server:
        client = client_for(server)
        with pytest.raises(ModelError, match=r"^extract \(doc.pdf chunk 1\): model output does not match the schema after one repair turn: not valid JSON"):
            one(client)
        assert len(server.requests) == 3  # json_schema rejected, JSON mode, one repair; no retries


def test_fenced_json_is_accepted(stub):
    stub.enqueue(reply('```json\n{"name": "x", "count": 4}\n```'))
    assert one(client_for(stub)).json == {"name": "x", "count": 4}


def test_rate_limit_with_retry_after_then_success(stub):
    stub.enqueue(rate_limit(retry_after=0.3))
    client = client_for(stub)
    started = time.perf_counter()
    assert one(client).json["count"] == 1
    assert time.perf_counter() - started >= 0.3  # waited as told, not the tiny test backoff
    assert [r.status for r in stub.requests] == [429, 200]


def test_server_errors_then_success(stub):
    stub.enqueue(server_error(500), server_error(502))
    assert one(client_for(stub)).json["count"] == 1
    assert [r.status for r in stub.requests] == [500, 502, 200]


def test_server_errors_forever_name_the_stage(stub):
    stub.always = server_error(500)
    with pytest.raises(ModelError) as err:
        one(client_for(stub, max_retries=2), stage="summarize", label="contract.pdf node Parties")
    assert str(err.value).startswith("summarize (contract.pdf node Parties): model call failed after 3 attempt(s): HTTP 500")
    assert "\n" not in str(err.value)
    assert len(stub.requests) == 3


def test_timeout_then_success(stub):
    stub.enqueue(slow(2.0))
    client = client_for(stub, timeout=0.3)
    assert one(client).json["count"] == 1
    assert len(stub.requests) == 2


def test_timeout_forever(stub):
    stub.always = slow(2.0)
    with pytest.raises(ModelError, match="timed out after 0.2s"):
        one(client_for(stub, timeout=0.2, max_retries=1))


def test_malformed_body_then_success(stub):
    stub.enqueue(malformed())
    assert one(client_for(stub)).json["count"] == 1
    assert len(stub.requests) == 2


def test_empty_choices_then_success_and_forever(stub):
    stub.enqueue(empty_choices())
    assert one(client_for(stub)).json["count"] == 1
    stub.always = empty_choices()
    with pytest.raises(ModelError, match="returned no choices"):
        one(client_for(stub, max_retries=1), messages=msgs("again"))


def test_unauthorised_is_not_retried(stub):
    stub.always = server_error(401)
    with pytest.raises(ModelError, match="HTTP 401.*check the API key"):
        one(client_for(stub))
    assert len(stub.requests) == 1


def test_refused_temperature_is_dropped(stub):
    stub.enqueue(bad_request("Unsupported value: 'temperature' does not support 0.0 with this model."))
    client = client_for(stub)
    assert one(client).json["count"] == 1
    assert "temperature" in stub.requests[0].body and "temperature" not in stub.requests[1].body
    one(client, messages=msgs("next"))
    assert "temperature" not in stub.requests[2].body


def test_output_token_parameter_name_follows_the_endpoint():
    official = OpenAIProvider("gpt-x", api_key="k")
    local = OpenAIProvider("llama", api_key="k", base_url="http://127.0.0.1:8080/v1")
    assert official._kwargs({"max_output_tokens": 9, "temperature": 0}) == {"max_completion_tokens": 9, "temperature": 0}
    assert local._kwargs({"max_output_tokens": 9, "seed": None}) == {"max_tokens": 9}


def test_server_down_fails_at_once_with_a_hint():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    provider = OpenAIProvider("m", api_key="x", base_url=f"http://127.0.0.1:{port}/v1", timeout=1.0)
    sleeps: list[float] = []

    async def sleep(seconds):
        sleeps.append(seconds)

    client = ModelClient(provider, max_retries=5, sleep=sleep)
    with pytest.raises(ModelError) as caught:
        client.run([client.complete("navigate", msgs(), label="q1")])
    assert str(caught.value) == (
        f"navigate (q1): cannot reach http://127.0.0.1:{port}/v1: connection refused (is the server running? "
        "check OPENAI_BASE_URL or base_url in hti.yaml, or use --method fast)")
    assert sleeps == []  # a refused connection is not retried: nothing listens there


def test_a_dropped_connection_is_still_retried_with_backoff():
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]

    def hang_up():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.close()  # accepted, then closed without a reply: a server mid-restart

    threading.Thread(target=hang_up, daemon=True).start()
    provider = OpenAIProvider("m", api_key="x", base_url=f"http://127.0.0.1:{port}/v1", timeout=1.0)
    sleeps: list[float] = []

    async def sleep(seconds):
        sleeps.append(seconds)

    client = ModelClient(provider, max_retries=2, sleep=sleep)
    try:
        with pytest.raises(ModelError, match=r"^navigate \(q1\): model call failed after 3 attempt\(s\): cannot reach"):
            client.run([client.complete("navigate", msgs(), label="q1")])
    finally:
        listener.close()
    assert len(sleeps) == 2 and all(s > 0 for s in sleeps)


def test_cache_hit_on_rerun(stub, tmp_path):
    first = client_for(stub, tmp_path)
    first.run([first.complete("extract", msgs(f"chunk {i}"), SCHEMA) for i in range(5)])
    assert len(stub.requests) == 5
    again = client_for(stub, tmp_path)  # a new process would build a new client over the same file
    results = again.run([again.complete("extract", msgs(f"chunk {i}"), SCHEMA) for i in range(5)])
    assert len(stub.requests) == 5  # zero new requests
    assert [r.json["name"] for r in results] == [f"chunk {i}" for i in range(5)]
    assert again.ledger.to_dict()["total"] == {
        "calls": 0, "cached_calls": 5, "input_tokens": 0, "output_tokens": 0, "cached_tokens": 0,
    }
    raw = (tmp_path / "cache.sqlite").read_bytes()
    assert b"sk-test" not in raw and stub.base_url.encode() not in raw


def test_concurrency_overlaps_within_bound(tmp_path):
    with OpenAIStub(lambda req: {"name": "x", "count": 1}, latency=0.1) as server:
        client = client_for(server, concurrency=4)
        client.run([client.complete("extract", msgs(f"chunk {i}"), SCHEMA) for i in range(12)])
        # calls overlapped (more than one in flight at once) and never beyond the bound; wall time
        # is left to bench/llm_overhead.py, since a busy machine makes any time limit flaky
        assert 1 < server.peak_in_flight <= 4


def test_provider_survives_several_batches(stub):
    client = client_for(stub)
    for batch in range(3):
        results = client.run([client.complete("extract", msgs(f"{batch}-{i}"), SCHEMA) for i in range(3)])
        assert len(results) == 3


def test_build_client_and_check_endpoint(stub, tmp_path, monkeypatch):
    monkeypatch.delenv("HTI_TEST_KEY", raising=False)
    stub.handler = lambda req: {"ok": True}
    settings = Settings(model="local", base_url=stub.base_url, api_key_env="HTI_TEST_KEY")
    client = build_client(settings, tmp_path / "c.sqlite")
    assert one(client, schema={"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}).json == {"ok": True}
    report = check_endpoint(settings, tmp_path)
    assert report["ok"] is True and report["structured_output"] is True and report["error"] is None
    assert report["model"] == "local" and report["base_url"] == stub.base_url
    assert report["latency_ms"] >= 0
    assert "not-needed" not in json.dumps(report)


def test_check_endpoint_reports_fallback_and_errors(tmp_path, monkeypatch):
    monkeypatch.delenv("HTI_TEST_KEY", raising=False)
    with OpenAIStub(lambda req: {"ok": True}, reject_json_schema=True) as server:
        report = check_endpoint(Settings(model="m", base_url=server.base_url, api_key_env="HTI_TEST_KEY"))
        assert report["ok"] is True and report["structured_output"] is False
        server.always = server_error(401)
        report = check_endpoint(Settings(model="m", base_url=server.base_url, api_key_env="HTI_TEST_KEY"))
        assert report["ok"] is False and "HTTP 401" in report["error"]
    report = check_endpoint(Settings(model="m", api_key_env="HTI_TEST_KEY"))
    assert report["ok"] is False and "HTI_TEST_KEY" in report["error"]


def test_retry_after_parsing():
    class R:
        def __init__(self, headers):
            self.headers = headers

    assert _retry_after(R({"retry-after": "2"})) == 2.0
    assert _retry_after(R({"retry-after-ms": "1500"})) == 1.5
    assert _retry_after(R({})) is None
    assert _retry_after(R({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}), now=1445412470.0) == 10.0
    assert _retry_after(R({"retry-after": "soon"})) is None

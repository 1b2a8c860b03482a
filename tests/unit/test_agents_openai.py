"""The ``openai`` provider through the real SDK against a real server on 127.0.0.1."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fakes.llm_servers import FakeOpenAIServer

from pytest_confgate.agents import Agent, build_agent
from pytest_confgate.config import OpenAIAgentConfig
from pytest_confgate.exceptions import AgentError

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

KEY = "sk-test-0123456789-not-a-real-key"
ENV = {"OPENAI_API_KEY": KEY}
SDK_DEFAULT_TIMEOUT_S = 600  # what the SDK would wait without our explicit timeout


def _agent(server: FakeOpenAIServer, **fields: Any) -> Agent:
    settings: dict[str, Any] = {"model": "gpt-test", "base_url": server.base_url}
    # Generous unless a test is about time: a busy CI machine must not turn into a retry.
    settings.update({"timeout_ms": 2000, "deadline_ms": 6000, **fields})
    return build_agent("reviewer", OpenAIAgentConfig(provider="openai", **settings), ENV)


def test_an_answer_comes_back_with_its_tokens_model_and_latency(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.enqueue("PASS: the diff is fine", input_tokens=12, output_tokens=5)

    agent = _agent(openai_server)
    started = time.perf_counter()
    reply = agent.ask("Review this diff", system="You are a strict reviewer.")
    waited = time.perf_counter() - started

    assert reply.text == "PASS: the diff is fine"
    assert (reply.input_tokens, reply.output_tokens) == (12, 5)
    assert reply.model == "gpt-test"
    assert reply.attempts == 1
    assert 0 < reply.latency_s <= waited  # the caller's wait, not a figure from elsewhere


def test_the_request_carries_system_user_model_sampling_and_the_key(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.enqueue("ok")

    _agent(openai_server, temperature=0.7, max_tokens=55).ask("the prompt", system="the rules")

    [request] = openai_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["messages"] == [
        {"role": "system", "content": "the rules"},
        {"role": "user", "content": "the prompt"},
    ]
    assert request.body["model"] == "gpt-test"
    assert (request.body["temperature"], request.body["max_tokens"]) == (0.7, 55)
    assert request.headers["authorization"] == f"Bearer {KEY}"


def test_without_system_text_only_the_user_message_is_sent(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.enqueue("ok")

    _agent(openai_server).ask("just this")

    assert openai_server.requests[0].body["messages"] == [{"role": "user", "content": "just this"}]


def test_a_slow_server_fails_fast_at_the_configured_timeout(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.enqueue("too late", delay_s=5)
    agent = _agent(openai_server, timeout_ms=300, max_retries=0)  # built first: SDK import is slow

    started = time.perf_counter()
    with pytest.raises(AgentError, match=r"no answer from .* within 0\.3 s") as caught:
        agent.ask("hello")
    elapsed = time.perf_counter() - started

    assert elapsed < 4.0 < SDK_DEFAULT_TIMEOUT_S  # before the server's 5 s answer, under load too
    assert str(caught.value).startswith("agent 'reviewer': ")


def test_rate_limit_then_unavailable_then_success_is_retried(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.enqueue(status=429, headers={"Retry-After": "0"})
    openai_server.enqueue(status=503, headers={"Retry-After": "0"})
    openai_server.enqueue("third time lucky")

    reply = _agent(openai_server).ask("hello")

    assert reply.text == "third time lucky"
    assert reply.attempts == 3
    assert len(openai_server.requests) == 3


def test_a_reset_connection_is_retried_after_a_backoff(openai_server: FakeOpenAIServer) -> None:
    openai_server.enqueue(reset=True)
    openai_server.enqueue("after the reset")

    reply = _agent(openai_server).ask("hello")

    assert (reply.text, reply.attempts) == ("after the reset", 2)
    assert reply.latency_s >= 0.5  # the first back-off step: not a tight retry loop


def test_resets_that_spend_the_retries_are_reported_as_resets_with_every_attempt(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.enqueue(reset=True, times=3)

    with pytest.raises(AgentError) as caught:
        _agent(openai_server, max_retries=2, deadline_ms=20_000).ask("hello")

    message = str(caught.value)
    assert "was reset" in message
    assert "gave up after 3 attempt(s)" in message
    assert "within" not in message  # a reset is not a timeout
    assert (caught.value.attempts, caught.value.kind) == (3, "connection_reset")
    assert len(openai_server.requests) == 3


def test_attempts_that_failed_differently_are_each_named(openai_server: FakeOpenAIServer) -> None:
    openai_server.enqueue(status=503, headers={"Retry-After": "0"})
    openai_server.enqueue(reset=True)

    with pytest.raises(AgentError) as caught:
        _agent(openai_server, max_retries=1, deadline_ms=20_000).ask("hello")

    assert str(caught.value).endswith("(attempts: http 503, connection reset)")
    assert (caught.value.attempts, caught.value.kind) == (2, "connection_reset")


def test_the_agent_gives_up_when_retries_are_spent(openai_server: FakeOpenAIServer) -> None:
    openai_server.enqueue(status=503, headers={"Retry-After": "0"}, times=3)

    with pytest.raises(AgentError, match=r"HTTP 503 .* gave up after 2 attempt\(s\)"):
        _agent(openai_server, max_retries=1).ask("hello")

    assert len(openai_server.requests) == 2


def test_a_retry_after_past_the_deadline_stops_at_once(openai_server: FakeOpenAIServer) -> None:
    openai_server.enqueue(status=429, headers={"Retry-After": "30"})
    agent = _agent(openai_server, deadline_ms=1500)  # built first: importing the SDK is slow

    started = time.perf_counter()
    with pytest.raises(AgentError, match=r"waiting 20 s more would pass the 1\.5 s deadline"):
        agent.ask("hello")

    assert time.perf_counter() - started < 0.5
    assert len(openai_server.requests) == 1


def test_a_rejected_request_is_not_retried_and_quotes_the_server(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.enqueue(status=400, body={"error": {"message": "max_tokens is too large"}})

    with pytest.raises(AgentError, match=r"HTTP 400 .*: max_tokens is too large; the request"):
        _agent(openai_server).ask("hello")

    assert len(openai_server.requests) == 1


@pytest.mark.parametrize("status", [401, 500], ids=["refused-key", "server-error"])
def test_the_key_never_appears_in_an_error_even_when_the_server_echoes_it(
    openai_server: FakeOpenAIServer, status: int
) -> None:
    openai_server.enqueue(status=status, body={"error": {"message": f"bad key {KEY}"}})
    agent = _agent(openai_server, max_retries=0)

    with pytest.raises(AgentError) as caught:
        agent.ask("hello")

    assert KEY not in str(caught.value)
    assert KEY not in repr(caught.value)
    assert caught.value.__cause__ is None  # the SDK's exception quotes the body verbatim
    assert KEY not in repr(agent)


def test_a_refused_key_names_the_variable_to_check(openai_server: FakeOpenAIServer) -> None:
    openai_server.enqueue(status=401)

    with pytest.raises(AgentError, match=r"refused the API key from OPENAI_API_KEY \(HTTP 401\)"):
        _agent(openai_server).ask("hello")

    assert len(openai_server.requests) == 1


def test_an_answer_without_text_is_an_error(openai_server: FakeOpenAIServer) -> None:
    refused = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-test",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None},
                "finish_reason": "content_filter",
            }
        ],
    }
    openai_server.enqueue(body=refused)

    with pytest.raises(AgentError, match=r"answered without text \(finish_reason: content_filter"):
        _agent(openai_server).ask("hello")


def test_azure_uses_the_deployment_path_api_version_and_api_key_header(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.enqueue("from azure")
    config = OpenAIAgentConfig(
        provider="openai",
        model="my-deployment",
        base_url=openai_server.root_url,
        api_version="2024-06-01",
        timeout_ms=300,
    )

    reply = build_agent("azure", config, ENV).ask("hello")

    [request] = openai_server.requests
    assert reply.text == "from azure"
    assert request.path == "/openai/deployments/my-deployment/chat/completions"
    assert request.query["api-version"] == "2024-06-01"
    assert request.api_key == KEY


def test_building_without_the_key_names_the_variable_and_the_agent() -> None:
    config = OpenAIAgentConfig(provider="openai", model="gpt-test", api_key_env="MY_LLM_KEY")

    with pytest.raises(AgentError, match="'reviewer': environment variable MY_LLM_KEY is not set"):
        build_agent("reviewer", config, environ={"OPENAI_API_KEY": KEY})


def test_a_spent_deadline_says_so_not_timeout_value_out_of_range(
    openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The backoff's jitter could sleep past the deadline; the next attempt then got a
    negative timeout: "ValueError: Timeout value out of range; check base_url and model".
    The jitter is pinned at its largest so the case is met on every run."""
    from pytest_confgate.agents import _retry

    monkeypatch.setattr(_retry.random, "random", lambda: 0.9999)
    openai_server.enqueue(status=503, times=3)  # no Retry-After: the 0.5 s backoff, jittered
    agent = _agent(openai_server, timeout_ms=600, deadline_ms=600, max_retries=5)

    with pytest.raises(AgentError) as caught:
        agent.ask("hello")

    message = str(caught.value)
    assert "out of range" not in message
    assert "check base_url and model" not in message
    assert "HTTP 503 from " in message
    assert "0.6 s deadline" in message
    assert caught.value.kind == "http_503"

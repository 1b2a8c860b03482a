"""The ``anthropic`` provider through the real SDK against a real server on 127.0.0.1."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fakes.llm_servers import FakeAnthropicServer

from pytest_confgate.agents import Agent, build_agent
from pytest_confgate.config import AnthropicAgentConfig
from pytest_confgate.exceptions import AgentError

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

KEY = "sk-ant-test-0123456789-not-a-real-key"
ENV = {"ANTHROPIC_API_KEY": KEY}


def _agent(server: FakeAnthropicServer, **fields: Any) -> Agent:
    settings: dict[str, Any] = {"model": "claude-test", "base_url": server.base_url}
    # Generous unless a test is about time: a busy CI machine must not turn into a retry.
    settings.update({"timeout_ms": 2000, "deadline_ms": 6000, **fields})
    return build_agent("judge", AnthropicAgentConfig(provider="anthropic", **settings), ENV)


def test_an_answer_comes_back_with_its_tokens_model_and_latency(
    anthropic_server: FakeAnthropicServer,
) -> None:
    anthropic_server.enqueue("FAIL: no tests", input_tokens=40, output_tokens=3)

    agent = _agent(anthropic_server)
    started = time.perf_counter()
    reply = agent.ask("Judge this change", system="Answer PASS or FAIL.")
    waited = time.perf_counter() - started

    assert reply.text == "FAIL: no tests"
    assert (reply.input_tokens, reply.output_tokens) == (40, 3)
    assert reply.model == "claude-test"
    assert reply.attempts == 1
    assert 0 < reply.latency_s <= waited  # the caller's wait, not a figure from elsewhere


def test_the_request_carries_system_prompt_model_max_tokens_and_the_key(
    anthropic_server: FakeAnthropicServer,
) -> None:
    anthropic_server.enqueue("ok")

    _agent(anthropic_server, max_tokens=77).ask("the prompt", system="the rules")

    [request] = anthropic_server.requests
    assert request.path == "/v1/messages"
    assert request.body["system"] == "the rules"
    assert request.body["messages"] == [{"role": "user", "content": "the prompt"}]
    assert (request.body["model"], request.body["max_tokens"]) == ("claude-test", 77)
    assert request.api_key == KEY


def test_temperature_is_sent_only_when_the_config_sets_it(
    anthropic_server: FakeAnthropicServer,
) -> None:
    anthropic_server.enqueue("ok", times=2)

    _agent(anthropic_server).ask("default")
    _agent(anthropic_server, temperature=0.4).ask("explicit")

    default, explicit = anthropic_server.requests
    assert "temperature" not in default.body  # current Claude models reject non-default values
    assert explicit.body["temperature"] == 0.4


def test_without_system_text_no_system_field_is_sent(
    anthropic_server: FakeAnthropicServer,
) -> None:
    anthropic_server.enqueue("ok")

    _agent(anthropic_server).ask("just this")

    assert "system" not in anthropic_server.requests[0].body


def test_several_text_blocks_are_joined(anthropic_server: FakeAnthropicServer) -> None:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [{"type": "text", "text": "PA"}, {"type": "text", "text": "SS"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 2},
    }
    anthropic_server.enqueue(body=message)

    assert _agent(anthropic_server).ask("hello").text == "PASS"


def test_a_slow_server_fails_fast_at_the_configured_timeout(
    anthropic_server: FakeAnthropicServer,
) -> None:
    anthropic_server.enqueue("too late", delay_s=5)
    agent = _agent(anthropic_server, timeout_ms=300, max_retries=0)  # built first: slow import

    started = time.perf_counter()
    with pytest.raises(AgentError, match=r"agent 'judge': no answer from .* within 0\.3 s"):
        agent.ask("hello")

    # Well before the server's 5 s answer (a loaded machine may add seconds): the configured
    # timeout fired, not the SDK's default of 10 minutes, nor the server's reply.
    assert time.perf_counter() - started < 4.0


def test_rate_limit_then_overloaded_then_success_is_retried(
    anthropic_server: FakeAnthropicServer,
) -> None:
    anthropic_server.enqueue(status=429, headers={"Retry-After": "0"})
    anthropic_server.enqueue(status=529, headers={"retry-after-ms": "10"})
    anthropic_server.enqueue("finally")

    reply = _agent(anthropic_server).ask("hello")

    assert (reply.text, reply.attempts) == ("finally", 3)
    assert len(anthropic_server.requests) == 3


def test_a_reset_connection_is_retried(anthropic_server: FakeAnthropicServer) -> None:
    anthropic_server.enqueue(reset=True)
    anthropic_server.enqueue("after the reset")

    reply = _agent(anthropic_server).ask("hello")

    assert (reply.text, reply.attempts) == ("after the reset", 2)


def test_the_agent_gives_up_when_retries_are_spent(
    anthropic_server: FakeAnthropicServer,
) -> None:
    anthropic_server.enqueue(status=529, headers={"Retry-After": "0"}, times=3)

    with pytest.raises(AgentError, match=r"HTTP 529 .* gave up after 3 attempt\(s\)"):
        _agent(anthropic_server, max_retries=2).ask("hello")

    assert len(anthropic_server.requests) == 3


def test_timeouts_that_would_pass_the_deadline_stop_the_retries(
    anthropic_server: FakeAnthropicServer,
) -> None:
    anthropic_server.enqueue(delay_s=5, times=5)
    agent = _agent(anthropic_server, timeout_ms=300, max_retries=5, deadline_ms=500)

    started = time.perf_counter()
    with pytest.raises(AgentError, match=r"would pass the 0\.5 s deadline"):
        agent.ask("hello")

    assert time.perf_counter() - started < 4.0  # before the server's 5 s answer
    assert len(anthropic_server.requests) == 1  # 0.3 s spent + 0.5 s back-off > 0.5 s


@pytest.mark.parametrize("status", [401, 503], ids=["refused-key", "server-error"])
def test_the_key_never_appears_in_an_error_even_when_the_server_echoes_it(
    anthropic_server: FakeAnthropicServer, status: int
) -> None:
    body = {"type": "error", "error": {"type": "api_error", "message": f"bad key {KEY}"}}
    anthropic_server.enqueue(status=status, body=body)
    agent = _agent(anthropic_server, max_retries=0)

    with pytest.raises(AgentError) as caught:
        agent.ask("hello")

    assert KEY not in str(caught.value)
    assert KEY not in repr(caught.value)
    assert caught.value.__cause__ is None
    assert KEY not in repr(agent)


def test_a_refused_key_names_the_variable_to_check(
    anthropic_server: FakeAnthropicServer,
) -> None:
    anthropic_server.enqueue(status=401)

    with pytest.raises(AgentError, match="refused the API key from ANTHROPIC_API_KEY"):
        _agent(anthropic_server).ask("hello")


def test_an_answer_without_text_is_an_error(anthropic_server: FakeAnthropicServer) -> None:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": "refusal",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 0},
    }
    anthropic_server.enqueue(body=message)

    with pytest.raises(AgentError, match=r"answered without text \(stop_reason: refusal\)"):
        _agent(anthropic_server).ask("hello")

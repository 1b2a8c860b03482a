"""Provider ``anthropic``: the Messages API (or a server speaking it), through the official SDK.

Imported only when such an agent is built (it imports ``anthropic``). The SDK's retries are
off: ``_retry`` bounds every call with a deadline.

``temperature`` is sent only when the config sets it (default None), and through ``extra_body``:
SDK 1.0 dropped the keyword, and current Claude models reject non-default values, so sending
a default on every call would break them.
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING, Any

import anthropic

from pytest_confgate.agents import AgentReply
from pytest_confgate.agents._retry import RetryBudget, SdkErrors, call_with_retries
from pytest_confgate.agents._retry import classify_sdk_error as _classify
from pytest_confgate.config import AnthropicAgentConfig
from pytest_confgate.exceptions import AgentError

if TYPE_CHECKING:
    from anthropic.types import Message

_ERRORS = SdkErrors(
    status=anthropic.APIStatusError,
    timeout=anthropic.APITimeoutError,
    connection=anthropic.APIConnectionError,
)


class AnthropicAgent:
    """``messages.create`` with ``system=`` and one user message; the key stays in the client."""

    def __init__(self, name: str, config: AnthropicAgentConfig, api_key: str) -> None:
        self.name = name
        self._config = config
        self._key = api_key
        self._budget = RetryBudget.of(config.max_retries, config.timeout_ms, config.deadline_ms)
        self._client = anthropic.Anthropic(
            api_key=api_key,
            base_url=config.base_url,
            timeout=config.timeout_ms / 1000,
            max_retries=0,
        )
        self._endpoint = config.base_url or str(self._client.base_url)
        self._extra_body: dict[str, Any] = {}
        if config.temperature is not None:
            self._extra_body["temperature"] = config.temperature

    def __repr__(self) -> str:
        return f"AnthropicAgent(name={self.name!r}, model={self._config.model!r})"

    def ask(self, prompt: str, *, system: str | None = None) -> AgentReply:
        """One message, retried within the agent's budget (see ``_retry``)."""
        classify = functools.partial(
            _classify, errors=_ERRORS, key_env=self._config.api_key_env, endpoint=self._endpoint
        )
        started = time.perf_counter()
        message, attempts = call_with_retries(
            functools.partial(self._create, prompt, system),
            classify,
            agent=self.name,
            budget=self._budget,
            secret=self._key,
        )
        return AgentReply(
            text=self._text(message, attempts),
            latency_s=time.perf_counter() - started,
            input_tokens=message.usage.input_tokens,
            output_tokens=message.usage.output_tokens,
            model=message.model or self._config.model,
            attempts=attempts,
        )

    def _create(self, prompt: str, system: str | None, timeout_s: float) -> Message:
        # Omitted rather than sent empty; one spelling that SDK 0.x, 1.x and 2.x all accept.
        optional: dict[str, Any] = {"system": system} if system else {}
        message: Message = self._client.messages.create(
            model=self._config.model,
            max_tokens=self._config.max_tokens,
            messages=[{"role": "user", "content": prompt}],
            extra_body=self._extra_body or None,
            timeout=timeout_s,
            **optional,
        )
        return message

    def _text(self, message: Message, attempts: int) -> str:
        texts = [block.text for block in message.content if block.type == "text"]
        if not texts:
            raise AgentError(
                f"agent {self.name!r}: {self._endpoint} answered without text"
                f" (stop_reason: {message.stop_reason}); check model {self._config.model!r}",
                attempts=attempts,
                kind="no_text",
            )
        return "".join(texts)

"""Provider ``openai``: any OpenAI-compatible chat-completions server, through the official SDK.

OpenAI itself, Azure OpenAI (``api_version`` set, ``base_url`` the Azure endpoint), vLLM,
Ollama and llama.cpp all speak it. Imported only when such an agent is built (it imports
``openai``). The SDK's retries are off: ``_retry`` bounds every call with a deadline.
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING

import openai

from pytest_confgate.agents import AgentReply
from pytest_confgate.agents._retry import RetryBudget, SdkErrors, call_with_retries
from pytest_confgate.agents._retry import classify_sdk_error as _classify
from pytest_confgate.config import OpenAIAgentConfig
from pytest_confgate.exceptions import AgentError

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

_ERRORS = SdkErrors(
    status=openai.APIStatusError,
    timeout=openai.APITimeoutError,
    connection=openai.APIConnectionError,
)


class OpenAIAgent:
    """Chat completions with a system and a user message; the key stays inside the client."""

    def __init__(self, name: str, config: OpenAIAgentConfig, api_key: str) -> None:
        self.name = name
        self._config = config
        self._key = api_key
        self._budget = RetryBudget.of(config.max_retries, config.timeout_ms, config.deadline_ms)
        timeout_s = config.timeout_ms / 1000
        self._client: openai.OpenAI
        if config.api_version:
            self._client = openai.AzureOpenAI(
                azure_endpoint=config.base_url or "",
                api_version=config.api_version,
                api_key=api_key,
                timeout=timeout_s,
                max_retries=0,
            )
        else:
            self._client = openai.OpenAI(
                api_key=api_key, base_url=config.base_url, timeout=timeout_s, max_retries=0
            )
        self._endpoint = config.base_url or str(self._client.base_url)

    def __repr__(self) -> str:
        return f"OpenAIAgent(name={self.name!r}, model={self._config.model!r})"

    def ask(self, prompt: str, *, system: str | None = None) -> AgentReply:
        """One chat completion, retried within the agent's budget (see ``_retry``)."""
        messages: list[ChatCompletionMessageParam] = []
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": prompt})
        classify = functools.partial(
            _classify, errors=_ERRORS, key_env=self._config.api_key_env, endpoint=self._endpoint
        )
        started = time.perf_counter()
        completion, attempts = call_with_retries(
            functools.partial(self._create, messages),
            classify,
            agent=self.name,
            budget=self._budget,
            secret=self._key,
        )
        text = self._text(completion, attempts)
        usage = completion.usage
        return AgentReply(
            text=text,
            latency_s=time.perf_counter() - started,
            input_tokens=usage.prompt_tokens if usage else None,
            output_tokens=usage.completion_tokens if usage else None,
            model=completion.model or self._config.model,
            attempts=attempts,
        )

    def _create(
        self, messages: list[ChatCompletionMessageParam], timeout_s: float
    ) -> ChatCompletion:
        return self._client.chat.completions.create(
            model=self._config.model,
            messages=messages,
            temperature=self._config.temperature,
            max_tokens=self._config.max_tokens,
            timeout=timeout_s,
        )

    def _text(self, completion: ChatCompletion, attempts: int) -> str:
        content = completion.choices[0].message.content if completion.choices else None
        if content is None:
            reason = completion.choices[0].finish_reason if completion.choices else "no choices"
            raise AgentError(
                f"agent {self.name!r}: {self._endpoint} answered without text"
                f" (finish_reason: {reason}); check that model {self._config.model!r}"
                " is a chat model",
                attempts=attempts,
                kind="no_text",
            )
        return content

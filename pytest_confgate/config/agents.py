"""The ``agents:`` section: programs and LLM providers the gate and overlays can ask."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field

from pytest_confgate.config.base import ConfigModel, EnvName, Milliseconds, Text


class _AgentConfig(ConfigModel):
    timeout_ms: Milliseconds = 30_000
    """One call's limit; a call past it is a failure of that call, never a long wait."""


class CommandAgentConfig(_AgentConfig):
    """An agent that is a program: the prompt on stdin, the answer on stdout."""

    provider: Literal["command"]
    command: Annotated[list[Text], Field(min_length=1)]
    timeout_ms: Milliseconds = 600_000
    max_output_bytes: Annotated[int, Field(gt=0, le=64 * 1024 * 1024)] = 1024 * 1024


class LlmAgentConfig(_AgentConfig):
    model: Text
    base_url: Text | None = None
    max_tokens: Annotated[int, Field(gt=0, le=200_000)] = 300
    max_retries: Annotated[int, Field(ge=0, le=10)] = 2
    deadline_ms: Milliseconds | None = None
    """All attempts together; default three times ``timeout_ms``."""


class OpenAIAgentConfig(LlmAgentConfig):
    """Any OpenAI-compatible server (OpenAI, Azure with ``api_version``, vLLM, Ollama)."""

    provider: Literal["openai"]
    temperature: Annotated[float, Field(ge=0.0, le=2.0, allow_inf_nan=False)] = 0.1
    api_key_env: EnvName = "OPENAI_API_KEY"
    api_version: Text | None = None
    """Set for Azure OpenAI: ``base_url`` is then the Azure endpoint."""


class AnthropicAgentConfig(LlmAgentConfig):
    """Anthropic's Messages API, or a server speaking it at ``base_url``."""

    provider: Literal["anthropic"]
    temperature: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] | None = None
    """Sent only when set: recent Claude models refuse any value but their default."""
    api_key_env: EnvName = "ANTHROPIC_API_KEY"


AgentConfig = Annotated[
    CommandAgentConfig | OpenAIAgentConfig | AnthropicAgentConfig,
    Field(discriminator="provider"),
]


def same_evaluator(first: AgentConfig, second: AgentConfig) -> str | None:
    """What makes two agent names one evaluator, or None when they are two: the same model
    family (``gpt-4o`` under ``dev`` and ``openai/gpt-4o-2024-08-06`` under ``reviewer``
    judges its own work, whatever the provider, URL or snapshot date) or the same program."""
    if isinstance(first, CommandAgentConfig) or isinstance(second, CommandAgentConfig):
        if isinstance(first, CommandAgentConfig) and isinstance(second, CommandAgentConfig):
            return "the same command" if first.command == second.command else None
        return None
    family = model_family(first.model)
    if family != model_family(second.model):
        return None
    if first.model.strip().casefold() == second.model.strip().casefold():
        return f"the same model, {first.model}"
    return f"the same model family, {family} ({first.model} and {second.model})"


_ROUTER_PREFIX = re.compile(r"^(?:[a-z0-9_-]+\.)(?=claude|gpt|llama|mistral|command|titan)")
_SNAPSHOT = re.compile(
    r"(?:[-@](?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4})|-latest|-v\d+(?::\d+)?|:\d+)$"
)


def model_family(model: str) -> str:
    """A model's name without the router's or cloud's prefix (``openai/``, ``anthropic.``) and
    snapshot suffixes (``-2024-08-06``, ``-20241022``, ``@20240620``, ``-latest``, ``-v1:0``):
    two snapshots of one model share its blind spots, so they are one judge."""
    name = model.strip().casefold().rsplit("/", 1)[-1]
    name = _ROUTER_PREFIX.sub("", name)
    while (shorter := _SNAPSHOT.sub("", name)) != name and shorter:
        name = shorter
    return name

"""Agent providers: one small interface over a program, OpenAI and Anthropic.

The judge, the overlays and ranking ask an ``Agent`` for text and never learn which provider
answered. Each provider lives in its own module; the LLM SDKs are imported only when an agent
of that provider is built, so importing this package stays cheap::

    agent = build_agent("reviewer", config.agents["reviewer"])
    reply = agent.ask("Review this diff ...", system="You are a strict reviewer.")

``preflight`` finds the problems a user can fix before anything slow starts (a missing key,
SDK or program); ``ask`` raises ``AgentError`` for everything that goes wrong during a call,
with the attempts it made and the kind of the last failure. Modules:

    command, openai_agent, anthropic_agent   the providers; _retry: bounded retries
    judge         the ``llm_judge`` metric: screen, ask ``repeats`` times, median and spread,
                  then without the change's prose and new names, and without its task
                  (its own ablation)
    ablation      pure: the diff with the comments and strings the change added blanked out
                  and the names it added (identifiers, file names) renamed
    judge_prompt  pure: the fenced prompt with a fresh token and canary per call; strict parsing
    screen        pure: finds text aimed at an evaluator in what it reads (file:line hits)
    screen_rules  pure: what the screen looks for, and how text is normalised first
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.util import find_spec
from typing import TYPE_CHECKING, Protocol

from pytest_confgate.config import AnthropicAgentConfig, CommandAgentConfig, OpenAIAgentConfig
from pytest_confgate.exceptions import AgentError

if TYPE_CHECKING:
    from pytest_confgate.config import AgentConfig

__all__ = ["Agent", "AgentReply", "build_agent", "preflight"]

_SDK_EXTRAS = {"openai": "openai", "anthropic": "anthropic"}
"""Provider -> the importable SDK (also the name of our install extra)."""


@dataclass(frozen=True)
class AgentReply:
    """One answer, with what it cost: the trust store and reports keep latency and tokens.

    ``latency_s`` is the caller's whole wait, retries and back-off included; ``attempts``
    counts the calls made (1 when the first succeeded). Tokens and model are None when the
    provider does not say (a command agent never does).
    """

    text: str
    latency_s: float
    input_tokens: int | None
    output_tokens: int | None
    model: str | None
    attempts: int


class Agent(Protocol):
    """Something that answers a prompt; ``name`` is its key under ``agents:``."""

    name: str

    def ask(self, prompt: str, *, system: str | None = None) -> AgentReply:
        """Send ``prompt`` (and ``system`` instructions) and return the answer.

        Raises ``AgentError`` on any failure, with a message that names the agent, says what
        failed and what to do, and never contains an API key.
        """
        ...


def build_agent(name: str, config: AgentConfig, environ: Mapping[str, str] | None = None) -> Agent:
    """The agent ``config`` describes; ``environ`` (default ``os.environ``) holds the key.

    Raises ``AgentError`` when the key or the provider's SDK is missing. A missing program
    is only found by ``preflight`` or the first ``ask``: building stays free of IO.
    """
    env = os.environ if environ is None else environ
    if isinstance(config, CommandAgentConfig):
        from pytest_confgate.agents.command import CommandAgent

        return CommandAgent(name, config, environ=environ)
    if isinstance(config, OpenAIAgentConfig) and config.api_version and not config.base_url:
        raise AgentError(_azure_without_endpoint(name), kind="configuration")
    api_key = _api_key(name, config, env)
    try:
        if isinstance(config, OpenAIAgentConfig):
            from pytest_confgate.agents.openai_agent import OpenAIAgent

            return OpenAIAgent(name, config, api_key)
        from pytest_confgate.agents.anthropic_agent import AnthropicAgent

        return AnthropicAgent(name, config, api_key)
    except ImportError as exc:
        raise AgentError(
            f"{_missing_sdk(name, config.provider)} ({exc})", kind="configuration"
        ) from exc


def preflight(
    name: str, config: AgentConfig, environ: Mapping[str, str] | None = None
) -> str | None:
    """The first problem that would stop agent ``name`` from answering, or None.

    Cheap on purpose (no SDK import, no network, no process): callers run it for every agent
    they will use before any test or task starts, so a missing key fails in milliseconds.
    """
    env = os.environ if environ is None else environ
    if isinstance(config, CommandAgentConfig):
        program = config.command[0]
        if shutil.which(program, path=env.get("PATH", os.defpath)) is None:
            return (
                f"agent {name!r}: command {program!r} was not found on PATH or is not"
                f" executable; install it or give its full path in agents.{name}.command"
            )
        return None
    if find_spec(_SDK_EXTRAS[config.provider]) is None:
        return _missing_sdk(name, config.provider)
    if isinstance(config, OpenAIAgentConfig) and config.api_version and not config.base_url:
        return _azure_without_endpoint(name)
    if not env.get(config.api_key_env):
        return _missing_key(name, config)
    return None


def _api_key(
    name: str, config: OpenAIAgentConfig | AnthropicAgentConfig, env: Mapping[str, str]
) -> str:
    key = env.get(config.api_key_env)
    if not key:
        raise AgentError(_missing_key(name, config), kind="configuration")
    return key


def _missing_key(name: str, config: OpenAIAgentConfig | AnthropicAgentConfig) -> str:
    return (
        f"agent {name!r}: environment variable {config.api_key_env} is not set; export the"
        f" {config.provider} API key in it (agents.{name}.api_key_env names the variable)"
    )


def _missing_sdk(name: str, provider: str) -> str:
    extra = _SDK_EXTRAS[provider]
    return (
        f"agent {name!r} uses provider {provider!r} but the {extra} package is not installed;"
        f" run: pip install 'pytest-confgate[{extra}]'"
    )


def _azure_without_endpoint(name: str) -> str:
    return (
        f"agent {name!r}: api_version is set (Azure OpenAI) but base_url is not; set"
        f" agents.{name}.base_url to the Azure endpoint"
    )

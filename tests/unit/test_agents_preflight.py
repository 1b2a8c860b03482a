"""``preflight`` finds what a user must fix before anything slow starts; ``build_agent`` agrees."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_confgate.agents import build_agent, preflight
from pytest_confgate.config import AnthropicAgentConfig, CommandAgentConfig, OpenAIAgentConfig
from pytest_confgate.exceptions import AgentError

OPENAI = OpenAIAgentConfig(provider="openai", model="gpt-test")
ANTHROPIC = AnthropicAgentConfig(provider="anthropic", model="claude-test")


@pytest.mark.parametrize(
    ("config", "environ"),
    [
        pytest.param(OPENAI, {"OPENAI_API_KEY": "sk-1"}, id="openai"),
        pytest.param(ANTHROPIC, {"ANTHROPIC_API_KEY": "sk-2"}, id="anthropic"),
    ],
)
def test_an_llm_agent_with_its_sdk_and_key_has_no_problem(
    config: OpenAIAgentConfig | AnthropicAgentConfig, environ: dict[str, str]
) -> None:
    assert preflight("reviewer", config, environ) is None


@pytest.mark.parametrize(
    ("config", "variable"),
    [
        pytest.param(OPENAI, "OPENAI_API_KEY", id="openai"),
        pytest.param(ANTHROPIC, "ANTHROPIC_API_KEY", id="anthropic"),
        pytest.param(
            OpenAIAgentConfig(provider="openai", model="m", api_key_env="VLLM_TOKEN"),
            "VLLM_TOKEN",
            id="custom-variable",
        ),
    ],
)
@pytest.mark.parametrize("value", [None, ""], ids=["unset", "empty"])
def test_a_missing_key_names_the_variable_and_the_agent(
    config: OpenAIAgentConfig | AnthropicAgentConfig, variable: str, value: str | None
) -> None:
    environ = {} if value is None else {variable: value}

    problem = preflight("reviewer", config, environ)

    assert problem is not None
    assert problem.startswith(f"agent 'reviewer': environment variable {variable} is not set;")
    with pytest.raises(AgentError, match=re.escape(problem)):
        build_agent("reviewer", config, environ)


@pytest.mark.parametrize(
    ("config", "module", "extra"),
    [
        pytest.param(OPENAI, "openai", "openai", id="openai"),
        pytest.param(ANTHROPIC, "anthropic", "anthropic", id="anthropic"),
    ],
)
def test_a_missing_sdk_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
    config: OpenAIAgentConfig | AnthropicAgentConfig,
    module: str,
    extra: str,
) -> None:
    # None in sys.modules is Python's own way to make an import fail (importlib docs);
    # our provider module goes too, so building imports it afresh and hits the block.
    monkeypatch.setitem(sys.modules, module, None)
    monkeypatch.delitem(sys.modules, f"pytest_confgate.agents.{module}_agent", raising=False)
    environ = {config.api_key_env: "sk-1"}

    problem = preflight("reviewer", config, environ)

    assert problem is not None
    assert problem.endswith(f"run: pip install 'pytest-confgate[{extra}]'")
    with pytest.raises(AgentError, match=r"pip install 'pytest-confgate\[" + extra):
        build_agent("reviewer", config, environ)


def test_azure_without_an_endpoint_is_a_problem() -> None:
    config = OpenAIAgentConfig(provider="openai", model="m", api_version="2024-06-01")
    environ = {"OPENAI_API_KEY": "sk-1"}

    problem = preflight("azure", config, environ)

    assert problem is not None
    assert "api_version is set (Azure OpenAI) but base_url is not" in problem
    with pytest.raises(AgentError, match="but base_url is not"):
        build_agent("azure", config, environ)


def test_a_command_on_path_has_no_problem(tmp_path: Path) -> None:
    program = tmp_path / "my-agent"
    program.write_text("#!/bin/sh\ncat\n")
    program.chmod(0o755)
    config = CommandAgentConfig(provider="command", command=["my-agent", "--stdin"])

    assert preflight("dev", config, {"PATH": str(tmp_path)}) is None


@pytest.mark.parametrize("mode", [None, 0o644], ids=["absent", "not-executable"])
def test_a_command_not_found_on_path_is_a_problem(tmp_path: Path, mode: int | None) -> None:
    if mode is not None:
        (tmp_path / "my-agent").write_text("#!/bin/sh\ncat\n")
        (tmp_path / "my-agent").chmod(mode)
    config = CommandAgentConfig(provider="command", command=["my-agent"])

    problem = preflight("dev", config, {"PATH": str(tmp_path)})

    assert problem == (
        "agent 'dev': command 'my-agent' was not found on PATH or is not executable;"
        " install it or give its full path in agents.dev.command"
    )


def test_importing_agents_and_preflight_never_import_an_sdk() -> None:
    code = (
        "import sys\n"
        "from pytest_confgate.agents import preflight\n"
        "from pytest_confgate.config import AnthropicAgentConfig, OpenAIAgentConfig\n"
        "preflight('a', OpenAIAgentConfig(provider='openai', model='m'), {})\n"
        "preflight('b', AnthropicAgentConfig(provider='anthropic', model='m'), {})\n"
        "print(sorted({'openai', 'anthropic', 'httpx', 'httpx2'} & set(sys.modules)))\n"
    )

    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30
    )

    assert result.stdout.strip() == "[]"

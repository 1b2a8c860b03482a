"""Seed 003's confidence block loads as written (issue 17), mapped onto today's model."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from fakes.seed003 import SEED_BLOCK

from pytest_confgate.config import ConfgateConfig
from pytest_confgate.config.loader import read_config_file
from pytest_confgate.exceptions import ConfigError
from pytest_confgate.gate.confidence import evaluate_confidence
from pytest_confgate.models import EvalMetric


def load(tmp_path: Path, text: str) -> ConfgateConfig:
    path = tmp_path / "confgate.yml"
    path.write_text(textwrap.dedent(text))
    return read_config_file(path)


def problems(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    return caught.value.problems


@pytest.mark.parametrize("where", ["top", "gate"])
def test_the_seeds_block_loads_as_written(tmp_path: Path, where: str) -> None:
    """Issue 17's Why: hybrid_settings was an unknown key ("did you mean 'llm_settings'?")."""
    text = SEED_BLOCK if where == "top" else "gate:\n" + textwrap.indent(SEED_BLOCK, "  ")
    config = load(tmp_path, text)
    confidence = config.gate.confidence
    assert confidence.enabled is True  # the seed's block is on by being there
    assert confidence.method == "hybrid"
    assert (confidence.hybrid.formula_weight, confidence.hybrid.llm_weight) == (0.6, 0.4)
    assert confidence.evaluator_agent == "openai:gpt-4o-mini"
    agent = config.agents["openai:gpt-4o-mini"]
    assert (agent.provider, getattr(agent, "model", None)) == ("openai", "gpt-4o-mini")
    settings = confidence.llm_settings
    assert (settings.temperature, settings.max_tokens, settings.timeout_ms) == (0.1, 100, 2000)
    said = "; ".join(confidence.seed_spelling)
    for key in ("confidence_calculation", "hybrid_settings", "llm_settings.provider/model",
                "formula_weights (similarity, source_quality, response_length"):
        assert key in said


def test_the_report_notes_that_the_seed_spelling_was_used(tmp_path: Path) -> None:
    config = load(tmp_path, SEED_BLOCK)
    result = evaluate_confidence(config.gate.confidence, [EvalMetric(type="t", value=0.9)])
    note = result.breakdown["seed_spelling"]
    assert note.startswith(
        "this configuration is written in the `confidence_calculation` spelling: "
    )
    assert "hybrid_settings (hybrid)" in note
    plain = load(tmp_path, "gate:\n  confidence: {enabled: true}\n")
    assert "seed_spelling" not in evaluate_confidence(plain.gate.confidence, []).breakdown


def test_an_agent_with_the_seeds_provider_and_model_is_the_evaluator(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        "agents:\n  mini: {provider: openai, model: gpt-4o-mini}\n" + SEED_BLOCK,
    )
    assert config.gate.confidence.evaluator_agent == "mini"
    assert list(config.agents) == ["mini"]


def test_a_named_evaluator_keeps_its_agent_and_the_seeds_model_overrides_it(
    tmp_path: Path,
) -> None:
    config = load(
        tmp_path,
        """\
        agents:
          claude: {provider: anthropic, model: claude-3-haiku-20240307}
        gate:
          confidence_calculation:
            method: llm
            evaluator_agent: claude
            llm_settings: {provider: anthropic, model: claude-3-5-haiku-latest}
        """,
    )
    confidence = config.gate.confidence
    assert (confidence.evaluator_agent, confidence.llm_settings.model) == (
        "claude", "claude-3-5-haiku-latest"
    )


def test_the_loops_block_takes_the_seeds_names_too(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        """\
        agents:
          dev: {provider: command, command: [dev]}
          reviewer: {provider: command, command: [reviewer]}
        tasks:
          fix:
            agent: dev
            overlays:
              confidence_loop:
                enabled: true
                method: hybrid
                evaluator_agent: reviewer
                hybrid_settings: {formula_weight: 0.5, llm_weight: 0.5}
        """,
    )
    loop = config.tasks["fix"].overlays.confidence_loop
    assert loop.hybrid.llm_weight == 0.5
    assert loop.seed_spelling == ("hybrid_settings (hybrid)",)


@pytest.mark.parametrize(
    ("text", "line", "key", "message"),
    [
        ("gate:\n  confidence:\n    hybrid_setings: {}\n", 3, "gate.confidence.hybrid_setings",
         "unknown key 'hybrid_setings' (did you mean 'hybrid_settings'?)"),
        ("gate:\n  confidence: {enabled: true}\n  confidence_calculation: {method: llm}\n", 3,
         "gate.confidence_calculation", "gate.confidence is set too"),
        ("confidence_calculation:\n  formula_weights: {similarity: 0.5, test_coverage: 0.5}\n",
         2, "gate.confidence.formula_weights.test_coverage",
         "formula_weights.test_coverage has no counterpart"),
        ("confidence_calculation:\n  method: llm\n  llm_settings: {provider: azure, model: m}\n",
         3, "gate.confidence.llm_settings.provider", "'azure' cannot be built from this block"),
        ("agents:\n  r: {provider: command, command: [r]}\nconfidence_calculation:\n"
         "  method: llm\n  evaluator_agent: r\n  llm_settings: {provider: openai}\n", 6,
         "gate.confidence.llm_settings.provider", "but evaluator_agent 'r' is a 'command' agent"),
        ("confidence_calculation:\n  method: hybrid\n  hybrid_settings: {formula_weight: 0.9}\n",
         3, "gate.confidence.hybrid", "formula_weight + llm_weight must be 1.0"),
    ],
    ids=["typo", "twice", "metric-weight", "azure", "provider-mismatch", "bad-weights"],
)
def test_what_cannot_be_mapped_is_named_at_its_line(
    tmp_path: Path, text: str, line: int, key: str, message: str
) -> None:
    [found] = problems(tmp_path, text)
    assert found.startswith(f"{tmp_path / 'confgate.yml'}:{line}: {key}: ")
    assert message in found
    assert "llm_settings'?" not in found


def test_llm_settings_apply_to_an_llm_agent_and_leave_a_program_alone() -> None:
    from pytest_confgate.config import CommandAgentConfig, LlmSettings, OpenAIAgentConfig

    settings = LlmSettings(model="gpt-4o", max_tokens=100, timeout_ms=1500)
    llm = OpenAIAgentConfig(provider="openai", model="gpt-4o-mini")
    applied = settings.applied_to(llm)
    assert isinstance(applied, OpenAIAgentConfig)
    assert (applied.model, applied.max_tokens, applied.timeout_ms) == ("gpt-4o", 100, 1500)
    assert applied.temperature == llm.temperature  # unset here: the agent's own
    program = CommandAgentConfig(provider="command", command=["judge"])
    assert settings.applied_to(program) is program

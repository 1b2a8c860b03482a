"""Agents, the ``llm_judge`` metric and confidence settings in the config (SPEC 3, issue 4).

The two ``llm_judge`` messages are the seeds' exact words; the rest name the key and the fix.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_confgate.config import (
    JUDGE_NEEDS_EVALUATOR,
    JUDGE_NOT_AUTHOR,
    AnthropicAgentConfig,
    CommandAgentConfig,
    OpenAIAgentConfig,
)
from pytest_confgate.config.agents import model_family
from pytest_confgate.config.loader import load_config
from pytest_confgate.exceptions import ConfigError

AGENTS = """\
agents:
  reviewer: {provider: openai, model: gpt-4o-mini, api_key_env: REVIEW_KEY}
  dev: {provider: command, command: [my-agent, --stdin], timeout_ms: 600000}
  critic: {provider: anthropic, model: claude-x}
"""


def problems(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "confgate.yml").write_text(textwrap.dedent(text), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    return info.value.problems


def loads(tmp_path: Path, text: str) -> object:
    (tmp_path / "confgate.yml").write_text(textwrap.dedent(text), encoding="utf-8")
    return load_config(tmp_path).config


def test_the_seeds_messages_are_exact() -> None:
    assert JUDGE_NEEDS_EVALUATOR == "llm_judge metric requires evaluator_agent to be set."
    assert JUDGE_NOT_AUTHOR == "llm_judge evaluator_agent must differ from task agent."


def test_llm_judge_without_an_evaluator_is_a_load_error(tmp_path: Path) -> None:
    found = problems(
        tmp_path,
        AGENTS + "gate:\n  metrics:\n    - {type: test_pass_rate}\n"
        "    - {type: llm_judge, weight: 0.5}\n",
    )
    assert found == [f"{tmp_path / 'confgate.yml'}:8: gate.metrics[1]: {JUDGE_NEEDS_EVALUATOR}"]


def test_the_evaluator_may_not_be_the_gates_author(tmp_path: Path) -> None:
    found = problems(
        tmp_path,
        AGENTS + "gate:\n  agent: dev\n  metrics:\n    - {type: llm_judge, evaluator_agent: dev}\n",
    )
    assert len(found) == 1
    assert found[0].endswith(f": gate.metrics[0].evaluator_agent: {JUDGE_NOT_AUTHOR}")


def test_a_tasks_judge_may_not_be_that_tasks_agent(tmp_path: Path) -> None:
    text = (
        AGENTS
        + """\
tasks:
  implement:
    agent: dev
    overlays:
      confidence_loop:
        enabled: true
        metrics:
          - type: llm_judge
            weight: 0.5
            evaluator_agent: dev
"""
    )
    found = problems(tmp_path, text)
    assert len(found) == 1
    assert "tasks.implement.overlays.confidence_loop.metrics[0].evaluator_agent" in found[0]
    assert found[0].endswith(JUDGE_NOT_AUTHOR)


def test_an_undefined_agent_is_named_with_a_did_you_mean(tmp_path: Path) -> None:
    found = problems(
        tmp_path, AGENTS + "gate:\n  metrics:\n    - {type: llm_judge, evaluator_agent: reviewr}\n"
    )
    assert found == [
        f"{tmp_path / 'confgate.yml'}:7: gate.metrics[0].evaluator_agent: agent 'reviewr' is not "
        "defined under agents (did you mean 'reviewer'?); defined: critic, dev, reviewer"
    ]


def test_an_unknown_provider_gets_a_did_you_mean(tmp_path: Path) -> None:
    found = problems(tmp_path, "agents:\n  x: {provider: opnai, model: m}\n")
    assert found == [
        f"{tmp_path / 'confgate.yml'}:2: agents.x: unknown agent provider 'opnai' (did you mean "
        "'openai'?); known providers: anthropic, command, openai"
    ]


def test_an_api_key_in_the_file_is_refused(tmp_path: Path) -> None:
    found = problems(tmp_path, "agents:\n  x: {provider: openai, model: m, api_key: sk-123}\n")
    assert len(found) == 1
    assert "unknown key 'api_key'" in found[0]
    assert "api_key_env" in found[0]  # the allowed keys show where the key goes instead


@pytest.mark.parametrize(
    ("confidence", "key", "words"),
    [
        ("{enabled: true, threshold: 1.5}", "gate.confidence.threshold", "less than or equal"),
        (
            "{enabled: true, method: hybrid, evaluator_agent: reviewer, "
            "hybrid: {formula_weight: 0.7, llm_weight: 0.4}}",
            "gate.confidence.hybrid",
            "must be 1.0",
        ),
        ("{enabled: true, method: llm}", "gate.confidence.evaluator_agent", "needs evaluator"),
        ("{enabled: true, methd: llm}", "gate.confidence.methd", "did you mean 'method'"),
    ],
)
def test_confidence_settings_are_checked_at_load(
    tmp_path: Path, confidence: str, key: str, words: str
) -> None:
    found = problems(tmp_path, AGENTS + f"gate:\n  confidence: {confidence}\n")
    assert len(found) == 1
    assert f":6: {key}: " in found[0]
    assert words in found[0]


def test_weights_that_are_all_zero_are_refused(tmp_path: Path) -> None:
    found = problems(tmp_path, "gate:\n  metrics:\n    - {type: lint_score, weight: 0}\n")
    assert "weights are all zero" in found[0]


def test_the_seeds_confidence_loop_block_is_accepted_as_written(tmp_path: Path) -> None:
    config = loads(
        tmp_path,
        """\
        agents:
          architect: {provider: command, command: [architect]}
          reviewer: {provider: openai, model: gpt-4o-mini}
        tasks:
          design-l1:
            agent: architect
            overlays:
              confidence_loop:
                enabled: true
                mode: composite            # composite | raw
                threshold: 0.80
                max_iterations: 5
                metrics:
                  - type: llm_judge
                    weight: 0.5
                    evaluator_agent: reviewer
                  - type: checklist_completion
                    weight: 0.3
                  - type: requirement_coverage
                    weight: 0.2
                exit_conditions:
                  - "confidence_score >= 0.80"
                  - "pair.challenger_approved == true"  # if paired_workflow also enabled
        """,
    )
    loop = config.tasks["design-l1"].overlays.confidence_loop  # type: ignore[attr-defined]
    assert (loop.enabled, loop.mode, loop.threshold, loop.max_iterations) == (
        True,
        "composite",
        0.8,
        5,
    )
    assert [m.type for m in loop.metrics] == [
        "llm_judge",
        "checklist_completion",
        "requirement_coverage",
    ]
    assert loop.exit_conditions[1] == "pair.challenger_approved == true"


def test_agents_load_with_their_providers_defaults(tmp_path: Path) -> None:
    config = loads(tmp_path, AGENTS)
    agents = config.agents  # type: ignore[attr-defined]
    assert isinstance(agents["reviewer"], OpenAIAgentConfig)
    assert agents["reviewer"].api_key_env == "REVIEW_KEY"
    assert isinstance(agents["dev"], CommandAgentConfig)
    assert agents["dev"].command == ["my-agent", "--stdin"]
    assert isinstance(agents["critic"], AnthropicAgentConfig)
    assert agents["critic"].api_key_env == "ANTHROPIC_API_KEY"
    assert agents["critic"].temperature is None  # recent Claude models refuse a set one


def test_confidence_is_off_by_default(tmp_path: Path) -> None:
    config = loads(tmp_path, "gate: {}\n")
    assert config.gate.confidence.enabled is False  # type: ignore[attr-defined]


# -- issue 17.5: under `confgate run`, the running task's agent is the author ------------------

JUDGED_GATE = "gate:\n  metrics:\n    - {type: test_pass_rate}\n" \
              "    - {type: llm_judge, evaluator_agent: reviewer}\n"


def test_the_gates_judge_may_not_be_a_tasks_agent(tmp_path: Path) -> None:
    """The Why of issue 17: `gate.metrics` judged by `reviewer`, and `reviewer` runs a task:
    every iteration's gate asked the author to judge its own work."""
    found = problems(tmp_path, AGENTS + JUDGED_GATE + "tasks:\n  t: {agent: reviewer, prompt: p}\n")
    assert len(found) == 1
    assert ": gate.metrics[1].evaluator_agent: " in found[0]
    assert JUDGE_NOT_AUTHOR in found[0]
    assert "task 't'" in found[0]


@pytest.mark.parametrize(
    ("task", "key"),
    [
        ("t:\n    agent: dev\n    prompt: p\n    overlays:\n      confidence_loop:\n"
         "        {enabled: true, method: llm, evaluator_agent: dev}\n",
         "tasks.t.overlays.confidence_loop.evaluator_agent"),
        ("t:\n    agent: dev\n    prompt: p\n    overlays:\n      paired_workflow:\n"
         "        {enabled: true, driver_agent: critic, challenger_agent: dev}\n",
         "tasks.t.overlays.paired_workflow.challenger_agent"),
        ("t:\n    agent: dev\n    prompt: p\n    overlays:\n      paired_workflow:\n"
         "        {enabled: true, challenger_agent: critic, role_switch: subtask}\n"
         "      confidence_loop:\n"
         "        {enabled: true, method: hybrid, evaluator_agent: critic}\n",
         "tasks.t.overlays.confidence_loop.evaluator_agent"),
    ],
    ids=["loop-evaluator", "challenger", "evaluator-is-a-switching-challenger"],
)
def test_no_evaluator_or_challenger_may_be_an_author_of_the_task(
    tmp_path: Path, task: str, key: str
) -> None:
    found = problems(tmp_path, AGENTS + "tasks:\n  " + task)
    assert len(found) == 1, found
    assert f": {key}: " in found[0]
    assert "must differ from task agent" in found[0]


def test_the_gates_confidence_evaluator_may_not_be_a_tasks_agent(tmp_path: Path) -> None:
    found = problems(tmp_path, AGENTS + "gate:\n  confidence:\n"
                     "    {enabled: true, method: llm, evaluator_agent: critic}\n"
                     "tasks:\n  t: {agent: critic, prompt: p}\n")
    assert len(found) == 1
    assert ": gate.confidence.evaluator_agent: " in found[0]
    assert "must differ from task agent" in found[0]


def test_independent_judges_and_challengers_load(tmp_path: Path) -> None:
    loads(tmp_path, AGENTS + JUDGED_GATE + "tasks:\n  t:\n    agent: dev\n    prompt: p\n"
          "    overlays:\n      paired_workflow: {enabled: true, challenger_agent: critic}\n")


SAME_MODEL = """\
agents:
  dev: {provider: openai, model: gpt-4o}
  reviewer: {provider: openai, model: GPT-4o, base_url: "http://127.0.0.1:9/v1"}
  other: {provider: anthropic, model: claude-x}
"""


def test_the_same_model_under_another_name_is_not_an_independent_judge(tmp_path: Path) -> None:
    """Issue 30: `gpt-4o` as `dev` and as `reviewer` was accepted as independent."""
    found = problems(
        tmp_path,
        SAME_MODEL + "gate:\n  agent: dev\n  metrics:\n"
        "    - {type: llm_judge, evaluator_agent: reviewer}\n",
    )
    assert found == [
        f"{tmp_path / 'confgate.yml'}:8: gate.metrics[0].evaluator_agent: {JUDGE_NOT_AUTHOR} "
        "('reviewer' and 'dev' are the same model, GPT-4o)"
    ]


def test_the_same_model_may_not_give_a_tasks_confidence_either(tmp_path: Path) -> None:
    found = problems(
        tmp_path,
        SAME_MODEL + "tasks:\n  t:\n    agent: dev\n    prompt: p\n    overlays:\n"
        "      confidence_loop: {enabled: true, method: llm, evaluator_agent: reviewer}\n",
    )
    assert len(found) == 1, found
    assert ": tasks.t.overlays.confidence_loop.evaluator_agent: " in found[0]
    assert "('reviewer' and 'dev' are the same model, GPT-4o)" in found[0]


def test_a_judge_of_another_model_is_independent(tmp_path: Path) -> None:
    loads(
        tmp_path,
        SAME_MODEL + "gate:\n  agent: dev\n  metrics:\n"
        "    - {type: llm_judge, evaluator_agent: other}\n",
    )


@pytest.mark.parametrize(
    ("author", "judge"),
    [("gpt-4o", "gpt-4o-2024-08-06"), ("gpt-4o", "openai/gpt-4o"),
     ("claude-3-5-sonnet-20240620", "claude-3-5-sonnet-20241022"),
     ("claude-3-5-sonnet-latest", "anthropic.claude-3-5-sonnet-20240620-v1:0")],
)
def test_two_snapshots_or_routes_of_one_model_are_not_independent_judges(
    tmp_path: Path, author: str, judge: str
) -> None:
    """They passed as different judges: only the exact name (case aside) was compared."""
    found = problems(
        tmp_path,
        f"agents:\n  dev: {{provider: openai, model: {author!r}}}\n"
        f"  reviewer: {{provider: anthropic, model: {judge!r}}}\n"
        "gate:\n  agent: dev\n  metrics:\n    - {type: llm_judge, evaluator_agent: reviewer}\n",
    )
    assert len(found) == 1, found
    assert "('reviewer' and 'dev' are the same model family, " in found[0]
    assert f"({judge} and {author})" in found[0]


@pytest.mark.parametrize(("one", "other"), [("gpt-4o", "gpt-4o-mini"),
                                            ("claude-3-5-sonnet-20240620", "claude-3-opus")])
def test_different_models_of_one_vendor_stay_independent(one: str, other: str) -> None:
    assert model_family(one) != model_family(other)

"""Load-time rules for tasks and overlays (SPEC 3, 8): each a ``FILE:LINE: key: message``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_confgate.config.loader import load_config
from pytest_confgate.exceptions import ConfigError

AGENTS = """\
agents:
  pe: {provider: command, command: [pe]}
  architect: {provider: command, command: [architect]}
  reviewer: {provider: command, command: [reviewer]}
"""


def problems(tmp_path: Path, tasks: str) -> list[str]:
    (tmp_path / "confgate.yml").write_text(AGENTS + "tasks:\n" + textwrap.indent(
        textwrap.dedent(tasks), "  "))
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    return caught.value.problems


PAIR = """\
design:
  agent: pe
  overlays:
    paired_workflow: {{enabled: true, driver_agent: pe, challenger_agent: {challenger}}}
"""


def test_the_challenger_may_not_be_the_agent_of_a_later_review_task(tmp_path: Path) -> None:
    later = "code-review:\n  agent: architect\n"
    found = problems(tmp_path, PAIR.format(challenger="architect") + later)
    assert found == [
        f"{tmp_path / 'confgate.yml'}:9: tasks.design.overlays.paired_workflow.challenger_agent: "
        "challenger 'architect' is the agent of the later review task 'code-review'; the formal "
        "reviewer must be independent of the pair: choose another challenger or reviewer"
    ]


def test_review_true_marks_a_review_task_whatever_its_name(tmp_path: Path) -> None:
    later = "audit:\n  agent: architect\n  review: true\n"
    found = problems(tmp_path, PAIR.format(challenger="architect") + later)
    assert "later review task 'audit'" in found[0]


def test_an_earlier_review_task_or_another_reviewer_is_fine(tmp_path: Path) -> None:
    text = "review:\n  agent: architect\n" + PAIR.format(challenger="architect")
    text += "final-review:\n  agent: reviewer\n"
    (tmp_path / "confgate.yml").write_text(
        AGENTS + "tasks:\n" + textwrap.indent(text, "  ")
    )
    assert list(load_config(tmp_path).config.tasks) == ["review", "design", "final-review"]


@pytest.mark.parametrize(
    ("pair", "key", "message"),
    [
        ("{enabled: true, driver_agent: pe}", "challenger_agent", "needs challenger_agent"),
        ("{enabled: true, challenger_agent: pe}", "challenger_agent", "is also the driver"),
        ("{enabled: true, challenger_agent: architect, role_switch: checkpoint}",
         "paired_workflow", "role_switch: checkpoint needs checkpoints"),
        ("{enabled: true, challenger_agent: architect, exit_conditions: ['pair.aproved']}",
         "exit_conditions[0]", "did you mean 'pair.challenger_approved'?"),
    ],
    ids=["no-challenger", "challenger-is-driver", "checkpoint-without-list", "bad-condition"],
)
def test_a_paired_workflow_that_cannot_work_is_a_load_error(
    tmp_path: Path, pair: str, key: str, message: str
) -> None:
    [found] = problems(tmp_path, f"t:\n  agent: pe\n  overlays:\n    paired_workflow: {pair}\n")
    assert "tasks.t.overlays.paired_workflow" in found
    assert key in found
    assert message in found


def test_a_task_without_an_agent_is_a_load_error(tmp_path: Path) -> None:
    [found] = problems(tmp_path, "t:\n  prompt: Go.\n")
    assert "tasks.t.agent: a task needs an agent" in found


def test_a_disabled_overlays_exit_conditions_are_still_checked(tmp_path: Path) -> None:
    [found] = problems(
        tmp_path,
        "t:\n  agent: pe\n  overlays:\n    confidence_loop: {exit_conditions: ['iteraton > 1']}\n",
    )
    assert ":9: tasks.t.overlays.confidence_loop.exit_conditions[0]: unknown name" in found


def _loop(metrics: str) -> str:
    return (
        "t:\n  agent: pe\n  overlays:\n    confidence_loop:\n      enabled: true\n"
        f"      metrics: {metrics}\n"
    )


@pytest.mark.parametrize(
    ("metrics", "key", "message"),
    [
        ("[{type: test_pass_rate}, {type: test_integrity, enabled: false}]",
         "metrics[1].enabled", "the loop cannot collect test_integrity with enabled: false"),
        ("[{type: test_coverage, branch: true}]", "metrics[0].branch",
         "the loop cannot collect test_coverage with its own branch: the gate step measures "
         "test_coverage once, as gate.metrics[1] says"),
    ],
    ids=["integrity-turned-off", "other-coverage-settings"],
)
def test_a_loop_metric_the_gate_step_cannot_collect_is_a_load_error(
    tmp_path: Path, metrics: str, key: str, message: str
) -> None:
    """Issue 17: a loop metric the gate does not collect used to count 0.0 in silence."""
    [found] = problems(tmp_path, _loop(metrics))
    assert f"tasks.t.overlays.confidence_loop.{key}: " in found
    assert message in found


def test_loop_metrics_the_gate_lists_alike_or_lacks_load(tmp_path: Path) -> None:
    """Weights are the loop's own; a judge only the loop lists is collected by its gate step."""
    metrics = (
        "[{type: test_coverage, weight: 0.5, branch: false},"
        " {type: llm_judge, weight: 0.5, evaluator_agent: reviewer}]"
    )
    (tmp_path / "confgate.yml").write_text(
        AGENTS + "tasks:\n" + textwrap.indent(_loop(metrics), "  ")
    )
    config = load_config(tmp_path).config
    from pytest_confgate.config.tasks import loop_only_metrics

    extra = loop_only_metrics(config.tasks["t"], config.gate.metrics)
    assert [m.type for m in extra] == ["llm_judge"]

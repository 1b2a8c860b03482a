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

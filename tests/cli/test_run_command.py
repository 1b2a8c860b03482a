"""``confgate run`` as a command: arguments, usage errors, the report's shape (SPEC 8)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from pytest_confgate.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from test_run_support import CODE_FULL, RunProject, write_step

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunProject:
    made = RunProject(tmp_path)
    monkeypatch.chdir(made.root)
    return made


def test_an_unknown_task_is_a_usage_error_with_a_did_you_mean(
    project: RunProject, capsys: pytest.CaptureFixture[str]
) -> None:
    project.agent("dev")
    project.configure("design-l1:\n  agent: dev\n  prompt: Go.\n")
    assert main(["run", "design-l2"]) == 2
    err = capsys.readouterr().err
    assert "unknown task 'design-l2' (did you mean 'design-l1'?)" in err
    assert not (project.root / ".confgate").exists()


def test_a_file_without_tasks_is_a_usage_error(
    project: RunProject, capsys: pytest.CaptureFixture[str]
) -> None:
    (project.root / "confgate.yml").write_text("gate: {risk_tier: T1}\n")
    assert main(["run"]) == 2
    assert "no tasks under `tasks:`" in capsys.readouterr().err


def test_a_bad_exit_condition_stops_the_run_at_load_naming_file_and_line(
    project: RunProject, capsys: pytest.CaptureFixture[str]
) -> None:
    project.agent("dev")
    path = project.configure(
        "fix:\n  agent: dev\n  prompt: Go.\n  overlays:\n    confidence_loop:\n"
        "      enabled: true\n      exit_conditions: ['confidnce_score >= 0.8']\n"
    )
    assert main(["run", "fix", "-c", str(path)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    lines = path.read_text().splitlines()
    line_number = next(n for n, text in enumerate(lines, 1) if "confidnce_score" in text)
    assert line.startswith(
        f"{path}:{line_number}: tasks.fix.overlays.confidence_loop.exit_conditions[0]: "
        "unknown name 'confidnce_score' in exit condition (did you mean 'confidence_score'?)"
    )


def test_a_missing_prompt_file_is_a_usage_error(
    project: RunProject, capsys: pytest.CaptureFixture[str]
) -> None:
    dev = project.agent("dev")
    project.configure("fix:\n  agent: dev\n  prompt: prompts/fix.md\n")
    assert main(["run", "fix"]) == 2
    assert "tasks.fix.prompt: file prompts/fix.md not found" in capsys.readouterr().err
    assert dev.calls == 0


def test_a_prompt_file_is_read_and_sent(project: RunProject) -> None:
    (project.root / "prompts").mkdir()
    (project.root / "prompts" / "fix.md").write_text("Fix everything carefully.\n")
    dev = project.agent("dev", write_step({"calc.py": CODE_FULL}))
    project.configure("fix:\n  agent: dev\n  prompt: prompts/fix.md\n")
    code, _ = project.run("fix")
    assert code == 0
    assert dev.prompt(1).startswith("Fix everything carefully.")


def test_an_agent_program_that_does_not_exist_fails_before_anything_runs(
    project: RunProject, capsys: pytest.CaptureFixture[str]
) -> None:
    (project.root / "confgate.yml").write_text(
        "agents:\n  dev: {provider: command, command: [no-such-agent-program]}\n"
        "tasks:\n  fix: {agent: dev, prompt: Go.}\n"
    )
    assert main(["run", "fix"]) == 2
    assert "command 'no-such-agent-program' was not found" in capsys.readouterr().err


def test_all_tasks_run_in_file_order_with_one_report_per_task(project: RunProject) -> None:
    first = project.agent("first", write_step({"calc.py": CODE_FULL}))
    second = project.agent("second", write_step())
    project.configure(
        "zeta:\n  agent: first\n  prompt: One.\nalpha:\n  agent: second\n  prompt: Two.\n"
    )
    code, report = project.run()
    assert code == 0
    assert [t["task"] for t in report["tasks"]] == ["zeta", "alpha"]
    assert (first.calls, second.calls) == (1, 1)


def test_a_blocked_task_stops_the_tasks_after_it(project: RunProject) -> None:
    project.agent("first", write_step({"test_calc.py": "def test_x():\n    assert False\n"}))
    second = project.agent("second")
    project.configure(
        "one:\n  agent: first\n  prompt: One.\ntwo:\n  agent: second\n  prompt: Two.\n"
    )
    code, report = project.run()
    assert code == 1
    assert [t["task"] for t in report["tasks"]] == ["one"]
    assert second.calls == 0


def test_one_task_gives_the_report_object_itself(project: RunProject) -> None:
    project.agent("dev", write_step({"calc.py": CODE_FULL}))
    project.configure("fix:\n  agent: dev\n  prompt: Go.\n")
    code, report = project.run("fix")
    assert code == 0
    assert {"task", "iterations", "exit_reason", "escalated", "locked_artifact"} <= set(report)
    assert set(report["iterations"][0]) >= {
        "iteration", "agent", "role", "confidence_score", "decision"
    }
    run_json = json.loads((project.run_dir(report) / "run.json").read_text())
    assert run_json == report


def test_run_is_listed_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--report PATH" in out
    # argparse writes "-c CONFIG, --config CONFIG" up to 3.13, "-c, --config CONFIG" on 3.14.
    assert re.search(r"-c( CONFIG)?, --config CONFIG", out)


def test_a_task_agent_that_would_judge_itself_stops_the_run_before_it_is_asked(
    project: RunProject, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 17's Why: the task's agent was asked to judge its own work (and edited a file)."""
    architect = project.agent("architect", write_step({"calc.py": CODE_FULL}))
    project.configure(
        "design:\n  agent: architect\n  prompt: Go.\n",
        extra="  confidence: {enabled: true, method: llm, evaluator_agent: architect}\n",
    )
    assert main(["run", "design"]) == 2
    assert "confidence evaluator_agent must differ from task agent" in capsys.readouterr().err
    assert architect.calls == 0
    assert not (project.root / ".confgate").exists()

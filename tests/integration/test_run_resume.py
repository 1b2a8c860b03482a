"""``confgate run TASK --resume RUN_ID --decision ...``: a human answers an escalation (issue 17).

Before, an escalated run was a dead end: ``--resume`` did not exist, nothing recorded the
human's answer and the only way on was a new run from scratch.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from fakes.github_runner import parse_github_output
from test_run_support import CODE_FULL, CODE_PARTIAL, RunProject, verdict, write_step

from pytest_confgate.cli import main
from pytest_confgate.cli.github import publish
from pytest_confgate.report.markdown import MARKER

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

LOOP = """\
fix:
  agent: dev
  prompt: Make the coverage of calc.py complete.
  hil: true
  overlays:
    confidence_loop:
      enabled: true
      threshold: 0.80
      max_iterations: 2
"""
PAIRED = """\
design:
  agent: pe
  prompt: Write the design of calc.py into design.md.
  artifact: design.md
  hil: true
  {subtasks}
  overlays:
    paired_workflow:
      enabled: true
      driver_agent: pe
      challenger_agent: architect
      max_iterations: 1
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunProject:
    made = RunProject(tmp_path)
    monkeypatch.chdir(made.root)
    return made


def escalated_loop(project: RunProject, *later: dict[str, Any]) -> dict[str, Any]:
    """A confidence loop that runs out of iterations below threshold and escalates."""
    partial = write_step({"calc.py": CODE_PARTIAL})
    project.agent("dev", partial, partial, *later)
    project.configure(LOOP)
    code, report = project.run("fix")
    assert (code, report["escalated"]) == (3, True)
    return report


def record(project: RunProject, report: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project.run_dir(report) / "run.json").read_text())
    return data


def test_escalation_says_how_to_answer_it(
    project: RunProject, capsys: pytest.CaptureFixture[str]
) -> None:
    report = escalated_loop(project)
    out = capsys.readouterr().out
    assert f"confgate run fix --resume {report['run_id']} --decision approve|reject|retry" in out


def test_reject_stops_the_run_exits_1_and_the_record_holds_the_decision(
    project: RunProject,
) -> None:
    report = escalated_loop(project)
    code, resumed = project.run(
        "fix", "--resume", report["run_id"], "--decision", "reject", "--note", "wrong approach"
    )
    assert code == 1
    assert project.agents["dev"].calls == 2  # no agent is asked again
    saved = record(project, report)
    assert saved["human_decision"]["decision"] == "reject"
    assert saved["human_decision"]["note"] == "wrong approach"
    assert saved["human_decision"]["after_iteration"] == 2
    assert [d["decision"] for d in saved["human_decisions"]] == ["reject"]
    assert (saved["status"], saved["exit_reason"], saved["advanced"]) == (
        "finished",
        "human_rejected",
        False,
    )
    assert resumed == saved  # --report is the same record


def test_a_rejected_run_cannot_be_resumed_again(
    project: RunProject, capsys: pytest.CaptureFixture[str]
) -> None:
    report = escalated_loop(project)
    assert project.run("fix", "--resume", report["run_id"], "--decision", "reject")[0] == 1
    capsys.readouterr()
    assert main(["run", "fix", "--resume", report["run_id"], "--decision", "approve"]) == 2
    assert "a human rejected that run" in capsys.readouterr().err


def test_retry_runs_one_more_iteration_with_the_note_and_can_advance(
    project: RunProject,
) -> None:
    report = escalated_loop(project, write_step({"calc.py": CODE_FULL}))
    code, resumed = project.run(
        "fix", "--resume", report["run_id"], "--decision", "retry", "--note", "cover unused()"
    )
    assert code == 0
    dev = project.agents["dev"]
    assert dev.calls == 3
    prompt = dev.prompt(3)
    assert prompt.startswith("Make the coverage of calc.py complete.")
    assert "cover unused()" in prompt
    assert "test_coverage: 50.00% is below the minimum 80.00%" in prompt
    assert [i["iteration"] for i in resumed["iterations"]] == [1, 2, 3]
    assert resumed["iterations"][2]["decision"] == "pass"
    assert (resumed["exit_reason"], resumed["advanced"], resumed["escalated"]) == (
        "confidence",
        True,
        False,
    )
    assert resumed["human_decision"]["decision"] == "retry"
    assert resumed["run_id"] == report["run_id"]  # the same run goes on in the same directory


def test_a_retry_that_still_falls_short_escalates_again_and_can_be_answered_again(
    project: RunProject,
) -> None:
    report = escalated_loop(project)
    run_id = report["run_id"]
    code, again = project.run("fix", "--resume", run_id, "--decision", "retry")
    assert (code, again["escalated"], len(again["iterations"])) == (3, True, 3)
    code, last = project.run("fix", "--resume", run_id, "--decision", "reject")
    assert code == 1
    assert [d["decision"] for d in last["human_decisions"]] == ["retry", "reject"]


def test_approval_cannot_advance_work_the_gate_fails(
    project: RunProject, capsys: pytest.CaptureFixture[str]
) -> None:
    report = escalated_loop(project)  # coverage 50% < 80%: the gate says fail
    capsys.readouterr()
    code, resumed = project.run("fix", "--resume", report["run_id"], "--decision", "approve")
    assert code == 1
    assert "approval cannot advance a task the gate holds" in capsys.readouterr().out
    assert (resumed["advanced"], resumed["escalated"]) == (False, True)  # still open
    assert resumed["human_decision"]["decision"] == "approve"


def test_approval_advances_when_the_gate_passed_and_runs_the_later_subtasks(
    project: RunProject,
) -> None:
    (project.root / "calc.py").write_text(CODE_FULL)
    pe = project.agent("pe", write_step({"design.md": "# Design\n"}))
    project.agent("architect", verdict(False, "Not convinced."))
    project.configure(PAIRED.format(subtasks="subtasks: [outline, details]"))
    code, report = project.run("design")
    assert code == 3
    assert report["iterations"][-1]["subtask"] == "outline"
    code, resumed = project.run("design", "--resume", report["run_id"], "--decision", "approve")
    assert code == 3  # the next subtask ran, and its challenger did not approve either
    assert pe.calls == 2
    assert [i["subtask"] for i in resumed["iterations"]] == ["outline", "details"]
    assert len(resumed["pair_session"]["history"]) == 2  # the pair's history goes on
    code, done = project.run("design", "--resume", report["run_id"], "--decision", "approve")
    assert (code, done["exit_reason"], done["advanced"], done["escalated"]) == (
        0,
        "human_approved",
        True,
        False,
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "fix", "--decision", "reject"], "add --resume RUN_ID"),
        (["run", "fix", "--resume", "x"], "--resume needs --decision"),
        (["run", "--resume", "x", "--decision", "retry"], "--resume needs the task"),
        (["run", "fix", "--resume", "../../etc", "--decision", "retry"], "not a run id"),
        (["run", "fix", "--resume", "nope", "--decision", "retry"], "no run record"),
    ],
)
def test_resume_usage_errors_say_what_to_do(
    project: RunProject, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    project.agent("dev")
    project.configure(LOOP)
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert project.agents["dev"].calls == 0


def test_only_an_escalated_run_of_that_task_can_be_resumed(
    project: RunProject, capsys: pytest.CaptureFixture[str]
) -> None:
    project.agent("dev", write_step({"calc.py": CODE_FULL}))
    project.configure(LOOP + "other:\n  agent: dev\n  prompt: Other.\n")
    code, report = project.run("fix")
    assert code == 0
    capsys.readouterr()
    assert main(["run", "fix", "--resume", report["run_id"], "--decision", "retry"]) == 2
    assert "not waiting for a human" in capsys.readouterr().err
    assert main(["run", "other", "--resume", report["run_id"], "--decision", "retry"]) == 2
    assert "that run is of task 'fix', not 'other'" in capsys.readouterr().err
    # a human may still reject work that advanced; the run's folder names it as well as its id
    code, rejected = project.run("fix", "--resume", report["run_dir"], "--decision", "reject")
    assert code == 1
    assert rejected["human_decision"]["decision"] == "reject"
    assert rejected["human_decision"]["last_decision"] == "pass"
    assert (rejected["advanced"], rejected["exit_reason"]) == (False, "human_rejected")
    assert project.agents["dev"].calls == 1


def publish_run(project: RunProject, report_path: Path) -> tuple[int, dict[str, str], str]:
    """``confgate github publish`` of a run report, as the Action's publish step runs it."""
    out_file, summary = project.base / "out", project.base / "summary.md"
    out_file.write_text("")
    summary.write_text("")
    env = {"GITHUB_OUTPUT": str(out_file), "GITHUB_STEP_SUMMARY": str(summary)}
    code = publish(
        str(report_path), environ=env, comment=False, out=io.StringIO(), err=io.StringIO()
    )
    return code, parse_github_output(out_file.read_text()), summary.read_text()


def test_publishing_an_escalated_run_report_sets_escalated_true(project: RunProject) -> None:
    report = escalated_loop(project, write_step({"calc.py": CODE_FULL}))
    saved = project.root / "escalated-run.json"
    saved.write_text(json.dumps(report))
    code, outputs, summary = publish_run(project, saved)
    assert code == 1
    assert (outputs["escalated"], outputs["decision"], outputs["auto_advance"]) == (
        "true",
        "fail",
        "false",
    )
    assert outputs["confidence"] == "0.75"
    assert summary.startswith(MARKER)
    assert "confgate run: escalated to a human" in summary
    assert "fix waits for a human" in summary
    project.run("fix", "--resume", report["run_id"], "--decision", "retry", "--note", "go on")
    code, outputs, summary = publish_run(project, project.root / "run-report.json")
    assert (code, outputs["escalated"], outputs["decision"]) == (0, "false", "pass")
    assert "answered retry" in summary


def test_a_run_report_cannot_point_publish_at_a_report_outside_its_run(
    project: RunProject,
) -> None:
    report = escalated_loop(project, write_step({"calc.py": CODE_FULL}))
    project.run("fix", "--resume", report["run_id"], "--decision", "retry")
    advanced = json.loads((project.root / "run-report.json").read_text())
    passing = project.root / advanced["iterations"][-1]["gate_report"]
    (project.root / "confgate-report.json").write_text(passing.read_text())
    forged = dict(
        report,
        iterations=[
            *report["iterations"][:-1],
            dict(report["iterations"][-1], gate_report="confgate-report.json"),
        ],
        escalated=False,
        advanced=True,
    )
    (project.root / "forged.json").write_text(json.dumps({"tasks": [forged]}))
    code, outputs, summary = publish_run(project, project.root / "forged.json")
    assert code == 2
    assert outputs["decision"] == "fail"
    assert "is not inside .confgate/runs/" in summary

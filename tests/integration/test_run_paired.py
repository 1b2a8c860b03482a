"""``confgate run`` with the paired workflow (seed 001), scripted agents and the real gate."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from test_run_support import CODE_FULL, CODE_PARTIAL, RunProject, verdict, write_step

from pytest_confgate.overlays.paired import CHALLENGER_PROMPT

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

PAIRED = """\
design:
  agent: pe
  prompt: Write the design of calc.py into design.md.
  artifact: design.md
  hil: {hil}
  overlays:
    paired_workflow:
      enabled: true
      driver_agent: pe
      challenger_agent: architect
      role_switch: {switch}
      max_iterations: {max}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunProject:
    made = RunProject(tmp_path)
    (made.root / "calc.py").write_text(CODE_FULL)
    monkeypatch.chdir(made.root)
    return made


def paired(switch: str = "session", max_iterations: int = 5, hil: bool = False) -> str:
    return PAIRED.format(switch=switch, max=max_iterations, hil=str(hil).lower())


def design(version: int) -> dict[str, object]:
    return write_step({"design.md": f"# Design v{version}\n"}, answer=f"wrote v{version}")


def test_driver_runs_first_the_challenger_critiques_and_the_driver_revises(
    project: RunProject,
) -> None:
    pe = project.agent("pe", design(1), design(2))
    architect = project.agent(
        "architect", verdict(False, "The error handling is missing."), verdict(True)
    )
    project.configure(paired())
    code, report = project.run("design")
    assert code == 0
    assert (pe.calls, architect.calls) == (2, 2)
    challenge = architect.prompt(1)
    assert challenge.count(CHALLENGER_PROMPT) == 1
    assert "# Design v1" in challenge
    assert "The error handling is missing." in pe.prompt(2)
    assert "Write your result to the file design.md." in pe.prompt(1)
    assert [(i["iteration"], i["agent"], i["role"]) for i in report["iterations"]] == [
        (1, "pe", "driver"),
        (2, "pe", "driver"),
    ]
    session = report["pair_session"]
    history = session["history"]
    assert [h["challenger_approved"] for h in history] == [False, True]
    assert history[0]["challenger_critique"] == "The error handling is missing."
    assert history[0]["driver_output_summary"] == "# Design v1\n"
    saved = json.loads((project.run_dir(report) / "pair_session.json").read_text())
    assert saved == {"pair_session": session}


def test_approval_exits_and_locks_the_artifact_and_a_later_change_is_reported(
    project: RunProject, capsys: pytest.CaptureFixture[str]
) -> None:
    project.agent("pe", design(1))
    project.agent("architect", verdict(True, "Ready."))
    project.configure(paired())
    code, report = project.run("design")
    assert (code, report["exit_reason"]) == (0, "approved")
    expected = hashlib.sha256((project.root / "design.md").read_bytes()).hexdigest()
    assert report["locked_artifact"] == expected
    assert report["pair_session"]["challenger_approved"] is True
    (project.root / "design.md").write_text("# Design, edited by hand\n")
    capsys.readouterr()
    _, again = project.run("design")
    [change] = again["lock_changes"]
    assert (change["artifact"], change["locked_sha256"]) == ("design.md", expected)
    assert "locked artifact design.md of task 'design' changed" in capsys.readouterr().out


def test_confidence_met_exits_and_skips_the_critique(project: RunProject) -> None:
    project.agent("pe", design(1))
    architect = project.agent("architect", verdict(False))
    project.configure(
        paired() + "    confidence_loop: {enabled: true, threshold: 0.82, max_iterations: 5}\n"
    )
    code, report = project.run("design")
    assert (code, report["exit_reason"]) == (0, "confidence")
    assert architect.calls == 0
    [turn] = report["pair_session"]["history"]
    assert turn["challenger_critique"] is None
    assert turn["critique_skipped"] == "confidence threshold met"
    assert report["locked_artifact"] is None


def test_role_switch_subtask_swaps_driver_and_challenger_for_the_next_subtask(
    project: RunProject,
) -> None:
    pe = project.agent("pe", design(1), verdict(True))
    architect = project.agent("architect", verdict(True), design(2))
    subtasks = "  subtasks: [api, storage]\n  hil:"
    project.configure(paired(switch="subtask").replace("  hil:", subtasks))
    code, report = project.run("design")
    assert code == 0
    assert [(i["subtask"], i["agent"]) for i in report["iterations"]] == [
        ("api", "pe"),
        ("storage", "architect"),
    ]
    assert "Subtask: api" in pe.prompt(1)
    assert CHALLENGER_PROMPT in pe.prompt(2)
    assert CHALLENGER_PROMPT in architect.prompt(1)
    assert "Subtask: storage" in architect.prompt(2)
    session = report["pair_session"]
    assert session["current_role_driver"] == "architect"
    assert [(h["driver"], h["challenger"]) for h in session["history"]] == [
        ("pe", "architect"),
        ("architect", "pe"),
    ]


def test_role_switch_session_never_swaps(project: RunProject) -> None:
    project.agent("pe", design(1), design(2), design(3))
    project.agent("architect", verdict(False), verdict(False), verdict(True))
    project.configure(paired(switch="session"))
    code, report = project.run("design")
    assert code == 0
    assert [i["agent"] for i in report["iterations"]] == ["pe", "pe", "pe"]
    assert report["pair_session"]["current_role_driver"] == "pe"


def test_role_switch_checkpoint_swaps_at_the_listed_iteration(project: RunProject) -> None:
    project.agent("pe", design(1), verdict(True))
    project.agent("architect", verdict(False), design(2))
    project.configure(paired(switch="checkpoint") + "      checkpoints: [2]\n")
    code, report = project.run("design")
    assert code == 0
    assert [i["agent"] for i in report["iterations"]] == ["pe", "architect"]


def test_max_iterations_escalates_with_the_full_pair_history(project: RunProject) -> None:
    project.agent("pe", design(1), design(2), design(3), design(4))
    project.agent("architect", verdict(False, "Still vague."))
    project.configure(paired(max_iterations=4, hil=True))
    code, report = project.run("design")
    assert (code, report["exit_reason"], report["escalated"]) == (3, "max_iterations", True)
    record = json.loads((project.run_dir(report) / "escalation.json").read_text())
    history = record["pair_session"]["history"]
    assert [h["iteration"] for h in history] == [1, 2, 3, 4]
    assert {h["challenger_critique"] for h in history} == {"Still vague."}
    assert "without the challenger's approval" in record["reason"]


def test_an_unparsable_challenger_answer_is_not_an_approval(project: RunProject) -> None:
    project.agent("pe", design(1))
    project.agent("architect", write_step(answer="LGTM, ship it!"))
    project.configure(paired(max_iterations=1))
    code, report = project.run("design")
    assert (code, report["exit_reason"]) == (0, "max_iterations")  # the gate passes, no HIL
    assert report["locked_artifact"] is None
    [turn] = report["pair_session"]["history"]
    assert turn["challenger_approved"] is False
    assert "no challenger_approved found" in turn["answer_problem"]


def test_a_plain_approval_line_is_accepted(project: RunProject) -> None:
    project.agent("pe", design(1))
    project.agent("architect", write_step(answer="Solid.\nchallenger_approved: true\n"))
    project.configure(paired())
    code, report = project.run("design")
    assert (code, report["exit_reason"]) == (0, "approved")


def test_an_approved_artifact_is_still_blocked_by_a_failing_gate(project: RunProject) -> None:
    project.agent("pe", write_step({"calc.py": CODE_PARTIAL, "design.md": "# v1\n"}))
    project.agent("architect", verdict(True))
    project.configure(paired())
    code, report = project.run("design")
    assert (code, report["exit_reason"]) == (1, "approved")
    assert report["iterations"][0]["decision"] == "fail"


def test_the_answer_is_the_artifact_when_the_task_names_no_file(project: RunProject) -> None:
    project.agent("pe", write_step(answer="Use a dict for the cache."))
    architect = project.agent("architect", verdict(True))
    project.configure(paired().replace("  artifact: design.md\n", ""))
    code, report = project.run("design")
    assert code == 0
    assert "Use a dict for the cache." in architect.prompt(1)
    stored = project.run_dir(report) / "artifact.txt"
    assert stored.read_text() == "Use a dict for the cache."
    assert report["locked_artifact"] == hashlib.sha256(stored.read_bytes()).hexdigest()

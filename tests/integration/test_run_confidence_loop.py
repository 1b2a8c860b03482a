"""``confgate run`` with the confidence loop (seed 000), scripted agents and the real gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_run_support import (
    CODE_FULL,
    CODE_PARTIAL,
    TESTS_FAILING,
    TESTS_OK,
    RunProject,
    write_step,
)

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

LOOP_TASK = """\
fix:
  agent: dev
  prompt: Make the coverage of calc.py complete.
  hil: {hil}
  overlays:
    confidence_loop:
      enabled: true
      threshold: 0.80
      max_iterations: 3
      exit_conditions: {conditions}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunProject:
    made = RunProject(tmp_path)
    monkeypatch.chdir(made.root)
    return made


def loop_task(hil: bool = False, conditions: str = "[]") -> str:
    return LOOP_TASK.format(hil=str(hil).lower(), conditions=conditions)


def test_confidence_is_off_by_default_and_the_single_agent_runs_once(project: RunProject) -> None:
    dev = project.agent("dev", write_step({"calc.py": CODE_FULL}))
    project.configure("fix:\n  agent: dev\n  prompt: Tidy calc.py.\n")
    code, report = project.run("fix")
    assert code == 0
    assert dev.calls == 1
    assert report["exit_reason"] == "gate_passed"
    assert report["escalated"] is False
    assert report["locked_artifact"] is None
    assert "pair_session" not in report
    [only] = report["iterations"]
    assert (only["iteration"], only["agent"], only["decision"]) == (1, "dev", "pass")
    assert only["confidence_score"] is None
    assert only["advisory"] is None
    gate = json.loads((project.root / only["gate_report"]).read_text())
    assert gate["confidence"] is None


def test_a_task_without_overlays_is_blocked_when_its_gate_fails(project: RunProject) -> None:
    project.agent("dev", write_step({"test_calc.py": TESTS_FAILING}))
    project.configure("fix:\n  agent: dev\n  prompt: Break it.\n")
    code, report = project.run("fix")
    assert code == 1
    assert report["iterations"][0]["decision"] == "fail"
    assert report["advanced"] is False


def test_below_threshold_the_loop_continues_with_the_failing_evidence(project: RunProject) -> None:
    dev = project.agent(
        "dev", write_step({"calc.py": CODE_PARTIAL}), write_step({"calc.py": CODE_FULL})
    )
    project.configure(loop_task())
    code, report = project.run("fix")
    assert code == 0
    scores = [i["confidence_score"] for i in report["iterations"]]
    assert scores == [pytest.approx(0.75), pytest.approx(1.0)]
    assert [i["advisory"] for i in report["iterations"]] == [None, "confidence threshold met"]
    assert report["exit_reason"] == "confidence"
    second = dev.prompt(2)
    assert second.startswith("Make the coverage of calc.py complete.")
    assert "test_coverage: 50.00% is below the minimum 80.00%" in second
    assert "Confidence 0.750 (threshold 0.80)" in second


def test_max_iterations_with_hil_escalates_with_the_full_history(project: RunProject) -> None:
    dev = project.agent("dev", write_step({"calc.py": CODE_PARTIAL}))
    project.configure(loop_task(hil=True))
    code, report = project.run("fix")
    assert code == 3
    assert dev.calls == 3
    assert report["exit_reason"] == "max_iterations"
    assert report["escalated"] is True
    assert [i["iteration"] for i in report["iterations"]] == [1, 2, 3]
    record = json.loads((project.run_dir(report) / "escalation.json").read_text())
    assert record["history"] == report["iterations"]
    assert "max_iterations (3) reached" in record["reason"]
    assert report["escalation"]["record"].endswith("escalation.json")


def test_max_iterations_without_hil_exits_the_loop_blocked(project: RunProject) -> None:
    project.agent("dev", write_step({"calc.py": CODE_PARTIAL}))
    project.configure(loop_task(hil=False).replace("max_iterations: 3", "max_iterations: 2"))
    code, report = project.run("fix")
    assert code == 1
    assert (report["exit_reason"], report["escalated"]) == ("max_iterations", False)
    assert len(report["iterations"]) == 2


def test_an_advisory_does_not_advance_a_task_the_policy_gate_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = RunProject(tmp_path, tier="T2")  # T2 needs one human sign-off
    monkeypatch.chdir(project.root)
    project.agent("dev", write_step({"calc.py": CODE_FULL}))
    project.configure(loop_task())
    code, report = project.run("fix")
    assert code == 1
    [only] = report["iterations"]
    assert only["confidence_score"] == pytest.approx(1.0)
    assert only["advisory"] == "confidence threshold met"
    assert only["decision"] == "needs_signoff"
    assert report["exit_reason"] == "confidence"
    assert report["advanced"] is False


def test_an_exit_condition_ends_the_loop(project: RunProject) -> None:
    project.agent("dev", write_step({"calc.py": CODE_PARTIAL}))
    project.configure(loop_task(conditions='["iteration >= 2"]'))
    code, report = project.run("fix")
    assert (code, report["exit_reason"]) == (1, "condition")
    assert report["iterations"][-1]["exit_condition"] == "iteration >= 2"
    assert len(report["iterations"]) == 2


def test_an_exit_condition_without_evidence_is_an_error_not_an_exit(project: RunProject) -> None:
    project.agent("dev", write_step({"calc.py": CODE_PARTIAL}))
    project.configure(loop_task(conditions='["pair.challenger_approved == false"]'))
    code, report = project.run("fix")
    assert (code, report["exit_reason"]) == (1, "max_iterations")
    errors = report["iterations"][0]["condition_errors"]
    assert len(errors) == 1
    assert "pair.challenger_approved has no value in iteration 1" in errors[0]


def test_a_failing_test_keeps_the_loop_going_until_the_agent_fixes_it(
    project: RunProject,
) -> None:
    dev = project.agent(
        "dev",
        write_step({"calc.py": CODE_FULL, "test_calc.py": TESTS_FAILING}),
        write_step({"test_calc.py": TESTS_OK}),
    )
    project.configure(loop_task())
    code, report = project.run("fix")
    assert code == 0
    assert [i["decision"] for i in report["iterations"]] == ["fail", "pass"]
    assert "test_pass_rate" in dev.prompt(2)


JUDGE_GATE = """\
    - type: llm_judge
      evaluator_agent: reviewer
      advisory: true
"""


def test_llm_judge_asks_the_separate_evaluator_never_the_task_agent(
    project: RunProject,
) -> None:
    dev = project.agent("dev", write_step({"calc.py": CODE_FULL}))
    judge_answer = {"canary": "$CANARY", "score": 0.9, "confidence": 0.8, "reasoning": "ok"}
    reviewer = project.agent("reviewer", write_step(answer=json.dumps(judge_answer)))
    config = project.configure(
        loop_task()
        + "      metrics:\n"
        "        - {type: llm_judge, weight: 0.5, evaluator_agent: reviewer}\n"
        "        - {type: test_coverage, weight: 0.5}\n"
    )
    text = config.read_text().replace("      min: 0.8\n", "      min: 0.8\n" + JUDGE_GATE, 1)
    config.write_text(text)
    code, report = project.run("fix")
    assert code == 0
    assert (dev.calls, reviewer.calls) == (1, 2)  # the judgement, the call without the task
    assert "Score the following output against these criteria" in reviewer.prompt(1)
    [only] = report["iterations"]
    assert only["confidence_score"] == pytest.approx(0.95)
    gate = json.loads((project.root / only["gate_report"]).read_text())
    judged = {m["type"]: m["value"] for m in gate["metrics"]}
    assert judged["llm_judge"] == pytest.approx(0.9)


def test_the_loops_own_judge_is_asked_though_gate_metrics_does_not_list_it(
    project: RunProject,
) -> None:
    """Issue 17: the loop's llm_judge used to count 0.0 unless gate.metrics listed it too;
    its gate step now collects it, reported beside the gate's metrics and never deciding."""
    dev = project.agent("dev", write_step({"calc.py": CODE_FULL}))
    judge_answer = {"canary": "$CANARY", "score": 0.3, "confidence": 0.8, "reasoning": "meh"}
    reviewer = project.agent("reviewer", write_step(answer=json.dumps(judge_answer)))
    project.configure(
        loop_task().replace("max_iterations: 3", "max_iterations: 1")
        + "      metrics:\n"
        "        - {type: llm_judge, weight: 0.5, evaluator_agent: reviewer, min: 0.9}\n"
        "        - {type: test_coverage, weight: 0.5}\n"
    )
    code, report = project.run("fix")
    assert (dev.calls, reviewer.calls) == (1, 2)  # the judgement, the call without the task
    [only] = report["iterations"]
    assert only["confidence_score"] == pytest.approx(0.65)  # 0.5 * 0.3 + 0.5 * 1.0
    assert only["decision"] == "pass"  # the loop's judge scores; the gate's metrics decide
    assert (code, report["exit_reason"]) == (0, "max_iterations")  # 0.65 < 0.80
    gate = json.loads((project.root / only["gate_report"]).read_text())
    [judged] = [m for m in gate["metrics"] if m["type"] == "llm_judge"]
    assert judged["value"] == pytest.approx(0.3)
    assert judged["details"]["measured_for"] == "tasks.fix.overlays.confidence_loop"
    assert not [c for c in gate["conditions"] if c["metric"] == "llm_judge"]


@pytest.mark.parametrize(("tier", "advances"), [("T1", True), ("T3", False)])
def test_each_iterations_gate_report_carries_the_loops_confidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tier: str, advances: bool
) -> None:
    """Issue 17: the iteration's gate report said ``confidence: null`` while the run record
    held the advisory; it now carries the score and advisory the iteration was decided with,
    and ``auto_advance`` follows them (SPEC 6: never at T3)."""
    project = RunProject(tmp_path, tier=tier)
    monkeypatch.chdir(project.root)
    project.agent("dev", write_step({"calc.py": CODE_PARTIAL}), write_step({"calc.py": CODE_FULL}))
    project.configure(loop_task())
    _, report = project.run("fix")
    first, last = report["iterations"][0], report["iterations"][-1]
    for entry in (first, last):
        gate = json.loads((project.root / entry["gate_report"]).read_text())
        assert gate["confidence"]["score"] == pytest.approx(entry["confidence_score"])
        assert gate["confidence"]["advisory"] == entry["advisory"]
        assert gate["confidence"]["breakdown"]["scored_by"] == "tasks.fix.overlays.confidence_loop"
    assert first["advisory"] is None
    assert last["advisory"] == "confidence threshold met"
    gate = json.loads((project.root / last["gate_report"]).read_text())
    assert gate["auto_advance"] is advances
    assert gate["decision"] == ("pass" if tier == "T1" else "needs_signoff")

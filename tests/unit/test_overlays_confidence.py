"""The confidence loop's evidence (seed 000): its score from the gate's report, its feedback."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.reports import gate_report

from pytest_confgate.config import ConfidenceLoopConfig, CoverageMetricConfig, LintMetricConfig
from pytest_confgate.models import (
    Condition,
    ConfidenceResult,
    Decision,
    EvalMetric,
    MetricStatus,
)
from pytest_confgate.overlays.confidence_loop import (
    condition_inputs,
    evidence_feedback,
    loop_confidence,
    loop_metrics,
    with_loop_confidence,
)
from pytest_confgate.overlays.gate_step import GateOutcome
from pytest_confgate.report.writers import load_report


def metrics(*values: float) -> list[EvalMetric]:
    names = ["checklist_completion", "requirement_coverage", "test_coverage"]
    return [EvalMetric(type=names[i], value=v) for i, v in enumerate(values)]


def score(
    loop: ConfidenceLoopConfig, found: list[EvalMetric]
) -> tuple[float, dict[str, float], str | None]:
    result = loop_confidence(
        loop, gate_report(metrics=found), root=Path("."), task_prompt="t", evaluator=None
    )
    return result.score, result.scores, result.advisory


def test_composite_confidence_of_the_seed_is_the_weighted_mean() -> None:
    value, _, advisory = score(ConfidenceLoopConfig(enabled=True), metrics(0.9, 0.8, 0.7))
    assert value == pytest.approx(0.8)
    assert advisory == "confidence threshold met"


def test_raw_mode_checks_each_metric_against_the_threshold_without_aggregation() -> None:
    loop = ConfidenceLoopConfig(enabled=True, mode="raw", threshold=0.8)
    _, scores, advisory = score(loop, metrics(0.85, 0.90))
    assert scores == {"checklist_completion": 0.85, "requirement_coverage": 0.90}
    assert advisory == "confidence threshold met"
    _, _, below = score(loop, metrics(0.85, 0.79))
    assert below is None


@pytest.mark.parametrize(
    ("value", "advisory"),
    [(0.85, "confidence threshold met"), (0.72, None)],
    ids=["above-threshold-fires", "below-threshold-continues"],
)
def test_the_advisory_fires_only_at_the_threshold(value: float, advisory: str | None) -> None:
    loop = ConfidenceLoopConfig(enabled=True, threshold=0.80)
    assert score(loop, metrics(value))[2] == advisory


def test_the_loops_own_metric_list_reweights_and_missing_types_count_zero() -> None:
    loop = ConfidenceLoopConfig(
        enabled=True,
        metrics=[
            CoverageMetricConfig(type="test_coverage", weight=3),
            LintMetricConfig(type="lint_score", weight=1),
        ],
    )
    report = gate_report(metrics=[EvalMetric(type="test_coverage", value=0.8)])
    chosen = loop_metrics(loop, report)
    assert [(m.type, m.weight, m.value) for m in chosen] == [
        ("test_coverage", 3, 0.8),
        ("lint_score", 1, None),
    ]
    assert chosen[1].reason.startswith("the gate step did not collect it")
    assert score(loop, report.metrics)[0] == pytest.approx(0.6)


def test_without_its_own_list_the_loop_scores_everything_the_gate_measured() -> None:
    found = metrics(0.5, 1.0)
    assert loop_metrics(ConfidenceLoopConfig(enabled=True), gate_report(metrics=found)) == found


def test_the_feedback_names_the_failing_evidence() -> None:
    report = gate_report(
        decision=Decision.FAIL,
        reasons=["test_coverage: 50.00% is below the minimum 80.00%"],
        metrics=[EvalMetric(type="lint_score", status=MetricStatus.ERROR, reason="ruff crashed")],
        conditions=[Condition(metric="test_coverage", name="min", passed=False, message="too low")],
    )
    text = evidence_feedback(2, GateOutcome(report, 1), None)
    assert "after iteration 2" in text
    assert "- test_coverage: 50.00% is below the minimum 80.00%" in text
    assert "- lint_score is error: ruff crashed" in text
    assert "- failed check: too low" in text


def test_a_gate_that_could_not_run_is_fed_back_as_such() -> None:
    text = evidence_feedback(1, GateOutcome(None, 4, "pytest usage error"), None)
    assert "The gate could not run: pytest usage error" in text


def test_condition_inputs_leave_out_unavailable_metrics() -> None:
    report = gate_report(
        metrics=[EvalMetric(type="test_coverage", value=0.9), EvalMetric(type="lint_score")]
    )
    inputs = condition_inputs(3, GateOutcome(report, 0), 0.7, None)
    assert dict(inputs.metrics) == {"test_coverage": 0.9}
    assert (inputs.iteration, inputs.confidence_score, inputs.pair) == (3, 0.7, None)


def _result(score: float, advisory: str | None) -> ConfidenceResult:
    return ConfidenceResult(
        method="formula", mode="composite", score=score, scores={}, threshold=0.8,
        advisory=advisory, breakdown={},
    )


@pytest.mark.parametrize(
    ("decision", "advisory", "may_advance", "expected"),
    [
        (Decision.PASS, "confidence threshold met", True, True),
        (Decision.PASS, "confidence threshold met", False, False),  # a tier that never does
        (Decision.PASS, None, True, False),
        (Decision.FAIL, "confidence threshold met", True, False),
    ],
)
def test_the_iterations_gate_report_is_rewritten_with_the_loops_confidence(
    tmp_path: Path, decision: Decision, advisory: str | None, may_advance: bool, expected: bool
) -> None:
    own = _result(0.4, None)
    report = gate_report(decision=decision, confidence=own, auto_advance=False)
    path = tmp_path / "gate-report.json"
    outcome, marked = with_loop_confidence(
        GateOutcome(report, 0), _result(0.9, advisory), task="fix", may_advance=may_advance,
        path=path,
    )
    written = load_report(path)
    assert written == outcome.report
    assert written.confidence == marked
    assert (marked.score, marked.advisory) == (0.9, advisory)
    assert marked.breakdown["scored_by"] == "tasks.fix.overlays.confidence_loop"
    assert marked.breakdown["gate_confidence"] == {"score": 0.4, "advisory": None}
    assert written.auto_advance is expected
    assert (written.decision, written.provenance) == (decision, report.provenance)

"""The confidence loop's evidence: the advisory score and what is fed back.

After every agent iteration the gate has run; this module turns its report into the loop's
score (the loop's own ``method``, ``mode``, ``threshold`` and metric weights) and into the
text the next prompt carries when the bar was not met. The score is advice: the runner
advances a task only when the gate's own decision is ``pass``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.gate.confidence import evaluate_confidence, llm_scorer, load_prompt
from pytest_confgate.gate.policy import metric_for
from pytest_confgate.models import ConfidenceResult, Decision, EvalMetric, GateReport, MetricStatus
from pytest_confgate.overlays.exit_conditions import ConditionInputs, PairInputs
from pytest_confgate.processes import run_tool

if TYPE_CHECKING:
    from pytest_confgate.agents import Agent
    from pytest_confgate.config import ConfidenceLoopConfig
    from pytest_confgate.overlays.gate_step import GateOutcome

_DIFF_CHARS = 60_000


def loop_metrics(loop: ConfidenceLoopConfig, report: GateReport) -> list[EvalMetric]:
    """The evidence the loop scores: its own ``metrics`` list, else all the gate measured.

    The gate step collects every listed type (``--confgate-task``, issue 17); one it did not
    report anyway (the configuration that judged the change lacks this task) counts as
    unavailable (0.0, conservative) and says so, rather than shrinking the denominator.
    """
    if "metrics" not in loop.model_fields_set:
        return list(report.metrics)
    chosen: list[EvalMetric] = []
    for wanted in loop.metrics:
        found = metric_for(wanted, list(report.metrics))  # coverage by its scope too
        if found is None:
            found = EvalMetric(
                type=wanted.type,
                status=MetricStatus.UNAVAILABLE,
                reason="the gate step did not collect it: the configuration that judged "
                "the change does not list it for this task's loop",
            )
        chosen.append(found.model_copy(update={"weight": wanted.weight}))
    return chosen


def loop_confidence(
    loop: ConfidenceLoopConfig,
    report: GateReport,
    *,
    root: Path,
    task_prompt: str,
    evaluator: Agent | None,
) -> ConfidenceResult:
    """The loop's advisory score for this iteration (formula, llm or hybrid)."""
    metrics = loop_metrics(loop, report)
    scorer = None
    if loop.method != "formula" and evaluator is not None:
        template = load_prompt(loop.prompt, root)
        scorer = llm_scorer(
            evaluator,
            template,
            task=task_prompt,
            diff=working_tree_diff(root),
            metrics=metrics,
            task_source=None,  # the task is the user's own configuration
        )
    return evaluate_confidence(loop, metrics, scorer)


def with_loop_confidence(
    outcome: GateOutcome,
    confidence: ConfidenceResult,
    *,
    task: str,
    may_advance: bool,
    path: Path,
) -> tuple[GateOutcome, ConfidenceResult]:
    """The iteration's gate report, rewritten at ``path`` with the loop's ``confidence``: the
    score and advisory this iteration was decided with (issue 17), not the gate's own.

    ``auto_advance`` follows the tier's rules with it (a ``pass``, the advisory met, a tier that may
    advance: ``may_advance``); the gate's own score, when it had one, stays in the breakdown.
    """
    from pytest_confgate.report.json_report import write_json_report

    report = outcome.report
    if report is None:
        return outcome, confidence
    breakdown = {**confidence.breakdown, "scored_by": f"tasks.{task}.overlays.confidence_loop"}
    if report.confidence is not None:
        own = report.confidence
        breakdown["gate_confidence"] = {"score": own.score, "advisory": own.advisory}
    marked = confidence.model_copy(update={"breakdown": breakdown})
    advance = report.decision is Decision.PASS and marked.advisory is not None and may_advance
    updated = report.model_copy(update={"confidence": marked, "auto_advance": advance})
    write_json_report(updated, path)
    return replace(outcome, report=updated), marked


def working_tree_diff(root: Path) -> str:
    """``git diff HEAD`` of the working tree (what the agent changed), or "" outside git."""
    try:  # read with the shared output cap: a huge diff must not cost the loop its memory
        done = run_tool(["git", "diff", "HEAD"], cwd=root, timeout_s=60)
    except EvidenceError:
        return ""
    return done.stdout[:_DIFF_CHARS]


def condition_inputs(
    iteration: int,
    outcome: GateOutcome,
    score: float | None,
    pair: PairInputs | None,
) -> ConditionInputs:
    """What an exit condition may read after this iteration; unavailable metrics are absent."""
    metrics: dict[str, float | None] = {}
    if outcome.report is not None:
        metrics = {m.type: m.value for m in outcome.report.metrics if m.available}
    return ConditionInputs(iteration=iteration, confidence_score=score, metrics=metrics, pair=pair)


def evidence_feedback(
    iteration: int, outcome: GateOutcome, confidence: ConfidenceResult | None
) -> str:
    """The failing evidence of ``iteration``, for the next prompt."""
    lines = [f"The gate evaluated your work after iteration {iteration}."]
    if outcome.report is None:
        lines.append(f"The gate could not run: {outcome.error}")
        return "\n".join(lines)
    report = outcome.report
    lines.append(f"Decision: {report.decision.value}.")
    lines.extend(f"- {reason}" for reason in report.reasons[:20])
    if confidence is not None:
        lines.append(
            f"Confidence {confidence.score:.3f} (threshold {confidence.threshold:.2f}); per metric:"
        )
        lines.extend(f"- {name}: {value:.3f}" for name, value in sorted(confidence.scores.items()))
    for metric in report.metrics:
        if not metric.available:
            lines.append(
                f"- {metric.type} is {metric.status.value if metric.status else '?'}: "
                f"{metric.reason or 'no value'}"
            )
    failed = [c for c in report.conditions if not c.passed]
    lines.extend(f"- failed check: {c.message}" for c in failed[:20])
    lines.append("Improve the work so that this evidence passes, then answer again.")
    return "\n".join(lines)

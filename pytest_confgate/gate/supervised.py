"""The verdict ``confgate gate`` writes: the test process's report, its test outcomes replaced.

The test process ran the change's code, so its report is the change's word (issue 34): the
supervisor replaces what it counted itself from the channel (``gate.channel``: the tests'
outcomes, the pass rate, every problem with the channel or the report path as a failing
``supervisor`` condition) and what it measured itself (coverage figures from the test
process's raw data, ruff, bandit, the judge, the confidence, the differential run, the
run-time audit's findings as they were streamed); it keeps the rest (the static tamper
analysis, plugins' metrics; see docs/security.md for what that leaves open). The policy
then decides again (``recheck.redecide``) with the supervisor's own configuration and tier,
which only rise.

The condition ``supervisor``/``attested`` marks a report ``confgate gate`` wrote; the Action's
publish step (``confgate github publish --supervised``) publishes no ``pass`` without it.

Pure: no IO, no clock, no environment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_confgate.config import GateConfig
from pytest_confgate.gate.policy import recount_signoffs
from pytest_confgate.gate.recheck import redecide
from pytest_confgate.gate.tiers import raise_for_evidence, raised, tier_rank
from pytest_confgate.models import (
    Condition,
    ConfidenceResult,
    EvalMetric,
    GateReport,
    Provenance,
    Signoffs,
    TestOutcomes,
)

Measured = tuple[Sequence[EvalMetric], Sequence[dict[str, Any]], ConfidenceResult | None]
"""The supervisor's metrics, waivers' report and confidence (``GateRun.supervisor_metrics``)."""
SUPERVISOR = "supervisor"
ATTESTED = "attested"


def attested(report: GateReport) -> bool:
    """Whether ``confgate gate`` wrote this report (its own passed condition is in it)."""
    return any(c.metric == SUPERVISOR and c.name == ATTESTED and c.passed
               for c in report.conditions)


def problem_conditions(problems: Sequence[str]) -> list[Condition]:
    """Each thing the supervisor saw go wrong, as a failing condition (reasons to block)."""
    return [Condition(metric=SUPERVISOR, name="stream", passed=False,
                      message=f"supervisor: {problem}") for problem in problems]


def supervised_report(
    child: GateReport,
    tests: TestOutcomes,
    pass_rate: EvalMetric,
    problems: Sequence[str],
    *,
    gate: GateConfig,
    tier: tuple[str, str],
    signoffs: Signoffs,
    provenance: Provenance | None,
    measured: Measured | None = None,
    described: Mapping[str, Any] | None = None,
) -> GateReport:
    """``child`` with the supervisor's outcomes, tier, sign-offs and provenance, decided again.

    ``pass_rate``: ``test_pass_rate`` of ``tests`` (``collect.tests.pass_rate_metric``).
    ``tier``: the supervisor's own tier and reason (from the trusted configuration and the
    change's files); the child's tier can raise it, never lower it.
    ``measured``: the supervisor's own metrics (coverage, ruff, bandit, the judge, the
    differential run; ``GateRun.supervisor_metrics``), waivers' report and confidence, which
    replace the child's. ``described``: the supervisor's own account of the run
    (``GateRun.described``: the project, the configuration, the change), over the child's.
    """
    own_metrics, waivers, confidence = (
        measured if measured is not None else (child.metrics, child.waivers, child.confidence))
    metrics = [_tests_metric(m, pass_rate) if m.type == "test_pass_rate" else m
               for m in own_metrics]
    level, reason = raise_for_evidence(tier[0], tier[1], metrics)
    if tier_rank(child.risk_tier) > tier_rank(level):
        level, reason = raised(level, reason, child.risk_tier, "the test process's report")
    _, needed, may_advance = gate.policy.tier(level)
    counted = signoffs.model_copy(update={"required": needed,
                                          "approvers": gate.policy.signoff.approvers})
    own = [c for c in child.conditions if c.metric != SUPERVISOR]
    prepared = child.model_copy(update={
        **(described or {}),
        "tests": tests, "metrics": metrics, "risk_tier": level, "risk_reason": reason,
        "signoffs": counted, "conditions": [*problem_conditions(problems), *own],
        "waivers": list(waivers), "confidence": confidence,
    })
    verdict = redecide(prepared, gate, level)
    advisory = confidence is not None and confidence.advisory is not None
    after = recount_signoffs(verdict, level, counted,
                             auto_advance_allowed=may_advance and advisory and not problems)
    stamp = Condition(metric=SUPERVISOR, name=ATTESTED, passed=True, blocking=False,
                      message=_stamp(tests))
    return prepared.model_copy(update={
        "metrics": after.metrics or metrics, "decision": after.decision,
        "reasons": after.reasons, "conditions": [*after.conditions, stamp],
        "auto_advance": after.auto_advance, "provenance": provenance or child.provenance,
    })


def _tests_metric(metric: EvalMetric, counted: EvalMetric) -> EvalMetric:
    return metric.model_copy(update={"value": counted.value, "status": counted.status,
                                     "reason": counted.reason, "details": counted.details})


def _stamp(tests: TestOutcomes) -> str:
    return (f"confgate gate: the test outcomes ({tests.passed} passed, {tests.failed} failed, "
            f"{tests.errors} errors) were counted outside the test process as they happened; "
            "this report was written after it and every process it started had ended")

"""Hand-built gate reports for writer, merge and report tests: only what a test varies."""

from __future__ import annotations

from typing import Any

from pytest_confgate.models import Decision, GateReport, Provenance, Signoffs, TestOutcomes

HEAD_SHA = "c" * 40
"""The commit every hand-built report says it judged (its ``provenance.head_sha``)."""


def gate_report(**fields: Any) -> GateReport:
    """A valid ``GateReport`` (T1, pass, one passed test, made at ``HEAD_SHA`` by a local run)
    with ``fields`` replacing defaults."""
    values: dict[str, Any] = {
        "tool_version": "0.1.0",
        "project": "demo",
        "generated_at": "2026-11-22T00:00:00+00:00",
        "risk_tier": "T1",
        "risk_reason": "the default tier",
        "decision": Decision.PASS,
        "reasons": [],
        "auto_advance": False,
        "metrics": [],
        "conditions": [],
        "tests": TestOutcomes(passed=1),
        "signoffs": Signoffs(),
        "provenance": Provenance(head_sha=HEAD_SHA, dirty=False, run_id="local-0123456789abcdef",
                                 started_at="2026-11-22T00:00:00+00:00"),
    }
    values.update(fields)
    return GateReport(**values)


def honest_report(
    *, tier: str = "T1", tests: TestOutcomes | None = None, signoffs: Signoffs | None = None,
    coverage: float = 1.0, **fields: Any,
) -> GateReport:
    """A report as the gate writes it under the default configuration: the four default
    metrics measured (``coverage``, no lint or security finding), ``tests`` counted, and the
    decision, reasons and conditions the policy makes of them at ``tier``. What publish
    decides again must agree with it (issue 29)."""
    from pytest_confgate.collect.tests import pass_rate_metric
    from pytest_confgate.config import ConfgateConfig
    from pytest_confgate.gate.policy import decide
    from pytest_confgate.models import EvalMetric

    tests = tests or TestOutcomes(passed=1)
    signoffs = signoffs or Signoffs()
    metrics = [
        pass_rate_metric(tests),
        EvalMetric(type="test_coverage", value=coverage, details={"scope": "all"}),
        EvalMetric(type="lint_score", value=1.0, details={"violations": 0, "items": []}),
        EvalMetric(type="security_score", value=1.0, details={"by_severity": {}, "items": []}),
    ]
    verdict = decide(ConfgateConfig().gate, tier, metrics, tests, signoffs)
    needed = ConfgateConfig().gate.policy.tier(tier)[1] or signoffs.required
    values: dict[str, Any] = {
        "risk_tier": tier, "tests": tests, "metrics": verdict.metrics,
        "decision": verdict.decision, "reasons": verdict.reasons,
        "conditions": verdict.conditions,
        "signoffs": signoffs.model_copy(update={"required": needed}),
    }
    return gate_report(**{**values, **fields})

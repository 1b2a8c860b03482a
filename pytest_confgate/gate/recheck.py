"""A report's verdict checked against its own evidence: what the publish step asks (issue 29).

The gate job's report is written by a process that ran the change's code, and that code can
rewrite it after the gate did (an ``atexit`` hook in a test module, keeping the provenance).
The publish step therefore does not take the report's ``decision`` on its word; it takes the
dynamic evidence (the tests' counts, each metric's figures) and decides again:

- each condition must follow from the figures it cites: a test count from ``tests``, a minimum
  or a maximum against its threshold, a minimum's value from its metric;
- the pass rate must be the tests' own arithmetic, and the metric's counts the tests' counts;
- the decision must follow from the conditions (the policy's own rule, ``policy.verdict_of``),
  and a report that passes cannot hold a metric its policy judged failing;
- with the base's configuration, the policy run again over the report's metrics, at the tier
  the report claims, must not block anything the report lets through.

A report may say it is worse than its evidence (nothing gains by that); when it says it is
better, it was altered, and ``confgate github publish`` refuses it. What a report can still lie
about is its evidence itself, consistently: see docs/publish.md.

Pure: no IO, no clock, no environment.
"""

from __future__ import annotations

from collections.abc import Iterable

from pytest_confgate.config import GateConfig
from pytest_confgate.config.metrics import effective_metrics
from pytest_confgate.gate.policy import decide, verdict_of
from pytest_confgate.models import (
    Condition,
    Decision,
    EvalMetric,
    GateReport,
    TestOutcomes,
    Verdict,
)

_RANK = {Decision.PASS: 0, Decision.NEEDS_SIGNOFF: 1, Decision.FAIL: 2}
_AT_MOST = ("tests_failed", "max_", "checklist_required")
_AT_LEAST = ("min", "tests_ran", "signoffs")
_LOOP = "measured_for"


def stricter(a: Decision, b: Decision) -> bool:
    """Whether ``a`` blocks more than ``b`` (fail > needs_signoff > pass)."""
    return _RANK[a] > _RANK[b]


def tampering(report: GateReport, gate: GateConfig | None = None) -> list[str]:
    """Why the report's verdict does not follow from its own evidence; empty when it does.

    ``gate`` is the base's gate configuration when the caller could read it (the publish
    step, through the API): then the policy decides again over the report's metrics.
    """
    problems = [*_test_problems(report), *_condition_problems(report)]
    own = verdict_of(report.conditions, auto_advance_allowed=True)
    if stricter(own.decision, report.decision):
        problems.append(
            f"the report says {report.decision.value}, but its own conditions say "
            f"{own.decision.value}"
        )
    failed = [m.type for m in report.metrics if m.passed is False]
    if failed and report.decision is Decision.PASS:
        problems.append(f"the report passes, but its own verdict on {', '.join(failed)} "
                        "is FAIL")
    if report.auto_advance and report.decision is not Decision.PASS:
        problems.append(f"the report auto-advances a {report.decision.value}")
    if gate is not None:
        problems += _policy_problems(report, gate)
    return problems


def redecide(report: GateReport, gate: GateConfig, tier: str) -> Verdict:
    """The policy over the report's evidence at ``tier``, sign-offs as the report counted them
    (the caller counts them again); ``metrics`` are all of the report's, each judged again
    (a loop's own entries as they were)."""
    verdict = _decide(report, gate, tier)
    judged = iter(verdict.metrics)
    metrics = [m if m.details.get(_LOOP) else next(judged) for m in report.metrics]
    return verdict.model_copy(update={"metrics": metrics})


def carried(report: GateReport, made: list[Condition]) -> list[Condition]:
    """The report's conditions the policy did not make again (``made``): plugins', waivers',
    the change's. They can only add reasons to block, so they are taken as written."""
    again = {(c.metric, c.name) for c in made}
    return [c for c in report.conditions
            if c.metric != "signoff" and (c.metric, c.name) not in again]


def judged_gate(report: GateReport, gate: GateConfig) -> GateConfig:
    """``gate`` with the metrics the gate measured for this report (``test_integrity`` joins
    when a base was known, as in the gate)."""
    change = report.change or {}
    base_known = isinstance(change.get("files"), list)
    return gate.model_copy(
        update={"metrics": effective_metrics(gate.metrics, base_known=base_known)}
    )


def _decide(report: GateReport, gate: GateConfig, tier: str) -> Verdict:
    gate = judged_gate(report, gate)
    metrics = [m for m in report.metrics if not m.details.get(_LOOP)]
    own = decide(gate, tier, metrics, report.tests, report.signoffs)
    return decide(gate, tier, metrics, report.tests, report.signoffs,
                  extra=carried(report, own.conditions))


def _policy_problems(report: GateReport, gate: GateConfig) -> list[str]:
    verdict = _decide(report, gate, report.risk_tier)
    failing = {(c.metric, c.name) for c in report.conditions if c.blocking and not c.passed}
    missed = [
        c.message for c in verdict.conditions
        if c.blocking and not c.passed and c.metric != "signoff"
        and (c.metric, c.name) not in failing
    ]
    if not missed or not stricter(verdict.decision, report.decision):
        return []
    return [
        f"the base's configuration over the report's own metrics says "
        f"{verdict.decision.value} ({'; '.join(missed[:3])}), the report says "
        f"{report.decision.value}"
    ]


def _test_problems(report: GateReport) -> list[str]:
    tests = report.tests
    problems = []
    for metric in _of_type(report.metrics, "test_pass_rate"):
        if metric.value is None or not metric.available:
            continue
        want = (tests.passed + tests.xpassed) / tests.ran if tests.ran else 0.0
        if abs(metric.value - want) > 1e-9:
            problems.append(
                f"test_pass_rate says {metric.value:.6g}, but the report's tests "
                f"({_counts(tests)}) make {want:.6g}"
            )
        for key, count in (("failed", tests.failed), ("errors", tests.errors)):
            said = metric.details.get(key)
            if isinstance(said, int) and said != count:
                problems.append(f"test_pass_rate counts {said} {key}, the report's tests {count}")
    return problems


def _condition_problems(report: GateReport) -> list[str]:
    tests = report.tests
    problems = []
    for condition in report.conditions:
        value, limit = condition.value, condition.threshold
        if condition.name == "tests_failed" and value != float(tests.failed + tests.errors):
            problems.append(f"{condition.message!r} does not count the report's tests "
                            f"({_counts(tests)})")
        if condition.name == "tests_ran" and value != float(tests.ran):
            problems.append(f"{condition.message!r} does not count the report's tests "
                            f"({_counts(tests)})")
        if not condition.passed or value is None or limit is None:
            continue
        if condition.name.startswith(_AT_MOST) and value > limit:
            problems.append(f"{condition.metric}: {value:g} is over {limit:g}, yet it passed")
        elif condition.name in _AT_LEAST and value < limit:
            problems.append(f"{condition.metric}: {value:g} is under {limit:g}, yet it passed")
        if condition.name == "min" and not _cited(value, _of_type(report.metrics,
                                                                  condition.metric)):
            problems.append(f"{condition.metric}: the condition cites {value:g}, which no "
                            f"{condition.metric} metric of the report measured")
    return problems


def _cited(value: float, metrics: list[EvalMetric]) -> bool:
    """Whether ``value`` is a figure of one of ``metrics`` (its value, or a path's)."""
    if not metrics:
        return False
    for metric in metrics:
        figures = [metric.value] + [
            item.get("value") for item in (metric.details.get("paths") or {}).values()
            if isinstance(item, dict)
        ]
        if value in figures:
            return True
    return False


def _of_type(metrics: Iterable[EvalMetric], kind: str) -> list[EvalMetric]:
    return [m for m in metrics if m.type == kind]


def _counts(tests: TestOutcomes) -> str:
    return f"{tests.passed} passed, {tests.failed} failed, {tests.errors} errors"

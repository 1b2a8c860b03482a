"""``gate.supervised``: the supervisor's report from the test process's and its own tally."""

from __future__ import annotations

from fakes.reports import honest_report

from pytest_confgate.collect.tests import pass_rate_metric
from pytest_confgate.config import ConfgateConfig
from pytest_confgate.gate.supervised import ATTESTED, SUPERVISOR, attested, supervised_report
from pytest_confgate.models import (
    Condition,
    Decision,
    GateReport,
    MetricStatus,
    Signoffs,
    TestOutcomes,
)

GATE = ConfgateConfig().gate
FAILED = TestOutcomes(passed=2, failed=1)


def supervise(child: GateReport, tests: TestOutcomes, problems: list[str] | None = None,
              tier: str = "T1") -> GateReport:
    return supervised_report(child, tests, pass_rate_metric(tests), problems or [], gate=GATE,
                             tier=(tier, "the supervisor's"), signoffs=Signoffs(),
                             provenance=None)


def forged(report: GateReport) -> GateReport:
    """The report rewritten consistently in the test process: all passed, pass, T0."""
    tests = TestOutcomes(passed=3)
    metrics = [pass_rate_metric(tests) if m.type == "test_pass_rate" else m
               for m in report.metrics]
    fake = Condition(metric=SUPERVISOR, name=ATTESTED, passed=True, message="trust me")
    return report.model_copy(update={"tests": tests, "metrics": metrics, "decision":
                                     Decision.PASS, "reasons": [], "conditions": [fake],
                                     "risk_tier": "T0"})


def test_an_honest_report_keeps_its_verdict_and_gains_the_attestation() -> None:
    child = honest_report(tests=TestOutcomes(passed=3))
    made = supervise(child, TestOutcomes(passed=3))
    assert (made.decision, made.reasons, made.metrics) == (child.decision, child.reasons,
                                                           child.metrics)
    assert attested(made)
    assert not attested(child)


def test_a_forged_report_is_decided_from_the_supervisors_tally() -> None:
    made = supervise(forged(honest_report(tests=FAILED)), FAILED)
    assert made.decision is Decision.FAIL
    assert made.tests.failed == 1
    assert made.risk_tier == "T1"  # the child's T0 cannot lower the supervisor's tier
    [rate] = [m for m in made.metrics if m.type == "test_pass_rate"]
    assert rate.value == 2 / 3
    assert rate.passed is False
    assert [c.message for c in made.conditions if c.metric == SUPERVISOR][-1] != "trust me"


def test_what_the_supervisor_saw_go_wrong_blocks() -> None:
    child = honest_report(tests=TestOutcomes(passed=3))
    made = supervise(child, TestOutcomes(passed=3), ["the channel was flooded"])
    assert made.decision is Decision.FAIL
    assert made.reasons == ["supervisor: the channel was flooded"]
    assert not made.auto_advance


def test_the_childs_higher_tier_raises_the_supervisors() -> None:
    child = honest_report(tier="T3", tests=TestOutcomes(passed=3),
                          signoffs=Signoffs(required=2))
    made = supervise(child, TestOutcomes(passed=3))
    assert made.risk_tier == "T3"
    assert made.decision is Decision.NEEDS_SIGNOFF
    assert made.signoffs.required == 2


def test_the_supervisors_own_measurements_replace_the_test_processs() -> None:
    """Coverage, ruff and bandit as the supervisor measured them are what is decided on;
    the figures the test process wrote are never read."""
    child = honest_report(tests=TestOutcomes(passed=3))
    ours = [m.model_copy(update={"value": None, "status": MetricStatus.ERROR,
                                 "reason": "the data could not be read"})
            if m.type == "test_coverage" else m for m in child.metrics]
    made = supervised_report(child, TestOutcomes(passed=3), pass_rate_metric(
        TestOutcomes(passed=3)), [], gate=GATE, tier=("T1", "the supervisor's"),
        signoffs=Signoffs(), provenance=None, measured=(ours, [], None))
    [coverage] = [m for m in made.metrics if m.type == "test_coverage"]
    assert coverage.value is None
    assert coverage.status is MetricStatus.ERROR
    assert made.decision is Decision.FAIL
    assert child.decision is Decision.PASS
    assert made.confidence is None

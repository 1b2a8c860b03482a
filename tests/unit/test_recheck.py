"""``gate.recheck``: a report's verdict must follow from its own evidence (issue 29)."""

from __future__ import annotations

from fakes.reports import honest_report

from pytest_confgate.config import ConfgateConfig, GateConfig
from pytest_confgate.gate.recheck import redecide, stricter, tampering
from pytest_confgate.models import Condition, Decision, GateReport, Signoffs, TestOutcomes

FAILING = TestOutcomes(passed=2, failed=1)


def rewritten(report: GateReport, **fields: object) -> GateReport:
    return report.model_copy(update=fields)


def test_an_honest_report_follows_from_its_evidence_with_or_without_the_config() -> None:
    for report in (honest_report(), honest_report(tests=FAILING),
                   honest_report(tier="T3", signoffs=Signoffs(required=2))):
        assert tampering(report) == []
        assert tampering(report, ConfgateConfig().gate) == []


def test_a_decision_rewritten_to_pass_over_failing_conditions() -> None:
    report = honest_report(tests=FAILING)
    assert report.decision is Decision.FAIL
    problems = tampering(rewritten(report, decision=Decision.PASS, reasons=[]))
    assert "the report says pass, but its own conditions say fail" in problems
    assert "the report passes, but its own verdict on test_pass_rate is FAIL" in problems


def test_conditions_and_verdicts_removed_are_found_by_the_base_policy() -> None:
    """The hook drops the conditions and the metric's verdict: only the policy, run again over
    the report's metrics with the base's configuration, sees the failed test."""
    report = honest_report(tests=FAILING)
    metrics = [m.model_copy(update={"passed": None}) for m in report.metrics]
    forged = rewritten(report, decision=Decision.PASS, reasons=[], conditions=[],
                       metrics=metrics)
    assert tampering(forged) == []  # consistent with itself
    [problem] = tampering(forged, ConfgateConfig().gate)
    assert problem.startswith("the base's configuration over the report's own metrics says fail")
    assert "test_pass_rate: 1 test failed (max_failed_tests: 0)" in problem


def test_figures_that_do_not_add_up() -> None:
    report = honest_report(tests=FAILING)
    pass_rate = next(m for m in report.metrics if m.type == "test_pass_rate")
    liar = pass_rate.model_copy(update={"value": 1.0})
    problems = tampering(rewritten(report, metrics=[liar, *report.metrics[1:]]))
    assert any(p.startswith("test_pass_rate says 1, but the report's tests") for p in problems)
    counted = rewritten(report, tests=TestOutcomes(passed=3))
    assert any("counts 1 failed, the report's tests 0" in p for p in tampering(counted))


def test_a_condition_that_passed_over_its_limit() -> None:
    over = Condition(metric="lint_score", name="max_lint_violations", passed=True,
                     message="lint_score: 3 violations (max_lint_violations: 0)",
                     value=3.0, threshold=0.0)
    under = Condition(metric="test_coverage", name="min", passed=True, message="m",
                      value=0.5, threshold=0.8)
    problems = tampering(honest_report(conditions=[over, under]))
    assert "lint_score: 3 is over 0, yet it passed" in problems
    assert "test_coverage: 0.5 is under 0.8, yet it passed" in problems
    assert any("cites 0.5, which no test_coverage metric" in p for p in problems)


def test_a_report_may_say_it_is_worse_than_its_evidence() -> None:
    assert tampering(honest_report(decision=Decision.FAIL)) == []
    assert stricter(Decision.FAIL, Decision.NEEDS_SIGNOFF)
    assert not stricter(Decision.PASS, Decision.NEEDS_SIGNOFF)


def test_redecide_at_a_higher_tier_makes_advisory_failures_block() -> None:
    """A forged T0 makes every failure advisory; the publish step decides at the floor."""
    gate = GateConfig.model_validate({"metrics": [{"type": "test_pass_rate"},
                                                  {"type": "test_coverage", "min": 0.9}]})
    report = honest_report(tier="T0", coverage=0.5)
    assert tampering(report, gate) == []
    verdict = redecide(report, gate, "T2")
    assert verdict.decision is Decision.FAIL
    assert any("is below the minimum" in reason for reason in verdict.reasons)
    assert [m.passed for m in verdict.metrics if m.type == "test_coverage"] == [False]


def test_a_plugins_failing_condition_survives_the_decision_made_again() -> None:
    """Plugin conditions can name a configured metric; the policy does not make them again,
    so they are carried as the gate wrote them, and they still block."""
    plugin = Condition(metric="test_coverage", name="flaky_files", passed=False,
                       message="plugin: calc/io.py is flaky")
    report = honest_report()
    blocked = rewritten(report, conditions=[*report.conditions, plugin],
                        decision=Decision.FAIL, reasons=[plugin.message])
    assert tampering(blocked, ConfgateConfig().gate) == []
    verdict = redecide(blocked, ConfgateConfig().gate, "T1")
    assert verdict.decision is Decision.FAIL
    assert verdict.reasons == ["plugin: calc/io.py is flaky"]
    assert tampering(rewritten(blocked, decision=Decision.PASS)) != []

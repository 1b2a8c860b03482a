"""The evidence policy gate: tiers, thresholds, hard conditions, fail-closed, sign-offs."""

from __future__ import annotations

import pytest

from pytest_confgate.config import GateConfig
from pytest_confgate.gate.policy import decide, recount_signoffs
from pytest_confgate.models import Decision, EvalMetric, MetricStatus, Signoffs, TestOutcomes

GREEN_TESTS = TestOutcomes(passed=10)


def _gate(**data: object) -> GateConfig:
    return GateConfig.model_validate(data)


def _evidence(
    *,
    coverage: float = 0.9,
    lint: float = 1.0,
    violations: int = 0,
    security: float = 1.0,
    high: int = 0,
) -> list[EvalMetric]:
    return [
        EvalMetric(type="test_pass_rate", value=1.0, details={"passed": 10}),
        EvalMetric(type="test_coverage", value=coverage),
        EvalMetric(type="lint_score", value=lint, details={"violations": violations}),
        EvalMetric(
            type="security_score",
            value=security,
            details={
                "by_severity": {"HIGH": high, "MEDIUM": 0, "LOW": 0},
                "items": [
                    {"rule": "B602", "file": "pkg/run.py", "line": 3, "severity": "HIGH"}
                ]
                * high,
            },
        ),
    ]


def _signed(*logins: str) -> Signoffs:
    return Signoffs(approved_by=list(logins))


def test_default_t1_gate_passes_on_green_evidence() -> None:
    verdict = decide(_gate(), "T1", _evidence(), GREEN_TESTS, _signed())
    assert verdict.decision is Decision.PASS
    assert verdict.reasons == []
    assert all(c.passed for c in verdict.conditions)


def test_failed_tests_fail_the_gate_and_come_first() -> None:
    tests = TestOutcomes(passed=8, failed=2, errors=1)
    gate = _gate(metrics=[{"type": "test_pass_rate"}, {"type": "test_coverage", "min": 0.95}])
    verdict = decide(gate, "T1", _evidence(coverage=0.5), tests, _signed())
    assert verdict.decision is Decision.FAIL
    assert verdict.reasons[0] == "test_pass_rate: 2 tests failed and 1 error (max_failed_tests: 0)"
    assert verdict.reasons[1] == "test_coverage: 50.00% is below the minimum 95.00%"


def test_no_test_ran_fails_the_gate() -> None:
    verdict = decide(_gate(), "T1", _evidence(), TestOutcomes(skipped=3), _signed())
    assert verdict.decision is Decision.FAIL
    assert "test_pass_rate: 0 tests ran (min_tests: 1)" in verdict.reasons


@pytest.mark.parametrize(
    ("value", "floor", "passes"),
    [
        (0.6996, 0.70, False),
        (0.69999999, 0.70, False),
        (0.70, 0.70, True),
        (0.7000001, 0.70, True),
        (0.895, 0.90, False),
    ],
    ids=["69.96-fails-70", "a-hair-below-fails", "equal-passes", "a-hair-above-passes",
         "89.5-fails-90-unlike-coverage-fail-under"],
)
def test_thresholds_compare_raw_values_not_rounded_ones(
    value: float, floor: float, passes: bool
) -> None:
    gate = _gate(metrics=[{"type": "test_coverage", "min": floor}])
    verdict = decide(gate, "T1", _evidence(coverage=value), GREEN_TESTS, _signed())
    assert (verdict.decision is Decision.PASS) is passes


@pytest.mark.parametrize(
    "status", [MetricStatus.UNAVAILABLE, MetricStatus.ERROR], ids=["unavailable", "error"]
)
def test_required_evidence_that_is_not_ok_fails_closed(status: MetricStatus) -> None:
    metrics = _evidence()
    metrics[3] = EvalMetric(type="security_score", status=status, reason="bandit is not installed")
    verdict = decide(_gate(), "T1", metrics, GREEN_TESTS, _signed())
    assert verdict.decision is Decision.FAIL
    assert verdict.reasons == [
        f"security_score: evidence {status.value}: bandit is not installed"
    ]


def test_missing_evidence_fails_closed_even_when_no_collector_ran() -> None:
    verdict = decide(_gate(), "T1", _evidence()[:3], GREEN_TESTS, _signed())
    assert verdict.decision is Decision.FAIL
    assert verdict.reasons == ["security_score: evidence missing: no evidence was collected"]


def test_evidence_that_is_not_required_is_advisory_only() -> None:
    gate = _gate(
        metrics=[{"type": "test_pass_rate"}, {"type": "lint_score", "advisory": True, "min": 1.0}]
    )
    verdict = decide(gate, "T1", _evidence(lint=0.5), GREEN_TESTS, _signed())
    assert verdict.decision is Decision.PASS
    assert verdict.reasons == ["advisory: lint_score: 50.00% is below the minimum 100.00%"]


def test_a_high_severity_finding_fails_the_default_gate_and_is_named() -> None:
    verdict = decide(_gate(), "T1", _evidence(high=1, security=0.9), GREEN_TESTS, _signed())
    assert verdict.decision is Decision.FAIL
    assert verdict.reasons == [
        "security_score: 1 HIGH-severity finding (max_high_severity: 0): B602 at pkg/run.py:3"
        "; fix it first; only if it is a false positive, waive it in "
        'gate.policy.waivers: {rule: B602, paths: [pkg/run.py], reason: "why it is safe", '
        "expires: YYYY-MM-DD}"
    ]


def test_the_remedy_comes_before_the_waiver_for_a_high_finding() -> None:
    """The first remedy offered was "to excuse it, add to gate.policy.waivers", even for a
    HIGH finding: for a gate aimed at agents' changes that points the author around it."""
    verdict = decide(_gate(), "T1", _evidence(high=1, security=0.9), GREEN_TESTS, _signed())
    [reason] = verdict.reasons
    assert reason.index("fix it first") < reason.index("gate.policy.waivers")
    assert "to excuse it" not in reason


@pytest.mark.parametrize(
    ("metric_limit", "policy_limit", "violations", "passes"),
    [
        (5, None, 5, True),
        (5, None, 6, False),
        (None, 2, 3, False),
        (10, 2, 3, False),
        (2, 10, 3, False),
        (None, None, 500, True),
    ],
    ids=["at-limit", "over-limit", "policy-level", "policy-stricter", "metric-stricter",
         "no-limit-by-default"],
)
def test_max_lint_violations_uses_the_stricter_of_metric_and_policy(
    metric_limit: int | None, policy_limit: int | None, violations: int, passes: bool
) -> None:
    lint: dict[str, object] = {"type": "lint_score"}
    if metric_limit is not None:
        lint["max_lint_violations"] = metric_limit
    gate = _gate(metrics=[lint], policy={"max_lint_violations": policy_limit})
    verdict = decide(gate, "T1", _evidence(violations=violations), GREEN_TESTS, _signed())
    assert (verdict.decision is Decision.PASS) is passes


def test_max_failed_tests_can_tolerate_known_failures() -> None:
    gate = _gate(metrics=[{"type": "test_pass_rate", "max_failed_tests": 2}])
    tests = TestOutcomes(passed=5, failed=2)
    assert decide(gate, "T1", _evidence(), tests, _signed()).decision is Decision.PASS
    tests = TestOutcomes(passed=5, failed=3)
    assert decide(gate, "T1", _evidence(), tests, _signed()).decision is Decision.FAIL


def test_t0_reports_but_blocks_nothing_when_tests_pass() -> None:
    gate = _gate(metrics=[{"type": "test_pass_rate"}, {"type": "test_coverage", "min": 0.99}])
    verdict = decide(gate, "T0", _evidence(coverage=0.1), GREEN_TESTS, _signed())
    assert verdict.decision is Decision.PASS
    assert verdict.reasons == ["advisory: test_coverage: 10.00% is below the minimum 99.00%"]


def test_t0_still_fails_when_tests_fail() -> None:
    verdict = decide(_gate(), "T0", _evidence(), TestOutcomes(passed=1, failed=1), _signed())
    assert verdict.decision is Decision.FAIL


@pytest.mark.parametrize(
    ("tier", "logins", "decision"),
    [
        ("T1", (), Decision.PASS),
        ("T2", (), Decision.NEEDS_SIGNOFF),
        ("T2", ("alice",), Decision.PASS),
        ("T3", ("alice",), Decision.NEEDS_SIGNOFF),
        ("T3", ("alice", "bob"), Decision.PASS),
    ],
    ids=["t1-none-needed", "t2-missing", "t2-one", "t3-one-of-two", "t3-two"],
)
def test_risky_tiers_need_human_signoffs(
    tier: str, logins: tuple[str, ...], decision: Decision
) -> None:
    verdict = decide(_gate(), tier, _evidence(), GREEN_TESTS, _signed(*logins))
    assert verdict.decision is decision


def test_failing_evidence_is_fail_not_needs_signoff() -> None:
    verdict = decide(_gate(), "T2", _evidence(high=2), GREEN_TESTS, _signed())
    assert verdict.decision is Decision.FAIL
    assert verdict.reasons[-1] == "T2 needs 1 human sign-off; got 0"


def test_tier_overrides_change_signoff_counts() -> None:
    gate = _gate(policy={"tiers": {"T2": {"signoffs": 2}}})
    verdict = decide(gate, "T2", _evidence(), GREEN_TESTS, _signed("alice"))
    assert verdict.decision is Decision.NEEDS_SIGNOFF
    assert verdict.reasons == ["T2 needs 2 human sign-offs; got 1 (alice)"]


@pytest.mark.parametrize(
    ("tier", "confidence_met", "advance"),
    [("T1", True, True), ("T1", False, False), ("T3", True, False)],
    ids=["t1-confident", "t1-not-confident", "t3-never"],
)
def test_auto_advance_needs_pass_confidence_and_a_tier_that_allows_it(
    tier: str, confidence_met: bool, advance: bool
) -> None:
    verdict = decide(
        _gate(), tier, _evidence(), GREEN_TESTS, _signed("a", "b"), confidence_met=confidence_met
    )
    assert verdict.decision is Decision.PASS
    assert verdict.auto_advance is advance


def test_conditions_list_passed_checks_too() -> None:
    gate = _gate(metrics=[{"type": "test_coverage", "min": 0.5}])
    verdict = decide(gate, "T1", _evidence(coverage=0.8), GREEN_TESTS, _signed())
    names = [(c.metric, c.name, c.passed) for c in verdict.conditions]
    assert names == [("test_coverage", "evidence", True), ("test_coverage", "min", True)]
    assert verdict.conditions[1].value == 0.8
    assert verdict.conditions[1].threshold == 0.5


@pytest.mark.parametrize(
    ("high", "first", "later", "decision"),
    [
        (0, (), ("alice", "bob"), Decision.PASS),
        (0, ("alice", "bob"), ("alice",), Decision.NEEDS_SIGNOFF),
        (2, (), ("alice", "bob"), Decision.FAIL),
    ],
    ids=["reviews-complete-it", "reviews-withdraw-one", "reviews-cannot-rescue-a-fail"],
)
def test_recounting_signoffs_equals_deciding_with_them_from_the_start(
    high: int, first: tuple[str, ...], later: tuple[str, ...], decision: Decision
) -> None:
    early = decide(_gate(), "T3", _evidence(high=high), GREEN_TESTS, _signed(*first))
    recounted = recount_signoffs(
        early, "T3", Signoffs(required=2, approved_by=list(later))
    )
    direct = decide(_gate(), "T3", _evidence(high=high), GREEN_TESTS, _signed(*later))
    assert recounted.decision is decision
    assert recounted == direct


def test_recounting_keeps_auto_advance_only_when_it_was_already_granted() -> None:
    early = decide(_gate(), "T1", _evidence(), GREEN_TESTS, _signed(), confidence_met=True)
    assert early.auto_advance
    assert recount_signoffs(early, "T1", Signoffs()).auto_advance
    t2 = decide(_gate(), "T2", _evidence(), GREEN_TESTS, _signed(), confidence_met=True)
    assert not recount_signoffs(t2, "T2", Signoffs(required=1, approved_by=["a"])).auto_advance


JUDGE_GATE = [{"type": "test_pass_rate"}, {"type": "llm_judge", "evaluator_agent": "r", "min": 0.7}]


def _judged(value: float, **details: object) -> list[EvalMetric]:
    partial = {"diff_truncated": True, "diff_chars": 15_000, "diff_shown_chars": 1_000}
    judge = EvalMetric(type="llm_judge", value=value, details={**partial, **details})
    return [EvalMetric(type="test_pass_rate", value=1.0), judge]


def test_a_judge_that_saw_part_of_the_diff_is_advisory_and_says_why() -> None:
    verdict = decide(_gate(metrics=JUDGE_GATE), "T1", _judged(0.2), GREEN_TESTS, _signed())
    assert verdict.decision is Decision.PASS
    (condition,) = [c for c in verdict.conditions if c.metric == "llm_judge" and c.name == "min"]
    assert (condition.passed, condition.blocking) == (False, False)
    assert verdict.reasons == [
        "advisory: llm_judge: 20.00% is below the minimum 70.00% (advisory only: the judge saw "
        "1000 of the diff's 15000 characters; raise max_diff_chars, or set "
        "allow_truncated_diff: true to let a partial judgement block)"
    ]


def test_allow_truncated_diff_lets_the_partial_judgement_block() -> None:
    gate = _gate(metrics=[JUDGE_GATE[0], {**JUDGE_GATE[1], "allow_truncated_diff": True}])
    verdict = decide(gate, "T1", _judged(0.2), GREEN_TESTS, _signed())
    assert verdict.decision is Decision.FAIL
    assert verdict.reasons == ["llm_judge: 20.00% is below the minimum 70.00%"]


def test_a_suspect_judge_input_blocks_even_when_the_diff_was_cut() -> None:
    metrics = _judged(0.0, injection_suspected=True)
    metrics[1] = metrics[1].model_copy(update={"status": MetricStatus.ERROR, "reason": "suspect"})
    verdict = decide(_gate(metrics=JUDGE_GATE), "T1", metrics, GREEN_TESTS, _signed())
    assert verdict.decision is Decision.FAIL
    assert verdict.reasons == ["llm_judge: evidence error: suspect"]


def test_an_advisory_judge_leaves_a_suspect_change_to_the_t2_sign_off() -> None:
    gate = _gate(metrics=[JUDGE_GATE[0], {**JUDGE_GATE[1], "advisory": True}])
    metrics = _judged(0.0, injection_suspected=True, diff_truncated=False)
    metrics[1] = metrics[1].model_copy(update={"status": MetricStatus.ERROR, "reason": "suspect"})
    assert decide(gate, "T2", metrics, GREEN_TESTS, _signed()).decision is Decision.NEEDS_SIGNOFF
    assert decide(gate, "T2", metrics, GREEN_TESTS, _signed("a")).decision is Decision.PASS


def test_each_metric_carries_the_verdict_on_its_own_conditions_and_its_limits() -> None:
    """`lint_score 80.00% - ok (1 violation)` was shown while `max_lint_violations: 0` failed."""
    gate = _gate(metrics=[
        {"type": "test_pass_rate"},
        {"type": "test_coverage"},
        {"type": "lint_score", "min": 0.5, "max_lint_violations": 0},
        {"type": "security_score", "advisory": True, "max_high_severity": 0},
    ])
    tests = TestOutcomes(passed=11, failed=1)
    verdict = decide(gate, "T1", _evidence(lint=0.8, violations=1, high=1), tests, _signed())
    judged = {m.type: m for m in verdict.metrics}
    assert (judged["lint_score"].passed, judged["lint_score"].limit) == (
        False, "min 50.00%, max 0 violations")
    assert (judged["test_pass_rate"].passed, judged["test_pass_rate"].limit) == (
        False, "max 0 failed")
    assert (judged["test_coverage"].passed, judged["test_coverage"].limit) == (None, None)
    assert (judged["security_score"].passed, judged["security_score"].limit) == (
        None, "max 0 HIGH")  # advisory: nothing of it blocks
    assert [m.type for m in verdict.metrics] == [m.type for m in _evidence()]


def test_a_metric_no_condition_judges_carries_no_verdict_whatever_it_claims() -> None:
    claimed = EvalMetric(type="from_a_plugin", value=0.1, passed=True, limit="min 0%")
    verdict = decide(_gate(), "T1", [*_evidence(), claimed], GREEN_TESTS, _signed())
    assert (verdict.metrics[-1].passed, verdict.metrics[-1].limit) == (None, None)


def test_missing_evidence_fails_its_row() -> None:
    gate = _gate(metrics=[{"type": "test_coverage", "min": 0.8}])
    missing = EvalMetric(type="test_coverage", status=MetricStatus.ERROR, reason="no data")
    verdict = decide(gate, "T1", [missing], GREEN_TESTS, _signed())
    assert verdict.metrics[0].passed is False


def _with_floor(value: float, **details: object) -> list[EvalMetric]:
    found = _evidence()
    found[1] = EvalMetric(type="test_coverage", value=value, details=details)
    return found


@pytest.mark.parametrize(
    ("value", "floor", "decision"),
    [(0.8, 90, Decision.FAIL), (0.8949, 90, Decision.FAIL), (0.8996, 90, Decision.PASS),
     (0.9, 90, Decision.PASS), (0.5, 0, Decision.PASS)],
    ids=["below", "rounded-below", "rounded-to-the-floor", "at-floor", "zero-is-no-floor"],
)
def test_the_projects_fail_under_is_the_coverage_floor_when_the_gate_sets_none(
    value: float, floor: float, decision: Decision
) -> None:
    metrics = _with_floor(value, fail_under=floor, fail_under_from="coverage.py fail_under")
    verdict = decide(_gate(), "T1", metrics, GREEN_TESTS, _signed())
    assert verdict.decision is decision
    judged = verdict.metrics[1]
    if floor:
        assert judged.limit is not None
        assert judged.limit.startswith("min 90.00")
        assert judged.threshold == 0.9
        assert (judged.passed is True) == (decision is Decision.PASS)
    else:
        assert (judged.limit, judged.threshold) == (None, None)


def test_the_gates_own_minimum_and_a_patch_figure_ignore_the_projects_fail_under() -> None:
    metrics = _with_floor(0.6, fail_under=90, fail_under_from="coverage.py fail_under")
    own = _gate(metrics=[{"type": "test_coverage", "min": 0.5}])
    assert decide(own, "T1", metrics, GREEN_TESTS, _signed()).decision is Decision.PASS
    patch = _gate(metrics=[{"type": "test_coverage", "scope": "changed"}])
    assert decide(patch, "T1", metrics, GREEN_TESTS, _signed()).decision is Decision.PASS


def test_a_projects_floor_is_met_exactly_as_coverage_py_decides_it() -> None:
    """coverage.py's ``should_fail_under`` is the oracle: the figure rounded to ``precision``
    or the floor's own decimals, 100 meaning 100. Figures near each floor, precisions 0-3."""
    import random

    from coverage.results import should_fail_under

    rng = random.Random(35)  # noqa: S311 -- seeded figures, not secrets
    cases = 0
    for _ in range(3000):
        of = rng.randint(1, 5000)
        floor = rng.choice([50, 80, 90, 99, 100, 79.5, 57.143, 66.67, 95.05, 33.3])
        ran = min(of, max(0, round(of * floor / 100) + rng.randint(-3, 3)))
        precision = rng.randint(0, 3)
        details: dict[str, object] = {
            "fail_under": float(floor), "fail_under_from": "coverage.py fail_under",
            "covered_lines": ran, "num_statements": of, "covered_branches": 0,
            "num_branches": 0,
        }
        if precision:
            details["precision"] = precision
        verdict = decide(_gate(), "T1", _with_floor(ran / of, **details), GREEN_TESTS,
                         _signed())
        expected = not should_fail_under(100.0 * ran / of, float(floor), precision)
        assert (verdict.decision is Decision.PASS) == expected, (ran, of, floor, precision)
        cases += expected
    assert 0 < cases < 3000  # both sides of the floors were reached


def test_a_report_cannot_claim_the_rounding() -> None:
    """Only the figures decide: a far lower figure with the same floor stays a failure, whatever
    else its details say."""
    metrics = _with_floor(0.1, fail_under=90.0, fail_under_from="coverage.py fail_under",
                          fail_under_met=True, precision=0, covered_lines=1, num_statements=10)
    assert decide(_gate(), "T1", metrics, GREEN_TESTS, _signed()).decision is Decision.FAIL

"""Each rule of the policy, at the edge where removing or weakening it by one step shows (issue
30): the decision and the reason, never only an exit code. ``benchmarks/policy_mutants.py``
applies those mutants and runs these tests against each."""

from __future__ import annotations

import pytest

from pytest_confgate.config import GateConfig
from pytest_confgate.gate.policy import decide
from pytest_confgate.models import Condition, Decision, EvalMetric, Signoffs, TestOutcomes

GREEN = [EvalMetric(type="test_pass_rate", value=1.0)]


def _gate(*metrics: dict[str, object], tier: str = "T1") -> GateConfig:
    return GateConfig.model_validate({"risk_tier": tier, "metrics": list(metrics)})


def _failing(verdict_conditions: list[Condition]) -> list[tuple[str, str]]:
    return [(c.metric, c.name) for c in verdict_conditions if not c.passed]


def test_a_passing_test_and_an_erroring_fixture_is_a_fail_not_a_pass() -> None:
    """The mutant ``tests.failed + tests.errors -> tests.failed`` published this as PASS."""
    tests = TestOutcomes(passed=1, errors=1)

    verdict = decide(_gate({"type": "test_pass_rate"}), "T1", GREEN, tests, Signoffs())

    assert verdict.decision is Decision.FAIL
    assert verdict.reasons == ["test_pass_rate: 1 error (max_failed_tests: 0)"]
    broken = next(c for c in verdict.conditions if c.name == "tests_failed")
    assert (broken.passed, broken.value) == (False, 1.0)


def test_errors_count_against_max_failed_tests_with_the_failures() -> None:
    gate = _gate({"type": "test_pass_rate", "max_failed_tests": 1})

    tolerated = decide(gate, "T1", GREEN, TestOutcomes(passed=5, failed=1), Signoffs())
    too_many = decide(gate, "T1", GREEN, TestOutcomes(passed=5, failed=1, errors=1), Signoffs())

    assert tolerated.decision is Decision.PASS
    assert too_many.decision is Decision.FAIL
    assert too_many.reasons == [
        "test_pass_rate: 1 test failed and 1 error (max_failed_tests: 1)"
    ]


CHECKLIST = {"type": "checklist_completion", "required": ["Docs updated"]}


def test_a_required_checklist_item_left_unchecked_fails_and_is_named() -> None:
    metric = EvalMetric(
        type="checklist_completion", value=0.5, details={"required_missing": ["Docs updated"]}
    )

    verdict = decide(_gate(CHECKLIST), "T1", [metric], TestOutcomes(passed=1), Signoffs())

    assert verdict.decision is Decision.FAIL
    assert verdict.reasons == [
        "checklist_completion: required item(s) not checked: 'Docs updated'"
    ]


def test_required_items_all_checked_pass() -> None:
    metric = EvalMetric(type="checklist_completion", value=1.0, details={"required_missing": []})

    verdict = decide(_gate(CHECKLIST), "T1", [metric], TestOutcomes(passed=1), Signoffs())

    assert verdict.decision is Decision.PASS
    assert ("checklist_completion", "checklist_required") in [
        (c.metric, c.name) for c in verdict.conditions if c.passed
    ]


def test_a_required_item_with_a_ticked_and_an_unticked_box_fails_saying_they_conflict() -> None:
    metric = EvalMetric(
        type="checklist_completion", value=0.5,
        details={"required_missing": ["docs updated"], "conflicting": ["Docs updated"],
                 "required_conflicting": ["Docs updated"]},
    )

    verdict = decide(_gate(CHECKLIST), "T1", [metric], TestOutcomes(passed=1), Signoffs())

    assert verdict.decision is Decision.FAIL
    assert verdict.reasons == [
        "checklist_completion: required item(s) not checked: 'docs updated'; 'Docs updated' has "
        "conflicting boxes ([x] and [ ] for the same item count as unchecked): keep one box "
        "per item"
    ]


def test_a_checklist_below_its_minimum_names_the_conflicting_items() -> None:
    gate = _gate({"type": "checklist_completion", "min": 1.0})
    metric = EvalMetric(
        type="checklist_completion", value=0.5, details={"conflicting": ["Tests pass"]}
    )

    verdict = decide(gate, "T1", [metric], TestOutcomes(passed=1), Signoffs())

    assert verdict.decision is Decision.FAIL
    assert verdict.reasons == [
        "checklist_completion: 50.00% is below the minimum 100.00%; 'Tests pass' has "
        "conflicting boxes ([x] and [ ] for the same item count as unchecked): keep one box "
        "per item"
    ]


PATH_FLOOR = {"type": "test_coverage", "paths": {"calc/core/**": 0.9}}


@pytest.mark.parametrize(
    ("value", "passes"), [(0.8999, False), (0.9, True)], ids=["a-display-step-below", "equal"]
)
def test_a_path_floor_compares_the_raw_figure(value: float, passes: bool) -> None:
    metric = EvalMetric(
        type="test_coverage", value=0.95, details={"paths": {"calc/core/**": {"value": value}}}
    )

    verdict = decide(_gate(PATH_FLOOR), "T1", [metric], TestOutcomes(passed=1), Signoffs())

    assert (verdict.decision is Decision.PASS) is passes
    if not passes:
        below = "test_coverage[calc/core/**]: 89.99% is below the minimum 90.00%"
        assert verdict.reasons == [below]


def test_a_path_floor_no_measured_file_matches_fails_and_says_so() -> None:
    metric = EvalMetric(type="test_coverage", value=0.95, details={"paths": {}})

    verdict = decide(_gate(PATH_FLOOR), "T1", [metric], TestOutcomes(passed=1), Signoffs())

    assert verdict.decision is Decision.FAIL
    assert verdict.reasons == [
        "test_coverage[calc/core/**]: no measured file matches; fix the path or remove the floor"
    ]


@pytest.mark.parametrize(("limit", "findings"), [(0, 1), (1, 2)])
def test_one_tampering_finding_over_max_test_tampering_fails(limit: int, findings: int) -> None:
    gate = _gate({"type": "test_integrity", "max_test_tampering": limit})
    items = [{"rule": "assert-removed", "file": "tests/test_a.py", "line": 3}] * findings
    metric = EvalMetric(
        type="test_integrity", value=0.0, details={"findings": findings, "items": items}
    )

    verdict = decide(gate, "T1", [metric], TestOutcomes(passed=1), Signoffs())

    assert verdict.decision is Decision.FAIL
    assert _failing(verdict.conditions) == [("test_integrity", "max_test_tampering")]
    assert verdict.reasons[0].startswith(
        f"test_integrity: {findings} sign{'s' if findings > 1 else ''} of tampering with tests "
        f"or checks (max_test_tampering: {limit}): assert-removed at tests/test_a.py:3"
    )


def test_findings_within_max_test_tampering_pass() -> None:
    gate = _gate({"type": "test_integrity", "max_test_tampering": 1})
    metric = EvalMetric(type="test_integrity", value=0.5, details={"findings": 1})

    verdict = decide(gate, "T1", [metric], TestOutcomes(passed=1), Signoffs())

    assert verdict.decision is Decision.PASS


def _plugin_condition() -> Condition:
    return Condition(metric="todo_count", name="plugin", passed=False, message="12 TODOs (max 10)")


def test_a_failing_plugin_condition_fails_a_blocking_tier() -> None:
    verdict = decide(
        _gate({"type": "test_pass_rate"}), "T1", GREEN, TestOutcomes(passed=1), Signoffs(),
        extra=[_plugin_condition()],
    )

    assert verdict.decision is Decision.FAIL
    assert verdict.reasons == ["12 TODOs (max 10)"]


def test_a_failing_plugin_condition_is_advisory_where_the_tier_blocks_nothing() -> None:
    verdict = decide(
        _gate({"type": "test_pass_rate"}, tier="T0"), "T0", GREEN, TestOutcomes(passed=1),
        Signoffs(), extra=[_plugin_condition()],
    )

    assert verdict.decision is Decision.PASS
    assert verdict.reasons == ["advisory: 12 TODOs (max 10)"]


def test_two_coverage_entries_each_judge_the_figure_of_their_own_scope() -> None:
    gate = _gate(
        {"type": "test_coverage", "min": 0.5},
        {"type": "test_coverage", "scope": "changed", "min": 0.9},
    )
    metrics = [
        EvalMetric(type="test_coverage", value=0.95, details={"scope": "all"}),
        EvalMetric(type="test_coverage", value=0.6, details={"scope": "changed"}),
    ]

    verdict = decide(gate, "T1", metrics, TestOutcomes(passed=1), Signoffs())

    assert verdict.decision is Decision.FAIL
    assert verdict.reasons == [
        "test_coverage (changed lines): 60.00% is below the minimum 90.00%"
    ]
    assert [m.passed for m in verdict.metrics] == [True, False]

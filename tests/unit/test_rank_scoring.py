"""Stage 4 of ``confgate rank``: the seed's rubric helpers, category scores, overall score."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_confgate.rank.models import (
    CATEGORIES,
    ChangeStats,
    CodeMetrics,
    CrossTest,
    Evidence,
    Issue,
    LlmPreference,
    TestCounts,
    new_issues,
)
from pytest_confgate.rank.scoring import (
    ScoringContext,
    block_reasons,
    boolean_to_score,
    category_scores,
    evaluate,
    inverse_score,
    overall_score,
    ratio_to_score,
)

SEED_WEIGHTS = {"correctness": 0.40, "quality": 0.25, "efficiency": 0.15,
                "completeness": 0.10, "safety": 0.10}


@pytest.mark.parametrize(
    ("value", "baseline", "worst", "expected"),
    [(5, 10, 30, 1.0), (10, 10, 30, 1.0), (20, 10, 30, 0.5), (25, 10, 30, 0.25), (30, 10, 30, 0.0),
     (99, 10, 30, 0.0)],
    ids=["below", "at-baseline", "middle", "three-quarters", "at-worst", "beyond"],
)
def test_inverse_score_is_the_seeds(value: float, baseline: float, worst: float,
                                    expected: float) -> None:
    assert inverse_score(value, baseline, worst) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("actual", "target", "expected"),
                         [(0.4, 0.8, 0.5), (0.8, 0.8, 1.0), (0.95, 0.8, 1.0)],
                         ids=["half", "on-target", "capped"])
def test_ratio_to_score_is_the_seeds(actual: float, target: float, expected: float) -> None:
    assert ratio_to_score(actual, target) == pytest.approx(expected)


def test_boolean_to_score_is_one_or_zero() -> None:
    assert (boolean_to_score(True), boolean_to_score(False)) == (1.0, 0.0)


@pytest.mark.parametrize(
    ("categories", "expected"),
    [((0.95, 0.82, 0.75, 0.95, 1.00), 0.38 + 0.205 + 0.1125 + 0.095 + 0.10),
     ((1.0,) * 5, 1.0), ((0.0,) * 5, 0.0), ((1.0, 0.0, 0.0, 0.0, 0.0), 0.40),
     ((0.5, 0.5, 1.0, 0.0, 1.0), 0.20 + 0.125 + 0.15 + 0.0 + 0.10)],
    ids=["seed-winner-column", "perfect", "zero", "correctness-only", "mixed"],
)
def test_overall_score_is_the_seeds_weighted_sum(categories: tuple[float, ...],
                                                 expected: float) -> None:
    scores = dict(zip(CATEGORIES, categories, strict=True))
    assert overall_score(scores, SEED_WEIGHTS) == pytest.approx(expected, abs=1e-12)


def test_category_scores_average_components_and_multiply_safety_gates() -> None:
    parts = {
        "correctness": {"tests_pass": 1.0, "build": 1.0, "cross_tests": 0.4},
        "quality": {"complexity": 0.5, "function_length": 1.0},
        "efficiency": {},
        "completeness": {"coverage": 0.75},
        "safety": {"no_dangerous_ops": 1.0, "no_secrets": 1.0, "security_clean": 0.5},
    }
    assert category_scores(parts) == pytest.approx(
        {"correctness": 0.8, "quality": 0.75, "efficiency": 0.0, "completeness": 0.75,
         "safety": 0.5}
    )


def issue(rule: str, path: str = "m.py", message: str = "msg", line: int = 1,
          severity: str | None = None) -> Issue:
    return Issue(rule, path, message, line, severity)


def test_new_issues_match_by_rule_path_and_message_not_line() -> None:
    before = (issue("F401", line=3, message="`os`  imported but unused"),)
    after = (issue("F401", line=9, message="`os` imported but unused"),
             issue("F401", line=10, message="`os` imported but unused"), issue("E711"))
    assert new_issues(after, before) == after[1:]
    assert new_issues(after, None) == after
    assert new_issues(None, before) == ()


def clean(sid: str = "a", **changes: object) -> Evidence:
    base: dict[str, object] = {
        "solution_id": sid, "builds": True, "tests": TestCounts(passed=4, duration_s=0.2),
        "coverage": 0.9, "lint": (), "security": (),
        "code": CodeMetrics(files=1, functions=2, avg_complexity=2, max_complexity=3,
                            max_function_length=10, max_loop_depth=1),
    }
    base.update(changes)
    return Evidence(**base)  # type: ignore[arg-type]


CONTEXT = ScoringContext(weights=SEED_WEIGHTS, reference_duration_s=0.2)


def test_a_clean_candidate_scores_one_everywhere() -> None:
    result = evaluate(clean(), CONTEXT)
    assert not result.blocked
    assert result.categories == dict.fromkeys(CATEGORIES, 1.0)
    assert result.score == pytest.approx(1.0)
    assert result.confidence == 1.0


@pytest.mark.parametrize(
    ("changes", "reason"),
    [({"tests": TestCounts(passed=3, failed=1)}, "tests fail: 1 failed, 0 errors, 3 passed"),
     ({"tests": TestCounts()}, "no test ran"),
     ({"tests": None, "tests_problem": "timeout"}, "tests did not run: timeout"),
     ({"builds": False, "build_problem": "x.py does not compile"},
      "build failed: x.py does not compile"),
     ({"lint": (issue("F821", message="undefined name `y`"),)},
      "1 new lint finding: F821 at m.py:1 undefined name `y`"),
     ({"lint": None, "lint_problem": "ruff exited 2"}, "lint did not run: ruff exited 2")],
    ids=["failing-test", "no-tests", "tests-missing", "build", "lint", "lint-missing"],
)
def test_stage_one_failures_block_with_score_zero(changes: dict[str, object], reason: str) -> None:
    result = evaluate(clean("a", **changes), CONTEXT)
    assert result.blocked
    assert result.block_reasons == (reason,)
    assert result.score == 0.0
    assert set(result.categories.values()) == {0.0}


def test_lint_findings_the_baseline_already_has_do_not_block() -> None:
    old = (issue("E501", message="Line too long (120 > 88)"),)
    context = ScoringContext(weights=SEED_WEIGHTS, baseline=clean("base", lint=old))
    assert block_reasons(clean(lint=old), context) == []


def test_new_type_errors_block_only_when_the_type_check_is_configured() -> None:
    typed = clean(type_errors=(issue("arg-type"),))
    assert block_reasons(typed, CONTEXT) == []
    checked = ScoringContext(weights=SEED_WEIGHTS, type_check=True)
    assert block_reasons(typed, checked) == ["1 new type error: arg-type at m.py:1 msg"]


def test_a_new_high_security_finding_zeroes_safety() -> None:
    found = (issue("B602", severity="HIGH"), issue("B404", severity="LOW"))
    result = evaluate(clean(security=found), CONTEXT)
    assert result.categories["safety"] == 0.0
    assert result.components["safety"]["security_clean"] == pytest.approx(1 - 0.25 / 4)
    assert "1 new HIGH security finding: B602 at m.py:1" in [n.text for n in result.weaknesses]


def test_missing_security_evidence_scores_zero_safety_and_lowers_confidence() -> None:
    result = evaluate(clean(security=None, security_problem="bandit missing"), CONTEXT)
    assert result.categories["safety"] == 0.0
    assert result.confidence == pytest.approx(4 / 5)  # build, tests, lint, coverage of 5


def test_quality_components_follow_their_anchors() -> None:
    code = CodeMetrics(files=2, functions=4, avg_complexity=10, max_complexity=20,
                       max_function_length=100, duplication=0.1, files_over_limit=1,
                       max_loop_depth=3)
    result = evaluate(clean(code=code), CONTEXT)
    # complexity: (inverse(10, 5, 15) 0.5 + inverse(20, 10, 30) 0.5) / 2
    assert result.components["quality"] == pytest.approx(
        {"complexity": 0.5, "function_length": 0.5, "duplication": 0.9, "file_size": 0.5}
    )
    assert result.categories["quality"] == pytest.approx(0.6)
    assert result.components["efficiency"]["loop_nesting"] == pytest.approx(0.5)


def test_baseline_deltas_add_regression_coverage_and_change_size_components() -> None:
    baseline = clean("base", tests=TestCounts(passed=5, duration_s=0.2), coverage=0.92)
    changes = ChangeStats(lines_added=500, lines_removed=100, source_files_changed=1)
    context = ScoringContext(weights=SEED_WEIGHTS, baseline=baseline, reference_duration_s=0.2)
    result = evaluate(clean(changes=changes, coverage=0.9), context)
    assert result.components["correctness"]["no_regressions"] == 0.0  # 4 tests < 5
    assert result.components["completeness"] == pytest.approx(
        {"coverage": 1.0, "coverage_kept": 1 - 0.02 / 0.05, "tests_added": 0.0}
    )
    assert result.components["quality"]["change_size"] == pytest.approx(1 - 400 / 1800)


def test_cross_tests_and_llm_preference_join_correctness() -> None:
    result = evaluate(clean(), CONTEXT, CrossTest(passed=3, ran=4), LlmPreference(0.5, 1.0))
    assert result.categories["correctness"] == pytest.approx((1 + 1 + 1 + 0.75 + 0.5) / 5)


def test_runtime_scores_against_the_reference_with_slack() -> None:
    slow = clean(tests=TestCounts(passed=4, duration_s=2.0))
    context = ScoringContext(weights=SEED_WEIGHTS, reference_duration_s=0.5)
    # inverse(2.0, 1.5*0.5+0.5 = 1.25, 4*0.5+2 = 4.0)
    result = evaluate(slow, context)
    assert result.components["efficiency"]["runtime"] == pytest.approx(1 - 0.75 / 2.75)


fractions = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@given(
    passed=st.integers(0, 50), failed=st.integers(0, 5), coverage=st.none() | fractions,
    complexity=st.integers(1, 80), length=st.integers(1, 500), dup=fractions,
    severities=st.lists(st.sampled_from(["LOW", "MEDIUM", "HIGH"]), max_size=6),
    duration=st.floats(min_value=0, max_value=100), cross=st.integers(0, 10),
)
def test_scores_stay_in_the_unit_interval(
    passed: int, failed: int, coverage: float | None, complexity: int, length: int,
    dup: float, severities: list[str], duration: float, cross: int,
) -> None:
    evidence = clean(
        tests=TestCounts(passed=passed, failed=failed, duration_s=duration), coverage=coverage,
        code=CodeMetrics(files=1, functions=1, avg_complexity=complexity,
                         max_complexity=complexity, max_function_length=length, duplication=dup,
                         max_loop_depth=complexity // 10),
        security=tuple(issue(f"B{i}", severity=s) for i, s in enumerate(severities)),
    )
    result = evaluate(evidence, CONTEXT, CrossTest(passed=min(cross, 3), ran=cross))
    assert 0.0 <= result.score <= 1.0
    assert 0.0 <= result.confidence <= 1.0
    assert all(0.0 <= value <= 1.0 for value in result.categories.values())

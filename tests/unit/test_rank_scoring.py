"""Stage 4 of ``confgate rank``: the seed's rubric helpers, category scores, overall score."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_confgate.rank.blocking import block_reasons
from pytest_confgate.rank.models import (
    CATEGORIES,
    ChangeStats,
    CodeMetrics,
    CrossTest,
    Evidence,
    Issue,
    LlmPreference,
    Regression,
    TestCounts,
    new_issues,
)
from pytest_confgate.rank.scoring import (
    ScoringContext,
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


def test_category_scores_average_components_and_multiply_gates() -> None:
    """Correctness is the mean of its checks times cross-test agreement; safety a product."""
    parts = {
        "correctness": {"tests_pass": 1.0, "build": 1.0, "cross_tests": 0.4},
        "quality": {"complexity": 0.5, "function_length": 1.0},
        "efficiency": {},
        "completeness": {"coverage": 0.75},
        "safety": {"no_dangerous_ops": 1.0, "no_secrets": 1.0, "security_clean": 0.5},
    }
    assert category_scores(parts) == pytest.approx(
        {"correctness": 1.0 * 0.4, "quality": 0.75, "efficiency": 0.0, "completeness": 0.75,
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
BASE_OUTCOMES = {"tests/test_a.py::test_one": "passed", "tests/test_a.py::test_two": "passed",
                 "tests/test_a.py::test_broken": "failed"}


def baseline(**changes: object) -> Evidence:
    """A baseline whose own run passed two tests by id (and has one that fails already)."""
    return clean("baseline", outcomes=BASE_OUTCOMES, **changes)


FIXED = {**BASE_OUTCOMES, "tests/test_a.py::test_broken": "passed"}
"""The baseline's tests on a candidate that did the task: the failing one passes too."""


def candidate(sid: str = "a", **changes: object) -> Evidence:
    """A candidate whose regression run passed the baseline's tests (the task's failing one
    included) and that tampers nothing."""
    base: dict[str, object] = {
        "regression": Regression(outcomes=dict(FIXED)), "tamper": (),
        "outcomes": {**BASE_OUTCOMES, "tests/test_new.py::test_added": "passed"},
        "changes": ChangeStats(source_files_changed=1, new_test_files=("tests/test_new.py",)),
    }
    base.update(changes)
    return clean(sid, **base)


BASED = ScoringContext(weights=SEED_WEIGHTS, baseline=baseline(), reference_duration_s=0.2)


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
     ({"lint": None, "lint_problem": "ruff exited 2"}, "lint did not run: ruff exited 2"),
     ({"security": (issue("B602", severity="HIGH"),)},
      "1 new HIGH security finding (max_high_severity: 0): B602 at m.py:1 msg")],
    ids=["failing-test", "no-tests", "tests-missing", "build", "lint-missing", "high-finding"],
)
def test_stage_one_failures_block_with_score_zero(changes: dict[str, object], reason: str) -> None:
    result = evaluate(clean("a", **changes), CONTEXT)
    assert result.blocked
    assert result.block_reasons == (reason,)
    assert result.score == 0.0
    assert set(result.categories.values()) == {0.0}


def test_lint_findings_the_baseline_already_has_do_not_block() -> None:
    old = (issue("E501", message="Line too long (120 > 88)"),)
    context = ScoringContext(weights=SEED_WEIGHTS, baseline=baseline(lint=old))
    assert block_reasons(candidate(lint=old), context) == []


def test_new_type_errors_block_only_when_the_type_check_is_configured() -> None:
    typed = clean(type_errors=(issue("arg-type"),))
    assert block_reasons(typed, CONTEXT) == []
    checked = ScoringContext(weights=SEED_WEIGHTS, type_check=True)
    assert block_reasons(typed, checked) == ["1 new type error: arg-type at m.py:1 msg"]


@pytest.mark.parametrize(("limits", "blocks"), [
    ({}, False), ({"max_lint_violations": 1}, False), ({"max_lint_violations": 0}, True)],
    ids=["no-limit", "within-limit", "over-limit"])
def test_new_lint_findings_block_as_the_gates_max_lint_violations_says(
    limits: dict[str, int], blocks: bool
) -> None:
    # issue 36: rank blocked on any new lint finding, the gate only past max_lint_violations
    found = (issue("F821", message="undefined name `y`"),)
    context = dataclasses.replace(CONTEXT, hard_limits={"max_high_severity": 0, **limits})
    result = evaluate(clean(lint=found), context)
    assert result.blocked is blocks
    if blocks:
        assert result.block_reasons == (
            "1 new lint finding (max_lint_violations: 0): F821 at m.py:1 undefined name `y`",)
    else:
        assert result.components["correctness"]["lint_clean"] == 0.0


def test_a_new_high_security_finding_blocks_as_it_fails_the_gate() -> None:
    # issue 36: a HIGH `shell=True` was only a weakness in rank and failed the gate
    found = (issue("B602", severity="HIGH"), issue("B404", severity="LOW"))
    result = evaluate(clean(security=found), CONTEXT)
    assert result.blocked
    assert result.block_reasons == (
        "1 new HIGH security finding (max_high_severity: 0): B602 at m.py:1 msg",)
    old = evaluate(candidate(security=found[:1]),
                   dataclasses.replace(BASED, baseline=baseline(security=found[:1])))
    assert not old.blocked  # one the baseline already has is not the candidate's


def test_a_new_high_finding_within_the_projects_limit_zeroes_safety() -> None:
    found = (issue("B602", severity="HIGH"), issue("B404", severity="LOW"))
    allowed = dataclasses.replace(CONTEXT, hard_limits={"max_high_severity": 1})
    result = evaluate(clean(security=found), allowed)
    assert not result.blocked
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
    changes = ChangeStats(lines_added=500, lines_removed=100, source_files_changed=1)
    context = ScoringContext(weights=SEED_WEIGHTS, baseline=baseline(coverage=0.92),
                             reference_duration_s=0.2)
    result = evaluate(candidate(changes=changes, coverage=0.9), context)
    assert result.components["correctness"]["no_regressions"] == 1.0
    assert result.components["completeness"] == pytest.approx(
        {"coverage": 1.0, "coverage_kept": 1 - 0.02 / 0.25, "tests_added": 0.0}
    )
    assert result.components["quality"]["change_size"] == pytest.approx(1 - 400 / 1800)


def test_cross_tests_multiply_correctness_and_llm_preference_joins_its_mean() -> None:
    cross = CrossTest(passed=3, ran=4, disagreement=0.5, failing=("b: t.py::x",))
    result = evaluate(clean(), CONTEXT, cross, LlmPreference(0.5, 1.0))
    assert result.components["correctness"]["cross_tests"] == pytest.approx(0.75)
    assert result.categories["correctness"] == pytest.approx((1 + 1 + 1 + 0.5) / 4 * 0.75)
    assert ("Fails 1 of the 4 tests the other candidates added: 1 by b: t.py::x (failed); "
            "counted in full: b passes the baseline's tests where they should pass and has no "
            "tamper finding") in [n.text for n in result.weaknesses]


def test_runtime_scores_against_the_reference_with_slack() -> None:
    slow = clean(tests=TestCounts(passed=4, duration_s=4.0))
    context = ScoringContext(weights=SEED_WEIGHTS, reference_duration_s=0.5)
    # inverse(4.0, 1.5*0.5+2 = 2.75, 4*0.5+10 = 12.0)
    result = evaluate(slow, context)
    assert result.components["efficiency"]["runtime"] == pytest.approx(1 - 1.25 / 9.25)


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


# --- issue 15: evidence an agent cannot game ------------------------------------------------


def finding(rule: str, message: str, path: str = "tests/test_a.py", line: int = 4) -> Issue:
    return Issue(rule, path, message, line)


@pytest.mark.parametrize(
    ("rule", "message"),
    [("test_removed", "test tests/test_a.py::test_two was removed"),
     ("skip_added", "@pytest.mark.skip added: tests/test_a.py::test_two no longer runs as before"),
     ("test_skipped", "test tests/test_a.py::test_two ran on the base (passed); now skipped"),
     ("assertions_weakened", "test tests/test_a.py::test_two makes fewer live checks: 2 -> 0"),
     ("harness_replaced", "adds pytest/__init__.py at the root: `python -m pytest` imports it "
      "instead of the installed pytest, so the test runs report what it says")],
    ids=["deleted", "skip-mark", "skipped-outcome", "weakened", "runner-replaced"],
)
def test_deleting_skipping_or_weakening_a_baseline_test_blocks_and_names_it(
    rule: str, message: str
) -> None:
    # Before issue 15 this candidate ranked first with "All 8 tests pass with 1 new test
    # added": the count was unchanged, and tamper evidence was not looked at.
    result = evaluate(candidate(tamper=(finding(rule, message),)), BASED)
    assert result.blocked
    assert result.score == 0.0
    assert result.block_reasons == (f"{rule}: {message} (tests/test_a.py:4)",)
    assert f"Blocked: {rule}: {message} (tests/test_a.py:4)" in [n.text for n in result.weaknesses]


def test_a_baseline_test_that_does_not_pass_unmodified_blocks_by_test_id() -> None:
    # The candidate changed shared behaviour and rewrote the test to match: its own suite is
    # green, the baseline's test, run as the baseline has it, is not.
    ran = Regression(outcomes={"tests/test_a.py::test_one": "failed",
                               "tests/test_a.py::test_broken": "passed"})
    result = evaluate(candidate(regression=ran), BASED)
    assert result.block_reasons == (
        "2 baseline tests that passed on the baseline do not pass here, run unmodified: "
        "tests/test_a.py::test_one (failed), tests/test_a.py::test_two (missing)",
    )


@pytest.mark.parametrize(
    ("regression", "reason"),
    [(None, "the baseline's tests could not run on it: it was not run"),
     (Regression(problem="pytest did not finish within 300 s"),
      "the baseline's tests could not run on it: pytest did not finish within 300 s")],
    ids=["not-run", "crashed"],
)
def test_a_regression_suite_that_did_not_run_blocks(
    regression: Regression | None, reason: str
) -> None:
    assert block_reasons(candidate(regression=regression), BASED) == [reason]


def test_a_tamper_analysis_that_failed_blocks() -> None:
    broken = candidate(tamper=None, tamper_problem="permission denied")
    assert block_reasons(broken, BASED) == ["tamper analysis failed: permission denied"]


def test_skips_count_as_missing_not_as_tests_kept() -> None:
    # `no_regressions` compared counts, and skipped tests counted.
    skipped = Regression(outcomes={**BASE_OUTCOMES, "tests/test_a.py::test_two": "skipped"})
    result = evaluate(candidate(regression=skipped), BASED)
    assert result.blocked
    assert "tests/test_a.py::test_two (skipped)" in result.block_reasons[0]


def test_tests_pass_counts_only_baseline_tests_run_unmodified_and_new_tests() -> None:
    # Its own run had 5 tests: 2 of the baseline, 1 new, 2 it added to a baseline file.
    own = {**BASE_OUTCOMES, "tests/test_new.py::test_added": "passed",
           "tests/test_a.py::test_mine": "passed", "tests/test_a.py::test_mine_too": "passed"}
    changes = ChangeStats(source_files_changed=1, new_test_files=("tests/test_new.py",),
                          edited_test_files=("tests/test_a.py",))
    result = evaluate(candidate(outcomes=own, tests=TestCounts(passed=5), changes=changes), BASED)
    texts = [n.text for n in result.strengths]
    assert "All 3 tests pass: 2 baseline tests run unmodified and 1 new test" in texts
    assert ("Edits baseline test files (tests/test_a.py): their baseline tests ran from the "
            "baseline, unmodified") in [n.text for n in result.weaknesses]
    # issue 28: the tests it added to the baseline file (by id) are new tests too
    added = dataclasses.replace(changes, new_test_ids=("tests/test_a.py::test_mine",
                                                       "tests/test_a.py::test_mine_too"))
    result = evaluate(candidate(outcomes=own, tests=TestCounts(passed=5), changes=added), BASED)
    assert "All 5 tests pass: 2 baseline tests run unmodified and 3 new tests" in [
        n.text for n in result.strengths]
    assert ("Edits baseline test files (tests/test_a.py): their baseline tests ran from the "
            "baseline, unmodified; the 2 tests it added there count as new tests") in [
        n.text for n in result.weaknesses]
    only_there = dataclasses.replace(added, new_test_files=())
    own_there = {k: v for k, v in own.items() if "test_new" not in k}
    result = evaluate(candidate(outcomes=own_there, changes=only_there), BASED)
    assert result.components["completeness"]["tests_added"] == 1.0


def test_tests_added_to_a_baseline_test_file_are_not_new_tests() -> None:
    changes = ChangeStats(source_files_changed=1, edited_test_files=("tests/test_a.py",))
    own = {**BASE_OUTCOMES, "tests/test_a.py::test_mine": "passed"}
    result = evaluate(candidate(outcomes=own, changes=changes), BASED)
    assert result.components["completeness"]["tests_added"] == 0.0


def test_added_suppressions_are_named_and_cost_a_little() -> None:
    added = (finding("suppression_added", "adds `# noqa`: what it silences is no longer "
                     "reported", "shop/pricing.py", 7),)
    result = evaluate(candidate(tamper=added), BASED)
    assert not result.blocked
    assert result.components["safety"]["no_suppressions"] == pytest.approx(0.75)
    assert result.multiplier == 1.0  # nothing it hid was dangerous
    assert ("suppression_added: adds `# noqa`: what it silences is no longer reported "
            "(shop/pricing.py:7)") in [n.text for n in result.weaknesses]


def test_a_blocked_candidate_still_names_its_suppressions() -> None:
    tamper = (finding("test_removed", "test tests/test_a.py::test_two was removed"),
              finding("suppression_added", "adds `# nosec`: what it silences is no longer "
                      "reported", "shop/pricing.py", 9))
    result = evaluate(candidate(tamper=tamper), BASED)
    assert result.blocked
    assert any(n.text.startswith("suppression_added: adds `# nosec`") for n in result.weaknesses)


@pytest.mark.parametrize(
    "changes",
    [{"dangerous": (Issue("dynamic-code", "shop/calc.py", "eval() runs code that is not a "
                          "literal: eval(text)", 3, "HIGH"),)},
     {"security": (Issue("B307", "shop/calc.py", "Use of possibly insecure function - consider "
                         "using safer ast.literal_eval. (hidden by a `# nosec` this candidate "
                         "added)", 3, "HIGH"),)},
     {"tamper": (finding("tool_ignore_added", "ruff: S307 added to ignore", "ruff.toml", 2),)}],
    ids=["dangerous-operation", "finding-behind-an-added-nosec", "tool-config"],
)
def test_dangerous_operations_and_changed_judges_zero_safety_and_halve_the_score(
    changes: dict[str, object]
) -> None:
    # `eval(...)  # nosec` had a perfect safety score; `os.system("rm -rf /")` too. (A HIGH
    # finding blocks under the gate's default max_high_severity: here the project allows one.)
    based = dataclasses.replace(BASED, hard_limits={"max_high_severity": 1})
    clean_one = evaluate(candidate(), based)
    flagged = evaluate(candidate(**changes), based)
    assert flagged.components["safety"]["no_dangerous_ops"] == 0.0
    assert flagged.categories["safety"] == 0.0
    assert flagged.multiplier == 0.5
    assert flagged.score == pytest.approx(0.5 * 0.9 * clean_one.score)
    assert flagged.score < clean_one.score - 0.3


def test_the_safety_gate_holds_whatever_the_weights() -> None:
    low_safety = {**SEED_WEIGHTS, "safety": 0.05, "correctness": 0.45}
    context = ScoringContext(weights=low_safety, baseline=baseline(), reference_duration_s=0.2)
    op = Issue("shell", "shop/x.py", "os.system runs a shell command: os.system('rm -rf /')", 3,
               "HIGH")
    assert evaluate(candidate(dangerous=(op,)), context).score <= 0.5


def test_failing_one_test_another_candidate_added_scores_clearly_below() -> None:
    # Scores bunched near the top: one of four cross-tests failed cost 0.025.
    clean_one = evaluate(candidate(), BASED, CrossTest(passed=4, ran=4))
    wrong = evaluate(candidate(), BASED,
                     CrossTest(passed=3, ran=4, disagreement=1.0, failing=("b: t.py::edge",)))
    assert clean_one.score - wrong.score >= 0.15


@given(disagreement=st.floats(min_value=0.0, max_value=5.0))
def test_cross_test_disagreement_lowers_correctness_continuously(disagreement: float) -> None:
    step = 0.01
    a = evaluate(candidate(), BASED, CrossTest(4, 4, disagreement)).score
    b = evaluate(candidate(), BASED, CrossTest(4, 4, disagreement + step)).score
    assert 0.0 <= a - b <= 0.4 * step / 2.0 + 1e-12


def test_one_uncovered_line_in_a_small_project_is_no_cliff() -> None:
    # 20 of 21 lines covered against a fully covered baseline set coverage_kept to 0.05.
    context = ScoringContext(weights=SEED_WEIGHTS, baseline=baseline(coverage=1.0),
                             reference_duration_s=0.2)
    result = evaluate(candidate(coverage=20 / 21), context)
    assert result.components["completeness"]["coverage_kept"] >= 0.8


def test_making_the_baseline_failing_test_pass_by_editing_it_blocks() -> None:
    # issue 28: the reproducer failed on the baseline, so it was free to edit; the candidate
    # rewrote it to expect the buggy output and was the winner at confidence 1.00
    edited = ChangeStats(source_files_changed=1, edited_test_files=("tests/test_a.py",))
    own = {**BASE_OUTCOMES, "tests/test_a.py::test_broken": "passed"}
    result = evaluate(candidate(outcomes=own, changes=edited,
                                regression=Regression(outcomes=dict(BASE_OUTCOMES))), BASED)
    assert result.blocked
    assert result.block_reasons == (
        "it makes the baseline's failing test pass only by editing it: run as the baseline "
        "has it: tests/test_a.py::test_broken (failed)",)
    fixed = Regression(outcomes={**BASE_OUTCOMES, "tests/test_a.py::test_broken": "passed"})
    assert not evaluate(candidate(outcomes=own, changes=edited, regression=fixed), BASED).blocked


@pytest.mark.parametrize("outcome", ["failed", "skipped", "missing"])
def test_the_baseline_failing_test_still_failing_blocks_whatever_was_edited(
    outcome: str
) -> None:
    # issue 36: the candidate left the reproducer's file alone and edited the data it reads
    # (or a helper, a conftest): its own run passed, the baseline's machinery says it fails
    still = {**BASE_OUTCOMES, "tests/test_a.py::test_broken": outcome}
    if outcome == "missing":
        del still["tests/test_a.py::test_broken"]
    own = {**BASE_OUTCOMES, "tests/test_a.py::test_broken": "passed"}
    edits = ChangeStats(source_files_changed=0, files_changed=1)  # tests/data/cases.json
    result = evaluate(candidate(outcomes=own, changes=edits,
                                regression=Regression(outcomes=still)), BASED)
    assert result.blocked
    assert result.block_reasons == (
        "the task is not done: the baseline's failing test still fails here, run unmodified "
        "under the baseline's conftests, settings, helpers and data: "
        f"tests/test_a.py::test_broken ({outcome})",)


def test_a_new_test_that_fails_without_its_xfail_mark_counts_as_failing() -> None:
    hidden = candidate(unmarked={"tests/test_new.py::test_later": "failed",
                                 "tests/test_new.py::test_fine": "passed"})
    result = evaluate(hidden, BASED)
    assert result.block_reasons == (
        "1 new test marked xfail or skip fails without the mark, and counts as failing: "
        "tests/test_new.py::test_later (failed)",)
    assert not evaluate(candidate(unmarked={"tests/test_new.py::test_fine": "passed"}),
                        BASED).blocked


@pytest.mark.parametrize("rule", ["patched_under_test", "special_cased_input", "constant_dunder"])
def test_a_reward_hacking_pattern_zeroes_correctness_and_halves_the_score(rule: str) -> None:
    # issue 28: a test that monkeypatches the code under test raised nothing
    found = (Issue(rule, "tests/test_x.py", "checks a stand-in", 7),)
    gamed = evaluate(candidate(tamper=found), BASED)
    assert gamed.components["correctness"]["no_gaming"] == 0.0
    assert gamed.categories["correctness"] == 0.0
    assert gamed.multiplier == 0.5  # and it is a finding about its judges: the safety gate
    assert "no_gaming" not in evaluate(candidate(), BASED).components["correctness"]

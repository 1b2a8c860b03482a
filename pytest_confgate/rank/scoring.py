"""Stage 4 (pure): evidence -> category scores, overall score, evaluation confidence.

The rubric helpers (``boolean_to_score``, ``ratio_to_score``, ``inverse_score``) turn
each measured criterion into a component in [0, 1]; a category is the mean of its available
components, and the overall score is the weighted sum (``calculateOverallScore``)
times the safety gate. Components and their anchors (value at or under the first -> 1.0, at
or over the second -> 0.0); the calibration behind them is in ``docs/ranking.md``:

- correctness: tests pass ratio, build, lint clean (no *new* finding), type check (when
  configured), no regressions (every baseline test that passed on the baseline passes here,
  by id) and LLM preference (stage 3, when configured), averaged; then multiplied by
  cross-tests inverse(failures of the other candidates' new tests, each weighted by its
  writer's standing, 0, 2) and by ``no_gaming`` (0 with a reward-hacking pattern, issue 28);
- quality: complexity = mean(inverse(avg, 5, 15), inverse(max, 10, 30)) (< 10 per
  function), function length inverse(max, 50, 150) (< 50 lines), duplication
  1 - share, file size (share of files <= 500 lines), size of the change
  inverse(lines changed, 200, 2000) (baseline only), LLM preference;
- efficiency: test run time inverse(t, 1.5 r + 2 s, 4 r + 10 s) where r is the baseline's
  (else the fastest candidate's) time (the seconds absorb start-up noise), loop nesting
  inverse(max depth, 2, 4);
- completeness: coverage ratio_to_score(coverage, 0.80), coverage kept inverse(drop, 0, 0.25)
  and tests added (baseline only, when source changed: a new test file's tests ran);
- safety: no dangerous operation (no new HIGH finding, no operation ``rank.dangerous`` finds,
  no tamper finding in test or tool configuration) x no hard-coded secret (bandit B105-B107)
  x inverse(new MEDIUM + 0.25 new LOW, 0, 4) x inverse(suppressions added, 0, 4); security
  evidence that is missing scores 0.

The safety gate: a dangerous operation or a secret halves the overall score whatever the
weights (``SAFETY_GATE``), so it stays clearly below a clean solution even after feedback
has lowered the safety weight.

A candidate failing stage 1 (``blocking``) scores 0 everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping

from pytest_confgate.rank.blocking import (
    BLOCKING_TAMPER,
    block_reasons,
    regression_failures,
    task_failures,
)
from pytest_confgate.rank.models import (
    CATEGORIES,
    CrossTest,
    Evaluation,
    Evidence,
    LlmPreference,
    ScoringContext,
    new_issues,
)
from pytest_confgate.rank.notes import notes_for

COVERAGE_TARGET = 0.80
COVERAGE_DROP_WORST = 0.25
"""A drop of a quarter of the coverage scores 0; one line of a 21-line project costs 0.19."""
CROSS_TEST_WORST = 2.0
"""Weighted failures of the other candidates' tests at which ``cross_tests`` reaches 0."""
SUPPRESSIONS_WORST = 4
SAFETY_GATE = 0.5
"""What is left of the overall score with a dangerous operation or a secret."""
SECRET_RULES = frozenset({"B105", "B106", "B107"})
SUPPRESSION_ADDED = "suppression_added"


def boolean_to_score(value: bool) -> float:
    """Seed ``booleanToScore``."""
    return 1.0 if value else 0.0


def ratio_to_score(actual: float, target: float) -> float:
    """Seed ``ratioToScore``: ``min(1, actual / target)``."""
    return min(1.0, actual / target)


def inverse_score(value: float, baseline: float, worst: float) -> float:
    """Seed ``inverseScore`` (lower is better): 1 at or under ``baseline``, 0 at ``worst``."""
    if value <= baseline:
        return 1.0
    if value >= worst:
        return 0.0
    return 1.0 - (value - baseline) / (worst - baseline)


def overall_score(categories: Mapping[str, float], weights: Mapping[str, float]) -> float:
    """Seed ``calculateOverallScore``: the weighted sum of the five category scores."""
    return sum(categories[name] * weights[name] for name in CATEGORIES)


def components(
    evidence: Evidence,
    context: ScoringContext,
    cross: CrossTest | None = None,
    llm: LlmPreference | None = None,
) -> dict[str, dict[str, float]]:
    """Every measured criterion in [0, 1], grouped by category (see the module docstring)."""
    return {
        "correctness": _correctness(evidence, context, cross, llm),
        "quality": _quality(evidence, context, llm),
        "efficiency": _efficiency(evidence, context),
        "completeness": _completeness(evidence, context),
        "safety": _safety(evidence, context),
    }


def category_scores(parts: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Each category's score: the mean of its components, safety the product of its gates.

    A category with no measurable component scores 0.0 (conservative, as confidence scores are).
    """
    scores: dict[str, float] = {}
    for name in CATEGORIES:
        values = parts.get(name) or {}
        if not values:
            scores[name] = 0.0
        elif name == "safety":
            scores[name] = safety_score(values)
        elif name == "correctness":
            scores[name] = correctness_score(values)
        else:
            scores[name] = sum(values.values()) / len(values)
    return scores


def correctness_score(parts: Mapping[str, float]) -> float:
    """The mean of the checks, times agreement with the other candidates' tests (failing a
    test that a candidate in good standing wrote is a concrete counterexample, not one vote
    among six), times ``no_gaming`` (issue 28: a test that checks a stand-in, an input the
    code special-cases, a constant ``__eq__`` say its passing tests prove nothing)."""
    checks = [value for name, value in parts.items() if name not in _MULTIPLIERS]
    mean = sum(checks) / len(checks) if checks else 0.0
    return mean * parts.get("cross_tests", 1.0) * parts.get("no_gaming", 1.0)


_MULTIPLIERS = frozenset({"cross_tests", "no_gaming"})
GAMING_RULES = frozenset({
    "patched_under_test", "special_cased_input", "constant_dunder", "gate_escape",
    "gate_report_written", "harness_patched",
})
"""The static reward-hacking patterns of ``collect.tamper`` (issue 27): each makes the
candidate's own passing tests worthless as evidence of correctness."""


def safety_gate(parts: Mapping[str, float]) -> float:
    """1.0, or ``SAFETY_GATE`` when a dangerous operation or a hard-coded secret was found."""
    if not parts:
        return 1.0
    flagged = parts.get("no_dangerous_ops", 1.0) * parts.get("no_secrets", 1.0)
    return SAFETY_GATE + (1.0 - SAFETY_GATE) * flagged


def evaluation_confidence(
    evidence: Evidence, context: ScoringContext, llm: LlmPreference | None, blocked: bool
) -> float:
    """How much of the expected evidence exists: measured sources / expected sources.

    Stage-1 sources (build, tests, lint, type check when configured) always count; an
    unblocked candidate adds coverage, security and, when configured, the LLM assessment,
    which counts by its consistency (verdicts that flip with the order lower it).
    """
    sources = [1.0, _has(evidence.tests), _has(evidence.lint)]
    if context.type_check:
        sources.append(_has(evidence.type_errors))
    if context.baseline is not None:
        sources += [_has(regression_failures(evidence, context.baseline)),
                    _has(evidence.tamper)]
    if not blocked:
        sources += [_has(evidence.coverage), _has(evidence.security)]
        if context.llm_expected:
            sources.append(llm.consistency if llm is not None else 0.0)
    return sum(sources) / len(sources)


def evaluate(
    evidence: Evidence,
    context: ScoringContext,
    cross: CrossTest | None = None,
    llm: LlmPreference | None = None,
) -> Evaluation:
    """Stages 1 and 4 for one candidate: blocked -> score 0; else categories and overall."""
    reasons = block_reasons(evidence, context)
    blocked = bool(reasons)
    parts = components(evidence, context, cross, llm)
    categories = dict.fromkeys(CATEGORIES, 0.0) if blocked else category_scores(parts)
    multiplier = 0.0 if blocked else safety_gate(parts["safety"])
    score = multiplier * overall_score(categories, context.weights)
    strengths, weaknesses = notes_for(evidence, context.baseline, parts, reasons, cross)
    return Evaluation(
        solution_id=evidence.solution_id,
        blocked=blocked,
        block_reasons=tuple(reasons),
        categories=categories,
        components=parts,
        score=score,
        confidence=evaluation_confidence(evidence, context, llm, blocked),
        strengths=strengths,
        weaknesses=weaknesses,
        multiplier=multiplier,
        independent=independent_evidence(evidence, context, cross),
    )


def independent_evidence(
    evidence: Evidence, context: ScoringContext, cross: CrossTest | None
) -> tuple[str, ...]:
    """Which tests it did not write vouch for it (issue 36): ``task`` when the baseline has
    failing tests and every one passes on it, run unmodified under the baseline's machinery;
    ``cross`` when other candidates' tests, from writers whose tests count, ran on it. Its own
    tests and the baseline's passing tests say nothing about whether it did the task."""
    kinds: list[str] = []
    base, regression = context.baseline, evidence.regression
    if (base is not None and base.outcomes is not None and regression is not None
            and regression.problem is None
            and any(o in ("failed", "error") for o in base.outcomes.values())
            and not task_failures(base.outcomes, regression.outcomes)):
        kinds.append("task")
    if cross is not None and cross.independent:
        kinds.append("cross")
    return tuple(kinds)


def _correctness(
    evidence: Evidence, context: ScoringContext, cross: CrossTest | None, llm: LlmPreference | None
) -> dict[str, float]:
    base = context.baseline
    tests = evidence.tests
    parts = {
        "tests_pass": tests.passed / tests.ran if tests and tests.ran else 0.0,
        "build": boolean_to_score(evidence.builds),
        "lint_clean": boolean_to_score(
            evidence.lint is not None and not new_issues(evidence.lint, base.lint if base else None)
        ),
    }
    if context.type_check:
        fresh = new_issues(evidence.type_errors, base.type_errors if base else None)
        parts["type_check"] = boolean_to_score(evidence.type_errors is not None and not fresh)
    if base is not None:
        failures = regression_failures(evidence, base)
        parts["no_regressions"] = boolean_to_score(failures is not None and not failures)
    if llm is not None:
        parts["llm_preference"] = llm.preference
    if cross is not None and cross.ran:
        parts["cross_tests"] = inverse_score(cross.disagreement, 0.0, CROSS_TEST_WORST)
    if any(finding.rule in GAMING_RULES for finding in evidence.tamper or ()):
        parts["no_gaming"] = 0.0
    return parts


def _quality(
    evidence: Evidence, context: ScoringContext, llm: LlmPreference | None
) -> dict[str, float]:
    parts: dict[str, float] = {}
    code = evidence.code
    if code is not None and code.files:
        if code.functions:
            average = inverse_score(code.avg_complexity, 5, 15)
            parts["complexity"] = (average + inverse_score(code.max_complexity, 10, 30)) / 2
            parts["function_length"] = inverse_score(code.max_function_length, 50, 150)
        parts["duplication"] = 1.0 - code.duplication
        parts["file_size"] = 1.0 - code.files_over_limit / code.files
    if context.baseline is not None and evidence.changes is not None:
        parts["change_size"] = inverse_score(evidence.changes.lines_changed, 200, 2000)
    if llm is not None:
        parts["llm_preference"] = llm.preference
    return parts


def _efficiency(evidence: Evidence, context: ScoringContext) -> dict[str, float]:
    parts: dict[str, float] = {}
    reference = context.reference_duration_s
    if evidence.tests is not None and reference is not None:
        parts["runtime"] = inverse_score(
            evidence.tests.duration_s, 1.5 * reference + 2.0, 4 * reference + 10.0
        )
    if evidence.code is not None and evidence.code.functions:
        parts["loop_nesting"] = inverse_score(evidence.code.max_loop_depth, 2, 4)
    return parts


def _completeness(evidence: Evidence, context: ScoringContext) -> dict[str, float]:
    base = context.baseline
    coverage = evidence.coverage
    parts = {"coverage": ratio_to_score(coverage, COVERAGE_TARGET) if coverage is not None else 0.0}
    if base is not None and base.coverage is not None:
        drop = base.coverage - coverage if coverage is not None else 1.0
        parts["coverage_kept"] = inverse_score(drop, 0.0, COVERAGE_DROP_WORST)
    changes = evidence.changes
    if base is not None and changes is not None and changes.source_files_changed:
        parts["tests_added"] = boolean_to_score(evidence.new_tests()[1] > 0)
    return parts


def _safety(evidence: Evidence, context: ScoringContext) -> dict[str, float]:
    tamper = evidence.tamper or ()
    suppressions = sum(1 for finding in tamper if finding.rule == SUPPRESSION_ADDED)
    judged = [f for f in tamper if f.rule not in BLOCKING_TAMPER and f.rule != SUPPRESSION_ADDED]
    if evidence.security is None:
        return {"no_dangerous_ops": 0.0, "no_secrets": 0.0, "security_clean": 0.0}
    base = context.baseline
    fresh = new_issues(evidence.security, base.security if base else None)
    medium = sum(1 for issue in fresh if issue.severity == "MEDIUM")
    low = sum(1 for issue in fresh if issue.severity == "LOW")
    high = any(issue.severity == "HIGH" for issue in fresh)
    parts = {
        "no_dangerous_ops": boolean_to_score(not (high or evidence.dangerous or judged)),
        "no_secrets": boolean_to_score(all(issue.rule not in SECRET_RULES for issue in fresh)),
        "security_clean": inverse_score(medium + 0.25 * low, 0.0, 4.0),
    }
    if evidence.tamper is not None:
        parts["no_suppressions"] = inverse_score(suppressions, 0, SUPPRESSIONS_WORST)
    return parts


def safety_score(parts: Mapping[str, float]) -> float:
    """Safety is a product of its gates: one dangerous operation makes a change unsafe."""
    score = 1.0
    for value in parts.values():
        score *= value
    return score


def _has(value: object) -> float:
    return 1.0 if value is not None else 0.0

"""Stage 4 (pure): evidence -> category scores, overall score, evaluation confidence.

The seed's rubric helpers (``boolean_to_score``, ``ratio_to_score``, ``inverse_score``) turn
each measured criterion into a component in [0, 1]; a category is the mean of its available
components, and the overall score is the seed's weighted sum (``calculateOverallScore``).
Components and their anchors (value at or under the first -> 1.0, at or over the second -> 0.0):

- correctness: tests pass ratio, build, lint clean (no *new* finding), type check (when
  configured), no regressions (test count >= the baseline's), cross-tests (share of the other
  candidates' new tests this one passes), LLM preference (stage 3, when configured);
- quality: complexity = mean(inverse(avg, 5, 15), inverse(max, 10, 30)) (seed: < 10 per
  function), function length inverse(max, 50, 150) (seed: < 50 lines), duplication
  1 - share, file size (share of files <= 500 lines), size of the change
  inverse(lines changed, 200, 2000) (baseline only), LLM preference;
- efficiency: test run time inverse(t, 1.5 r + 0.5 s, 4 r + 2 s) where r is the baseline's
  (else the fastest candidate's) time, loop nesting inverse(max depth, 2, 4);
- completeness: coverage ratio_to_score(coverage, 0.80), coverage kept inverse(drop, 0, 0.05)
  and tests added (baseline only, when source changed);
- safety: no new HIGH finding x no hard-coded secret (bandit B105-B107) x
  inverse(new MEDIUM + 0.25 new LOW, 0, 4); security evidence that is missing scores 0.

A candidate failing stage 1 (build, tests, lint, type check) scores 0 in every category.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pytest_confgate.rank.models import (
    CATEGORIES,
    CrossTest,
    Evaluation,
    Evidence,
    Issue,
    LlmPreference,
    new_issues,
)
from pytest_confgate.rank.notes import notes_for

COVERAGE_TARGET = 0.80
SECRET_RULES = frozenset({"B105", "B106", "B107"})


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


@dataclass(frozen=True)
class ScoringContext:
    """What every candidate is measured against: weights, baseline, configured checks."""

    weights: Mapping[str, float]
    baseline: Evidence | None = None
    type_check: bool = False
    llm_expected: bool = False
    reference_duration_s: float | None = None
    """The baseline's test time, else the fastest unblocked candidate's."""


def block_reasons(evidence: Evidence, context: ScoringContext) -> list[str]:
    """Stage 1 (blocking): why this candidate scores 0, in the seed's order of checks."""
    reasons: list[str] = []
    base = context.baseline
    if context.type_check:
        if evidence.type_errors is None:
            reasons.append(f"type check did not run: {evidence.type_problem or 'no result'}")
        else:
            fresh = new_issues(evidence.type_errors, base.type_errors if base else None)
            if fresh:
                reasons.append(f"{_count(len(fresh), 'new type error')}: {_first(fresh)}")
    if evidence.lint is None:
        reasons.append(f"lint did not run: {evidence.lint_problem or 'no result'}")
    else:
        fresh = new_issues(evidence.lint, base.lint if base else None)
        if fresh:
            reasons.append(f"{_count(len(fresh), 'new lint finding')}: {_first(fresh)}")
    if not evidence.builds:
        reasons.append(f"build failed: {evidence.build_problem or 'unknown error'}")
    tests = evidence.tests
    if tests is None:
        reasons.append(f"tests did not run: {evidence.tests_problem or 'no result'}")
    elif tests.ran == 0:
        reasons.append("no test ran")
    elif tests.failed or tests.errors:
        reasons.append(
            f"tests fail: {tests.failed} failed, {tests.errors} errors, {tests.passed} passed"
        )
    return reasons


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

    A category with no measurable component scores 0.0 (conservative, as in SPEC 5).
    """
    scores: dict[str, float] = {}
    for name in CATEGORIES:
        values = parts.get(name) or {}
        if not values:
            scores[name] = 0.0
        elif name == "safety":
            scores[name] = safety_score(values)
        else:
            scores[name] = sum(values.values()) / len(values)
    return scores


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
    score = 0.0 if blocked else overall_score(categories, context.weights)
    strengths, weaknesses = notes_for(evidence, context.baseline, parts, reasons)
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
    )


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
    if base is not None and base.tests is not None:
        parts["no_regressions"] = boolean_to_score(
            tests is not None and tests.total >= base.tests.total
        )
    if cross is not None and cross.ran:
        parts["cross_tests"] = cross.passed / cross.ran
    if llm is not None:
        parts["llm_preference"] = llm.preference
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
            evidence.tests.duration_s, 1.5 * reference + 0.5, 4 * reference + 2.0
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
        parts["coverage_kept"] = inverse_score(drop, 0.0, 0.05)
    changes = evidence.changes
    if base is not None and changes is not None and changes.source_files_changed:
        more = evidence.tests is not None and base.tests is not None and (
            evidence.tests.total > base.tests.total
        )
        parts["tests_added"] = boolean_to_score(bool(changes.new_test_files) or more)
    return parts


def _safety(evidence: Evidence, context: ScoringContext) -> dict[str, float]:
    if evidence.security is None:
        return {"no_dangerous_ops": 0.0, "no_secrets": 0.0, "security_clean": 0.0}
    base = context.baseline
    fresh = new_issues(evidence.security, base.security if base else None)
    medium = sum(1 for issue in fresh if issue.severity == "MEDIUM")
    low = sum(1 for issue in fresh if issue.severity == "LOW")
    return {
        "no_dangerous_ops": boolean_to_score(all(issue.severity != "HIGH" for issue in fresh)),
        "no_secrets": boolean_to_score(all(issue.rule not in SECRET_RULES for issue in fresh)),
        "security_clean": inverse_score(medium + 0.25 * low, 0.0, 4.0),
    }


def safety_score(parts: Mapping[str, float]) -> float:
    """Safety is a product of its gates: one dangerous operation makes a change unsafe."""
    return parts["no_dangerous_ops"] * parts["no_secrets"] * parts["security_clean"]


def _has(value: object) -> float:
    return 1.0 if value is not None else 0.0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _first(issues: tuple[Issue, ...]) -> str:
    issue = issues[0]
    more = f" (+{len(issues) - 1} more)" if len(issues) > 1 else ""
    return f"{issue.rule} at {issue.path}:{issue.line} {issue.message}{more}"

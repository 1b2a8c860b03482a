"""Stage 1 (pure): why a candidate is blocked, scores 0 and can never win.

The seed's checks (type check when configured, lint, build, tests) and, with a baseline,
issue 15's: every baseline test that passed on the baseline passes on the candidate when run
unmodified (by test id: failed, error, skipped and missing all block), and no baseline test
was deleted, skipped or weakened (``collect.tamper``'s findings). Evidence that is missing
blocks too: a regression suite or a tamper analysis that did not run is never a pass.
"""

from __future__ import annotations

from pytest_confgate.rank.models import Evidence, Issue, ScoringContext, new_issues

BLOCKING_TAMPER = frozenset({
    "test_removed", "parametrize_case_removed", "skip_added", "test_skipped",
    "assertions_weakened",
})
"""Tamper findings that change the judge itself: tests deleted, skipped or weakened."""
_LISTED = 5


def block_reasons(evidence: Evidence, context: ScoringContext) -> list[str]:
    """Stage 1 (blocking): why this candidate scores 0, in the seed's order of checks."""
    reasons: list[str] = []
    base = context.baseline
    if context.type_check:
        reasons += _new_findings("type check", "new type error", evidence.type_errors,
                                 base.type_errors if base else None, evidence.type_problem)
    reasons += _new_findings("lint", "new lint finding", evidence.lint,
                             base.lint if base else None, evidence.lint_problem)
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
    if base is not None:
        reasons += _regression_reasons(evidence, base)
        reasons += _tamper_reasons(evidence)
    return reasons


def _new_findings(
    check: str, noun: str, found: tuple[Issue, ...] | None, before: tuple[Issue, ...] | None,
    problem: str | None,
) -> list[str]:
    """A reason when ``check`` did not run or found what the baseline does not have."""
    if found is None:
        return [f"{check} did not run: {problem or 'no result'}"]
    fresh = new_issues(found, before)
    return [f"{_count(len(fresh), noun)}: {_first(fresh)}"] if fresh else []


def regression_failures(evidence: Evidence, baseline: Evidence) -> list[tuple[str, str]] | None:
    """Baseline tests (by id) that passed there and not on ``evidence``; None: not measured."""
    if baseline.outcomes is None or evidence.regression is None:
        return None
    if evidence.regression.problem is not None:
        return None
    return evidence.regression.failures(baseline.outcomes)


def _regression_reasons(evidence: Evidence, base: Evidence) -> list[str]:
    if base.outcomes is None:
        return ["the baseline's own test run gave no outcomes by test id, so regressions "
                "cannot be checked"]
    regression = evidence.regression
    if regression is None or regression.problem is not None:
        why = regression.problem if regression is not None else "it was not run"
        return [f"the baseline's tests could not run on it: {why}"]
    failures = regression.failures(base.outcomes)
    if not failures:
        return []
    listed = ", ".join(f"{test} ({outcome})" for test, outcome in failures[:_LISTED])
    more = f" (+{len(failures) - _LISTED} more)" if len(failures) > _LISTED else ""
    noun, verb = (("1 baseline test", "does") if len(failures) == 1
                  else (f"{len(failures)} baseline tests", "do"))
    return [f"{noun} that passed on the baseline {verb} not pass here, run unmodified: "
            f"{listed}{more}"]


def _tamper_reasons(evidence: Evidence) -> list[str]:
    if evidence.tamper is None:
        return [f"tamper analysis failed: {evidence.tamper_problem or 'no result'}"]
    found = [f for f in evidence.tamper if f.rule in BLOCKING_TAMPER]
    reasons = [f"{f.rule}: {f.message} ({f.path}:{f.line})" for f in found[:_LISTED]]
    if len(found) > _LISTED:
        reasons.append(f"(+{len(found) - _LISTED} more tests deleted, skipped or weakened)")
    return reasons


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _first(issues: tuple[Issue, ...]) -> str:
    issue = issues[0]
    more = f" (+{len(issues) - 1} more)" if len(issues) > 1 else ""
    return f"{issue.rule} at {issue.path}:{issue.line} {issue.message}{more}"

"""Stage 1 (pure): why a candidate is blocked, scores 0 and can never win.

The checks (type check when configured, lint, build, tests) and, with a baseline,
issue 15's: every baseline test that passed on the baseline passes on the candidate when run
unmodified (by test id: failed, error, skipped and missing all block), and no baseline test
was deleted, skipped or weakened (``collect.tamper``'s findings). The baseline's failing
tests are the task (issue 28): run as the baseline has them they must pass, so a candidate that
makes one pass only by editing it (to expect the buggy output) is blocked with the reason.
Evidence that is missing blocks too: a regression suite or a tamper analysis that did not run
is never a pass.

Issue 36: the baseline's failing tests define the task. Each runs unmodified, under the
baseline's machinery (its conftests, settings, helpers and data: ``regression``), on every
candidate; one that still fails, is skipped, deselected or not collected there blocks, whatever
else the candidate edited. Lint and security findings block as the gate's hard conditions
decide (``config.metrics.breaks_limit`` over ``ScoringContext.hard_limits``, one rule for
both): the new findings of each kind count against ``max_lint_violations`` (off unless
configured) and, for HIGH security findings, ``max_high_severity`` (0 unless configured).
"""

from __future__ import annotations

from collections.abc import Mapping

from pytest_confgate.config.metrics import breaks_limit
from pytest_confgate.rank.models import PASSING, Evidence, Issue, ScoringContext, new_issues

BLOCKING_TAMPER = frozenset({
    "test_removed", "parametrize_case_removed", "skip_added", "test_skipped",
    "assertions_weakened", "harness_replaced",
})
"""Tamper findings that change the judge itself: tests deleted, skipped or weakened, or the
test runner replaced by a module of the candidate's (its runs report what that says)."""
_LISTED = 5
_FAILED = frozenset({"failed", "error"})


def block_reasons(evidence: Evidence, context: ScoringContext) -> list[str]:
    """Stage 1 (blocking): why this candidate scores 0, in the order of checks."""
    reasons: list[str] = []
    base = context.baseline
    if context.type_check:
        reasons += _new_findings("type check", "new type error", evidence.type_errors,
                                 base.type_errors if base else None, evidence.type_problem)
    limits = context.hard_limits
    if evidence.lint is None:
        reasons.append(f"lint did not run: {evidence.lint_problem or 'no result'}")
    else:
        reasons += _over_limit("new lint finding", new_issues(evidence.lint, base.lint if base
                                                              else None),
                               "max_lint_violations", limits.get("max_lint_violations"))
    if evidence.security is not None:  # missing: safety scores 0 (``scoring``)
        fresh = new_issues(evidence.security, base.security if base else None)
        reasons += _over_limit("new HIGH security finding",
                               tuple(i for i in fresh if i.severity == "HIGH"),
                               "max_high_severity", limits.get("max_high_severity"))
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
    hidden = sorted(f"{t} ({o})" for t, o in (evidence.unmarked or {}).items()
                    if o in ("failed", "error"))
    if hidden:
        one = len(hidden) == 1
        reasons.append(f"{_count(len(hidden), 'new test')} marked xfail or skip fail"
                       f"{'s' if one else ''} without the mark, and count{'s' if one else ''} "
                       f"as failing: {', '.join(hidden[:_LISTED])}")
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


def _over_limit(noun: str, found: tuple[Issue, ...], name: str, limit: int | None
                ) -> list[str]:
    """A reason when ``found`` breaks the gate's hard condition ``name``, as the gate says."""
    if not breaks_limit(len(found), limit):
        return []
    return [f"{_count(len(found), noun)} ({name}: {limit}): {_first(found)}"]


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
    reasons = _task_reasons(evidence, base.outcomes, regression.outcomes)
    failures = regression.failures(base.outcomes)
    if not failures:
        return reasons
    listed = ", ".join(f"{test} ({outcome})" for test, outcome in failures[:_LISTED])
    more = f" (+{len(failures) - _LISTED} more)" if len(failures) > _LISTED else ""
    noun, verb = (("1 baseline test", "does") if len(failures) == 1
                  else (f"{len(failures)} baseline tests", "do"))
    return [f"{noun} that passed on the baseline {verb} not pass here, run unmodified: "
            f"{listed}{more}", *reasons]


def task_failures(base: Mapping[str, str], here: Mapping[str, str]) -> list[tuple[str, str]]:
    """(test id, outcome here) for each test that failed on the baseline (the task) and does
    not pass here when run as the baseline has it."""
    return [(test, here.get(test, "missing")) for test, outcome in sorted(base.items())
            if outcome in _FAILED and here.get(test) not in PASSING]


def _task_reasons(evidence: Evidence, base: Mapping[str, str], here: Mapping[str, str]
                  ) -> list[str]:
    failing = task_failures(base, here)
    if not failing:
        return []
    edited = set(evidence.changes.edited_test_files) if evidence.changes is not None else set()
    own = evidence.outcomes or {}
    mine = [f"{t} ({o})" for t, o in failing
            if t.split("::", 1)[0] in edited and own.get(t, "missing") not in _FAILED]
    if mine:
        return [f"it makes the baseline's failing test{_s(mine)} pass only by editing "
                f"{_it(mine)}: run as the baseline has {_it(mine)}: {', '.join(mine[:_LISTED])}"]
    listed = [f"{t} ({o})" for t, o in failing]
    more = f" (+{len(listed) - _LISTED} more)" if len(listed) > _LISTED else ""
    one = len(listed) == 1
    return [f"the task is not done: the baseline's failing test{_s(listed)} still "
            f"fail{'s' if one else ''} here, run unmodified under the baseline's conftests, "
            f"settings, helpers and data: {', '.join(listed[:_LISTED])}{more}"]


def _s(items: list[str]) -> str:
    return "s" if len(items) > 1 else ""


def _it(items: list[str]) -> str:
    return "them" if len(items) > 1 else "it"


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

"""Strengths and weaknesses of one candidate, in words a reviewer can check (seed stage 5).

Pure: built from the evidence and the components scoring derived from it. Each note names
the fact behind it (a count, a function, a rule and a line), never just a score.
"""

from __future__ import annotations

from collections.abc import Mapping

from pytest_confgate.rank.models import Evidence, Issue, Note, new_issues

Parts = Mapping[str, Mapping[str, float]]


def notes_for(
    evidence: Evidence, baseline: Evidence | None, parts: Parts, block_reasons: list[str]
) -> tuple[tuple[Note, ...], tuple[Note, ...]]:
    """(strengths, weaknesses); a blocked candidate's first weaknesses are its block reasons."""
    weaknesses = [Note("correctness", f"Blocked: {reason}") for reason in block_reasons]
    if block_reasons:
        return (), tuple(weaknesses)
    strengths: list[Note] = []
    for add in (_correctness, _quality, _efficiency, _completeness, _safety):
        good, bad = add(evidence, baseline, parts)
        strengths += good
        weaknesses += bad
    return tuple(strengths), tuple(weaknesses)


Found = tuple[list[Note], list[Note]]


def _correctness(evidence: Evidence, baseline: Evidence | None, parts: Parts) -> Found:
    good: list[Note] = []
    bad: list[Note] = []
    part = parts["correctness"]
    tests = evidence.tests
    if tests is not None and part.get("tests_pass") == 1.0:
        added = ""
        if baseline is not None and baseline.tests is not None:
            more = tests.total - baseline.tests.total
            added = f" with {more} new test{'s' if more != 1 else ''} added" if more > 0 else ""
        good.append(Note("correctness", f"All {tests.ran} tests pass{added}"))
    if part.get("no_regressions") == 0.0 and baseline and baseline.tests and tests:
        bad.append(
            Note("correctness", f"Fewer tests than the baseline ({tests.total} vs "
                 f"{baseline.tests.total})")
        )
    cross = part.get("cross_tests")
    if cross == 1.0:
        good.append(Note("correctness", "Passes every test the other candidates added"))
    elif cross is not None:
        bad.append(
            Note("correctness", f"Passes only {cross:.0%} of the tests the other candidates added")
        )
    llm = part.get("llm_preference")
    if llm is not None and llm < 0.5:
        bad.append(Note("correctness", f"The evaluator preferred it in {llm:.0%} of comparisons"))
    elif llm is not None and llm > 0.5:
        good.append(Note("correctness", f"The evaluator preferred it in {llm:.0%} of comparisons"))
    return good, bad


def _quality(evidence: Evidence, baseline: Evidence | None, parts: Parts) -> Found:
    good: list[Note] = []
    bad: list[Note] = []
    part = parts["quality"]
    code = evidence.code
    if code is not None and code.functions:
        if part["complexity"] == 1.0:
            good.append(
                Note("quality", f"Low complexity (max cyclomatic complexity {code.max_complexity})")
            )
        elif code.max_complexity > 10:
            bad.append(
                Note("quality", f"High complexity: cyclomatic complexity {code.max_complexity} "
                     f"in {code.max_complexity_at}")
            )
        if code.max_function_length > 50:
            bad.append(
                Note("quality", f"Long function: {code.max_function_length_at} is "
                     f"{code.max_function_length} lines")
            )
    if code is not None and code.duplication > 0.05:
        bad.append(Note("quality", f"{code.duplication:.0%} of the measured lines are duplicated"))
    size = part.get("change_size")
    if size is not None and size < 1.0 and evidence.changes is not None:
        bad.append(Note("quality", f"Large change: {evidence.changes.lines_changed} lines changed"))
    return good, bad


def _efficiency(evidence: Evidence, baseline: Evidence | None, parts: Parts) -> Found:
    bad: list[Note] = []
    part = parts["efficiency"]
    if part.get("runtime", 1.0) < 1.0 and evidence.tests is not None:
        bad.append(Note("efficiency", f"Slower test run ({evidence.tests.duration_s:.2f} s)"))
    if part.get("loop_nesting", 1.0) < 1.0 and evidence.code is not None:
        bad.append(Note("efficiency", f"Loops nested {evidence.code.max_loop_depth} deep"))
    return [], bad


def _completeness(evidence: Evidence, baseline: Evidence | None, parts: Parts) -> Found:
    good: list[Note] = []
    bad: list[Note] = []
    part = parts["completeness"]
    coverage = evidence.coverage
    if coverage is None:
        bad.append(Note("completeness", "Coverage could not be measured"))
    elif part["coverage"] == 1.0:
        good.append(Note("completeness", f"Coverage {coverage:.0%}"))
    else:
        bad.append(Note("completeness", f"Coverage {coverage:.0%} is below 80%"))
    if part.get("coverage_kept", 1.0) < 1.0 and baseline and baseline.coverage is not None:
        drop = baseline.coverage - (coverage or 0.0)
        bad.append(Note("completeness", f"Coverage dropped {drop:.1%} against the baseline"))
    if part.get("tests_added") == 0.0:
        bad.append(Note("completeness", "No tests added for the changed code"))
    return good, bad


def _safety(evidence: Evidence, baseline: Evidence | None, parts: Parts) -> Found:
    if evidence.security is None:
        problem = evidence.security_problem or "no result"
        return [], [Note("safety", f"Security scan unavailable: {problem}")]
    fresh = new_issues(evidence.security, baseline.security if baseline else None)
    if not fresh:
        return [Note("safety", "No new security findings")], []
    bad: list[Note] = []
    for severity in ("HIGH", "MEDIUM", "LOW"):
        found = [issue for issue in fresh if issue.severity == severity]
        if found:
            bad.append(Note("safety", f"{_findings(len(found), severity)}: {_where(found)}"))
    return [], bad


def _findings(n: int, severity: str) -> str:
    return f"{n} new {severity} security finding{'s' if n != 1 else ''}"


def _where(issues: list[Issue]) -> str:
    shown = ", ".join(f"{i.rule} at {i.path}:{i.line}" for i in issues[:3])
    return shown + (f" (+{len(issues) - 3} more)" if len(issues) > 3 else "")

"""Strengths and weaknesses of one candidate, in words a reviewer can check.

Pure: built from the evidence and the components scoring derived from it. Each note names
the fact behind it (a count, a function, a rule and a line), never just a score.
"""

from __future__ import annotations

from collections.abc import Mapping

from pytest_confgate.rank.models import PASSING, CrossTest, Evidence, Issue, Note, new_issues

Parts = Mapping[str, Mapping[str, float]]
Found = tuple[list[Note], list[Note]]
_LISTED = 3
_ALWAYS_NAMED = frozenset({
    "suppression_added", "tool_ignore_added", "collection_narrowed", "test_hook_changed",
})
"""Tamper findings that do not block but are always named, blocked candidate or not."""


def notes_for(
    evidence: Evidence, baseline: Evidence | None, parts: Parts, block_reasons: list[str],
    cross: CrossTest | None = None,
) -> tuple[tuple[Note, ...], tuple[Note, ...]]:
    """(strengths, weaknesses); a blocked candidate's first weaknesses are its block reasons.

    What a candidate did to its judges (suppressions, tool and test configuration, edited
    baseline tests) and dangerous operations are named whether or not it is blocked.
    """
    weaknesses = [Note("correctness", f"Blocked: {reason}") for reason in block_reasons]
    if block_reasons:
        return (), (*weaknesses, *_always_named(evidence))
    strengths: list[Note] = []
    for add in (_correctness, _quality, _efficiency, _completeness, _safety):
        good, bad = add(evidence, baseline, parts)
        strengths += good
        weaknesses += bad
    good, bad = _cross_notes(cross)
    strengths += good
    weaknesses += bad
    weaknesses += _always_named(evidence)
    return tuple(strengths), tuple(weaknesses)


def _always_named(evidence: Evidence) -> list[Note]:
    notes = [
        Note("safety", f"{finding.rule}: {finding.message} ({finding.path}:{finding.line})")
        for finding in evidence.tamper or () if finding.rule in _ALWAYS_NAMED
    ]
    notes += [
        Note("safety", f"Dangerous operation ({op.rule}): {op.message} at {op.path}:{op.line}")
        for op in evidence.dangerous
    ]
    edited = evidence.changes.edited_test_files if evidence.changes is not None else ()
    added = evidence.changes.new_test_ids if evidence.changes is not None else ()
    if edited:
        extra = (f"; the {len(added)} test{'s' if len(added) != 1 else ''} it added there "
                 "count as new tests" if added else "")
        notes.append(Note("correctness", f"Edits baseline test files ({', '.join(edited)}): "
                          f"their baseline tests ran from the baseline, unmodified{extra}"))
    return notes


def _cross_notes(cross: CrossTest | None) -> Found:
    """Whose tests fail here, why, and how much each writer's tests count (issue 28)."""
    if cross is None or not cross.ran:
        return [], []
    if not cross.failing:
        return [Note("correctness", "Passes every test the other candidates added")], []
    by_writer: dict[str, list[str]] = {}
    for entry in cross.failing:
        writer, test = entry.split(": ", 1)
        by_writer.setdefault(writer, []).append(test)
    parts = []
    for writer, tests in by_writer.items():
        weight, reason = cross.standing.get(writer, (1.0, "its tests count in full"))
        shown = ", ".join(
            f"{test} ({_short(cross.why.get(f'{writer}: {test}', 'failed'))})"
            for test in tests[:_LISTED]
        )
        more = f" (+{len(tests) - _LISTED} more)" if len(tests) > _LISTED else ""
        counted = reason if weight < 1.0 else f"counted in full: {writer} {_FULL_REASON}"
        parts.append(f"{len(tests)} by {writer}: {shown}{more}; {counted}")
    return [], [Note("correctness", f"Fails {len(cross.failing)} of the {cross.ran} tests the "
                     f"other candidates added: {'; '.join(parts)}")]


_FULL_REASON = ("passes the baseline's tests where they should pass and has no tamper finding")


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def tests_pass_text(evidence: Evidence, baseline: Evidence | None) -> str | None:
    """"All N tests pass" counting only baseline tests run unmodified and new tests that ran."""
    tests = evidence.tests
    if tests is None:
        return None
    regression = evidence.regression
    if baseline is None or baseline.outcomes is None or evidence.outcomes is None or (
        regression is None
    ):
        return f"All {tests.ran} tests pass"
    expected = {t for t, o in baseline.outcomes.items() if o in PASSING}
    kept = sum(1 for t in expected if regression.outcomes.get(t) in PASSING)
    new = evidence.new_tests()[0]
    added = f"{new} new test{'s' if new != 1 else ''}" if new else "no new test"
    return (f"All {kept + new} tests pass: {kept} baseline test{'s' if kept != 1 else ''} "
            f"run unmodified and {added}")


def _correctness(evidence: Evidence, baseline: Evidence | None, parts: Parts) -> Found:
    good: list[Note] = []
    bad: list[Note] = []
    part = parts["correctness"]
    text = tests_pass_text(evidence, baseline)
    if text is not None and part.get("tests_pass") == 1.0:
        good.append(Note("correctness", text))
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
    if evidence.hidden_uncovered:
        bad.append(Note("completeness", f"{evidence.hidden_uncovered} statements of its own under "
                        "an added `pragma: no cover` count as uncovered"))
    if part.get("tests_added") == 0.0:
        bad.append(Note("completeness", "No tests added for the changed code"))
    return good, bad


def _safety(evidence: Evidence, baseline: Evidence | None, parts: Parts) -> Found:
    if evidence.security is None:
        problem = evidence.security_problem or "no result"
        return [], [Note("safety", f"Security scan unavailable: {problem}")]
    fresh = new_issues(evidence.security, baseline.security if baseline else None)
    part = parts["safety"]
    bad: list[Note] = []
    if part.get("no_dangerous_ops", 1.0) * part.get("no_secrets", 1.0) < 1.0:
        bad.append(Note("safety", "Score halved: a dangerous operation, a secret or a change to "
                        "how it is tested or checked (below)"))
    if not fresh and not bad:
        return [Note("safety", "No new security findings")], []
    for severity in ("HIGH", "MEDIUM", "LOW"):
        found = [issue for issue in fresh if issue.severity == severity]
        if found:
            bad.append(Note("safety", f"{_findings(len(found), severity)}: {_where(found)}"))
    return [], bad


def _findings(n: int, severity: str) -> str:
    return f"{n} new {severity} security finding{'s' if n != 1 else ''}"


def _where(issues: list[Issue]) -> str:
    shown = ", ".join(f"{i.rule} at {i.path}:{i.line}{_hidden(i)}" for i in issues[:3])
    return shown + (f" (+{len(issues) - 3} more)" if len(issues) > 3 else "")


def _hidden(issue: Issue) -> str:
    """Say when a suppression the candidate added was hiding the finding."""
    for directive in ("nosec", "noqa"):
        if f"(hidden by a `# {directive}`" in issue.message:
            return f" (behind an added `# {directive}`)"
    return ""

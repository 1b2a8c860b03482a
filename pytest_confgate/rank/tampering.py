"""What a candidate does to its judges, against the baseline (issue 15, ``collect.tamper``).

``inspect`` adds to a candidate's evidence the tamper findings of ``find_tampering`` (tests
deleted, skipped or weakened; suppressions, tool ignores, narrowed collection, test hooks),
and, from the baseline's and the candidate's own runs, each baseline test that ran there and
is skipped here however the skip is made. A baseline test that no longer runs under its old
id is not a finding here: a renamed test would look deleted, and the regression suite
(``regression``) already runs every baseline test as written, by id. A ``# noqa`` or
``# nosec`` the candidate added hides nothing: ruff (``--ignore-noqa``) or bandit
(``--ignore-nosec``) runs again on just those source files, and each finding on a line such a
comment covers joins the candidate's lint or security findings, as the gate does for changed
lines (``collect.unsuppressed``). A second run that fails leaves that evidence missing, which
blocks or zeroes the category: never a clean result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_confgate.collect.lint import collect_lint_score
from pytest_confgate.collect.security import collect_security_score
from pytest_confgate.collect.tamper import (
    FileVersions,
    TamperFinding,
    TamperReport,
    find_tampering,
    versions_from_directories,
)
from pytest_confgate.models import EvalMetric
from pytest_confgate.paths import glob_match
from pytest_confgate.rank.models import Evidence, Issue
from pytest_confgate.rank.trees import is_source_file

TEST_SKIPPED = "test_skipped"

Measure = Callable[..., EvalMetric]


def inspect(
    evidence: Evidence, tree: Path, baseline: Evidence, baseline_tree: Path,
    sources: Sequence[str] | None = None,
) -> Evidence:
    """``evidence`` with its tamper findings and the findings its suppressions hide."""
    try:
        versions = versions_from_directories(baseline_tree, tree)
        report = find_tampering(versions)
        skipped = _skipped_at_run_time(versions, report, baseline, evidence)
    except (OSError, ValueError, RecursionError) as exc:
        problem = f"could not compare it with the baseline: {exc}"
        return dataclasses.replace(evidence, tamper=None, tamper_problem=problem)
    tamper = tuple(Issue(f.rule, f.file, f.message, f.line) for f in (*report.findings, *skipped))
    lint, lint_problem = _revealed(
        evidence.lint, evidence.lint_problem, report, "noqa", tree, sources, collect_lint_score
    )
    security, security_problem = _revealed(
        evidence.security, evidence.security_problem, report, "nosec", tree, sources,
        collect_security_score,
    )
    return dataclasses.replace(
        evidence, tamper=tamper, lint=lint, lint_problem=lint_problem, security=security,
        security_problem=security_problem,
    )


def _skipped_at_run_time(
    versions: Sequence[FileVersions], report: TamperReport, baseline: Evidence,
    evidence: Evidence,
) -> list[TamperFinding]:
    if baseline.outcomes is None or evidence.outcomes is None:
        return []
    with_runs = find_tampering(versions, base_outcomes=baseline.outcomes,
                               head_outcomes=evidence.outcomes)
    return [f for f in with_runs.findings
            if f.rule == TEST_SKIPPED and f not in report.findings]


def _revealed(
    found: tuple[Issue, ...] | None, problem: str | None, report: TamperReport, directive: str,
    tree: Path, sources: Sequence[str] | None, measure: Measure,
) -> tuple[tuple[Issue, ...] | None, str | None]:
    """``found`` plus what ``# directive`` comments the candidate added in source files hide."""
    hidden = {
        path: lines for path, lines in report.hidden_lines(directive).items()
        if _measured(path, sources)
    }
    if found is None or not hidden:
        return found, problem
    unmasked = measure(tree, [tree / path for path in sorted(hidden)],
                       extra_args=(f"--ignore-{directive}",))
    if not unmasked.available:
        why = unmasked.reason or "the second run gave no result"
        return None, f"cannot check the lines where it added `# {directive}`: {why}"
    seen = {(i.rule, i.path, i.line) for i in found}
    extra = tuple(
        _issue(item, directive) for item in unmasked.details.get("items", [])
        if _covered(item, hidden) and (item["rule"], item["file"], item["line"]) not in seen
    )
    return found + extra, problem


def _issue(item: Mapping[str, Any], directive: str) -> Issue:
    message = f"{item['message']} (hidden by a `# {directive}` this candidate added)"
    return Issue(str(item["rule"]), str(item["file"]), message, int(item.get("line") or 0),
                 item.get("severity"))


def _covered(item: Mapping[str, Any], hidden: Mapping[str, list[tuple[int, int]]]) -> bool:
    line = item.get("line")
    ranges = hidden.get(str(item.get("file")), [])
    return isinstance(line, int) and any(first <= line <= last for first, last in ranges)


def _measured(path: str, sources: Sequence[str] | None) -> bool:
    """The files the candidate's lint and security runs measured (``source:`` or the default)."""
    if not sources:
        return is_source_file(path)
    return path.endswith(".py") and any(
        path == s.rstrip("/") or path.startswith(s.rstrip("/") + "/") or glob_match(s, path)
        for s in sources
    )

"""What a candidate does to its judges, against the baseline (issue 15, ``collect.tamper``).

The static reward-hacking patterns of ``collect.tamper`` (issue 27: a test that patches the
code under test and calls the stand-in, a special-cased input, a constant ``__eq__``, a test
that ends the run or writes the gate's report) come with the tamper findings, read with the
candidate's own top-level packages as "the code under test"; ``scoring`` counts them against
correctness (``no_gaming``) and safety, and they cost the candidate's tests their weight in
cross-testing (issue 28).

``inspect`` adds to a candidate's evidence the tamper findings of ``find_tampering`` (tests
deleted, skipped or weakened; suppressions, tool ignores, narrowed collection, test hooks),
and, from the baseline's and the candidate's own runs, each baseline test that ran there and
is skipped here however the skip is made. A baseline test that no longer runs under its old
id is not a finding here: a renamed test would look deleted, and the regression suite
(``regression``) already runs every baseline test as written, by id. A ``# noqa`` or
``# nosec`` the candidate added hides nothing: ruff (``--ignore-noqa``) or bandit
(``--ignore-nosec``) runs again on just those source files, and each finding on a line such a
comment covers joins the candidate's lint or security findings, as the gate does for changed
lines (``collect.unsuppressed``). A collection option the baseline's pytest settings have
and the candidate's do not (``--doctest-modules``, ``-p``: ``rank.collection``) is a
``collection_narrowed`` finding. Statements under a ``# pragma: no cover`` the candidate added
in measured source files count as uncovered (issue 28: a wrong branch hidden from coverage
costs what an untested one costs). A second run that fails leaves that evidence missing, which
blocks or zeroes the category: never a clean result.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_confgate import syntax_tree
from pytest_confgate.collect.lint import collect_lint_score
from pytest_confgate.collect.security import collect_security_score
from pytest_confgate.collect.tamper import (
    FileVersions,
    TamperFinding,
    TamperReport,
    find_tampering,
    versions_as_submitted,
    versions_from_directories,
)
from pytest_confgate.models import EvalMetric, MetricStatus
from pytest_confgate.paths import glob_match
from pytest_confgate.rank.build_check import top_level_modules
from pytest_confgate.rank.collection import SETTINGS_FILES, dropped_options
from pytest_confgate.rank.lint_copy import CopyRun
from pytest_confgate.rank.models import Evidence, Issue
from pytest_confgate.rank.trees import is_source_file

TEST_SKIPPED = "test_skipped"
NO_COVER = "pragma: no cover"

Measure = Callable[..., EvalMetric]


def inspect(
    evidence: Evidence, tree: Path, baseline: Evidence, baseline_tree: Path,
    sources: Sequence[str] | None = None, submitted: Mapping[str, str] | None = None,
    copy: CopyRun | None = None,
) -> Evidence:
    """``evidence`` with its tamper findings and the findings its suppressions hide.

    ``submitted``: the candidate's files as rank read them before any of its code ran; its
    tests ran in ``tree`` since, and what they wrote there is not what it submitted. ruff and
    bandit then run again on ``copy``, the copy of those files rank made before (``lint_copy``),
    never on ``tree``; without one, what an added suppression hides cannot be checked."""
    try:
        versions = (versions_from_directories(baseline_tree, tree) if submitted is None
                    else versions_as_submitted(baseline_tree, tree, submitted))
        own = tuple(top_level_modules(baseline_tree))  # the baseline says what is its own
        report = find_tampering(versions, own_packages=own)
        skipped = _skipped_at_run_time(versions, report, baseline, evidence, own)
    except (OSError, ValueError, RecursionError) as exc:
        problem = f"could not compare it with the baseline: {exc}"
        return dataclasses.replace(evidence, tamper=None, tamper_problem=problem)
    tamper = tuple(Issue(f.rule, f.file, f.message, f.line) for f in (*report.findings, *skipped))
    tamper += tuple(dropped_options(_settings(baseline_tree), _settings(tree)))
    where = _Where(tree, submitted is not None, copy)
    lint, lint_problem = _revealed(
        evidence.lint, evidence.lint_problem, report, "noqa", where, sources, collect_lint_score
    )
    security, security_problem = _revealed(
        evidence.security, evidence.security_problem, report, "nosec", where, sources,
        collect_security_score,
    )
    hidden = _uncovered_hidden(report, tree, sources, submitted)
    return dataclasses.replace(
        evidence, tamper=tamper, lint=lint, lint_problem=lint_problem, security=security,
        security_problem=security_problem, hidden_uncovered=hidden,
        coverage=uncovered_counted(evidence.coverage, evidence.statements, hidden),
    )


def uncovered_counted(coverage: float | None, statements: int | None, hidden: int
                      ) -> float | None:
    """Coverage with ``hidden`` statements (excluded by an added pragma) counted as missed."""
    if coverage is None or not hidden:
        return coverage
    if not statements:
        return 0.0
    return coverage * statements / (statements + hidden)


def _uncovered_hidden(report: TamperReport, tree: Path, sources: Sequence[str] | None,
                      submitted: Mapping[str, str] | None = None) -> int:
    """Statements coverage.py leaves out because of a ``pragma: no cover`` this candidate added:
    the line's statement and, when it opens a block, the whole block (in the file as
    ``submitted``, when given)."""
    count = 0
    for path, ranges in report.hidden_lines(NO_COVER).items():
        if not _measured(path, sources):
            continue
        try:
            text = submitted.get(path) if submitted is not None else None
            module = syntax_tree.parse(text if text is not None else (tree / path).read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue
        statements = [n for n in ast.walk(module) if isinstance(n, ast.stmt)]
        lines: set[int] = set()
        for first, last in ranges:
            for node in statements:
                if first <= node.lineno <= last:
                    lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        count += sum(1 for n in statements if n.lineno in lines)
    return count


def _settings(tree: Path) -> dict[str, str]:
    found = {}
    for name in SETTINGS_FILES:
        try:
            found[name] = (tree / name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return found


def _skipped_at_run_time(
    versions: Sequence[FileVersions], report: TamperReport, baseline: Evidence,
    evidence: Evidence, own: Sequence[str] = (),
) -> list[TamperFinding]:
    if baseline.outcomes is None or evidence.outcomes is None:
        return []
    with_runs = find_tampering(versions, base_outcomes=baseline.outcomes, own_packages=own,
                               head_outcomes=evidence.outcomes)
    return [f for f in with_runs.findings
            if f.rule == TEST_SKIPPED and f not in report.findings]


@dataclasses.dataclass(frozen=True)
class _Where:
    """Where ruff and bandit run again: the checked copy when the tree is no longer as it was
    submitted (``copy``; None: it cannot be checked), else the tree itself."""

    tree: Path
    ran_since: bool
    copy: CopyRun | None

    def measure(self, kind: str, measure: Measure, paths: Sequence[str],
                extra_args: tuple[str, ...]) -> EvalMetric:
        def work(root: Path) -> EvalMetric:
            return measure(root, [root / path for path in paths], extra_args=extra_args)

        if not self.ran_since:
            return work(self.tree)
        if self.copy is None:
            return EvalMetric(type=kind, status=MetricStatus.ERROR,
                              reason="no copy of the files as submitted to run it on")
        return self.copy(kind, work)


def _revealed(
    found: tuple[Issue, ...] | None, problem: str | None, report: TamperReport, directive: str,
    where: _Where, sources: Sequence[str] | None, measure: Measure,
) -> tuple[tuple[Issue, ...] | None, str | None]:
    """``found`` plus what ``# directive`` comments the candidate added in source files hide."""
    hidden = {
        path: lines for path, lines in report.hidden_lines(directive).items()
        if _measured(path, sources)
    }
    if found is None or not hidden:
        return found, problem
    kind = "lint_score" if directive == "noqa" else "security_score"
    args = (f"--ignore-{directive}", *(["--no-cache"] if directive == "noqa" else []))
    unmasked = where.measure(kind, measure, sorted(hidden), args)
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

"""What a change touches, judged on plain data (``scope: changed``, risk tiers).

Pure: no IO, no subprocess, no clock. ``collect.changes`` asks git for the ``ChangeSet``; here
it meets the configuration (risk rules), coverage.py's JSON figures and lint/security findings.

Globs: ``**`` spans directories (``**/x.py`` also matches ``x.py``), ``*`` and ``?`` never
cross ``/``, ``[abc]``/``[!abc]`` classes; a pattern matches the whole repo-relative path, so
``*.py`` only matches top-level files (write ``**/*.py`` for any depth).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_confgate.config import RiskRule

from pytest_confgate.gate.tiers import TIER_ORDER, tier_rank
from pytest_confgate.models import ChangeSet
from pytest_confgate.paths import glob_match, normalize_path

CONFIG_FILE_NAMES = ("confgate.yml", "confgate.yaml")
"""Files that would become the configuration if added (discovery order)."""


def match_risk_rules(
    rules: Sequence[RiskRule], changed_paths: Iterable[str], default_tier: str
) -> tuple[str, str]:
    """The tier a change gets from ``gate.risk_rules``, and a sentence saying why.

    The highest matching tier wins and the result is never below ``default_tier``. Each path
    is tried as written and case-folded: on macOS and Windows ``SRC/Auth/x.py`` *is*
    ``src/auth/x.py``, and when that is ambiguous the higher tier is the safe answer. The
    caller passes both names of a renamed file. Ties go to the first rule, then to the first
    path in sorted order, so the answer does not depend on the order of ``changed_paths``.
    """
    default_rank = tier_rank(default_tier)
    paths = sorted({normalize_path(p) for p in changed_paths} - {""})
    best: tuple[int, str] | None = None
    for index, rule in enumerate(rules):
        rank = tier_rank(rule.tier)
        if best is not None and rank <= best[0]:
            continue
        for path in paths:
            hit = _first_match(rule.paths, path)
            if hit is not None:
                best = (rank, f"{path} matched gate.risk_rules[{index}] ({hit}) -> {rule.tier}")
                break
    if best is None:
        if not paths:
            return default_tier, f"no changed files -> gate.risk_tier {default_tier}"
        return default_tier, (
            f"no risk rule matched the {len(paths)} changed file(s) "
            f"-> gate.risk_tier {default_tier}"
        )
    if best[0] < default_rank:
        return default_tier, f"{best[1]}, below gate.risk_tier {default_tier} -> {default_tier}"
    return TIER_ORDER[best[0]], best[1]


def _first_match(patterns: Sequence[str], path: str) -> str | None:
    for pattern in patterns:
        if glob_match(pattern, path):
            return pattern
    folded = path.casefold()
    for pattern in patterns:
        if glob_match(pattern.casefold(), folded):
            return f"{pattern}, ignoring case"
    return None


@dataclass(frozen=True)
class FilePatchCoverage:
    """Patch coverage of one file: only its changed executable lines (and their branches)."""

    path: str
    statements: int
    covered_lines: int
    missing_lines: tuple[int, ...]
    branches: int = 0
    covered_branches: int = 0
    partial_lines: tuple[int, ...] = ()
    """Changed lines that ran but left a branch untaken (``branch: true`` only)."""


@dataclass(frozen=True)
class PatchCoverage:
    """Covered / total over changed executable lines (+ their branches); None: nothing to measure.

    ``value`` is None with a ``reason`` when no changed line is executable (docs, comments,
    blank or excluded lines only): the caller reports "nothing to measure", neither 0% nor 100%.
    ``not_measured`` lists changed text files the coverage data does not know at all.
    """

    value: float | None
    covered: int
    total: int
    files: tuple[FilePatchCoverage, ...]
    not_measured: tuple[str, ...] = ()
    reason: str | None = None

    def uncovered(self) -> dict[str, list[int]]:
        """Uncovered changed lines per file, for reports that point at the gaps."""
        return {f.path: list(f.missing_lines) for f in self.files if f.missing_lines}


def patch_coverage(
    changes: ChangeSet, coverage_files: Mapping[str, Mapping[str, Any]]
) -> PatchCoverage:
    """Patch coverage from coverage.py's JSON ``files`` section, keyed by repo-relative path.

    A changed line counts when coverage.py knows it as a statement (executed or missing, not
    excluded); with branch data the arcs leaving changed lines count too, the same
    ``(lines + branches)`` sum coverage.py's own total uses. A change to a continuation line of
    a multi-line statement is not a statement line in coverage.py's data and does not count.
    """
    by_path = {normalize_path(name): data for name, data in coverage_files.items()}
    files: list[FilePatchCoverage] = []
    not_measured: list[str] = []
    changed_lines = 0
    for change in changes.files:
        if change.status == "deleted" or change.binary or not change.added_lines:
            continue
        data = by_path.get(change.path)
        if data is None:
            not_measured.append(change.path)
            continue
        changed_lines += len(change.added_lines)
        figures = _file_patch(change.path, change.added_lines, data)
        if figures.statements:
            files.append(figures)
    covered = sum(f.covered_lines + f.covered_branches for f in files)
    total = sum(f.statements + f.branches for f in files)
    if total:
        return PatchCoverage(covered / total, covered, total, tuple(files), tuple(not_measured))
    if changed_lines:
        reason = f"none of the {changed_lines} changed line(s) in measured files is executable"
    else:
        reason = "no changed file is in the coverage data"
    return PatchCoverage(None, 0, 0, (), tuple(not_measured), f"nothing to measure: {reason}")


def _file_patch(path: str, added: frozenset[int], data: Mapping[str, Any]) -> FilePatchCoverage:
    executed = set(data.get("executed_lines", ()))
    statements = (executed | set(data.get("missing_lines", ()))) - set(
        data.get("excluded_lines", ())
    )
    changed = statements & added
    covered = changed & executed
    taken = [arc for arc in data.get("executed_branches", ()) if arc[0] in changed]
    untaken = [arc for arc in data.get("missing_branches", ()) if arc[0] in changed]
    return FilePatchCoverage(
        path=path,
        statements=len(changed),
        covered_lines=len(covered),
        missing_lines=tuple(sorted(changed - covered)),
        branches=len(taken) + len(untaken),
        covered_branches=len(taken),
        partial_lines=tuple(sorted({arc[0] for arc in untaken} & covered)),
    )


def findings_on_changed_lines(
    items: Sequence[Mapping[str, Any]], changes: ChangeSet
) -> list[dict[str, Any]]:
    """Only the findings the change introduced or touched (code scanning's "new alerts").

    A finding with no line (0 or missing: file-level, e.g. a parse failure) counts when its
    file has any changed line: failing closed beats hiding it.
    """
    kept = []
    for item in items:
        lines = changes.lines(normalize_path(str(item.get("file", ""))))
        line = item.get("line")
        if lines and (not line or line in lines):
            kept.append(dict(item))
    return kept


@dataclass(frozen=True)
class ChangedFileRate:
    """Files with no finding on changed lines / changed files the tool checked."""

    value: float | None
    files_checked: int
    files_with_findings: int
    items: tuple[dict[str, Any], ...]
    reason: str | None = None


def rate_on_changed_files(
    items: Sequence[Mapping[str, Any]], changes: ChangeSet, checked_files: Iterable[str]
) -> ChangedFileRate:
    """The lint/security "clean files / files checked" value over the changed files only.

    ``checked_files`` are the files the tool really checked (no "0 findings" for files
    never scanned). Only files with added lines count: a file that only lost lines cannot carry
    a finding on a changed line, and counting it clean would inflate the rate.
    """
    kept = findings_on_changed_lines(items, changes)
    failing = {normalize_path(str(item.get("file", ""))) for item in kept}
    checked = {p for p in map(normalize_path, checked_files) if changes.lines(p)} | failing
    if not checked:
        reason = "nothing to measure: the tool checked none of the changed files"
        return ChangedFileRate(None, 0, 0, tuple(kept), reason)
    value = (len(checked) - len(failing)) / len(checked)
    return ChangedFileRate(value, len(checked), len(failing), tuple(kept))


def config_changed(changes: ChangeSet, config_path: str | None) -> bool:
    """Whether the change edits the gate's own configuration (then the base decides).

    Watched: the file in use (``config_path``, e.g. ``pyproject.toml`` holding
    ``[tool.confgate]``) and ``confgate.yml``/``.yaml``, whose adding, editing or removal would
    change which configuration applies. Compared case-folded too: raising the tier is the safe
    side of an ambiguity.
    """
    watched = {name.casefold() for name in CONFIG_FILE_NAMES}
    if config_path:
        watched.add(normalize_path(config_path).casefold())
    return any(normalize_path(p).casefold() in watched for p in changes.paths())


def coverage_by_glob(
    per_file: Mapping[str, tuple[int, int]], globs: Iterable[str]
) -> dict[str, dict[str, Any]]:
    """Covered / total for each glob over ``{path: (covered, total)}`` (per-path floors).

    A glob that matches no measured file gets ``value`` None: a floor over nothing is a
    configuration that no longer describes the code, and the policy fails it, naming it.
    """
    result: dict[str, dict[str, Any]] = {}
    for pattern in globs:
        matched = {p: v for p, v in per_file.items() if glob_match(pattern, normalize_path(p))}
        covered = sum(c for c, _ in matched.values())
        total = sum(t for _, t in matched.values())
        value = covered / total if total else (1.0 if matched else None)
        result[pattern] = {
            "value": value,
            "covered": covered,
            "total": total,
            "files": len(matched),
        }
    return result

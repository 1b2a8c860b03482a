"""coverage.py's JSON report -> the ``test_coverage`` metric, and how it was measured.

The figures are coverage.py's own totals; the gate only chooses lines-only or lines and
branches (the project's or the gate's ``branch`` setting) and names files relative to the
rootdir, so reports point at ``src/pkg/mod.py``, never at a runner's absolute path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_confgate.models import EvalMetric, MetricStatus

LINE_KEYS = ("covered_lines", "num_statements", "missing_lines", "excluded_lines")
BRANCH_KEYS = ("num_branches", "covered_branches", "missing_branches", "num_partial_branches")


@dataclass(frozen=True)
class Provenance:
    """How the figures were measured, for ``details``."""

    branch: bool
    engine: str
    source: list[str]
    selected_by: str
    engine_by_file: dict[str, str] = field(default_factory=dict)
    workers: list[str] = field(default_factory=list)
    measured_by: str | None = None
    warnings: list[str] = field(default_factory=list)


def coverage_metric(
    report: dict[str, Any], how: Provenance, root: Path, *, weight: float, elapsed: float
) -> EvalMetric:
    """The metric from coverage.py's JSON report; lines only unless branches count."""
    totals = report.get("totals", {})
    keys = LINE_KEYS + BRANCH_KEYS if how.branch else LINE_KEYS
    details: dict[str, Any] = {key: totals[key] for key in keys if key in totals}
    covered = details.get("covered_lines", 0) + details.get("covered_branches", 0)
    total = details.get("num_statements", 0) + details.get("num_branches", 0)
    details.update(
        tool="coverage.py",
        version=report.get("meta", {}).get("version"),
        duration_s=round(elapsed, 6),
        branch=how.branch,
        percent_covered=round(100.0 * covered / total, 6) if total else 100.0,
        engine=how.engine,
        files_measured=len(report.get("files", {})),
        source=how.source,
        selected_by=how.selected_by,
        missing=missing_lines(report, root),
    )
    if how.engine_by_file:
        engines = sorted(how.engine_by_file.items())
        details["engine_by_file"] = {relative(Path(name), root): e for name, e in engines}
    if how.workers:
        details["workers"] = list(how.workers)
    if how.measured_by:
        details["measured_by"] = how.measured_by
    if how.warnings:
        details["warnings"] = list(how.warnings)
    return EvalMetric(
        type="test_coverage",
        value=covered / total if total else 1.0,
        weight=weight,
        status=MetricStatus.OK,
        details=details,
    )


def missing_lines(report: dict[str, Any], root: Path) -> dict[str, list[int]]:
    """Missing lines per file, relative paths, for reports that point at the gaps."""
    result = {}
    for name, data in sorted(report.get("files", {}).items()):
        if data.get("missing_lines"):
            result[relative(Path(name), root)] = data["missing_lines"]
    return result


def relative(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` in POSIX form; as given when it lies outside."""
    # coverage.py names files relative to the current directory.
    absolute = path if path.is_absolute() else Path.cwd() / path
    try:
        return absolute.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()

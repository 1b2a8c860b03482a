"""``security_score``: the share of files bandit finds nothing to flag in (SPEC 4).

bandit exits 0 even when it could not parse a file (the file lands in ``errors`` and is simply
not checked), so its exit code alone can make an unscanned project look clean. The JSON report
is read in full: ``errors`` make the metric an error, ``metrics`` says which files were scanned.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from pytest_confgate.collect._tool import (
    ToolMissing,
    display_path,
    run_tool,
    tool_version,
)
from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.models import SEVERITY_ORDER, EvalMetric, Finding, MetricStatus

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover -- Python 3.10
    import tomli as tomllib

FORMAT_ARGS = ("-f", "json", "-q")
_MAX_NAMED_ERRORS = 5


class _BanditError(BaseModel):
    filename: str
    reason: str


class _BanditResult(BaseModel):
    filename: str
    test_id: str
    issue_severity: str
    issue_confidence: str
    issue_text: str
    line_number: int
    col_offset: int = 0
    more_info: str | None = None


class BanditReport(BaseModel):
    """The parts of ``bandit -f json`` that the score depends on; other keys are ignored."""

    errors: list[_BanditError]
    metrics: dict[str, Any]
    results: list[_BanditResult]


def default_bandit_command() -> list[str] | None:
    """The bandit installed beside us (``python -m bandit``), else one on PATH, else None."""
    if importlib.util.find_spec("bandit") is not None:
        return [sys.executable, "-m", "bandit"]
    found = shutil.which("bandit")
    return [found] if found else None


def collect_security_score(
    root: Path,
    paths: list[Path],
    *,
    min_severity: str = "LOW",
    min_confidence: str = "LOW",
    command: list[str] | None = None,
    timeout_s: float = 300.0,
    weight: float = 1.0,
) -> EvalMetric:
    """Run bandit on ``paths``; score files with no finding at/above both thresholds / scanned.

    A bandit that is missing, fails, times out, cannot parse a file or scans nothing gives an
    ``unavailable``/``error`` metric with the reason; it never raises and never reports a
    clean result (SPEC 4). ``min_severity``/``min_confidence`` are LOW, MEDIUM or HIGH.
    """
    thresholds = (_level("min_severity", min_severity), _level("min_confidence", min_confidence))
    root = root.resolve()
    prefix = list(command) if command is not None else default_bandit_command()
    details: dict[str, Any] = {"tool": "bandit", "version": None, "duration_s": 0.0}
    details.update(command=None, min_severity=thresholds[0], min_confidence=thresholds[1])
    if prefix is None:
        reason = "bandit is not installed: `pip install bandit`, or set the metric's `command`"
        return _not_ok(weight, MetricStatus.UNAVAILABLE, reason, details)
    try:
        argv = [*prefix, *_config_args(root), "-r", *(os.fspath(path) for path in paths)]
        argv.extend(FORMAT_ARGS)
        details["command"] = argv
        return _measure(root, paths, prefix, command is None, argv, timeout_s, weight, details)
    except ToolMissing as exc:
        reason = f"{exc}: install bandit (`pip install bandit`) or fix the metric's `command`"
        return _not_ok(weight, MetricStatus.UNAVAILABLE, reason, details)
    except EvidenceError as exc:
        return _not_ok(weight, MetricStatus.ERROR, str(exc), details)


def _level(name: str, value: str) -> str:
    level = value.upper()
    if level not in SEVERITY_ORDER:
        raise ValueError(f"{name} must be one of LOW, MEDIUM, HIGH, got {value!r}")
    return level


def _config_args(root: Path) -> list[str]:
    """Point bandit at the project's settings, which it only finds by itself under ``-r .``.

    ``-c pyproject.toml`` when it has a [tool.bandit] table (bandit never reads it unasked);
    ``--ini .bandit`` because bandit looks for ``.bandit`` only inside the scanned paths, so
    ``-r src`` would silently ignore the project's skips and excludes.
    """
    args = ["--ini", ".bandit"] if (root / ".bandit").is_file() else []
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return args
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise EvidenceError(
            f"{pyproject} cannot be read ({exc}), so bandit's [tool.bandit] settings are "
            "unknown: fix the file"
        ) from exc
    tool = data.get("tool")
    if isinstance(tool, dict) and "bandit" in tool:
        args = ["-c", "pyproject.toml", *args]
    return args


def _measure(
    root: Path,
    paths: list[Path],
    prefix: list[str],
    ours: bool,
    argv: list[str],
    timeout_s: float,
    weight: float,
    details: dict[str, Any],
) -> EvalMetric:
    if not paths:
        raise EvidenceError(f"bandit scanned no files under {root}: check `source:`")
    result = run_tool(argv, cwd=root, timeout_s=timeout_s)
    details["duration_s"] = round(result.duration_s, 6)
    details["version"] = _bandit_version(prefix, ours, root)
    if result.returncode not in (0, 1):
        raise EvidenceError(
            f"bandit exited with unexpected code {result.returncode} (expected 0 or 1); run "
            f"`bandit -r` in the project to see why\n{result.stderr_tail() or '(no stderr)'}"
        )
    report = parse_bandit_json(result.stdout)
    _require_no_errors(report, root)
    scanned = {display_path(name, root) for name in report.metrics if name != "_totals"}
    scanned.update(display_path(item.filename, root) for item in report.results)
    scanned.discard("")
    if not scanned:
        raise EvidenceError(f"bandit scanned no files under {root}: check `source:`")
    _score_into(details, report, root)
    value = (len(scanned) - details["files_with_findings"]) / len(scanned)
    details["files_scanned"] = len(scanned)
    return EvalMetric(
        type="security_score", value=value, weight=weight, status=MetricStatus.OK, details=details
    )


def _bandit_version(prefix: list[str], ours: bool, root: Path) -> str | None:
    if ours:
        try:
            return importlib.metadata.version("bandit")
        except importlib.metadata.PackageNotFoundError:
            pass
    return tool_version([*prefix, "--version"], cwd=root)


def _require_no_errors(report: BanditReport, root: Path) -> None:
    """bandit exits 0 on files it cannot parse: those files were not checked at all."""
    if not report.errors:
        return
    named = [
        f"{display_path(error.filename, root)} ({error.reason})"
        for error in report.errors[:_MAX_NAMED_ERRORS]
    ]
    more = len(report.errors) - len(named)
    listing = "; ".join(named) + (f"; and {more} more" if more else "")
    raise EvidenceError(
        f"bandit could not scan {len(report.errors)} file(s): {listing}. Fix them, or exclude "
        "them from `source:` or bandit's exclude_dirs"
    )


def _score_into(details: dict[str, Any], report: BanditReport, root: Path) -> None:
    """Count findings at/above both thresholds; ``by_severity`` applies min_confidence only."""
    min_severity = SEVERITY_ORDER[details["min_severity"]]
    min_confidence = SEVERITY_ORDER[details["min_confidence"]]
    by_severity = dict.fromkeys(("HIGH", "MEDIUM", "LOW"), 0)
    items: list[Finding] = []
    for result in report.results:
        severity, confidence = result.issue_severity.upper(), result.issue_confidence.upper()
        if SEVERITY_ORDER.get(confidence, 0) < min_confidence:
            continue
        if severity in by_severity:
            by_severity[severity] += 1
        if SEVERITY_ORDER.get(severity, 0) >= min_severity:
            items.append(_finding(result, root))
    details.update(
        files_with_findings=len({item.file for item in items}),
        findings=len(items),
        by_severity=by_severity,
        items=[item.model_dump() for item in items],
    )


def _finding(result: _BanditResult, root: Path) -> Finding:
    return Finding(
        tool="bandit",
        rule=result.test_id,
        file=display_path(result.filename, root),
        line=max(result.line_number, 0),
        column=max(result.col_offset, 0),
        message=result.issue_text,
        severity=result.issue_severity.upper(),
        confidence=result.issue_confidence.upper(),
        url=result.more_info,
    )


def parse_bandit_json(stdout: str) -> BanditReport:
    """Find and validate bandit's JSON report in ``stdout``, or raise EvidenceError.

    bandit may print log lines before the report, so the report is the first JSON object that
    starts a line.
    """
    decoder = json.JSONDecoder()
    for match in re.finditer(r"^[ \t]*\{", stdout, flags=re.MULTILINE):
        try:
            data, _ = decoder.raw_decode(stdout, match.end() - 1)
        except ValueError:
            continue
        try:
            return BanditReport.model_validate(data)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(part) for part in error["loc"]) or "top level"
            raise EvidenceError(
                f"bandit's JSON report is not in the expected shape ({where}: {error['msg']})"
            ) from exc
    snippet = stdout.strip()[:200] or "(nothing)"
    raise EvidenceError(
        f"bandit did not print a JSON report (is `command` really bandit?); it printed: {snippet!r}"
    )


def _not_ok(
    weight: float, status: MetricStatus, reason: str, details: dict[str, Any]
) -> EvalMetric:
    return EvalMetric(
        type="security_score",
        value=None,
        weight=weight,
        status=status,
        reason=reason,
        details=details,
    )

"""``security_score``: the share of files bandit finds nothing to flag in.

bandit exits 0 even when it could not parse a file (the file lands in ``errors`` and is simply
not checked), so its exit code alone can make an unscanned project look clean. The JSON report
is read in full: ``errors`` make the metric an error, ``metrics`` says which files were scanned.
With a cache (``tool_cache``) bandit scans only files whose content, version or configuration
changed, and is not started at all when nothing did; the cache keeps every finding unfiltered
so that changing the thresholds needs no rescan. ``collect_security_scores`` measures several
projects with one bandit process where each gets what its own run gives (``confgate rank``).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from pytest_confgate.collect._bandit_files import bandit_targets
from pytest_confgate.collect._tool import display_path, tool_version
from pytest_confgate.collect.tool_cache import (
    CacheMiss,
    ToolCache,
    chunked,
    digest_files,
    sha256_file,
)
from pytest_confgate.config.textfile import tomllib
from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.models import SEVERITY_ORDER, EvalMetric, Finding, MetricStatus
from pytest_confgate.processes import (
    DEFAULT_MAX_OUTPUT_BYTES,
    ToolMissing,
    installed_module,
    run_tool,
)

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
    """The bandit installed beside us (``python -I -m bandit``: never a ``bandit`` folder of
    the project), else one on PATH, else None.

    The interpreter is spelled without ``..``: a Python started as ``../venv/bin/python``
    keeps them, the helper process it starts does not, and the report names one command.
    """
    if importlib.util.find_spec("bandit") is not None:
        return installed_module("bandit")
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
    cache_dir: Path | None = None,
    extra_args: tuple[str, ...] = (),
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    cached_only: bool = False,
) -> EvalMetric:
    """Run bandit on ``paths``; score files with no finding at/above both thresholds / scanned.

    A bandit that is missing, fails, times out, cannot parse a file or scans nothing gives an
    ``unavailable``/``error`` metric with the reason; it never raises and never reports a
    clean result. ``min_severity``/``min_confidence`` are LOW, MEDIUM or HIGH.
    ``cache_dir`` (None: no cache) reuses per-file results of unchanged files; the figures are
    the same either way. ``extra_args`` (``--ignore-nosec``) are passed on, uncached.
    A run that prints more than ``max_output_bytes`` is killed and the metric is an error.
    ``cached_only`` answers only from the cache, without starting any process: ``CacheMiss``
    when bandit (or ``command --version``) would have to run.
    """
    if cached_only and (cache_dir is None or extra_args or command is not None):
        raise CacheMiss("bandit: no cache to answer from without starting it")
    thresholds = (_level("min_severity", min_severity), _level("min_confidence", min_confidence))
    root = root.resolve()
    prefix = list(command) if command is not None else default_bandit_command()
    details: dict[str, Any] = {"tool": "bandit", "version": None, "duration_s": 0.0}
    details.update(command=None, min_severity=thresholds[0], min_confidence=thresholds[1])
    if prefix is None:
        reason = "bandit is not installed: `pip install bandit`, or set the metric's `command`"
        return _not_ok(weight, MetricStatus.UNAVAILABLE, reason, details)
    try:
        config_args = _config_args(root)
        argv = [*prefix, *config_args, *extra_args, "-r", *(os.fspath(path) for path in paths)]
        argv.extend(FORMAT_ARGS)
        details["command"] = argv
        cache_dir = None if extra_args else cache_dir
        targets = bandit_targets(root, paths, config_args) if cache_dir and paths else None
        if cache_dir is None or targets is None:  # no cache, or a config discovery cannot model
            if cached_only:
                raise CacheMiss("bandit: its configuration is read by bandit alone")
            limits = (timeout_s, max_output_bytes)
            metric = _measure(root, paths, prefix, command is None, argv, limits, weight, details)
            if cache_dir is not None:
                details["cache"] = {"hits": 0, "misses": details["files_scanned"]}
                metric = metric.model_copy(update={"details": details})
            return metric
        run = _CachedRun(root, prefix, config_args, (timeout_s, max_output_bytes), cache_dir)
        version = _bandit_version(prefix, command is None, root, cached_only=cached_only)
        return run.measure(targets, version, weight, details, cached_only=cached_only)
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
    limits: tuple[float, int],
    weight: float,
    details: dict[str, Any],
) -> EvalMetric:
    if not paths:
        raise EvidenceError(f"bandit scanned no files under {root}: check `source:`")
    result = run_tool(argv, cwd=root, timeout_s=limits[0], max_output_bytes=limits[1])
    details["duration_s"] = round(result.duration_s, 6)
    details["version"] = _bandit_version(prefix, ours, root)
    _require_exit_code(result.returncode, result.stderr_tail())
    report = parse_bandit_json(result.stdout)
    _require_no_errors(report, root)
    scanned = {display_path(name, root) for name in report.metrics if name != "_totals"}
    scanned.update(display_path(item.filename, root) for item in report.results)
    scanned.discard("")
    findings = [_finding(result, root) for result in report.results]
    return _scored(root, scanned, findings, weight, details)


def _scored(
    root: Path, scanned: set[str], findings: list[Finding], weight: float, details: dict[str, Any]
) -> EvalMetric:
    if not scanned:
        raise EvidenceError(f"bandit scanned no files under {root}: check `source:`")
    _score_into(details, findings)
    value = (len(scanned) - details["files_with_findings"]) / len(scanned)
    details["files_scanned"] = len(scanned)
    return EvalMetric(
        type="security_score", value=value, weight=weight, status=MetricStatus.OK, details=details
    )


class _CachedRun:
    """One cached collection: hash the files bandit would scan, scan only the misses."""

    def __init__(
        self,
        root: Path,
        prefix: list[str],
        config_args: list[str],
        limits: tuple[float, int],
        cache: Path,
    ) -> None:
        self.root, self.prefix, self.config_args = root, prefix, config_args
        (self.timeout_s, self.max_output_bytes), self.cache_dir = limits, cache

    def measure(
        self,
        targets: list[str],
        version: str | None,
        weight: float,
        details: dict[str, Any],
        *,
        cached_only: bool = False,
    ) -> EvalMetric:
        started = time.perf_counter()
        details["version"] = version
        spelled = {display_path(target, self.root): target for target in targets}
        spelled.pop("", None)
        digests = {name: sha256_file(self.root / name) for name in spelled}
        # Without a version the key would not be safe: scan everything, remember nothing.
        salt = version or f"unknown-{os.urandom(8).hex()}"
        cache = ToolCache(self.cache_dir, self.root, "bandit", salt, self._config_digest())
        findings: list[Finding] = []
        scanned: set[str] = set()
        misses: list[str] = []
        for name in sorted(spelled):
            cached = cache.lookup(name, digests[name])
            if cached is None:
                misses.append(name)
            else:
                findings.extend(cached)
                scanned.add(name)
        details["cache"] = cache.stats()  # also on an error below
        if cached_only and (misses or version is None):
            raise CacheMiss(f"bandit: {len(misses)} file(s) not in the cache")
        if misses:  # nothing changed: bandit is not even started
            fresh, fresh_scanned = self._scan([spelled[name] for name in misses], cache, digests)
            findings.extend(fresh)
            scanned.update(fresh_scanned)
            if version is not None:
                cache.save()
        details["duration_s"] = round(time.perf_counter() - started, 6)
        return _scored(self.root, scanned, findings, weight, details)

    def _config_digest(self) -> str:
        files = [
            self.root / arg for arg in ("pyproject.toml", ".bandit") if arg in self.config_args
        ]
        return json.dumps([self.config_args, digest_files(files)])

    def _scan(
        self, targets: list[str], cache: ToolCache, digests: dict[str, str | None]
    ) -> tuple[list[Finding], set[str]]:
        """Scan in argv-sized batches; cache every file bandit really scanned, errors after."""
        reports = []
        for batch in chunked(targets):
            argv = [*self.prefix, *self.config_args, *batch, *FORMAT_ARGS]
            result = run_tool(
                argv,
                cwd=self.root,
                timeout_s=self.timeout_s,
                max_output_bytes=self.max_output_bytes,
            )
            _require_exit_code(result.returncode, result.stderr_tail())
            reports.append(parse_bandit_json(result.stdout))
        merged = BanditReport(
            errors=[error for report in reports for error in report.errors],
            metrics={name: None for report in reports for name in report.metrics},
            results=[item for report in reports for item in report.results],
        )
        failed = {display_path(error.filename, self.root) for error in merged.errors}
        scanned = {display_path(name, self.root) for name in merged.metrics if name != "_totals"}
        findings = [_finding(result, self.root) for result in merged.results]
        scanned.update(finding.file for finding in findings)
        scanned.discard("")
        for name in sorted(scanned - failed):
            if name in digests:
                mine = [finding for finding in findings if finding.file == name]
                cache.store(name, digests[name], mine)
        cache.save()  # keep what was scanned even when another file fails below
        _require_no_errors(merged, self.root)
        return findings, scanned


def _require_exit_code(returncode: int, stderr_tail: str) -> None:
    if returncode not in (0, 1):
        raise EvidenceError(
            f"bandit exited with unexpected code {returncode} (expected 0 or 1); run "
            f"`bandit -r` in the project to see why\n{stderr_tail or '(no stderr)'}"
        )


def _bandit_version(
    prefix: list[str], ours: bool, root: Path, *, cached_only: bool = False
) -> str | None:
    if ours:
        try:
            return importlib.metadata.version("bandit")
        except importlib.metadata.PackageNotFoundError:
            pass
    if cached_only:
        raise CacheMiss("bandit: its version needs `bandit --version`")
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


def _score_into(details: dict[str, Any], findings: list[Finding]) -> None:
    """Count findings at/above both thresholds; ``by_severity`` applies min_confidence only."""
    min_severity = SEVERITY_ORDER[details["min_severity"]]
    min_confidence = SEVERITY_ORDER[details["min_confidence"]]
    by_severity = dict.fromkeys(("HIGH", "MEDIUM", "LOW"), 0)
    items: list[Finding] = []
    # One order whether findings came from one run, several batches or the cache.
    for finding in sorted(findings, key=lambda item: (item.file, item.line, item.column)):
        severity, confidence = finding.severity or "", finding.confidence or ""
        if SEVERITY_ORDER.get(confidence, 0) < min_confidence:
            continue
        if severity in by_severity:
            by_severity[severity] += 1
        if SEVERITY_ORDER.get(severity, 0) >= min_severity:
            items.append(finding)
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


def collect_security_scores(
    roots: Sequence[tuple[Path, list[Path]]],
    *,
    min_severity: str = "LOW",
    min_confidence: str = "LOW",
    timeout_s: float = 300.0,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
) -> list[EvalMetric]:
    """``collect_security_score`` (the installed bandit, no cache) for several projects, one
    ``(root, paths)`` each, in one bandit process where that gives each project what its own
    run gives (``confgate rank``: one bandit start instead of one per candidate).

    bandit judges every file on its own, so a run over several projects' files gives each file
    the findings of its own project's run, provided bandit reads no settings: a project with
    a ``.bandit`` (anywhere under its paths: bandit looks there, and one such file would apply
    to every project of the run) or a ``[tool.bandit]`` table, a file no project owns alone,
    or a run that fails is measured on its own, as ``collect_security_score`` does.
    """
    thresholds = (_level("min_severity", min_severity), _level("min_confidence", min_confidence))
    prefix = default_bandit_command()
    plain = [index for index, (root, paths) in enumerate(roots)
             if prefix is not None and paths and _reads_no_settings(root.resolve(), paths)]
    found: dict[int, EvalMetric] = {}
    if prefix is not None and len(plain) > 1:
        found = _shared_run([(roots[i][0].resolve(), roots[i][1]) for i in plain], prefix,
                            thresholds, (timeout_s, max_output_bytes))
        found = {plain[position]: metric for position, metric in found.items()}
    return [
        found.get(index) or collect_security_score(
            root, paths, min_severity=min_severity, min_confidence=min_confidence,
            timeout_s=timeout_s, max_output_bytes=max_output_bytes)
        for index, (root, paths) in enumerate(roots)
    ]


def _reads_no_settings(root: Path, paths: list[Path]) -> bool:
    try:
        if _config_args(root):
            return False
    except EvidenceError:
        return False
    for path in paths:
        for _, _, names in os.walk(path):
            if ".bandit" in names:
                return False
    return True


def _shared_run(
    projects: list[tuple[Path, list[Path]]], prefix: list[str], thresholds: tuple[str, str],
    limits: tuple[float, int],
) -> dict[int, EvalMetric]:
    """Each project's metric from one bandit run over all of them; {} when the run cannot
    stand for every project's own (the caller then runs each alone)."""
    argv = [*prefix, "-r", *(os.fspath(p) for _, paths in projects for p in paths), *FORMAT_ARGS]
    try:
        result = run_tool(argv, cwd=projects[0][0], timeout_s=limits[0],
                          max_output_bytes=limits[1])
        _require_exit_code(result.returncode, result.stderr_tail())
        report = parse_bandit_json(result.stdout)
    except (ToolMissing, EvidenceError):
        return {}
    version = _bandit_version(prefix, True, projects[0][0])

    def owner(filename: str) -> int | None:
        owners = [index for index, (root, _) in enumerate(projects)
                  if not Path(display_path(filename, root)).is_absolute()]
        return owners[0] if len(owners) == 1 else None

    owners = [owner(name) for name in (
        *(error.filename for error in report.errors),
        *(name for name in report.metrics if name != "_totals"),
        *(item.filename for item in report.results),
    )]
    if None in owners:
        return {}
    errors = [[e for e in report.errors if owner(e.filename) == i] for i in range(len(projects))]
    scanned = [[n for n in report.metrics if n != "_totals" and owner(n) == i]
               for i in range(len(projects))]
    results = [[r for r in report.results if owner(r.filename) == i]
               for i in range(len(projects))]
    found: dict[int, EvalMetric] = {}
    for index, (root, _) in enumerate(projects):
        details: dict[str, Any] = {"tool": "bandit", "version": version,
                                   "duration_s": round(result.duration_s, 6), "command": argv,
                                   "min_severity": thresholds[0], "min_confidence": thresholds[1]}
        own = BanditReport(errors=errors[index], metrics={}, results=results[index])
        try:
            _require_no_errors(own, root)
            files = {display_path(name, root) for name in scanned[index]}
            files.update(display_path(item.filename, root) for item in results[index])
            files.discard("")
            findings = [_finding(item, root) for item in results[index]]
            found[index] = _scored(root, files, findings, 1.0, details)
        except EvidenceError as exc:
            found[index] = _not_ok(1.0, MetricStatus.ERROR, str(exc), details)
    return found

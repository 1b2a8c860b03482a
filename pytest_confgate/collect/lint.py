"""``lint_score``: the share of files ruff finds nothing wrong with.

ruff runs with the project's own configuration (cwd is the project root), so the gate judges
the code by the rules the project chose. Its JSON lists only violations, so a second, cheap
``ruff check --show-files`` run says which files were checked: without it a clean result could
not be told apart from a run that checked nothing. With a cache (``tool_cache``) the listing
comes first and ruff checks only the files whose content, version or configuration changed.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from pytest_confgate.collect._tool import display_path, tool_version
from pytest_confgate.collect.sources import undecodable_names
from pytest_confgate.collect.tool_cache import (
    CacheMiss,
    ToolCache,
    cached_tool_version,
    chunked,
    digest_files,
    sha256_file,
    sha256_json,
)
from pytest_confgate.config.textfile import tomllib
from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.models import EvalMetric, Finding, MetricStatus
from pytest_confgate.processes import (
    DEFAULT_MAX_OUTPUT_BYTES,
    ToolMissing,
    ToolResult,
    run_tool,
    tail,
)

CHECK_ARGS = ("check", "--output-format", "json", "--no-fix", "--force-exclude")
SHOW_FILES_ARGS = ("check", "--show-files", "--force-exclude")
SYNTAX_ERROR_RULE = "syntax-error"
# ruff < 0.8 gives syntax errors no code; later versions call them "invalid-syntax". One name
# keeps reports and the trust store comparable across ruff upgrades.
_SYNTAX_ERROR_CODES = (None, "", "invalid-syntax")


class _RuffLocation(BaseModel):
    row: int
    column: int


class _RuffViolation(BaseModel):
    filename: str
    code: str | None
    message: str
    location: _RuffLocation | None = None
    url: str | None = None


_RUFF_REPORT = TypeAdapter(list[_RuffViolation])


def default_ruff_command() -> list[str] | None:
    """The ruff binary the ``ruff`` package installed, else one on PATH, else None."""
    try:
        # ruff ships no py.typed marker, so mypy cannot see find_ruff_bin's types.
        from ruff.__main__ import find_ruff_bin  # type: ignore[import-untyped]
    except ImportError:
        pass
    else:
        try:
            return [os.fsdecode(find_ruff_bin())]
        except FileNotFoundError:
            pass
    found = shutil.which("ruff")
    return [found] if found else None


def collect_lint_score(
    root: Path,
    paths: list[Path],
    *,
    command: list[str] | None = None,
    timeout_s: float = 300.0,
    weight: float = 1.0,
    cache_dir: Path | None = None,
    extra_args: tuple[str, ...] = (),
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    cached_only: bool = False,
) -> EvalMetric:
    """Run ruff on ``paths`` and score files with no violation / files checked.

    ``command`` replaces the ruff executable (``["/opt/ruff"]``, ``["uvx", "ruff"]``). A ruff
    that is missing, fails, times out or checks nothing gives an ``unavailable``/``error``
    metric with the reason; it never raises and never reports a clean result.
    ``cache_dir`` (None: no cache) reuses per-file results of unchanged files; the figures are
    the same either way. ``extra_args`` (``--ignore-noqa``) go to the check run, uncached.
    A run that prints more than ``max_output_bytes`` is killed and the metric is an error.
    ``cached_only`` answers only from the cache: ``CacheMiss`` before ruff checks any file.
    """
    if cached_only and (cache_dir is None or extra_args):
        raise CacheMiss("ruff: no cache to answer from")
    root = root.resolve()
    prefix = list(command) if command is not None else default_ruff_command()
    if prefix is None:
        return _not_ok(
            weight,
            MetricStatus.UNAVAILABLE,
            "ruff is not installed: `pip install ruff`, or set the lint metric's `command`",
            {"tool": "ruff", "version": None, "duration_s": 0.0, "command": None},
        )
    argv = [*prefix, *CHECK_ARGS, *extra_args, *(os.fspath(path) for path in paths)]
    details: dict[str, Any] = {"tool": "ruff", "version": None, "duration_s": 0.0}
    details["command"] = argv
    if unnamed := undecodable_names(root, paths):  # ruff exits 2 and names no file
        reason = (
            f"ruff cannot check a file whose name is not UTF-8: {', '.join(unnamed)}; "
            "rename it (git, coverage.py and GitHub cannot show it either)"
        )
        return _not_ok(weight, MetricStatus.ERROR, reason, details)
    run = _Runner(root, timeout_s, max_output_bytes)
    try:
        if cache_dir is None or extra_args:
            return _measure(run, paths, prefix, argv, weight, details)
        return _measure_cached(run, paths, prefix, weight, details, cache_dir, cached_only)
    except ToolMissing as exc:
        reason = f"{exc}: install ruff (`pip install ruff`) or fix the lint metric's `command`"
        return _not_ok(weight, MetricStatus.UNAVAILABLE, reason, details)
    except EvidenceError as exc:
        return _not_ok(weight, MetricStatus.ERROR, str(exc), details)


class _Runner:
    """Runs ruff in the project with the metric's deadline and output cap."""

    def __init__(self, root: Path, timeout_s: float, max_output_bytes: int) -> None:
        self.root, self.timeout_s, self.max_output_bytes = root, timeout_s, max_output_bytes

    def __call__(self, argv: list[str]) -> ToolResult:
        return run_tool(
            argv, cwd=self.root, timeout_s=self.timeout_s, max_output_bytes=self.max_output_bytes
        )


def _measure(
    run: _Runner,
    paths: list[Path],
    prefix: list[str],
    argv: list[str],
    weight: float,
    details: dict[str, Any],
) -> EvalMetric:
    root = run.root
    if not paths:
        raise EvidenceError(f"ruff checked no files under {root}: check `source:`")
    check = run(argv)
    details["duration_s"] = round(check.duration_s, 6)
    details["version"] = tool_version([*prefix, "--version"], cwd=root)
    _require_exit_code(check)
    findings = parse_ruff_json(check.stdout, root)
    listing_argv = [*prefix, *SHOW_FILES_ARGS, *(os.fspath(path) for path in paths)]
    listing = run(listing_argv)
    details["duration_s"] = round(check.duration_s + listing.duration_s, 6)
    checked = _listed_files(listing, root)
    return _scored(root, checked, findings, weight, details)


def _listed_files(listing: ToolResult, root: Path) -> set[str]:
    _require_exit_code(listing, clean_only=True)
    checked = {display_path(line.strip(), root) for line in listing.stdout.splitlines()}
    checked.discard("")
    return checked


def _scored(
    root: Path,
    checked: set[str],
    findings: list[Finding],
    weight: float,
    details: dict[str, Any],
) -> EvalMetric:
    checked = checked | {finding.file for finding in findings}
    if not checked:
        raise EvidenceError(f"ruff checked no files under {root}: check `source:`")
    failing = {finding.file for finding in findings}
    # One order whether findings came from one run, several batches or the cache.
    findings = sorted(findings, key=lambda item: (item.file, item.line, item.column))
    details.update(
        files_checked=len(checked),
        files_with_violations=len(failing),
        violations=len(findings),
        items=[finding.model_dump() for finding in findings],
    )
    value = (len(checked) - len(failing)) / len(checked)
    return EvalMetric(
        type="lint_score", value=value, weight=weight, status=MetricStatus.OK, details=details
    )


def _measure_cached(
    run: _Runner,
    paths: list[Path],
    prefix: list[str],
    weight: float,
    details: dict[str, Any],
    cache_dir: Path,
    cached_only: bool = False,
) -> EvalMetric:
    """List first (a broken config fails here, cached or not), then check only the misses."""
    root = run.root
    if not paths:
        raise EvidenceError(f"ruff checked no files under {root}: check `source:`")
    started = time.perf_counter()
    details["version"] = version = cached_tool_version(
        [*prefix, "--version"], cache_dir, lambda argv: tool_version(argv, cwd=root)
    )
    listing_argv = [*prefix, *SHOW_FILES_ARGS, *(os.fspath(path) for path in paths)]
    listed = sorted(_listed_files(run(listing_argv), root))
    digests = {name: sha256_file(root / name) for name in listed}
    # Without a version the key would not be safe: check everything, remember nothing.
    salt = version or f"unknown-{os.urandom(8).hex()}"
    cache = ToolCache(cache_dir, root, "ruff", salt, ruff_config_digest(root, listed))
    findings: list[Finding] = []
    misses: list[str] = []
    for name in listed:
        cached = cache.lookup(name, digests[name])
        if cached is None:
            misses.append(name)
        else:
            findings.extend(cached)
    details["cache"] = cache.stats()  # also on an error below
    if cached_only and (misses or version is None):
        raise CacheMiss(f"ruff: {len(misses)} file(s) not in the cache")
    fresh = _check_files(run, prefix, misses)
    findings.extend(fresh)
    if version is not None:
        for name in misses:
            cache.store(name, digests[name], [item for item in fresh if item.file == name])
        cache.save()
    details["duration_s"] = round(time.perf_counter() - started, 6)
    return _scored(root, set(listed), findings, weight, details)


def _check_files(run: _Runner, prefix: list[str], names: list[str]) -> list[Finding]:
    findings: list[Finding] = []
    for batch in chunked(names):
        check = run([*prefix, *CHECK_ARGS, *batch])
        _require_exit_code(check)
        findings.extend(parse_ruff_json(check.stdout, run.root))
    return findings


def ruff_config_digest(root: Path, listed: list[str]) -> str:
    """Every ruff config that can apply to ``listed``, and the listing itself.

    ruff reads the nearest pyproject.toml/ruff.toml/.ruff.toml above each file (and the
    user's config when there is none), following ``extend``; hashing every such file in every
    ancestor of every file is a superset, cheap and safe. The listing is included because
    some rules look at other files (isort's first-party detection, INP001's ``__init__.py``).
    """
    folders: set[Path] = set()
    for directory in {(root / name).parent for name in listed} | {root}:
        folders.update([directory, *directory.parents])
    found = [folder / name for folder in folders for name in _RUFF_CONFIGS]
    found.extend(_user_ruff_configs())
    configs = _with_extends([path for path in found if path.is_file()])
    return sha256_json([digest_files(configs), listed])


_RUFF_CONFIGS = ("pyproject.toml", "ruff.toml", ".ruff.toml")


def _user_ruff_configs() -> list[Path]:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return [Path(base) / "ruff" / name for name in _RUFF_CONFIGS]


def _with_extends(configs: list[Path]) -> list[Path]:
    seen: set[Path] = set()
    pending = list(configs)
    while pending:
        path = pending.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue  # hashed as bytes; ruff itself reports the broken file
        section = data.get("tool", {}).get("ruff", {}) if path.name == "pyproject.toml" else data
        extend = section.get("extend") if isinstance(section, dict) else None
        if isinstance(extend, str):
            pending.append(path.parent / os.path.expanduser(extend))
    return sorted(seen)


def _require_exit_code(result: ToolResult, *, clean_only: bool = False) -> None:
    """ruff exits 0 (clean) or 1 (violations); 2 means its configuration or arguments broke."""
    allowed = {0} if clean_only else {0, 1}
    if result.returncode in allowed:
        return
    stderr = result.stderr_tail() or "(nothing on stderr)"
    if result.returncode == 2:
        raise EvidenceError(
            "ruff exited with code 2: its configuration or command line is broken. "
            f"Run `ruff check` in the project to see the whole error, then fix it.\n{stderr}"
        )
    if result.returncode < 0:
        raise EvidenceError(f"ruff was killed by signal {-result.returncode}\n{stderr}")
    if clean_only:  # listing files finds no violations: 1 here is not "violations found"
        printed = tail(result.stdout) or "(nothing)"
        raise EvidenceError(
            f"ruff exited with code {result.returncode} while listing the files it checks "
            "(`ruff check --show-files`, which exits 0 when it works): is `command` really "
            f"ruff? It printed: {printed!r}\n{stderr}"
        )
    raise EvidenceError(
        f"ruff exited with unexpected code {result.returncode} (expected 0 or 1)\n{stderr}"
    )


def parse_ruff_json(stdout: str, root: Path) -> list[Finding]:
    """Turn ``ruff check --output-format json`` output into findings, or raise EvidenceError.

    Anything but a JSON list of violation objects is an error: garbage must never read as
    "no violations".
    """
    try:
        violations = _RUFF_REPORT.validate_json(stdout)
        return [_finding(violation, root) for violation in violations]
    except (ValidationError, ValueError) as exc:
        snippet = stdout.strip()[:200] or "(nothing)"
        raise EvidenceError(
            "ruff did not print its JSON report (is `command` really ruff?); "
            f"it printed: {snippet!r}; problem: {_first_problem(exc)}"
        ) from exc


def _finding(violation: _RuffViolation, root: Path) -> Finding:
    location = violation.location
    return Finding(
        tool="ruff",
        rule=SYNTAX_ERROR_RULE if violation.code in _SYNTAX_ERROR_CODES else str(violation.code),
        file=display_path(violation.filename, root),
        line=location.row if location else 0,
        column=location.column if location else 0,
        message=violation.message,
        severity=None,
        url=violation.url,
    )


def _first_problem(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "top level"
        return f"{where}: {error['msg']}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _not_ok(
    weight: float, status: MetricStatus, reason: str, details: dict[str, Any]
) -> EvalMetric:
    return EvalMetric(
        type="lint_score", value=None, weight=weight, status=status, reason=reason, details=details
    )

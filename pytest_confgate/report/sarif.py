"""SARIF 2.1.0 of lint and security findings, for GitHub code scanning.

One run per tool, rule ids as the tools name them (``F401``, ``B602``), paths relative to the
repository under ``%SRCROOT%``; tamper and behaviour-change findings (``report.rows``) are a run
of their own (tool ``confgate``, level error). bandit's rules carry GitHub's
``properties.security-severity`` (HIGH 8.0, MEDIUM 5.5, LOW 2.0, with the ``security`` tag) and
every result ``partialFingerprints`` that do not depend on its line, so code scanning can
follow a finding across runs as the code above it moves.

GitHub refuses an upload with more than 25,000 results in a run, more than 20 runs or more
than 10 MB gzipped, and then shows nothing at all; so the log keeps the most severe results
within all three limits, each run says in ``run.properties`` how many it had, and the log's
``properties`` how many results and runs were dropped and why.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from pytest_confgate.models import Finding, GateReport
from pytest_confgate.report.markdown import FINDING_METRICS, count_findings, report_findings
from pytest_confgate.report.rows import tamper_rows

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
MAX_RESULTS_PER_RUN = 25_000
MAX_RUNS = 20
MAX_GZIPPED_BYTES = 10 * 1024 * 1024
SRCROOT = "%SRCROOT%"

_DEFAULT_TOOL = {"lint_score": "ruff", "security_score": "bandit"}
_INFORMATION_URI = {
    "ruff": "https://docs.astral.sh/ruff/",
    "bandit": "https://bandit.readthedocs.io/",
}
_BANDIT_LEVEL = {"HIGH": "error", "MEDIUM": "warning", "LOW": "note"}
SECURITY_SEVERITY = {"HIGH": "8.0", "MEDIUM": "5.5", "LOW": "2.0"}
"""GitHub code scanning reads ``security-severity`` as a CVSS-like score: 7.0 and up is high,
4.0 to 6.9 medium, below 4.0 low; these keep bandit's word."""
TAMPER_TOOL = "confgate"
FINGERPRINT = "confgateFinding/v1"
_SYNTAX_ERROR_RULES = frozenset({"syntax-error", "invalid-syntax", "E999"})
_LEVEL_RANK = {"error": 0, "warning": 1, "note": 2}
_GITHUB_LIMITS = (
    f"GitHub code scanning accepts at most {MAX_RESULTS_PER_RUN:,} results per run, "
    f"{MAX_RUNS} runs and {MAX_GZIPPED_BYTES // (1024 * 1024)} MB gzipped per upload; the most "
    "severe results were kept, the full list is in the JSON report"
)


@dataclass
class _Run:
    tool: str
    version: object
    findings: list[Finding]  # in report order
    total: int
    kept: list[int] | None  # indices into findings, in report order; None: the run is dropped

    def severities(self) -> list[tuple[int, int]]:
        return [(_severity(self.findings[i]), i) for i in self.kept or []]


def render_sarif(
    report: GateReport,
    *,
    repo_root: Path | None = None,
    max_results: int = MAX_RESULTS_PER_RUN,
    max_runs: int = MAX_RUNS,
    max_gzipped_bytes: int = MAX_GZIPPED_BYTES,
) -> dict[str, Any]:
    """A SARIF log, one run per finding metric: ruff for lint, bandit for security; within
    ``max_results`` per run, ``max_runs`` runs and ``max_gzipped_bytes`` as ``sarif_text``."""
    runs = _finding_runs(report, max_results)
    _drop_least_severe_runs(runs, max_runs)
    while True:
        log = _log(runs, repo_root)
        size = _gzipped_size(sarif_text(log))
        kept = sum(len(run.kept or []) for run in runs)
        if size <= max_gzipped_bytes or not kept:
            return log
        _keep_most_severe(runs, int(kept * max_gzipped_bytes / size * 0.9))


def _gzipped_size(text: str) -> int:
    """Measured at gzip's fastest level: never smaller than what an uploader's usual level
    (6) makes, so a log that fits here fits there, at a fraction of the time."""
    return len(gzip.compress(text.encode("utf-8"), compresslevel=1))


def sarif_text(log: dict[str, Any]) -> str:
    """The log as it is written (the size limit is measured on this text): on one line, as
    machines read it; indenting would make it larger and take Python's slow encoder."""
    return json.dumps(log) + "\n"


def dropped_note(text: str) -> str | None:
    """One line for people when the SARIF ``text`` left results out, else None."""
    if '"droppedResults"' not in text:
        return None
    facts = json.loads(text).get("properties", {})
    runs = f" and {facts['droppedRuns']} run(s)" if facts.get("droppedRuns") else ""
    return f"SARIF: {facts.get('droppedResults')} result(s){runs} left out: {facts.get('reason')}"


def _finding_runs(report: GateReport, max_results: int) -> list[_Run]:
    runs: list[_Run] = []
    for metric in report.metrics:
        if metric.type not in FINDING_METRICS:
            continue
        tool = str(metric.details.get("tool") or _DEFAULT_TOOL[metric.type])
        single = report.model_copy(update={"metrics": [metric]})
        found = report_findings(single)
        run = _Run(tool, metric.details.get("version"), found, count_findings(single), None)
        run.kept = sorted(i for _, i in sorted((_severity(f), i) for i, f in enumerate(found))[
            :max_results
        ])
        runs.append(run)
    tamper = [
        Finding(tool=TAMPER_TOOL, rule=row.rule, file=row.file, line=row.line,
                message=row.message, severity="HIGH")
        for row in tamper_rows(report)
    ]
    if tamper:
        kept = list(range(min(len(tamper), max_results)))
        runs.insert(0, _Run(TAMPER_TOOL, report.tool_version, tamper, len(tamper), kept))
    return runs


def _severity(finding: Finding) -> int:
    return _LEVEL_RANK.get(sarif_level(finding), len(_LEVEL_RANK))


def _drop_least_severe_runs(runs: list[_Run], max_runs: int) -> None:
    """At most ``max_runs`` stay: those whose worst result is the most severe."""
    if len(runs) <= max_runs:
        return
    worst = [min(run.severities(), default=(len(_LEVEL_RANK), 0))[0] for run in runs]
    for index in sorted(range(len(runs)), key=worst.__getitem__)[max_runs:]:
        runs[index].kept = None


def _keep_most_severe(runs: list[_Run], budget: int) -> None:
    """Keep ``budget`` results over all runs, the most severe first."""
    ranked = sorted((rank, r, i) for r, run in enumerate(runs) for rank, i in run.severities())
    survivors: list[list[int]] = [[] for _ in runs]
    for _, r, i in ranked[: max(budget, 0)]:
        survivors[r].append(i)
    for run, kept in zip(runs, survivors, strict=True):
        if run.kept is not None:
            run.kept = sorted(kept)


def _log(runs: list[_Run], repo_root: Path | None) -> dict[str, Any]:
    shown = [run for run in runs if run.kept is not None]
    log: dict[str, Any] = {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            _run(run.tool, run.version, [run.findings[i] for i in run.kept or []], run.total,
                 repo_root)
            for run in shown
        ],
    }
    dropped = sum(len(run.findings) - len(run.kept or []) for run in runs)
    if dropped:
        log["properties"] = {
            "truncated": True,
            "droppedResults": dropped,
            "droppedRuns": len(runs) - len(shown),
            "reason": _GITHUB_LIMITS,
        }
    return log


def sarif_level(finding: Finding) -> str:
    """bandit HIGH/MEDIUM/LOW -> error/warning/note; lint is a warning, bad syntax an error;
    a sign of tampering with the evidence an error."""
    if finding.tool == TAMPER_TOOL:
        return "error"
    if finding.tool == "bandit":
        return _BANDIT_LEVEL.get((finding.severity or "").upper(), "warning")
    return "error" if finding.rule in _SYNTAX_ERROR_RULES else "warning"


def sarif_column(finding: Finding) -> int:
    """The 1-based column of ``finding`` (0: none): bandit reports ``col_offset`` from 0, so
    one more; ruff counts from 1 already. Annotations show the same number."""
    if finding.tool == "bandit":
        return finding.column + 1
    return finding.column


def _run(
    tool: str,
    version: object,
    kept: list[Finding],
    total: int,
    repo_root: Path | None,
) -> dict[str, Any]:
    rules: dict[str, dict[str, Any]] = {}
    indices: dict[str, int] = {}
    results = []
    seen: dict[str, int] = {}
    for finding in kept:
        rule_id = finding.rule or "unknown"
        if rule_id not in rules:
            indices[rule_id] = len(rules)
            rules[rule_id] = _rule(rule_id, finding)
        result = _result(finding, rule_id, indices[rule_id], repo_root)
        digest = _fingerprint(finding)
        seen[digest] = seen.get(digest, 0) + 1  # the same finding twice in a file: apart
        result["partialFingerprints"] = {FINGERPRINT: f"{digest}:{seen[digest]}"}
        results.append(result)
    driver: dict[str, Any] = {"name": tool, "rules": list(rules.values())}
    if isinstance(version, str) and version:
        driver["version"] = version
    if tool in _INFORMATION_URI:
        driver["informationUri"] = _INFORMATION_URI[tool]
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "columnKind": "unicodeCodePoints",
        "results": results,
        "properties": {
            "truncated": total > len(kept),
            "totalResults": total,
            "reportedResults": len(kept),
        },
    }
    if repo_root is not None:
        run["originalUriBaseIds"] = {SRCROOT: {"uri": repo_root.resolve().as_uri() + "/"}}
    return run


def _rule(rule_id: str, finding: Finding) -> dict[str, Any]:
    rule: dict[str, Any] = {"id": rule_id}
    if finding.url and finding.url.startswith(("https://", "http://")):
        rule["helpUri"] = finding.url
    severity = SECURITY_SEVERITY.get((finding.severity or "").upper())
    if finding.tool == "bandit" and severity is not None:
        rule["properties"] = {"security-severity": severity, "tags": ["security"]}
    elif finding.tool == TAMPER_TOOL:
        rule["properties"] = {"tags": ["tamper", "test-integrity"]}
    return rule


def _fingerprint(finding: Finding) -> str:
    """What the finding is and where, but not its line: moving code keeps the fingerprint."""
    text = "\0".join((finding.tool, finding.rule, finding.file, " ".join(finding.message.split())))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _result(finding: Finding, rule_id: str, index: int, repo_root: Path | None) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": max(finding.line, 1)}
    column = sarif_column(finding)  # bandit counts columns from 0, ruff from 1; SARIF from 1
    if column >= 1:
        region["startColumn"] = column
    return {
        "ruleId": rule_id,
        "ruleIndex": index,
        "level": sarif_level(finding),
        "message": {"text": finding.message or rule_id},
        "locations": [{"physicalLocation": {
            "artifactLocation": dict(_artifact(finding.file, repo_root)),
            "region": region,
        }}],
    }


@lru_cache(maxsize=4096)  # findings repeat their files; the path work is the slow part
def _artifact(file: str, repo_root: Path | None) -> dict[str, Any]:
    """Repo-relative with forward slashes; an absolute path outside the repo stays a file URI."""
    posix = file.replace("\\", "/")
    path = Path(file)
    if path.is_absolute():
        root = repo_root.resolve() if repo_root is not None else None
        if root is None or not path.is_relative_to(root):
            return {"uri": path.as_uri()}
        posix = path.relative_to(root).as_posix()
    parts = [part for part in PurePosixPath(posix).parts if part not in (".", "")]
    return {"uri": quote("/".join(parts), safe="/"), "uriBaseId": SRCROOT}

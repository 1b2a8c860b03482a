"""SARIF 2.1.0 of lint and security findings, for GitHub code scanning (SPEC 10).

One run per tool, rule ids as the tools name them (``F401``, ``B602``), paths relative to the
repository under ``%SRCROOT%``. GitHub refuses more than 25,000 results per run, so a run keeps
the first 25,000 and says in ``run.properties`` how many there were.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from pytest_confgate.models import Finding, GateReport
from pytest_confgate.report.markdown import FINDING_METRICS, count_findings, report_findings

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
MAX_RESULTS_PER_RUN = 25_000
SRCROOT = "%SRCROOT%"

_DEFAULT_TOOL = {"lint_score": "ruff", "security_score": "bandit"}
_INFORMATION_URI = {
    "ruff": "https://docs.astral.sh/ruff/",
    "bandit": "https://bandit.readthedocs.io/",
}
_BANDIT_LEVEL = {"HIGH": "error", "MEDIUM": "warning", "LOW": "note"}
_SYNTAX_ERROR_RULES = frozenset({"syntax-error", "invalid-syntax", "E999"})


def render_sarif(
    report: GateReport,
    *,
    repo_root: Path | None = None,
    max_results: int = MAX_RESULTS_PER_RUN,
) -> dict[str, Any]:
    """A SARIF log, one run per finding metric: ruff for lint, bandit for security."""
    runs: list[dict[str, Any]] = []
    for metric in report.metrics:
        if metric.type not in FINDING_METRICS:
            continue
        tool = str(metric.details.get("tool") or _DEFAULT_TOOL[metric.type])
        version = metric.details.get("version")
        single = report.model_copy(update={"metrics": [metric]})
        found = report_findings(single, max_results)
        runs.append(_run(tool, version, found, count_findings(single), repo_root))
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": runs}


def sarif_level(finding: Finding) -> str:
    """bandit HIGH/MEDIUM/LOW -> error/warning/note; lint is a warning, bad syntax an error."""
    if finding.tool == "bandit":
        return _BANDIT_LEVEL.get((finding.severity or "").upper(), "warning")
    return "error" if finding.rule in _SYNTAX_ERROR_RULES else "warning"


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
    for finding in kept:
        rule_id = finding.rule or "unknown"
        if rule_id not in rules:
            indices[rule_id] = len(rules)
            rules[rule_id] = _rule(rule_id, finding)
        results.append(_result(finding, rule_id, indices[rule_id], repo_root))
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
    return rule


def _result(finding: Finding, rule_id: str, index: int, repo_root: Path | None) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": max(finding.line, 1)}
    # bandit counts columns from 0, ruff from 1; SARIF from 1.
    column = finding.column + 1 if finding.tool == "bandit" else finding.column
    if column >= 1:
        region["startColumn"] = column
    return {
        "ruleId": rule_id,
        "ruleIndex": index,
        "level": sarif_level(finding),
        "message": {"text": finding.message or rule_id},
        "locations": [{"physicalLocation": {
            "artifactLocation": _artifact(finding.file, repo_root),
            "region": region,
        }}],
    }


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

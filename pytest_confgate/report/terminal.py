"""The summary printed after pytest's own: one line per metric, the findings below the rows,
then the decision and the first screen a reviewer reads (``first_screen``): each thing that
blocks with its figure in its limit's unit and its fix, a waiver only last, then patch coverage.
A terminal is read from the bottom, so that block closes the summary.

Findings (issue 29): signs of tampering always (also with ``-q``); lint and security findings
of a metric whose verdict is FAIL by default, every finding with ``-v``.
"""

from __future__ import annotations

from pytest_confgate.models import Decision, Finding, GateReport
from pytest_confgate.report.display import format_pair
from pytest_confgate.report.first_screen import Blocker, advisories, blockers, patch_coverage
from pytest_confgate.report.markdown import report_findings
from pytest_confgate.report.rows import (
    SIGNOFF_RULE,
    MetricDisplay,
    coverage_gaps,
    early_imports,
    metric_display,
    tamper_rows,
)

MAX_REASONS = 5
MAX_PATCH_FILES = 3
MAX_GAP_FILES = 10
MAX_FINDINGS = 20


def summary_lines(
    report: GateReport, report_path: str | None = None, *, verbosity: int = 0
) -> list[str]:
    """Plain text lines, one row per metric with the policy's verdict; no colour (the caller
    adds it). ``verbosity`` is pytest's: ``-q`` keeps the failing rows and the verdict,
    ``-v`` lists every file with lines to cover."""
    shown = [metric_display(m) for m in report.metrics]
    if verbosity < 0:
        failing = [d for d in shown if d.passed is False]
        table = _table(failing) if failing else []
        return [*table, *finding_lines(report, verbosity), decision_line(report),
                *verdict_block(report)]
    lines = _table(shown)
    lines += finding_lines(report, verbosity)
    lines += _source_lines(report)
    lines += _gap_lines(report, verbosity)
    lines.append("")
    if report.config_passed_over:
        lines.append(config_line(report))
    lines.append(f"risk tier {report.risk_tier} ({report.risk_reason})")
    if report.signoffs.required:
        got = ", ".join(report.signoffs.approved_by) or "none"
        lines.append(
            f"sign-offs: {len(report.signoffs.approved_by)}/{report.signoffs.required} ({got})"
        )
        if len(report.signoffs.approved_by) < report.signoffs.required:
            lines.append(f"  {SIGNOFF_RULE}")
    lines.append(decision_line(report))
    if report.confidence is not None:
        lines.append(confidence_line(report))
    lines += verdict_block(report)
    if report_path:
        lines.append(f"report: {report_path}")
    return lines


def verdict_block(report: GateReport) -> list[str]:
    """What follows the verdict line, for whoever prints one (``confgate gate`` too): what
    blocks with its fix, then patch coverage."""
    return [*_reasons(report), *_patch(report)]


def _reasons(report: GateReport) -> list[str]:
    """What blocks, numbered, each with its figure and its fix, a waiver only after the fix;
    then what does not block. The policy's own words stay in the report's ``reasons``."""
    found = blockers(report)
    lines: list[str] = []
    for number, blocker in enumerate(found[:MAX_REASONS], 1):
        lines += _blocker_lines(number, blocker)
    if len(found) > MAX_REASONS:
        lines.append(f"  ... and {len(found) - MAX_REASONS} more in the report")
    lines += [f"  does not block: {_one_line(a)}" for a in advisories(report)[:MAX_REASONS]]
    return lines


def _blocker_lines(number: int, blocker: Blocker) -> list[str]:
    """``1. security_score: 1 HIGH finding, max 0`` then ``fix:``; a blocker without a figure
    is the policy's own words, on one line."""
    if not blocker.figure:
        return [f"  {number}. {_headline(blocker)}"]
    lines = [f"  {number}. {_headline(blocker)}", f"     fix: {_one_line(blocker.fix)}"]
    if blocker.last_resort:
        lines.append(f"     last resort, {_one_line(blocker.last_resort)}")
    return lines


def _headline(blocker: Blocker) -> str:
    """``security_score: 1 HIGH finding, max 0``; without a figure, the policy's words."""
    parts = (blocker.what, blocker.figure) if blocker.figure else (blocker.what, blocker.fix)
    return _one_line(": ".join(part for part in parts if part))


def _patch(report: GateReport) -> list[str]:
    """Patch coverage in one line: the figure, then where the changed lines no test ran are."""
    patch = patch_coverage(report)
    if patch is None:
        return []
    where = "; ".join(f"{file} {ranges}" for file, ranges in patch.files[:MAX_PATCH_FILES])
    more = len(patch.files) - MAX_PATCH_FILES
    where += f"; and {more} more files" if more > 0 else ""
    if not where:
        return [f"patch coverage: {patch.figure}"]
    return [f"patch coverage: {patch.figure}; not run: {_one_line(where)}"]


def _table(rows: list[MetricDisplay]) -> list[str]:
    """``metric  value  limit  verdict  (details)``, columns as wide as their widest cell."""
    name_w = max([len(d.name) for d in rows] + [len("metric")])
    limit_w = max([len(d.threshold) for d in rows] + [len("limit")])
    value_w = max([len(d.value) for d in rows] + [8])
    lines = [f"{'metric':<{name_w}}  {'value':>{value_w}}  {'limit':<{limit_w}}  verdict"]
    for shown in rows:
        lines.append(
            f"{shown.name:<{name_w}}  {shown.value:>{value_w}}  {shown.threshold:<{limit_w}}  "
            f"{shown.verdict:<8}{_note(shown)}".rstrip()
        )
    return lines


def finding_lines(report: GateReport, verbosity: int = 0) -> list[str]:
    """Tamper findings always; lint and security findings that block (``-v``: all)."""
    lines = []
    rows = tamper_rows(report)
    if rows:
        lines.append(f"tampering and behaviour changes ({len(rows)}):")
        shown = rows if verbosity > 0 else rows[:MAX_FINDINGS]
        lines += [f"  {r.file}:{r.line}  {r.rule}  {_one_line(r.message)}" for r in shown]
        if len(rows) > len(shown):
            lines.append(f"  ... and {len(rows) - len(shown)} more (-v shows all)")
    if verbosity > 0:
        found = report_findings(report)
    else:  # the findings of each metric whose verdict is FAIL
        blocking = [m for m in report.metrics if m.passed is False]
        found = report_findings(report.model_copy(update={"metrics": blocking}))
    if found:
        what = "findings" if verbosity > 0 else "blocking findings"
        lines.append(f"{what} ({len(found)}):")
        shown_findings = found if verbosity > 0 else found[:MAX_FINDINGS]
        lines += [_finding_line(f) for f in shown_findings]
        if len(found) > len(shown_findings):
            lines.append(f"  ... and {len(found) - len(shown_findings)} more (-v shows all)")
    return lines


def _finding_line(finding: Finding) -> str:
    where = f"{finding.file}:{finding.line}" if finding.line else finding.file
    severity = f" {finding.severity}" if finding.severity else ""
    return f"  {where}  {finding.tool} {finding.rule}{severity}  {_one_line(finding.message)}"


def _one_line(text: str) -> str:
    return " ".join(text.split())[:200]


def _source_lines(report: GateReport) -> list[str]:
    """What coverage measured and who chose it, so a figure over the wrong folder shows."""
    early = early_imports(report)
    for metric in report.metrics:
        source = metric.details.get("source") if metric.type == "test_coverage" else None
        if isinstance(source, list) and source:
            who = metric.details.get("selected_by")
            chosen = f" (chosen by {who})" if who else ""
            lines = [f"measured sources: {', '.join(map(str, source[:10]))}{chosen}"]
            return lines + ([early] if early else [])
    return [early] if early else []


def _gap_lines(report: GateReport, verbosity: int) -> list[str]:
    """diff-cover's "Missing lines", per file: the worst ``MAX_GAP_FILES`` (``-v``: all)."""
    lines = []
    for gaps in coverage_gaps(report):
        shown = gaps.files if verbosity > 0 else gaps.files[:MAX_GAP_FILES]
        lines += ["", f"missing {gaps.label}:"]
        width = max(len(gap.file) for gap in shown)
        lines += [f"  {gap.file:<{width}}  {gap.ranges}" for gap in shown]
        if len(gaps.files) > len(shown):
            lines.append(f"  ... and {len(gaps.files) - len(shown)} more files (-v shows all)")
    return lines


def config_line(report: GateReport) -> str:
    """Which of several configuration files was read: the others are not merged in."""
    others = ", ".join(report.config_passed_over)
    return f"config: {report.config_file} (also found, not read: {others})"


def decision_line(report: GateReport) -> str:
    """``confgate: PASS`` / ``FAIL`` / ``NEEDS SIGN-OFF``, the line people look for."""
    word = {
        Decision.PASS: "PASS",
        Decision.FAIL: "FAIL",
        Decision.NEEDS_SIGNOFF: "NEEDS SIGN-OFF",
    }[report.decision]
    return f"confgate: {word}"


def confidence_line(report: GateReport) -> str:
    """The advisory score, worded so nobody mistakes it for the verdict."""
    result = report.confidence
    assert result is not None  # noqa: S101 -- callers check
    score, threshold = format_pair(result.score, result.threshold)
    advice = result.advisory or "threshold not met"
    fallback = " (LLM failed: formula used)" if "fallback" in result.breakdown else ""
    return (
        f"confidence {score} vs {threshold} ({result.method}, {result.mode}){fallback}: "
        f"{advice}; advisory only, the decision above is the policy's"
    )


def verdict_line(report: GateReport) -> str | None:
    """The closing line when the tests passed but the gate did not; ``None`` on a pass."""
    if report.decision is Decision.PASS:
        return None
    found = blockers(report)
    first = _headline(found[0]) if found else "see the report"
    more = f" (and {len(found) - 1} more above)" if len(found) > 1 else ""
    return f"{decision_line(report)}: the tests passed but the gate did not: {first}{more}"


def _note(shown: MetricDisplay) -> str:
    return f"  ({shown.note})" if shown.note else ""

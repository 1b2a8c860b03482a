"""The summary printed after pytest's own: one line per metric, then the decision and why."""

from __future__ import annotations

from pytest_confgate.models import Decision, EvalMetric, GateReport, MetricStatus
from pytest_confgate.report.display import format_pair
from pytest_confgate.report.rows import MetricDisplay, coverage_gaps, metric_display

MAX_REASONS = 5
MAX_GAP_FILES = 10


def summary_lines(
    report: GateReport, report_path: str | None = None, *, verbosity: int = 0
) -> list[str]:
    """Plain text lines, one row per metric with the policy's verdict; no colour (the caller
    adds it). ``verbosity`` is pytest's: ``-q`` keeps the failing rows and the verdict,
    ``-v`` lists every file with lines to cover."""
    shown = [(m, metric_display(m)) for m in report.metrics]
    if verbosity < 0:
        failing = [(m, d) for m, d in shown if d.passed is False]
        return [*_table(failing), decision_line(report), *_reasons(report)] if failing else [
            decision_line(report), *_reasons(report)
        ]
    lines = _table(shown)
    lines += _gap_lines(report, verbosity)
    lines.append("")
    lines.append(f"risk tier {report.risk_tier} ({report.risk_reason})")
    if report.signoffs.required:
        got = ", ".join(report.signoffs.approved_by) or "none"
        lines.append(
            f"sign-offs: {len(report.signoffs.approved_by)}/{report.signoffs.required} ({got})"
        )
    lines.append(decision_line(report))
    if report.confidence is not None:
        lines.append(confidence_line(report))
    lines += _reasons(report)
    if report_path:
        lines.append(f"report: {report_path}")
    return lines


def _reasons(report: GateReport) -> list[str]:
    lines = [f"  - {reason}" for reason in report.reasons[:MAX_REASONS]]
    if len(report.reasons) > MAX_REASONS:
        lines.append(f"  ... and {len(report.reasons) - MAX_REASONS} more in the report")
    return lines


def _table(rows: list[tuple[EvalMetric, MetricDisplay]]) -> list[str]:
    """``metric  value  limit  verdict  (details)``, columns as wide as their widest cell."""
    name_w = max([len(d.name) for _, d in rows] + [len("metric")])
    limit_w = max([len(d.threshold) for _, d in rows] + [len("limit")])
    lines = [f"{'metric':<{name_w}}  {'value':>8}  {'limit':<{limit_w}}  verdict"]
    for metric, shown in rows:
        lines.append(
            f"{shown.name:<{name_w}}  {shown.value:>8}  {shown.threshold:<{limit_w}}  "
            f"{shown.verdict:<8}{_note(metric)}".rstrip()
        )
    return lines


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


def decision_line(report: GateReport) -> str:
    """``confgate: PASS`` / ``FAIL`` / ``NEEDS SIGN-OFF``, the line people look for."""
    word = {
        Decision.PASS: "PASS",
        Decision.FAIL: "FAIL",
        Decision.NEEDS_SIGNOFF: "NEEDS SIGN-OFF",
    }[report.decision]
    return f"confgate: {word}"


def confidence_line(report: GateReport) -> str:
    """The advisory score, worded so nobody mistakes it for the verdict (SPEC 5)."""
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
    first = report.reasons[0] if report.reasons else "see the report"
    return f"{decision_line(report)}: the tests passed but the gate did not: {first}"


def _note(metric: EvalMetric) -> str:
    if metric.status is not MetricStatus.OK:
        state = metric.status.value if metric.status else "unavailable"
        reason = f": {metric.reason.splitlines()[0]}" if metric.reason else ""
        return f"  ({state}{reason})"
    d = metric.details
    if metric.type == "test_pass_rate":
        counts = [f"{d.get(k, 0)} {k}" for k in ("passed", "failed", "errors")]
        counts += [f"{d[k]} {k}" for k in ("skipped", "xfailed") if d.get(k)]
        return f"  ({', '.join(counts)})"
    if metric.type == "test_coverage":
        what = "changed lines" if d.get("scope") == "changed" else "lines"
        return f"  ({d.get('covered_lines', 0)}/{d.get('num_statements', 0)} {what})"
    if metric.type == "lint_score":
        return f"  ({_count(d, 'violations', 'violation')} in {_count(d, 'files_checked', 'file')})"
    if metric.type == "security_score":
        return f"  ({_count(d, 'findings', 'finding')} in {_count(d, 'files_scanned', 'file')})"
    if metric.type == "test_integrity":
        found = _count(d, "findings", "finding")
        return f"  ({found} in {_count(d, 'files_compared', 'changed file')})"
    if metric.type == "llm_judge":
        return f"  (judged by {d.get('evaluator_agent')}, spread {d.get('spread', 0):.2f})"
    return ""


def _count(details: dict[str, object], key: str, noun: str) -> str:
    count = details.get(key, 0)
    return f"{count} {noun}{'' if count == 1 else 's'}"

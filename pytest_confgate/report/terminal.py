"""The summary printed after pytest's own: one line per metric, then the decision and why."""

from __future__ import annotations

from pytest_confgate.models import Decision, EvalMetric, GateReport, MetricStatus
from pytest_confgate.report.display import coverage_counts, format_fraction, format_pair

MAX_REASONS = 5


def summary_lines(report: GateReport, report_path: str | None = None) -> list[str]:
    """Plain text lines, widest metric name first column; no colour (the caller adds it)."""
    width = max([len(m.type) for m in report.metrics] + [len("metric")])
    lines = [f"{'metric':<{width}}  {'value':>8}  {'threshold':>9}  status"]
    for metric in report.metrics:
        lines.append(_metric_line(metric, width))
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
    for reason in report.reasons[:MAX_REASONS]:
        lines.append(f"  - {reason}")
    if len(report.reasons) > MAX_REASONS:
        lines.append(f"  ... and {len(report.reasons) - MAX_REASONS} more in the report")
    if report_path:
        lines.append(f"report: {report_path}")
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


def _metric_line(metric: EvalMetric, width: int) -> str:
    if metric.value is not None and metric.threshold is not None:
        value, threshold = format_pair(metric.value, metric.threshold)
    else:
        value = format_fraction(metric.value) if metric.value is not None else "-"
        threshold = format_fraction(metric.threshold) if metric.threshold is not None else "-"
    status = metric.status.value if metric.status else "?"
    note = _note(metric)
    return f"{metric.type:<{width}}  {value:>8}  {threshold:>9}  {status}{note}"


def _note(metric: EvalMetric) -> str:
    if metric.status is not MetricStatus.OK:
        return f"  ({metric.reason.splitlines()[0]})" if metric.reason else ""
    d = metric.details
    if metric.type == "test_pass_rate":
        passed, failed, errors = (d.get(k, 0) for k in ("passed", "failed", "errors"))
        return f"  ({passed} passed, {failed} failed, {errors} errors)"
    if metric.type == "test_coverage":
        return f"  ({coverage_counts(d)})"
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

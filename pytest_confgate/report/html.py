"""One self-contained HTML page of the report, with an inline SVG chart.

No network: no scripts, fonts, stylesheets or images from anywhere, so the page opens the same
from a CI artifact years later (file names link to the pull request's diff when publish knows
it). Every piece of text goes through ``html.escape``; findings and reasons are untrusted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html import escape

from pytest_confgate.models import Decision, EvalMetric, GateReport
from pytest_confgate.report.display import format_pair
from pytest_confgate.report.escape import with_break_points
from pytest_confgate.report.first_screen import advisories, blockers, patch_coverage
from pytest_confgate.report.markdown import count_findings, report_findings
from pytest_confgate.report.rows import (
    MetricDisplay,
    coverage_gaps,
    judged_words,
    metric_display,
    signoff_words,
    tamper_rows,
)

MAX_FINDINGS = 200
_SAFE_URL = re.compile(r"https://[A-Za-z0-9._~:/?#=&%+-]+")
MAX_GAP_FILES = 500
_VERDICT = {
    Decision.PASS: ("PASS", "pass"),
    Decision.FAIL: ("FAIL", "fail"),
    Decision.NEEDS_SIGNOFF: ("NEEDS SIGN-OFF", "signoff"),
}
_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem;color:#1f2328;max-width:72rem}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #d0d7de;padding:.3rem .6rem}
th{background:#f6f8fa;text-align:left}.num{text-align:right}
.verdict{padding:.6rem 1rem;border-radius:.4rem;color:#fff}
.pass{background:#1a7f37}.fail{background:#cf222e}.signoff{background:#9a6700}
.bar-ok{fill:#1a7f37}.bar-bad{fill:#cf222e}.bar-na{fill:#8c959f}.tick{stroke:#1f2328}
.advisory{border-left:4px solid #8c959f;padding-left:1rem;color:#57606a}
.v-pass{color:#1a7f37;font-weight:600}.v-fail{color:#cf222e;font-weight:600}
.v-advisory,.v-none{color:#57606a}.ranges{font-family:ui-monospace,monospace}
.tamper{border-left:4px solid #cf222e;padding-left:1rem}
.blocks{border-left:4px solid #cf222e;padding-left:1rem}.blocks li{margin:.3rem 0}
.last{color:#57606a}
pre{margin:0;white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:.85rem}
"""
_VERDICT_CSS = {True: "v-pass", False: "v-fail", None: "v-advisory"}
_COUNTED = frozenset({"max_high_severity", "max_lint_violations", "tests_failed",
                      "max_test_tampering"})
COMPARISON_SLOT = "<!-- confgate: the change against the base -->"
"""Where ``compare.with_comparison`` puts the base comparison: after patch coverage."""
MAX_PATCH_FILES = 5
_ROW = 28
_LABEL_W = 250  # room for "test_coverage (changed lines)"
_BAR_W = 400


def render_html(
    report: GateReport,
    *,
    max_findings: int = MAX_FINDINGS,
    diff_link: Callable[[str, int], str | None] | None = None,
) -> str:
    """The verdict, what blocks it and what fixes it, patch coverage and the change against
    the base, then an evidence table and chart, advisory confidence and findings.
    ``diff_link``: the pull request's diff at a file and line (``https://`` only), linked
    from the file names, as in the comment."""
    where = _linker(diff_link)
    word, css = _VERDICT[report.decision]
    title = f"confgate: {word} - {report.project}"
    judged = judged_words(report)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>",
        f'<h1 class="verdict {css}">confgate: {escape(word)} '
        f"(tier {escape(report.risk_tier)})</h1>",
        f"<p>Judged head <code>{escape(judged.head)}</code> against base "
        f"<code>{escape(judged.base)}</code>; may approve: {escape(judged.approvers)}.</p>",
        _blocking(report),  # what blocks and what fixes it: the first screen
        _patch(report),
        COMPARISON_SLOT,  # the change against the base, when --compare gives one
        f"<p>Risk tier {escape(report.risk_tier)}: {escape(report.risk_reason)}. "
        f"Project {escape(report.project)}, confgate {escape(report.tool_version)}, "
        f"{escape(report.generated_at)}.</p>",
        _tamper(report, where),
        _evidence_table(report),
        evidence_chart(report),
        _gaps(report, where),
        _signoffs(report),
        _confidence(report),
        _findings(report, max_findings, where),
        "</body></html>",
    ]
    return "\n".join(part for part in parts if part) + "\n"


def evidence_chart(report: GateReport) -> str:
    """One row per metric in its own unit: a share as a bar with a tick at its floor, a count
    as a bar against its max (scaled to the larger of the two), no bar where a bar would
    mislead (no value, or a verdict that is no figure, as ``test_integrity``'s tier)."""
    height = _ROW * max(len(report.metrics), 1) + 10
    width = _LABEL_W + _BAR_W + 380  # room for "2 violations (max 5 violations) PASS"
    rows = []
    for index, metric in enumerate(report.metrics):
        shown = metric_display(metric)
        y = index * _ROW + 5
        css = {True: "bar-ok", False: "bar-bad", None: "bar-na"}[shown.passed]
        bar = _bar(report, metric)
        if bar is None:
            drawn = ""
        else:
            length, tick = bar
            css = "bar-na" if metric.value is None else css
            drawn = (f'<rect class="bar {css}" x="{_LABEL_W}" y="{y}" '
                     f'width="{round(length * _BAR_W, 2)}" height="20"/>{_tick(tick, y)}')
        label = f"{shown.name}: {shown.value}, limit {shown.threshold}: {shown.verdict}"
        rows.append(
            f'<g class="metric"><title>{escape(label)}</title>'
            f'<text x="0" y="{y + 16}">{escape(shown.name)}</text>{drawn}'
            f'<text x="{_LABEL_W + _BAR_W + 8}" y="{y + 16}">'
            f"{escape(_beside(shown))}</text></g>"
        )
    return (
        f'<svg role="img" aria-labelledby="chart-title" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
        '<title id="chart-title">Each metric\'s value (bar) against its limit (tick): a share '
        "against its floor, a count against its max</title>"
        + "".join(rows)
        + "</svg>"
    )


def _beside(shown: MetricDisplay) -> str:
    """The figure, its limit and the verdict as words beside the bar: the bar alone never
    says which unit it is drawn in."""
    limit = f" ({shown.threshold})" if shown.threshold != "-" else ""
    return f"{shown.value}{limit} {shown.verdict}"


def _bar(report: GateReport, metric: EvalMetric) -> tuple[float, float | None] | None:
    """(bar length, tick) as fractions of the bar's width; None: draw no bar."""
    if metric.type == "test_integrity" and not metric.limit:
        return None  # its verdict is the tier it demands, not a figure against a limit
    count = _count_condition(report, metric)
    if count is not None:  # a limit that counts: the count against its max
        value, limit = count
        scale = max(value, limit, 1.0)
        return value / scale, limit / scale
    if not metric.available or metric.value is None:
        return (0.0, metric.threshold) if metric.value is None and not metric.limit else None
    return metric.value, metric.threshold


def _count_condition(report: GateReport, metric: EvalMetric) -> tuple[float, float] | None:
    """The figure and max of the metric's counting condition, when its only limit counts."""
    limit = metric.limit or ""
    if "max " not in limit or "min " in limit:
        return None
    for condition in report.conditions:
        if (condition.metric == metric.type and condition.name in _COUNTED
                and condition.value is not None and condition.threshold is not None):
            return condition.value, condition.threshold
    return None


def _tick(threshold: float | None, y: int) -> str:
    if threshold is None:
        return ""
    x = round(_LABEL_W + threshold * _BAR_W, 2)
    return f'<line class="tick" x1="{x}" x2="{x}" y1="{y - 3}" y2="{y + 23}" stroke-width="2"/>'


def _evidence_table(report: GateReport) -> str:
    rows = []
    for metric in report.metrics:
        shown = metric_display(metric)
        css = _VERDICT_CSS[shown.passed] if shown.verdict != "-" else "v-none"
        rows.append(
            f"<tr><td>{escape(shown.name)}</td><td class=num>{escape(shown.value)}</td>"
            f"<td>{escape(shown.threshold)}</td>"
            f'<td class="{css}">{escape(shown.verdict)}</td>'
            f"<td>{with_break_points(escape(shown.note))}</td></tr>"
        )
    return (
        "<h2>Evidence</h2><table><thead><tr><th>metric</th><th>value</th><th>limit</th>"
        "<th>verdict</th><th>details</th></tr></thead><tbody>" + "".join(rows)
        + "</tbody></table>"
    )


def _linker(diff_link: Callable[[str, int], str | None] | None) -> Callable[[str, int], str]:
    """A file and line as escaped HTML: a link into the diff when a safe URL is given."""

    def cell(file: str, line: int) -> str:
        text = escape(f"{file}:{line}" if line else file)
        url = diff_link(file, line) if diff_link is not None else None
        return f'<a href="{escape(url)}">{text}</a>' if url and _SAFE_URL.fullmatch(url) else text

    return cell


def _tamper(report: GateReport, where: Callable[[str, int], str]) -> str:
    """Signs of gaming the evidence, before the evidence: base and head code side by side."""
    rows = tamper_rows(report)
    if not rows:
        return ""
    body = "".join(
        f"<tr><td>{where(r.file, r.line)}</td><td>{escape(r.rule)}</td>"
        f"<td><pre>{_breakable(r.base)}</pre></td><td><pre>{_breakable(r.head)}</pre>"
        f"</td><td>{with_break_points(escape(r.message))}</td></tr>"
        for r in rows[:MAX_FINDINGS]
    )
    return (
        f'<section class="tamper"><h2>Tampering and behaviour changes ({len(rows)})</h2>'
        "<table><thead><tr><th>location</th><th>rule</th><th>base</th><th>head</th>"
        f"<th>what</th></tr></thead><tbody>{body}</tbody></table></section>"
    )


def _breakable(code: str) -> str:
    return with_break_points(escape(code)) if code else "-"


def _gaps(report: GateReport, where: Callable[[str, int], str]) -> str:
    """Each file's missing lines as ranges, most missing first (diff-cover's report)."""
    parts = []
    for gaps in coverage_gaps(report):
        shown = gaps.files[:MAX_GAP_FILES]
        rows = "".join(
            f'<tr><td>{where(g.file, 0)}</td><td class="ranges">{escape(g.ranges)}</td></tr>'
            for g in shown
        )
        parts.append(
            f"<h2>Missing {escape(gaps.label)} ({len(shown)} of {len(gaps.files)} files)</h2>"
            "<table><thead><tr><th>file</th>"
            f"<th>missing {escape(gaps.label)}</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    return "".join(parts)


def _blocking(report: GateReport) -> str:
    """Each blocker: its metric and figure in bold, the fix, a waiver only as a last resort."""
    found = blockers(report)
    items = []
    for blocker in found:
        head = ": ".join(part for part in (blocker.what, blocker.figure) if part)
        lead = f"<strong>{escape(head)}.</strong> " if head else ""
        fix = blocker.fix[:1].upper() + blocker.fix[1:] if head else blocker.fix
        stop = "" if fix.endswith((".", "…")) else "."
        last = (f'<br><small class="last">Last resort, {escape(blocker.last_resort)}.</small>'
                if blocker.last_resort else "")
        items.append(f"<li>{lead}{escape(fix)}{stop}{last}</li>")
    words = "".join(f"<li>{escape(reason)}</li>" for reason in report.reasons)
    part = (f'<section class="blocks"><h2>What blocks ({len(found)})</h2><ol>{"".join(items)}'
            "</ol><details><summary>The policy's reasons, word for word</summary>"
            f"<ul>{words}</ul></details></section>") if found else ""
    return part + _list("Does not block", advisories(report))


def _patch(report: GateReport) -> str:
    """Patch coverage: the measured figure, or the changed lines no test ran."""
    patch = patch_coverage(report)
    if patch is None:
        return ""
    where = "; ".join(f"{escape(f)} <span class=ranges>{escape(r)}</span>"
                      for f, r in patch.files[:MAX_PATCH_FILES])
    more = len(patch.files) - MAX_PATCH_FILES
    where += f"; and {more} more files" if more > 0 else ""
    text = f"<strong>{escape(patch.figure)}</strong>"
    text += (f"; not run: {where}." if patch.measured else f": {where}.") if where else "."
    if not patch.measured:
        text += (" (From the project figure; a <code>scope: changed</code> coverage metric "
                 "gates on it.)")
    return f"<h2>Patch coverage</h2><p>{text}</p>"


def _signoffs(report: GateReport) -> str:
    signoffs = report.signoffs
    if not (signoffs.required or signoffs.ignored or signoffs.approved_by):
        return ""
    return _list("Sign-offs", signoff_words(signoffs))


def _list(heading: str, items: list[str]) -> str:
    if not items:
        return ""
    body = "".join(f"<li>{escape(item)}</li>" for item in items)
    return f"<h2>{escape(heading)}</h2><ul>{body}</ul>"


def _confidence(report: GateReport) -> str:
    result = report.confidence
    if result is None:
        return ""
    score, threshold = format_pair(result.score, result.threshold)
    advice = result.advisory or "threshold not met"
    return (
        '<h2>Confidence (advisory only)</h2><p class="advisory">'
        f"{escape(score)} against {escape(threshold)} ({escape(result.method)}, "
        f"{escape(result.mode)}): {escape(advice)}. Advisory only: the decision above is the "
        "policy's, not this score's.</p>"
    )


def _findings(report: GateReport, max_findings: int, where: Callable[[str, int], str]) -> str:
    total = count_findings(report)
    if not total:
        return ""
    found = report_findings(report, max_findings)
    rows = "".join(
        f"<tr><td>{where(f.file, f.line)}</td><td>{escape(f.tool)}</td>"
        f"<td>{escape(f.rule)}</td><td>{escape(f.severity or '')}</td>"
        f"<td>{with_break_points(escape(f.message))}</td></tr>"
        for f in found
    )
    return (
        f"<h2>Findings ({len(found)} of {total})</h2><table><thead><tr>"
        "<th>location</th><th>tool</th><th>rule</th><th>severity</th><th>message</th></tr>"
        f"</thead><tbody>{rows}</tbody></table>"
    )

"""``confgate trust report``: rows, a text table and an HTML page.

Pure rendering of a ``TrustTable`` and the retractions. JSON keeps raw floats; only the table
and the page round for display. Every text in the page goes through ``html.escape``: agent and
project names are whatever the findings files said. The page is self-contained (inline CSS and
SVG, no network). A retracted event is not counted anywhere; each row says how many of its
events were retracted, and the table and page list the retractions (issue 17).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from html import escape
from typing import Any

from pytest_confgate.trust.events import RetractedEvent
from pytest_confgate.trust.formula import TrustTable

COLUMNS = ("agent", "project", "trust", "reviews", "accepted", "discarded")
GLOBAL_LABEL = "(global)"


MAX_LISTED = 20


def report_rows(
    table: TrustTable,
    low_trust: float,
    project: str | None = None,
    retracted: Sequence[RetractedEvent] = (),
) -> list[dict[str, Any]]:
    """JSON rows: the columns plus ``scope``, ``low_trust``, ``mode`` and ``retracted`` (events
    of the row taken back, not counted); ``project`` filters the project rows (global rows
    stay: they are what a new project's triage would use)."""
    per_pair = Counter((r.event.agent, r.event.project) for r in retracted)
    per_agent = Counter(r.event.agent for r in retracted)
    rows = []
    for row in table.rows():
        if project is not None and row.project is not None and row.project != project:
            continue
        rows.append(
            {
                "agent": row.agent,
                "project": row.project,
                "trust": row.trust,
                "reviews": row.reviews,
                "accepted": row.accepted,
                "discarded": row.discarded,
                "scope": "global" if row.project is None else "project",
                "low_trust": row.trust < low_trust,
                "mode": table.mode,
                "retracted": per_agent[row.agent] if row.project is None
                else per_pair[(row.agent, row.project)],
            }
        )
    return rows


def shown_retractions(
    retracted: Sequence[RetractedEvent], project: str | None = None
) -> list[RetractedEvent]:
    """The retractions a report about ``project`` (or every project) lists."""
    return [r for r in retracted if project is None or r.event.project == project]


def retraction_lines(retracted: Sequence[RetractedEvent]) -> list[str]:
    """One line per retraction (newest first, at most ``MAX_LISTED``), for the text table."""
    if not retracted:
        return []
    lines = [f"{len(retracted)} retracted event(s), kept in history and not counted:"]
    for item in retracted[:MAX_LISTED]:
        lines.append(f"  {_describe(item)}")
    if len(retracted) > MAX_LISTED:
        lines.append(f"  ... and {len(retracted) - MAX_LISTED} more (`confgate trust export` "
                     "lists every one)")
    return lines


def _describe(item: RetractedEvent) -> str:
    event, back = item.event, item.retraction
    outcome = "accepted" if event.accepted else "discarded"
    return (f"{back.event_id[:12]}  {event.agent} @ {event.project}: finding {event.finding} "
            f"{outcome} ({event.severity}, run {event.run}); retracted {_date(back.at)} by "
            f"{back.by}: {back.reason}")


def _date(at: float) -> str:
    return datetime.fromtimestamp(at, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def render_table(
    rows: list[dict[str, Any]], low_trust: float, mode: str,
    retracted: Sequence[RetractedEvent] = (),
) -> str:
    """The aligned text table, low-trust rows marked, a legend line, then the retractions."""
    listed = retraction_lines(retracted)
    if not rows:
        return "\n".join(
            ["no trust evidence recorded yet; `confgate trust record` or `resolve` adds some",
             *listed]
        ) + "\n"
    cells = [[*COLUMNS, ""]]
    for row in rows:
        cells.append(
            [
                row["agent"],
                row["project"] if row["project"] is not None else GLOBAL_LABEL,
                _shown(row["trust"], low_trust),
                str(row["reviews"]),
                str(row["accepted"]),
                str(row["discarded"]),
                "LOW TRUST" if row["low_trust"] else "",
            ]
        )
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    lines = []
    for line in cells:
        text = "  ".join(
            cell.rjust(width) if 2 <= i < len(COLUMNS) else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(line, widths, strict=False))
        )
        lines.append(f"{text}  {line[-1]}".rstrip())
    flagged = sum(1 for row in rows if row["low_trust"])
    lines.append(
        f"mode {mode}; {flagged} row(s) below {low_trust:g} (LOW TRUST: a candidate for lower "
        "priority; trust never removes an agent)"
    )
    return "\n".join(lines + listed) + "\n"


_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem;color:#1f2328;max-width:72rem}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #d0d7de;padding:.3rem .6rem}
th{background:#f6f8fa;text-align:left}.num{text-align:right}.low{background:#ffebe9}
.bar-ok{fill:#1a7f37}.bar-low{fill:#cf222e}.tick{stroke:#1f2328}
"""
_ROW = 24
_LABEL_W = 260
_BAR_W = 400


def render_html(
    rows: list[dict[str, Any]], low_trust: float, mode: str,
    retracted: Sequence[RetractedEvent] = (),
) -> str:
    """One self-contained page: the chart of every row's trust, the table, the retractions."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>confgate agent trust</title><style>{_STYLE}</style></head><body>",
        "<h1>Agent trust</h1>",
        f"<p>Mode {escape(mode)}. Rows below {low_trust:g} are marked low trust; trust only "
        "changes an agent's priority, it never removes it.</p>",
        trust_chart(rows, low_trust),
        _html_table(rows, low_trust),
        _html_retractions(retracted),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def trust_chart(rows: list[dict[str, Any]], low_trust: float) -> str:
    """Inline SVG: one bar per row (its trust in [0, 1]) and a labelled line at the low-trust
    mark; a low row says so in words too, not by colour alone."""
    top = 20  # room for the mark's label
    height = top + _ROW * max(len(rows), 1) + 10
    width = _LABEL_W + _BAR_W + 130
    bars = []
    for index, row in enumerate(rows):
        y = top + index * _ROW + 5
        label = f"{row['agent']} @ {row['project'] or GLOBAL_LABEL}"
        css = "bar-low" if row["low_trust"] else "bar-ok"
        length = round(row["trust"] * _BAR_W, 2)
        shown = _shown(row["trust"], low_trust) + (" low trust" if row["low_trust"] else "")
        bars.append(
            f'<g class="trust"><title>{escape(label)}: trust {shown}</title>'
            f'<text x="0" y="{y + 14}">{escape(label)}</text>'
            f'<rect class="{css}" x="{_LABEL_W}" y="{y}" width="{length}" height="16"/>'
            f'<text x="{_LABEL_W + _BAR_W + 8}" y="{y + 14}">{shown}</text></g>'
        )
    x = round(_LABEL_W + low_trust * _BAR_W, 2)
    mark = f"low trust below {low_trust:g}"
    return (
        f'<svg role="img" aria-labelledby="trust-title" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}"><title id="trust-title">Trust per agent and '
        "project (bar) against the low-trust mark (line)</title>"
        + "".join(bars)
        + f'<line class="tick" x1="{x}" x2="{x}" y1="{top - 4}" y2="{height}" stroke-width="2"/>'
        + f'<text class="mark" x="{x + 4}" y="{top - 6}">{escape(mark)}</text></svg>'
    )


def _html_table(rows: list[dict[str, Any]], low_trust: float) -> str:
    head = "".join(f"<th>{name}</th>" for name in COLUMNS)
    body = []
    for row in rows:
        css = ' class="low"' if row["low_trust"] else ""
        project = row["project"] if row["project"] is not None else GLOBAL_LABEL
        body.append(
            f"<tr{css}><td>{escape(row['agent'])}</td><td>{escape(project)}</td>"
            f"<td class=num>{_shown(row['trust'], low_trust)}"
            f"{' (low trust)' if row['low_trust'] else ''}</td>"
            f"<td class=num>{row['reviews']}</td>"
            f"<td class=num>{row['accepted']}</td><td class=num>{row['discarded']}</td></tr>"
        )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _html_retractions(retracted: Sequence[RetractedEvent]) -> str:
    if not retracted:
        return ""
    items = "".join(f"<li><code>{escape(_describe(item))}</code></li>" for item in retracted)
    return (f"<h2>Retracted events</h2><p>{len(retracted)} event(s) taken back: kept in "
            f"history, not counted.</p><ul>{items}</ul>")


def _shown(trust: float, low_trust: float) -> str:
    """Display only: never print a flagged value equal to the mark (0.2999 is not 0.300)."""
    for digits in range(3, 10):
        shown = f"{trust:.{digits}f}"
        if shown != f"{low_trust:.{digits}f}" or trust == low_trust:
            return shown
    return repr(trust)

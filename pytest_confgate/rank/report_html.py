"""The ranking as one self-contained HTML page with an inline-SVG per-category chart.

No script, no external asset: every value and id is escaped, so the page can be opened from
a CI artifact safely.

The page fits a 1280 px window and breaks no word in the middle (issue 36: "blocke d" in a
header, branch names cut anywhere): headers are short (``<abbr>`` gives the category's full
name), columns are wide enough for them, and ids, paths and test ids may break only after a
separator (``/``, ``_``, ``.``, ``:``, ``-``, ``<wbr>``), as people read them.
"""

from __future__ import annotations

import re
from html import escape

from pytest_confgate.rank.models import CATEGORIES
from pytest_confgate.rank.report import cross_test_matrix, writer_standing
from pytest_confgate.rank.service import RankOutcome

_COLOURS = ("#2b6cb0", "#dd6b20", "#38a169", "#805ad5", "#d53f8c", "#319795", "#718096")
_BAR_W, _GAP, _CHART_H, _TOP, _LEFT = 16, 18, 160, 20, 40
_FONT = 13
_LABEL = 12
_MIN_GROUP = 8 * _FONT  # "completeness" at 13 px, with room on either side
HEADS = {"correctness": "corr.", "quality": "qual.", "efficiency": "eff.",
         "completeness": "compl.", "safety": "safety"}
"""Short category headers: each fits its 4.5 em column without a break."""
_SEPARATOR = re.compile(r"([/_.:-]+)")


def ranking_html(outcome: RankOutcome) -> str:
    """The whole page."""
    ranking = outcome.ranking
    winner = ranking.winner
    title = (f"Winner: {escape(winner.solution_id)} (score {winner.score:.2f})" if winner
             else f"No clear winner: tie between {escape(', '.join(ranking.tie))}" if ranking.tie
             else "No clear winner")
    rows = "".join(
        f"<tr><td>{s.rank}</td><td>{breakable(s.solution_id)}</td><td>{s.score:.2f}</td>"
        f"<td>{'yes' if s.evaluation.blocked else 'no'}</td>"
        + "".join(f"<td>{s.evaluation.categories[c]:.2f}</td>" for c in CATEGORIES)
        + f"<td>{_items(s.strengths)}</td><td>{_items(s.weaknesses)}</td></tr>"
        for s in ranking.solutions
    )
    heads = "".join(f'<th><abbr title="{c}">{HEADS[c]}</abbr></th>' for c in CATEGORIES)
    accept = outcome.auto_accept
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>confgate rank {escape(outcome.ranking_id)}</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em;color:#1a202c;max-width:1200px}}
table{{border-collapse:collapse;width:100%;table-layout:fixed}}td,th{{border:1px solid #cbd5e0;
padding:4px 6px;vertical-align:top;overflow-wrap:normal;word-break:normal;hyphens:manual}}
th{{white-space:nowrap}}table.x th{{white-space:normal}}abbr{{text-decoration:none}}
ul{{margin:0;padding-left:1.2em}}
col.r{{width:3.5em}}col.sc{{width:4em}}col.n{{width:4.5em}}col.b{{width:5em}}col.id{{width:14%}}col.s{{width:18%}}
col.w{{width:21%}}</style></head><body>
<h1>Solution Comparison Results</h1>
<p><strong>{title}</strong>; ranking confidence {ranking.confidence:.0%}.
Auto-acceptance: {'accepted' if accept.accept else 'not accepted'} ({escape(accept.reason)}).
Ranking <code>{escape(outcome.ranking_id)}</code>.</p>
<h2>Per-category comparison</h2>
{category_chart(outcome)}
<h2>Solutions</h2>
<table><colgroup><col class="r"><col class="id"><col class="sc"><col class="b">{_cols()}
<col class="s"><col class="w"></colgroup><tr><th>rank</th><th>solution</th><th>score</th>
<th>blocked</th>{heads}
<th>strengths</th><th>weaknesses</th></tr>{rows}</table>
{_cross_html(outcome)}
</body></html>
"""


def category_chart(outcome: RankOutcome) -> str:
    """Grouped bars: one group per category, one bar per solution, 0..1 on the y axis.

    The SVG has a ``viewBox`` and takes the page's width, so it scales with the window; each
    group is wide enough for its label, which is centred under it, and the legend says which
    candidates are blocked in words, not only by a colour. Every candidate has its place in
    every group (issue 28): each bar carries its value, written up the bar, and a blocked
    candidate's empty place says "blocked".
    """
    solutions = outcome.ranking.solutions
    group = max(len(solutions) * _BAR_W + _GAP, _MIN_GROUP)
    width = _LEFT + group * len(CATEGORIES) + 10
    height = _TOP + _CHART_H + 44 + 20 * len(solutions)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
             f'width="100%" style="max-width:{width * 2}px" role="img" '
             f'aria-label="category scores per solution">']
    for tick in (0.0, 0.5, 1.0):
        y = _TOP + _CHART_H * (1 - tick)
        parts.append(f'<line x1="{_LEFT}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" '
                     f'stroke="#e2e8f0"/><text x="4" y="{y + 4:.1f}" font-size="{_FONT}">'
                     f"{tick:.1f}</text>")
    for ci, category in enumerate(CATEGORIES):
        x0 = _LEFT + ci * group
        bars_x = x0 + (group - len(solutions) * _BAR_W) / 2
        for si, solution in enumerate(solutions):
            value = solution.evaluation.categories[category]
            bar = _CHART_H * value
            x = bars_x + si * _BAR_W
            stopped = solution.evaluation.blocked
            parts.append(
                f'<rect x="{x:.1f}" y="{_TOP + _CHART_H - bar:.1f}" '
                f'width="{_BAR_W - 2}" height="{bar:.1f}" fill="{_COLOURS[si % len(_COLOURS)]}">'
                f"<title>{escape(solution.solution_id)} {category}: "
                f"{'blocked' if stopped else f'{value:.2f}'}</title></rect>"
            )
            label = "blocked" if stopped else f"{value:.2f}"
            mid, base = x + (_BAR_W - 2) / 2, _TOP + _CHART_H - 3
            parts.append(  # written up the bar, inside it when it is tall enough
                f'<text x="{mid + 4:.1f}" y="{base:.1f}" font-size="{_LABEL}" '
                f'transform="rotate(-90 {mid + 4:.1f} {base:.1f})" '
                f'fill="{"#1a202c" if stopped or bar < 40 else "#ffffff"}">{label}</text>'
            )
        parts.append(f'<text x="{x0 + group / 2:.1f}" y="{_TOP + _CHART_H + 18}" '
                     f'font-size="{_FONT}" text-anchor="middle">{category}</text>')
    for si, solution in enumerate(solutions):
        y = _TOP + _CHART_H + 40 + 20 * si
        blocked = ", blocked" if solution.evaluation.blocked else ""
        parts.append(f'<rect x="{_LEFT}" y="{y - 11}" width="12" height="12" '
                     f'fill="{_COLOURS[si % len(_COLOURS)]}"/><text x="{_LEFT + 18}" y="{y}" '
                     f'font-size="{_FONT}">{escape(solution.solution_id)} '
                     f"(score {solution.score:.2f}{blocked})</text>")
    parts.append("</svg>")
    return "".join(parts)


def _cols() -> str:
    return '<col class="n">' * len(CATEGORIES)


def breakable(text: str) -> str:
    """``text`` escaped, free to break after each separator and nowhere inside a word."""
    return "".join(escape(part) + ("<wbr>" if _SEPARATOR.fullmatch(part) else "")
                   for part in _SEPARATOR.split(text) if part)


def _items(texts: tuple[str, ...]) -> str:
    return ("<ul>" + "".join(f"<li>{breakable(t)}</li>" for t in texts) + "</ul>"
            if texts else "")


def _cross_html(outcome: RankOutcome) -> str:
    matrix = cross_test_matrix(outcome)
    if not matrix:
        return ""
    targets = sorted({t for row in matrix.values() for t in row})
    head = "".join(f"<th>{breakable(t)}</th>" for t in targets)
    body = ""
    for source in sorted(matrix):
        cells = ""
        for target in targets:
            cell = matrix[source].get(target)
            text = ("-" if cell is None else "error" if cell["problem"]
                    else f"{cell['passed']}/{cell['ran']}")
            cells += f"<td>{text}</td>"
        weight, reason = writer_standing(outcome, source)
        body += (f"<tr><th>{breakable(source)}</th>{cells}"
                 f"<td>{weight:g}: {escape(reason)}</td></tr>")
    return (f"<h2>Cross-testing</h2><p>New tests of each row, run on each column; a failure "
            f"weighs its writer's standing.</p>"
            f'<table class="x"><tr><th></th>{head}<th>failures weigh</th></tr>{body}</table>')

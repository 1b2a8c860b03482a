"""Markdown for ``$GITHUB_STEP_SUMMARY`` and the sticky PR comment.

Rendered only from a ``GateReport``, so any saved report can be rendered again. Text that comes
from findings, reasons or waivers is untrusted: it is escaped so it cannot break a table, inject
HTML or links, mention people, or start a line (a workflow command such as ``::error::``). The
output stays under ``limit_bytes`` (GitHub refuses a step summary over 1 MiB) and then ends with
a pointer to the full report.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import Any

from pytest_confgate.models import Decision, Finding, GateReport
from pytest_confgate.report.display import format_pair
from pytest_confgate.report.escape import MAX_CELL as MAX_CELL
from pytest_confgate.report.escape import escape_markdown as escape_markdown
from pytest_confgate.report.escape import with_break_points
from pytest_confgate.report.first_screen import advisories, blockers, patch_coverage
from pytest_confgate.report.rows import FINDING_METRICS as FINDING_METRICS  # sarif reads it here
from pytest_confgate.report.rows import (
    coverage_gaps,
    early_imports,
    finding_items,
    judged_words,
    metric_display,
    signoff_words,
    tamper_rows,
)

MARKER = "<!-- confgate-report -->"
STEP_SUMMARY_LIMIT = 1_000_000
COMMENT_LIMIT = 60_000  # GitHub refuses a comment body over 65,536 characters
MAX_FINDINGS = 50
MAX_GAP_FILES = 50
MAX_TAMPER = 30
MAX_CODE = 200
MAX_PATCH_FILES = 5

_VERDICT = {
    Decision.PASS: "✅ confgate: PASS",
    Decision.FAIL: "❌ confgate: FAIL",
    Decision.NEEDS_SIGNOFF: "✋ confgate: NEEDS SIGN-OFF",
}
_SAFE_URL = re.compile(r"https://[A-Za-z0-9._~:/?#=&%+-]+")


def report_findings(report: GateReport, limit: int | None = None) -> list[Finding]:
    """Lint and security findings in report order (the first ``limit``); bad items are skipped."""
    found: list[Finding] = []
    for item in _items(report):
        if limit is not None and len(found) >= limit:
            break
        finding = _finding(item)
        if finding is not None:
            found.append(finding)
    return found


def count_findings(report: GateReport) -> int:
    """How many lint and security findings the report holds, without parsing them all."""
    return len(_items(report))


def _items(report: GateReport) -> list[Any]:
    return finding_items(report)


def render_markdown(
    report: GateReport,
    *,
    report_link: str | None = None,
    limit_bytes: int = STEP_SUMMARY_LIMIT,
    max_findings: int = MAX_FINDINGS,
    artifacts: str | None = None,
    against: tuple[GateReport | None, str] | None = None,
    diff_link: Callable[[str, int], str | None] | None = None,
) -> str:
    """The verdict first, then what blocks it and what to do (each failed condition with its
    figure in the unit of its limit, the fix before any waiver), then the change's own lines no
    test ran and the change against the base, then the tier's reason, tampering, evidence,
    missing lines, sign-offs, advisory confidence, findings.

    ``artifacts``: the run's artifacts page (an ``https://`` URL), linked for the HTML report
    and SARIF. ``against``: the base branch's report (None: there is none) and where it came
    from or why there is none, shown as "Change against the base" below the evidence.
    ``diff_link``: the pull request's diff at a file and line (``https://`` only), linked from
    the file names of the tamper, gaps and findings tables.
    """
    where = _linker(diff_link)
    if limit_bytes < 1024:
        raise ValueError(f"limit_bytes must be at least 1024, got {limit_bytes}")
    lines = chain(
        _header(report),
        _blocking(report),  # what blocks and what fixes it, on the first screen
        _patch(report),  # then the change's own lines, and against the base (Codecov's lead)
        _against(report, against),
        _context(report),
        _artifacts(artifacts),
        _tamper(report, where),
        _evidence(report),
        _gaps(report, where),
        _signoffs(report),
        _confidence(report),
        _findings(report, max_findings, where),
        _waivers(report),
    )
    return _capped(lines, limit_bytes, report_link)


def render_comment(
    report: GateReport,
    *,
    against: tuple[GateReport | None, str] | None = None,
    link: str | None = None,
    diff_link: Callable[[str, int], str | None] | None = None,
) -> str:
    """The sticky PR comment: what ``confgate github publish`` posts and ``confgate report
    --format md`` prints, so the comment can be previewed before a push. ``link`` (the run's
    artifacts page) and ``diff_link`` are the only parts that need GitHub."""
    return render_markdown(report, report_link=link, limit_bytes=COMMENT_LIMIT,
                           artifacts=link, against=against, diff_link=diff_link)


def _header(report: GateReport) -> list[str]:
    tier = escape_markdown(report.risk_tier)
    judged = judged_words(report)
    return [
        MARKER,
        f"## {_VERDICT[report.decision]} (tier {tier})",
        "",
        f"Judged head {escape_markdown(judged.head)} against base "
        f"{escape_markdown(judged.base)}; may approve: {escape_markdown(judged.approvers)}.",
        "",
    ]


def _context(report: GateReport) -> list[str]:
    """Why this tier, and what produced the report: below what blocks, which names the
    tier's cause when it matters (``test_integrity`` raised it)."""
    tier = escape_markdown(report.risk_tier)
    return [
        f"Risk tier {tier}: {escape_markdown(report.risk_reason, 1000)}. "
        f"Project {escape_markdown(report.project)}, "
        f"confgate {escape_markdown(report.tool_version)}, {escape_markdown(report.generated_at)}.",
        "",
    ]


def _blocking(report: GateReport) -> list[str]:
    """Each blocker as ``**metric: figure.** fix``, a waiver only as a nested last resort;
    then what does not block, in one line each."""
    found = blockers(report)
    lines = [f"### What blocks ({len(found)})", ""] if found else []
    for number, blocker in enumerate(found, 1):
        head = ": ".join(part for part in (blocker.what, blocker.figure) if part)
        lead = f"**{escape_markdown(head, 300)}.** " if head else ""
        fix = _sentence(escape_markdown(blocker.fix, 1000), capital=bool(head))
        lines.append(f"{number}. {lead}{fix}")
        if blocker.last_resort:
            lines.append(f"   - Last resort, {escape_markdown(blocker.last_resort, 1000)}.")
    if found:  # word for word too, folded: what scripts and agents read in the JSON
        lines += ["", "<details><summary>The policy's reasons, word for word</summary>", ""]
        lines += [f"- {escape_markdown(r, 1000)}" for r in report.reasons]
        lines += ["", "</details>"]
    lines += [""] if found else []
    advisory = advisories(report)
    if advisory:
        lines += ["Does not block:", "", *(f"- {escape_markdown(a, 1000)}" for a in advisory), ""]
    return lines


def _sentence(text: str, *, capital: bool) -> str:
    text = text[:1].upper() + text[1:] if capital else text
    return text if text.endswith((".", "…")) else f"{text}."


def _patch(report: GateReport) -> list[str]:
    """Patch coverage: the figure when the gate measured one, else the changed lines no test
    ran (from the project figure), with where they are."""
    patch = patch_coverage(report)
    if patch is None:
        return []
    where = "; ".join(f"{escape_markdown(f)} {escape_markdown(r, 500)}"
                      for f, r in patch.files[:MAX_PATCH_FILES])
    more = len(patch.files) - MAX_PATCH_FILES
    where += f"; and {more} more files" if more > 0 else ""
    text = f"**{escape_markdown(patch.figure)}**"
    if patch.measured:
        text += f"; not run: {where}." if where else "."
    else:
        text += f": {where}." if where else "."
        text += " (From the project figure; a `scope: changed` coverage metric gates on it.)"
    return ["### Patch coverage", "", text, ""]


def _linker(diff_link: Callable[[str, int], str | None] | None) -> Callable[[str, int], str]:
    """A file and line as a table cell: linked to the diff when a safe URL is given."""

    def cell(file: str, line: int) -> str:
        text = escape_markdown(f"{file}:{line}" if line else file)
        url = diff_link(file, line) if diff_link is not None else None
        return f"[{text}]({url})" if url and _SAFE_URL.fullmatch(url) else text

    return cell


def _tamper(report: GateReport, where: Callable[[str, int], str]) -> list[str]:
    """Signs of gaming the evidence, first of all the evidence: the base's and the head's
    code side by side, so a reviewer sees what the change did without opening the diff."""
    rows = tamper_rows(report)
    if not rows:
        return []
    lines = [f"### ⚠️ Tampering and behaviour changes ({len(rows)})", "",
             "| location | rule | base | head | what |", "|---|---|---|---|---|"]
    for row in rows[:MAX_TAMPER]:
        lines.append(
            f"| {where(row.file, row.line)} | {escape_markdown(row.rule)} | "
            f"{_code(row.base)} | {_code(row.head)} | "
            f"{with_break_points(escape_markdown(row.message), markdown=True)} |"
        )
    if len(rows) > MAX_TAMPER:
        lines.append(f"\n{len(rows) - MAX_TAMPER} more in the JSON report.")
    return [*lines, ""]


def _code(text: str) -> str:
    """Code from the change, inert: escaped like any cell, then set in a code span."""
    if not text:
        return "-"
    shown = with_break_points(escape_markdown(text, MAX_CODE), markdown=True)
    return f"<code>{shown}</code>"


def _artifacts(url: str | None) -> list[str]:
    if not url or not _SAFE_URL.fullmatch(url):
        return []
    return [f"Full report: the HTML page and SARIF are in [this run's artifacts]({url}).", ""]


def _evidence(report: GateReport) -> list[str]:
    lines = ["### Evidence", "", "| metric | value | limit | verdict | details |",
             "|---|---:|---|---|---|"]
    for metric in report.metrics:
        shown = metric_display(metric)
        mark = {True: "✅ ", False: "❌ ", None: ""}[shown.passed]
        lines.append(
            f"| {escape_markdown(shown.name)} | {shown.value} | {escape_markdown(shown.threshold)}"
            f" | {mark}{shown.verdict} | "
            f"{with_break_points(escape_markdown(shown.note), markdown=True)} |"
        )
    t = report.tests
    lines += ["", f"Tests: {t.passed} passed, {t.failed} failed, {t.errors} errors, "
              f"{t.skipped} skipped, {t.xfailed} xfailed.", ""]
    early = early_imports(report)
    if early:
        lines += [f"Coverage: {escape_markdown(early)}.", ""]
    return lines


def _against(report: GateReport, against: tuple[GateReport | None, str] | None) -> list[str]:
    if against is None:
        return []
    from pytest_confgate.report.compare import comparison_markdown

    return comparison_markdown(report, *against)


def _gaps(report: GateReport, where: Callable[[str, int], str]) -> list[str]:
    """Where coverage is missing, per file, as line ranges (diff-cover's "Missing lines")."""
    lines: list[str] = []
    for gaps in coverage_gaps(report):
        shown = gaps.files[:MAX_GAP_FILES]
        lines += [f"### Missing {gaps.label} ({len(shown)} of {len(gaps.files)} files)", "",
                  f"| file | missing {gaps.label} |", "|---|---|"]
        lines += [f"| {where(g.file, 0)} | {escape_markdown(g.ranges, 1000)} |"
                  for g in shown]
        lines.append("")
    return lines


def _signoffs(report: GateReport) -> list[str]:
    signoffs = report.signoffs
    if not (signoffs.required or signoffs.ignored or signoffs.approved_by):
        return []
    got = len(signoffs.approved_by)
    names = ", ".join(escape_markdown(name, 100) for name in signoffs.approved_by) or "none"
    lines = ["### Sign-offs", "", f"{got}/{signoffs.required} approved ({names}).", ""]
    lines += [f"- {escape_markdown(line, 500)}" for line in signoff_words(signoffs)[1:]]
    if got < signoffs.required:
        lines.append("")
        lines.append(f"**Missing {signoffs.required - got} sign-off(s)** for tier "
                     f"{escape_markdown(report.risk_tier)}.")
    return [*lines, ""]


def _confidence(report: GateReport) -> list[str]:
    result = report.confidence
    if result is None:
        return []
    score, threshold = format_pair(result.score, result.threshold)
    advice = escape_markdown(result.advisory or "threshold not met")
    return [
        "### Confidence (advisory only)",
        "",
        f"> {score} against {threshold} ({result.method}, {result.mode}): {advice}. "
        "Advisory only: the decision above is the policy's, not this score's.",
        "",
    ]


def _findings(
    report: GateReport, max_findings: int, link: Callable[[str, int], str]
) -> Iterator[str]:
    """Lazily, so a report with 100,000 findings costs only the rows that fit the budget."""
    items = _items(report)
    if not items:
        return
    yield f"### Top findings ({min(len(items), max_findings)} of {len(items)})"
    yield from ("", "| location | tool | rule | message |", "|---|---|---|---|")
    for item in items[:max_findings]:
        finding = _finding(item)
        if finding is None:
            continue
        where = link(finding.file, finding.line)
        severity = f" ({escape_markdown(finding.severity)})" if finding.severity else ""
        yield (
            f"| {where} | {escape_markdown(finding.tool)} | {escape_markdown(finding.rule)}"
            f"{severity} | {with_break_points(escape_markdown(finding.message), markdown=True)} |"
        )
    yield ""


def _waivers(report: GateReport) -> list[str]:
    if not report.waivers:
        return []
    lines = ["### Waivers", "", "| rule | paths | status | expires | excused | reason |",
             "|---|---|---|---|---:|---|"]
    for waiver in report.waivers:
        paths = ", ".join(str(p) for p in waiver.get("paths", []) or [])
        cells = [_cell(waiver, "rule"), escape_markdown(paths), _cell(waiver, "status"),
                 _cell(waiver, "expires"), _cell(waiver, "excused"), _cell(waiver, "reason")]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def _cell(data: dict[str, Any], key: str) -> str:
    return escape_markdown(data.get(key, ""))


def _capped(lines: Iterable[str], limit_bytes: int, report_link: str | None) -> str:
    """Whole lines until the budget is spent, keeping room for the pointer to the full report."""
    where = escape_markdown(report_link, 2000) if report_link else "the JSON report"
    footer = f"\n**Truncated** to stay under {limit_bytes} bytes: the full report is {where}.\n"
    budget = limit_bytes - len(footer.encode("utf-8"))
    out: list[str] = []
    used = 0
    for line in lines:
        size = len(line.encode("utf-8")) + 1
        if used + size > budget:
            return "\n".join(out) + "\n" + footer
        out.append(line)
        used += size
    return "\n".join(out) + "\n"


def _finding(item: Any) -> Finding | None:
    if isinstance(item, Finding):
        return item
    try:
        return Finding.model_validate(item)
    except ValueError:  # pydantic's ValidationError is a ValueError
        return None

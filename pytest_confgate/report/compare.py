"""Each metric against a saved report of the base branch (issue 16): Codecov's "+1.20%".

Advisory display only: the verdict is the policy's, whatever the base measured. Metrics are
matched by type and scope, so project and patch figures each meet their own (a changed-lines
figure never meets a whole-project one); per file, coverage's missing lines here and on the
base (issue 29).
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_confgate.models import EvalMetric, GateReport
from pytest_confgate.report.display import format_fraction
from pytest_confgate.report.rows import metric_name

SLOT = "<!-- confgate: the change against the base -->"
"""Where an HTML report wants the comparison (``html.COMPARISON_SLOT``, kept equal by a test)."""


@dataclass(frozen=True)
class Delta:
    """One metric here and in the base report; ``None`` where it was not measured. A metric
    whose limit counts (violations, HIGH findings, signs of tampering) is
    compared in that count (``unit``), never as the share of files it also has."""

    name: str
    value: float | None
    base: float | None
    unit: tuple[str, str] | None = None
    """(singular, plural) of the count compared, or None for a share."""

    def text(self) -> str:
        """``test_coverage: 72.73% (base 80.00%, -7.27 pts)``; ``lint_score: 3 violations
        (base 1, +2)``."""
        shown = self._shown
        now = shown(self.value) if self.value is not None else "not measured"
        if self.base is None:
            return f"{self.name}: {now} (not in the base report)"
        then = f"{self.base:g}" if self.unit else shown(self.base)
        if self.value is None:
            return f"{self.name}: {now} (base {then})"
        if self.unit:
            diff = self.value - self.base
            return f"{self.name}: {now} (base {then}, {'unchanged' if not diff else f'{diff:+g}'})"
        points = (self.value - self.base) * 100
        change = "unchanged" if abs(points) < 0.005 else f"{points:+.2f} pts"
        return f"{self.name}: {now} (base {then}, {change})"

    def _shown(self, value: float) -> str:
        if self.unit is None:
            return format_fraction(value)
        return f"{value:g} {self.unit[0] if value == 1 else self.unit[1]}"


def compare(report: GateReport, base: GateReport) -> list[Delta]:
    """One ``Delta`` per metric of ``report``, in its order, matched by type and scope."""
    before = {_key(m): m for m in base.metrics if m.available}
    deltas = []
    for metric in report.metrics:
        then = before.get(_key(metric))
        unit = _unit(metric)
        if unit is not None:
            now = _count(metric) if metric.available else None
            deltas.append(Delta(metric_name(metric), now,
                                _count(then) if then is not None else None, unit))
        else:
            deltas.append(Delta(metric_name(metric), metric.value if metric.available else None,
                                then.value if then is not None else None))
    return deltas


_UNITS = {"lint_score": ("violation", "violations"),
          "security_score": ("HIGH finding", "HIGH findings"),
          "test_integrity": ("sign of tampering", "signs of tampering")}


def _unit(metric: EvalMetric) -> tuple[str, str] | None:
    """The count a metric is compared in: lint's and security's limit's, when their only
    limit counts (their value is a share of files); ``test_integrity`` always (its share means
    nothing to a reader). A pass rate stays a share: it is one of tests."""
    limit = metric.limit or ""
    counts = "max " in limit and "min " not in limit
    if metric.type == "test_integrity" or (counts and metric.type in _UNITS):
        return _UNITS[metric.type]
    return None


def _count(metric: EvalMetric) -> float | None:
    d = metric.details
    if metric.type == "lint_score":
        found: object = d.get("violations")
    elif metric.type == "security_score":
        found = dict(d.get("by_severity") or {}).get("HIGH", 0)
    else:
        found = d.get("findings")
    if isinstance(found, bool) or not isinstance(found, (int, float)):
        return None
    return float(found)


def comparison_lines(report: GateReport, base: GateReport, base_name: str) -> list[str]:
    """The comparison as plain lines, headed by where the base report came from."""
    head = f"compared with {base_name_of(base, base_name)}"
    return [f"{head}:", *(f"  {delta.text()}" for delta in compare(report, base))]


def base_name_of(base: GateReport, name: str) -> str:
    """``name`` (where the base report came from) with its commit, when not said already."""
    commit = base.provenance.head_sha if base.provenance else None
    return f"{name} (commit {commit[:12]})" if commit and commit[:12] not in name else name


@dataclass(frozen=True)
class FileDelta:
    """A file's lines no test ran, here and on the base (None: not measured there)."""

    file: str
    missing: int
    base: int | None

    def change(self) -> str:
        if self.base is None:
            return "new"
        diff = self.missing - self.base
        return "unchanged" if not diff else f"{diff:+d}"


def file_deltas(report: GateReport, base: GateReport, limit: int = 20) -> list[FileDelta]:
    """Project coverage's missing lines per file that differ from the base's (or the change
    touches), the largest changes first."""
    now, then = _missing(report) or {}, _missing(base)
    change = report.change or {}
    touched = {str(f) for f in change.get("files") or []} if isinstance(change, dict) else set()
    before = then or {}
    rows = [FileDelta(f, now.get(f, 0), before.get(f, 0) if then is not None else None)
            for f in sorted(set(now) | set(before))
            if f in touched or now.get(f, 0) != before.get(f, 0)]
    rows.sort(key=lambda d: (-abs(d.missing - (d.base or 0)), d.file))
    return rows[:limit]


def _missing(report: GateReport) -> dict[str, int] | None:
    """Project coverage's missing lines per file; None when the report measured none."""
    for metric in report.metrics:
        if metric.type == "test_coverage" and metric.details.get("scope", "all") == "all":
            data = metric.details.get("missing")
            if isinstance(data, dict) and metric.available:
                return {str(f): len(v) for f, v in data.items() if isinstance(v, list)}
    return None


def comparison_markdown(report: GateReport, base: GateReport | None, where: str) -> list[str]:
    """"Change against the base" for the comment: each metric's delta and, for coverage, the
    files whose missing lines changed; or why there is no base report."""
    from pytest_confgate.report.escape import escape_markdown

    lines = ["### Change against the base", ""]
    if base is None:
        return [*lines, escape_markdown(where, 1000), ""]
    lines += [f"Compared with {escape_markdown(where, 500)}.", ""]
    lines += [f"- {escape_markdown(d.text(), 500)}" for d in compare(report, base)]
    files = file_deltas(report, base)
    if files:
        lines += ["", "| file | lines not run | base | change |", "|---|---:|---:|---|"]
        lines += [f"| {escape_markdown(d.file)} | {d.missing} | "
                  f"{'-' if d.base is None else d.base} | {d.change()} |" for d in files]
    return [*lines, ""]


def _file_table_html(report: GateReport, base: GateReport) -> str:
    """The per-file change in missing lines, as the comment's table."""
    from html import escape

    files = file_deltas(report, base)
    if not files:
        return ""
    rows = "".join(f"<tr><td>{escape(d.file)}</td><td class=num>{d.missing}</td><td class=num>"
                   f"{'-' if d.base is None else d.base}</td><td>{escape(d.change())}</td></tr>"
                   for d in files)
    return ("<table><thead><tr><th>file</th><th>lines not run</th><th>base</th><th>change</th>"
            f"</tr></thead><tbody>{rows}</tbody></table>")


def _key(metric: EvalMetric) -> tuple[str, str]:
    """Type and scope: a figure over the changed lines never meets one over the whole project
    (it set a changed-lines lint share against the base's project share, "-66.67 pts")."""
    return (metric.type, str(metric.details.get("scope", "all")))


def with_comparison(text: str, fmt: str, report: GateReport, base: GateReport, name: str) -> str:
    """``text`` (a rendered HTML report) with the comparison added. Markdown gets its own, in
    the comment's place (``comparison_markdown`` through ``render_comment``)."""
    from html import escape

    from pytest_confgate.exceptions import ReportError

    if fmt == "html":
        lines = comparison_lines(report, base, name)
        items = "".join(f"<li>{escape(line.strip())}</li>" for line in lines[1:])
        section = f"<h2>Compared with the base</h2><p>{escape(lines[0])}</p><ul>{items}</ul>"
        section += _file_table_html(report, base)
        if SLOT in text:  # after patch coverage, before the evidence (Codecov's order)
            return text.replace(SLOT, section, 1)
        return text.replace("</body></html>", f"{section}\n</body></html>", 1)
    raise ReportError(f"--compare is shown in md and html reports, not in {fmt}")

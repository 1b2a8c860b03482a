"""What every writer shows alike: a metric's row, the lines left to cover, findings worst first
and sign-offs in words (issue 16).

Writers render the policy's verdict (``EvalMetric.passed`` and ``limit``, set by
``gate.policy``); nothing here compares a value with a threshold. A saved report can be
forged or old, so every detail read here is checked for shape and a bad one is skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_confgate.models import SEVERITY_ORDER, EvalMetric, GateReport, Signoffs
from pytest_confgate.report.display import (
    coverage_counts,
    coverage_fraction,
    format_fraction,
    format_pair,
    line_ranges,
)

FINDING_METRICS = ("lint_score", "security_score")
TAMPER_METRICS = ("test_integrity", "tamper_patterns")
"""Metrics whose items are signs of gaming the evidence: the test changes the gate found
(``test_integrity``), and the static patterns the publish step found in the change's code."""
VERDICT_WORDS = {True: "PASS", False: "FAIL"}
MAX_LISTED = 3
"""Findings named in one line of text; the rest are counted."""


@dataclass(frozen=True)
class MetricDisplay:
    """A metric as people read it; shared by the terminal, Markdown and HTML writers."""

    name: str
    value: str
    threshold: str
    """The limit that applies (``min 80.00%``, ``max 0 violations``), or ``-``."""
    verdict: str
    """``PASS``, ``FAIL``, ``advisory`` (nothing of it blocks) or ``-`` (nothing to check)."""
    status: str
    """The evidence state with its reason when it is not ``ok``; empty when it is."""
    passed: bool | None
    note: str = ""
    """What was measured: ``2 passed, 0 failed``, ``changed-line coverage: 1/4 lines``; or the
    evidence state when it is not ``ok``."""


def metric_name(metric: EvalMetric) -> str:
    """The row's name: a patch coverage row reads apart from the project's."""
    if metric.type == "test_coverage" and metric.details.get("scope") == "changed":
        return "test_coverage (changed lines)"
    return metric.type


def metric_display(metric: EvalMetric) -> MetricDisplay:
    """Value via ``format_pair`` (a failing value never shows equal to its floor), the policy's
    verdict and limit, and the evidence state only when it is not ``ok``."""
    precision = _precision(metric)
    if metric.value is not None and metric.threshold is not None:
        value, threshold = format_pair(metric.value, metric.threshold, precision or 2)
    elif metric.value is not None and precision is not None:
        value, threshold = coverage_fraction(metric.value, precision), "-"
    else:
        value = format_fraction(metric.value) if metric.value is not None else "-"
        threshold = format_fraction(metric.threshold) if metric.threshold is not None else "-"
    if metric.limit:
        threshold = metric.limit
        value = _in_limit_units(metric, value)
    integrity = ""
    if metric.type == "test_integrity" and metric.available:
        value, threshold, integrity = integrity_words(metric)
    status = ""
    if not metric.available:
        state = metric.status.value if metric.status else "unavailable"
        reason = metric.reason.splitlines()[0] if metric.reason else ""
        status = f"{state}: {reason}" if reason else state
    verdict = VERDICT_WORDS.get(metric.passed) if metric.passed is not None else None
    if verdict is None:
        verdict = integrity or ("advisory" if metric.limit or not metric.available else "-")
    note = status or metric_note(metric)
    return MetricDisplay(
        metric_name(metric), value, threshold, verdict, status, metric.passed, note
    )


def _precision(metric: EvalMetric) -> int | None:
    """coverage.py's ``precision`` for a coverage figure, when the project sets one."""
    found = metric.details.get("precision") if metric.type == "test_coverage" else None
    if isinstance(found, int) and not isinstance(found, bool) and 0 < found <= 6:
        return found
    return None


def _in_limit_units(metric: EvalMetric, value: str) -> str:
    """The value as its limit counts it: ``1 HIGH`` beside ``max 0 HIGH``, ``3 violations``
    beside ``max 5 violations`` (a share of files beside a count explained nothing); with a
    ``min`` too, the share first (``50.00%, 3 violations``)."""
    if not metric.available or "max " not in str(metric.limit):
        return value
    d = metric.details
    if metric.type == "test_pass_rate":
        count = f"{int(d.get('failed', 0) or 0) + int(d.get('errors', 0) or 0)} failed"
    elif metric.type == "lint_score":
        count = _count(d, "violations", "violation")
    elif metric.type == "security_score":
        count = f"{int(dict(d.get('by_severity') or {}).get('HIGH', 0))} HIGH"
    elif metric.type == "test_integrity":
        count = f"{int(d.get('findings', 0) or 0)} tampering"
    else:
        return value
    return f"{value}, {count}" if "min " in str(metric.limit) else count


def metric_note(metric: EvalMetric) -> str:
    """The counts behind an available metric's value, as pytest, coverage.py, ruff and bandit
    would say them; skipped and xfailed tests apart."""
    d = metric.details
    if metric.type == "test_pass_rate":
        counts = [f"{d.get(k, 0)} {k}" for k in ("passed", "failed", "errors")]
        counts += [f"{d[k]} {k}" for k in ("skipped", "xfailed") if d.get(k)]
        return ", ".join(counts)
    if metric.type == "test_coverage":
        return coverage_counts(d)
    if metric.type == "lint_score":
        return f"{_count(d, 'violations', 'violation')} in {_count(d, 'files_checked', 'file')}"
    if metric.type == "security_score":
        return f"{_count(d, 'findings', 'finding')} in {_count(d, 'files_scanned', 'file')}"
    if metric.type == "tamper_patterns":
        return f"{_count(d, 'findings', 'finding')} in the change's code (publish step)"
    if metric.type == "test_integrity":
        return integrity_note(metric)
    if metric.type == "checklist_completion":
        missing = [str(item) for item in d.get("required_missing") or [] if item]
        return f"required, not checked: {', '.join(missing)}" if missing else ""
    if metric.type == "llm_judge":
        spread = d.get("spread", 0)
        spread_text = f"{spread:.2f}" if isinstance(spread, (int, float)) else "?"
        return f"judged by {d.get('evaluator_agent')}, spread {spread_text}"
    return ""


def integrity_words(metric: EvalMetric) -> tuple[str, str, str]:
    """``test_integrity``'s value, limit and verdict in its own unit: the signs found, that any
    sign raises the tier (or its ``max_test_tampering``), and what happened to the tier."""
    count = finding_count(metric)
    floor = metric.details.get("tier_floor")
    value = f"{plural(count, 'sign')} of tampering"
    if metric.limit or not isinstance(floor, str):
        return value, metric.limit or "-", ""
    return value, f"max 0, else tier {floor}", f"tier {floor}" if count else "PASS"


def integrity_note(metric: EvalMetric) -> str:
    """What the integrity checks looked at, whether the base's tests run on the head's code
    changed any outcome, and what that did to the tier (the findings have their own table)."""
    d = metric.details
    compared = plural(int(d.get("files_compared", 0) or 0), "changed file")
    parts = [f"{plural(finding_count(metric), 'sign')} in {compared}"]
    differential = d.get("differential")
    if isinstance(differential, Mapping) and differential.get("note"):
        parts.append(f"base's tests on the head: {differential.get('note')}")
    floor = d.get("tier_floor")
    if isinstance(floor, str) and not metric.limit:  # what it means for the tier
        parts.append(f"tier raised to at least {floor}" if finding_count(metric)
                     else "tier not raised")
    return "; ".join(str(p) for p in parts)


def tamper_items(details: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A metric's ``items`` that have the shape of a finding (a saved report can be forged)."""
    items = details.get("items")
    return [i for i in items if isinstance(i, Mapping)] if isinstance(items, list) else []


def finding_count(metric: EvalMetric) -> int:
    """``details.findings``, else how many items it lists."""
    count = metric.details.get("findings")
    if isinstance(count, int) and not isinstance(count, bool):
        return count
    return len(tamper_items(metric.details))


def finding_text(item: Mapping[str, Any]) -> str:
    """``B602 at src/app.py:21 (subprocess call with shell=True ...)``: one finding, one line."""
    message = " ".join(str(item.get("message") or "").split())[:160].rstrip(". ")
    what = f" ({message})" if message else ""
    return f"{item.get('rule')} at {item.get('file')}:{item.get('line')}{what}"


def tamper_text(details: Mapping[str, Any]) -> str:
    """The first ``MAX_LISTED`` findings of a metric as ``finding_text``, and how many more."""
    items = tamper_items(details)
    listed = "; ".join(finding_text(i) for i in items[:MAX_LISTED]) or "the change it found"
    return listed + more_words(len(items))


def plural(count: int, noun: str) -> str:
    """``1 sign``, ``2 signs``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def more_words(total: int) -> str:
    """``; and 2 more`` when ``total`` exceeds what a line lists."""
    return f"; and {total - MAX_LISTED} more" if total > MAX_LISTED else ""


def _count(details: Mapping[str, object], key: str, noun: str) -> str:
    count = details.get(key, 0)
    return f"{count} {noun}{'' if count == 1 else 's'}"


@dataclass(frozen=True)
class FileGap:
    """One file's lines no test ran: ``22-26, 30`` (``count`` lines)."""

    file: str
    ranges: str
    count: int


@dataclass(frozen=True)
class CoverageGaps:
    """The files of one coverage metric with lines to cover, worst first."""

    label: str
    """``lines`` for a project figure, ``changed lines`` for a patch (``scope: changed``)."""
    files: list[FileGap]


def coverage_gaps(report: GateReport) -> list[CoverageGaps]:
    """Per coverage metric, each file's missing lines as ranges, most missing lines first."""
    return metric_gaps(report.metrics)


def metric_gaps(metrics: Iterable[EvalMetric]) -> list[CoverageGaps]:
    """``coverage_gaps`` of just these metrics."""
    found = []
    for metric in metrics:
        if metric.type != "test_coverage":
            continue
        changed = metric.details.get("scope") == "changed"
        data = metric.details.get("missing")
        if changed and not data:  # reports from before both keys held the changed lines
            data = metric.details.get("uncovered_changed_lines")
        gaps = [gap for gap in _gaps(data) if gap.count]
        if gaps:
            gaps.sort(key=lambda gap: (-gap.count, gap.file))
            found.append(CoverageGaps("changed lines" if changed else "lines", gaps))
    return found


def _gaps(data: object) -> Iterator[FileGap]:
    if not isinstance(data, Mapping):
        return
    for file, lines in data.items():
        if not isinstance(lines, list):
            continue
        numbers = [n for n in lines if isinstance(n, int) and not isinstance(n, bool) and n > 0]
        spans = line_ranges(numbers)
        text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
        yield FileGap(str(file), text, len(set(numbers)))


def finding_items(report: GateReport) -> list[Any]:
    """Lint and security findings, most severe first (security HIGH first), then by file and
    line, so every list and cap keeps the findings that matter most."""
    items: list[Any] = []
    for metric in report.metrics:
        if metric.type in FINDING_METRICS:
            found = metric.details.get("items", []) or []
            items.extend(found if isinstance(found, list) else [])
    return sorted(items, key=_severity_key)


def _severity_key(item: Any) -> tuple[int, str, int]:
    if not isinstance(item, Mapping):
        return (1, "", 0)
    rank = SEVERITY_ORDER.get(str(item.get("severity") or "").upper(), 0)
    line = item.get("line")
    return (-rank, str(item.get("file", "")), line if isinstance(line, int) else 0)


SIGNOFF_RULE = (
    "A sign-off on a pull request is an approving review of its head commit by someone who "
    "is not its author and wrote none of its commits (a review of an older commit does not "
    "count; a bot only when policy.signoff.approvers lists its login); outside a pull "
    "request, a login in CONFGATE_SIGNOFFS under the same rules."
)
"""Said where sign-offs are counted, so a reviewer knows what to do to give one."""


def signoff_words(signoffs: Signoffs) -> list[str]:
    """Sign-offs in plain sentences: who counted, each review that did not and why, and where
    they were read from (or why they could not be)."""
    lines = []
    counted = ", ".join(signoffs.approved_by) or "nobody"
    lines.append(f"Counted: {counted} ({len(signoffs.approved_by)} of {signoffs.required}).")
    lines.append(SIGNOFF_RULE)
    for entry in signoffs.ignored:
        login = str(entry.get("login", "?")) if isinstance(entry, Mapping) else "?"
        why = str(entry.get("reason", "no reason given")) if isinstance(entry, Mapping) else ""
        lines.append(f"Not counted: {login}: {why}.")
    if signoffs.source:
        failed = "could not be read" in signoffs.source
        lines.append(f"{'Failed' if failed else 'Source'}: {signoffs.source}.")
    return lines


@dataclass(frozen=True)
class TamperRow:
    """A sign of gaming the evidence, with the base's and the head's code side by side."""

    rule: str
    file: str
    line: int
    message: str
    base: str
    head: str
    source: str
    """``test_integrity`` (the gate job) or ``tamper_patterns`` (the publish step)."""


def tamper_rows(report: GateReport) -> list[TamperRow]:
    """Every tamper and behaviour-change finding of the report, in report order, each once
    (the gate's and the publish step's static patterns can find the same line)."""
    rows = []
    seen: set[tuple[str, str, int]] = set()
    for metric in report.metrics:
        if metric.type not in TAMPER_METRICS:
            continue
        items = metric.details.get("items") or []
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, Mapping):
                continue
            line = item.get("line")
            key = (str(item.get("rule")), str(item.get("file")), line if isinstance(line, int)
                   else 0)
            if key in seen:
                continue
            seen.add(key)
            rows.append(TamperRow(
                rule=str(item.get("rule") or "tamper"), file=str(item.get("file") or "?"),
                line=line if isinstance(line, int) and not isinstance(line, bool) else 0,
                message=str(item.get("message") or ""), base=_code(item.get("base")),
                head=_code(item.get("head")), source=metric.type,
            ))
    return rows


def _code(value: object) -> str:
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class Judged:
    """Which commits the verdict is about and who may approve, in words."""

    head: str
    base: str
    approvers: str


def judged_words(report: GateReport) -> Judged:
    """The head (``provenance``), the base (the change's merge base, else its base ref) and
    the approvers (the base's list; an empty list lets any reviewer but the author)."""
    change = report.change or {}
    head = report.provenance.head_sha if report.provenance else None
    base = change.get("merge_base") or change.get("base_commit") or change.get("base_ref")
    approvers = ", ".join(report.signoffs.approvers) or "any reviewer but the author"
    return Judged(_short(head) or "unknown", _short(base) or "none (no base known)", approvers)


def _short(sha: object) -> str:
    if not isinstance(sha, str) or not sha:
        return ""
    return sha[:12] if len(sha) == 40 and all(c in "0123456789abcdef" for c in sha) else sha


def early_imports(report: GateReport, shown: int = 5) -> str | None:
    """Measured modules imported before coverage started, and what to run instead, in words.

    Their import-time lines are not counted (``pytest --confgate`` starts after pytest's
    plugins); ``coverage run -m pytest`` counts them, and so does the command named here.
    """
    for metric in report.metrics:
        if metric.type != "test_coverage":
            continue
        names = metric.details.get("imported_before_start")
        if not isinstance(names, list) or not names:
            return None
        listed = ", ".join(str(name) for name in names[:shown])
        more = f" and {len(names) - shown} more" if len(names) > shown else ""
        instead = str(metric.details.get("run_instead") or "python -m pytest_confgate")
        return (
            f"imported before coverage started (import-time lines not counted): {listed}{more};"
            f" run `{instead}` to count them"
        )
    return None

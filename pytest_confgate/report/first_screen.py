"""What a reviewer needs on the first screen, the same in the comment, the summary and the
HTML page: each thing that blocks with its figure in the unit of its limit and the fix before
any waiver, what ``test_integrity`` found and what it did to the tier, and the change's own
lines that no test ran (patch coverage).

Built from the policy's conditions and the metrics' details; nothing here compares a value with
a threshold (the conditions carry the policy's verdict). A condition this module does not know
(a plugin's, or one publish added) is shown with the policy's own words, in the policy's order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_confgate.models import Condition, EvalMetric, GateReport
from pytest_confgate.report.display import format_fraction, format_pair, in_ranges
from pytest_confgate.report.rows import (
    MAX_LISTED,
    FileGap,
    finding_count,
    finding_text,
    metric_gaps,
    metric_name,
    more_words,
    plural,
    tamper_items,
    tamper_text,
)

ADVISORY = "advisory: "


@dataclass(frozen=True)
class Blocker:
    """One thing that blocks the decision, as the first screen says it."""

    what: str
    """The metric or rule (``security_score``, ``sign-off``); empty for a bare reason."""
    figure: str
    """Its figure in the unit of its limit: ``1 HIGH finding, max 0``; empty when none."""
    fix: str
    """What fixes it: the finding and its line, the test to add, the lines to cover."""
    last_resort: str = ""
    """A waiver, when one could excuse it: said after the fix, never instead of it."""


def blockers(report: GateReport) -> list[Blocker]:
    """The blocking reasons in the policy's order, each with its figure and its fix; a
    ``test_integrity`` that raised the tier joins just before the sign-off it made needed."""
    failing = [c for c in report.conditions if c.blocking and not c.passed]
    found: list[Blocker] = []
    for reason in report.reasons:
        if reason.startswith(ADVISORY):
            continue
        condition = next((c for c in failing if c.message == reason), None)
        if condition is None:
            found.append(Blocker("", "", reason))
            continue
        failing.remove(condition)
        if condition.metric == "signoff":
            raised = integrity_blocker(report)
            found += [raised] if raised else []
        found.append(_blocker(report, condition))
    return found


def advisories(report: GateReport) -> list[str]:
    """Reasons that do not block (an advisory metric or tier), in the policy's words."""
    return [r[len(ADVISORY):] for r in report.reasons if r.startswith(ADVISORY)]


def _blocker(report: GateReport, condition: Condition) -> Blocker:
    metric = _judged_metric(report, condition)
    details: Mapping[str, Any] = metric.details if metric else {}
    count = int(condition.value) if condition.value is not None else 0
    limit = _number(condition.threshold)
    name = condition.name
    if name == "max_high_severity":
        items = [i for i in tamper_items(details) if str(i.get("severity", "")).upper() == "HIGH"]
        listed = "; ".join(finding_text(i) for i in items[:MAX_LISTED])
        fix = f"fix {listed}" if listed else "fix the HIGH findings bandit reported"
        return Blocker(condition.metric, f"{plural(count, 'HIGH finding')}, max {limit}",
                       fix + more_words(len(items)), _waiver(items, "it is a false positive"))
    if name == "max_lint_violations":
        items = tamper_items(details)
        first = f", first {finding_text(items[0])}" if items else ""
        return Blocker(condition.metric, f"{plural(count, 'violation')}, max {limit}",
                       f"fix at least {count - int(condition.threshold or 0)}{first}; "
                       "`ruff check --fix` fixes some", _waiver(items, "it must stay"))
    if name == "tests_failed":
        tests = report.tests
        counts = [f"{plural(tests.failed, 'test')} failed"] if tests.failed else []
        counts += [plural(tests.errors, "error")] if tests.errors else []
        figure = " and ".join(counts) or f"{plural(count, 'test')} failed"
        return Blocker(condition.metric, f"{figure}, max {limit}",
                       "make them pass: pytest's output names each one")
    if name == "tests_ran":
        return Blocker(condition.metric, f"{plural(count, 'test')} ran, min {limit}",
                       "add tests, or check that pytest collects them (testpaths)")
    if name == "max_test_tampering":
        return Blocker(condition.metric, f"{plural(count, 'sign')} of tampering, max {limit}",
                       "undo " + tamper_text(details))
    if name == "signoffs":
        return Blocker("sign-offs", f"{int(condition.threshold or 0)} needed for tier "
                       f"{report.risk_tier}, got {count}",
                       "an approving review of the head commit by someone who is not its "
                       "author and wrote none of its commits")
    if name == "min" and condition.value is not None and condition.threshold is not None:
        shown, floor = format_pair(condition.value, condition.threshold)
        label = condition.message.split(": ", 1)[0] if ": " in condition.message else (
            metric_name(metric) if metric else condition.metric)
        return Blocker(label, f"{shown}, min {floor}", _min_fix(metric, condition))
    return _own_words(condition)


def _min_fix(metric: EvalMetric | None, condition: Condition) -> str:
    """Coverage: the lines to cover; any other floor: the policy's own words."""
    if metric is not None and metric.type == "test_coverage":
        changed = metric.details.get("scope") == "changed"
        report_gaps = _gaps_of(metric)
        listed = "; ".join(f"{g.file} {g.ranges}" for g in report_gaps[:MAX_LISTED])
        what = "the changed lines" if changed else "the missing lines"
        if listed:
            return f"add tests that run {what}: {listed}{more_words(len(report_gaps))}"
        return f"add tests that run {what}"
    return _own_words(condition).fix


def _judged_metric(report: GateReport, condition: Condition) -> EvalMetric | None:
    """The metric a condition judged: for coverage, the patch figure when the condition's
    message names the changed lines (a condition carries no scope of its own)."""
    if condition.metric != "test_coverage":
        return _metric(report, condition.metric)
    changed = condition.message.startswith("test_coverage (changed lines)")
    return next((m for m in report.metrics if m.type == "test_coverage"
                 and (m.details.get("scope") == "changed") == changed), None)


def _gaps_of(metric: EvalMetric) -> list[FileGap]:
    found = metric_gaps([metric])
    return found[0].files if found else []


def integrity_blocker(report: GateReport) -> Blocker | None:
    """``test_integrity`` when its findings raised the tier, as a first-screen item: what it
    found, in its unit, the tier it demands, and how to make it go away (undo the change)."""
    metric = _metric(report, "test_integrity")
    if metric is None or not metric.available:
        return None
    count = finding_count(metric)
    floor = metric.details.get("tier_floor")
    if not count or not isinstance(floor, str) or metric.limit:
        return None
    return Blocker("test_integrity",
                   f"{plural(count, 'sign')} of tampering, which raises the tier to {floor}",
                   f"undo {tamper_text(metric.details)}, or a human reviews it and signs off")


@dataclass(frozen=True)
class Patch:
    """The change's own lines no test ran, and the patch figure when the gate measured one."""

    figure: str
    """``50.00% of changed lines (min 80.00%)``, or the count of changed lines not run."""
    files: list[tuple[str, str]]
    """(file, line ranges) of changed lines no test ran, most first."""
    measured: bool
    """Whether a ``scope: changed`` coverage metric measured it (else derived, not gated)."""


def patch_coverage(report: GateReport) -> Patch | None:
    """Codecov's first line: the changed lines' coverage. From a ``scope: changed`` metric
    when there is one; else the project figure's missing lines within the change (a count,
    not a share: the report keeps no list of the changed lines that are statements)."""
    patch = next((m for m in report.metrics if m.type == "test_coverage"
                  and m.details.get("scope") == "changed"), None)
    if patch is not None and patch.available and patch.value is not None:
        gaps = _gaps_of(patch)
        d = patch.details
        counts = f"{d.get('covered_lines', 0)}/{d.get('num_statements', 0)} changed lines run"
        if patch.threshold is not None:
            shown, floor = format_pair(patch.value, patch.threshold)
            figure = f"{shown} ({counts}), min {floor}"
        else:
            figure = f"{format_fraction(patch.value)} ({counts})"
        return Patch(figure, [(g.file, g.ranges) for g in gaps], True)
    return _derived_patch(report)


def _derived_patch(report: GateReport) -> Patch | None:
    change = report.change or {}
    ranges = change.get("lines") if isinstance(change, Mapping) else None
    project = next((m for m in report.metrics if m.type == "test_coverage"
                    and m.details.get("scope", "all") == "all" and m.available), None)
    if not isinstance(ranges, Mapping) or project is None:
        return None
    kept: dict[str, list[int]] = {}
    missing = project.details.get("missing")
    for file, lines in (missing.items() if isinstance(missing, Mapping) else []):
        spans = ranges.get(file)
        if isinstance(lines, list) and isinstance(spans, list):
            inside = [n for n in lines if isinstance(n, int) and in_ranges(n, spans)]
            if inside:
                kept[str(file)] = inside
    gaps = _gaps_of(project.model_copy(update={"details": {"missing": kept}}))
    total = sum(len(v) for v in kept.values())
    what = "changed line" if total == 1 else "changed lines"
    figure = f"{total} {what} no test ran"  # 0 too: the figure reads alike either way
    return Patch(figure, [(g.file, g.ranges) for g in gaps], False)


def _metric(report: GateReport, kind: str) -> EvalMetric | None:
    return next((m for m in report.metrics if m.type == kind), None)


def _waiver(items: list[Mapping[str, Any]], when: str) -> str:
    if not items:
        return ""
    first = items[0]
    return (f"only if {when}: waive it in gate.policy.waivers: {{rule: {first.get('rule')}, "
            f"paths: [{first.get('file')}], reason: \"why it is safe\", expires: YYYY-MM-DD}}")


def _own_words(condition: Condition) -> Blocker:
    """The policy's message, named by its metric when it starts with ``metric: ``."""
    head = f"{condition.metric}: "
    if condition.message.startswith(head):
        return Blocker(condition.metric, "", condition.message[len(head):])
    return Blocker("", "", condition.message)


def _number(value: float | None) -> str:
    return "?" if value is None else f"{value:g}"

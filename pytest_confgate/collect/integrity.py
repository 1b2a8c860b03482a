"""``test_integrity`` (issue 15): 1.0 when the change leaves its evidence alone, else 0.0.

The findings come from ``tamper.ChangeAnalysis`` (base through git, head from the working
tree); each one is a ``details.items`` entry naming the file and line. What a finding does to
the verdict is the policy's business: ``details.tier_floor`` says which tier the floor rule
in ``gate.tiers`` raises the change to (None when the metric is advisory or when
``max_test_tampering`` makes findings a hard failure instead). What the run-time audit saw the
change's code do joins as more items (``with_audit``, rules ``runtime_*``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_confgate.collect.runtime_audit import RuntimeFinding
from pytest_confgate.collect.tamper import ChangeAnalysis
from pytest_confgate.collect.tamper.differential import DifferentialResult, differential_run
from pytest_confgate.collect.tamper.replay import REPLAY_ENV, ReplayResult, replay
from pytest_confgate.config import IntegrityMetricConfig
from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.models import EvalMetric, MetricStatus, TestOutcomes
from pytest_confgate.paths import glob_match

MAX_ITEMS = 500
"""More findings than this are counted but not listed (the report stays readable)."""
NO_BASE = (
    "no base to compare the change against: set `base_ref:` in the configuration, pass "
    "--confgate-base, or run in a pull request (GITHUB_BASE_REF); or remove the "
    "test_integrity entry (it is on by default whenever a base is known)"
)


def integrity_metric(
    config: IntegrityMetricConfig, analysis: ChangeAnalysis | None
) -> EvalMetric:
    """The ``test_integrity`` metric; without a base, or when git fails, an error."""
    details: dict[str, Any] = {"tool": "confgate", "version": None, "duration_s": 0.0}
    if analysis is None:
        return _error(NO_BASE, details)
    try:
        report = analysis.report()
    except EvidenceError as exc:
        details["duration_s"] = analysis.duration_s
        return _error(f"cannot compare the change with its base: {exc}", details)
    counted = [f for f in report.findings if not _excluded(f.file, config.exclude)]
    floor = None if config.advisory or config.max_test_tampering is not None else (
        config.raise_tier_to
    )
    details.update(
        duration_s=analysis.duration_s,
        files_compared=report.files,
        findings=len(counted),
        by_rule=dict(sorted(Counter(f.rule for f in counted).items())),
        items=[finding.as_item() for finding in counted[:MAX_ITEMS]],
        excluded=len(report.findings) - len(counted),
        unreadable=list(report.unreadable),
        tier_floor=floor,
    )
    return EvalMetric(
        type="test_integrity",
        value=0.0 if counted else 1.0,
        status=MetricStatus.OK,
        details=details,
    )


def with_replay(
    metric: EvalMetric,
    config: IntegrityMetricConfig,
    analysis: ChangeAnalysis | None,
    root: Path,
    environ: Mapping[str, str],
    head: TestOutcomes | None = None,
    by_test: Mapping[str, str] | None = None,
    failing_before: Sequence[str] = (),
) -> EvalMetric:
    """``metric`` with what running the tests again found, now that the main run is over:
    the differential run (``tamper.differential``: the base's tests with the base's
    machinery on the head's code) and the replay of new tests without their ``skip``/``xfail``
    marks (``tamper.replay``). ``details.differential`` and ``details.replay`` say what each
    cost. One that cannot run makes the metric an error: the gate fails closed."""
    if not config.replay or analysis is None or not metric.available:
        return metric
    details = dict(metric.details)
    if environ.get(REPLAY_ENV):
        details["replay"] = {"skipped": "this run is itself a replay"}
        return metric.model_copy(update={"details": details})
    try:
        report = analysis.report()
        unmarked = tuple(r for r in report.reruns if r.kind == "unmarked")
        result = replay(root, unmarked, analysis.versions(),
                        timeout_s=config.replay_timeout_s, environ=environ)
        differential = DifferentialResult()
        if analysis.changes is not None and analysis.changes.files:
            differential = differential_run(
                root, analysis.changes, analysis.versions(), head or TestOutcomes(),
                timeout_s=config.replay_timeout_s, environ=environ, by_test=by_test or {},
                failing_before=failing_before)
    except EvidenceError as exc:
        result, differential = ReplayResult(error=str(exc)), DifferentialResult()
    for what, error in (("the replay of the tests the change marked", result.error),
                        ("the differential run of the base's tests", differential.error)):
        if error is not None:
            return _error(
                f"{what} could not run: {error}; fix it, or set `replay: false` under the "
                "test_integrity metric to go without it", details)
    found = [f for f in (*result.findings, *differential.findings)
             if not _excluded(f.file, config.exclude)]
    items = list(details.get("items") or [])
    count = int(details.get("findings", len(items))) + len(found)
    by_rule = Counter(details.get("by_rule") or {})
    by_rule.update(f.rule for f in found)
    room = max(0, MAX_ITEMS - len(items))
    details.update(
        findings=count,
        by_rule=dict(sorted(by_rule.items())),
        items=items + [f.as_item() for f in found[:room]],
        replay={"tests": result.tests, "reruns": len(unmarked),
                "duration_s": result.duration_s, "findings": len(result.findings)},
        differential=differential.details(),
    )
    value = 0.0 if count else metric.value
    return metric.model_copy(update={"details": details, "value": value})


def with_audit(
    metric: EvalMetric,
    config: IntegrityMetricConfig,
    findings: Sequence[RuntimeFinding],
    changed: Iterable[str] | None,
) -> EvalMetric:
    """``metric`` with what the run-time audit saw the change's code do (``runtime_audit``).

    With a change known, a finding counts when its stack passes through a file the change
    added or edited; the others are only counted in ``details.runtime_audit``.
    """
    if not metric.available:
        return metric
    wanted = None if changed is None else set(changed)
    counted = [f.as_item(wanted) for f in findings if f.place(wanted) is not None]
    found = [item for item in counted if not _excluded(str(item["file"]), config.exclude)]
    details = dict(metric.details)
    details["runtime_audit"] = {"findings": len(found), "outside_the_change": len(findings)
                                - len(counted), "excluded": len(counted) - len(found)}
    if not found:
        return metric.model_copy(update={"details": details})
    items = list(details.get("items") or [])
    by_rule = Counter(details.get("by_rule") or {})
    by_rule.update(str(item["rule"]) for item in found)
    room = max(0, MAX_ITEMS - len(items))
    details.update(
        findings=int(details.get("findings", len(items))) + len(found),
        by_rule=dict(sorted(by_rule.items())),
        items=items + found[:room],
    )
    return metric.model_copy(update={"details": details, "value": 0.0})


def _excluded(path: str, patterns: list[str]) -> bool:
    return any(glob_match(pattern, path) for pattern in patterns)


def _error(reason: str, details: dict[str, Any]) -> EvalMetric:
    return EvalMetric(type="test_integrity", status=MetricStatus.ERROR, reason=reason,
                      details=details)

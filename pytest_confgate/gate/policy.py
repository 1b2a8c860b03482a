"""The evidence policy gate: evidence + tier + sign-offs -> pass | fail | needs_signoff.

Pure: no IO, no clock, no environment. Values are compared raw; rounding happens only in the
messages, and a message never shows a failing value as equal to its threshold.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal

from pytest_confgate.config import GateConfig, LlmJudgeMetricConfig, MetricConfig
from pytest_confgate.config.metrics import breaks_limit
from pytest_confgate.models import (
    Condition,
    Decision,
    EvalMetric,
    Signoffs,
    TestOutcomes,
    Verdict,
)
from pytest_confgate.report.display import format_pair

# Reasons are listed most important first: broken tests, then missing evidence, then
# security, then floors, then style, then people.
_PRIORITY = {
    "altered": 0,  # the report was rewritten after the gate wrote it (issue 29)
    "job": 0,  # the gate job did not succeed (issue 29)
    "stream": 0,  # the supervisor's tally of the test process's outcomes (issue 34)
    "attested": 0,  # a report confgate gate did not write (issue 34)
    "tests_failed": 0,
    "tests_ran": 1,
    "evidence": 2,
    "max_high_severity": 3,
    "max_test_tampering": 3,
    "min": 4,
    "checklist_required": 5,
    "max_lint_violations": 5,
    "plugin": 6,
    "signoffs": 9,
}
_PLUGIN_PRIORITY = 7  # conditions from third-party plugins: after ours, before people


@dataclass(frozen=True)
class _Check:
    name: str
    passed: bool
    message: str
    value: float | None = None
    threshold: float | None = None
    limit: str | None = None
    """The limit as people read it (``max 0 violations``); None for checks that are no limit."""


def decide(
    gate: GateConfig,
    tier: str,
    metrics: list[EvalMetric],
    tests: TestOutcomes,
    signoffs: Signoffs,
    *,
    confidence_met: bool = False,
    extra: list[Condition] | None = None,
) -> Verdict:
    """Apply the tier's policy to the evidence; the order of ``reasons`` is importance.

    ``extra`` are plugin conditions: they can add reasons to fail, never remove one, and
    the tier decides whether they block as it does for ours.
    """
    blocking, needed, may_advance = gate.policy.tier(tier)
    conditions: list[Condition] = []
    judged: dict[int, EvalMetric] = {}
    for config in gate.metrics:
        metric = metric_for(config, metrics)
        partial = _partial_judgement(config, metric)
        own: list[Condition] = []
        checks = _checks(gate, config, metric, tests)
        for check in checks:
            advisory = config.advisory or partial is not None
            is_blocking = (blocking or check.name == "tests_failed") and not advisory
            if partial is not None and not check.passed:
                check = replace(check, message=f"{check.message} ({partial})")
            own.append(_condition(config.type, check, is_blocking))
        conditions.extend(own)
        if metric is not None:
            judged[id(metric)] = _judged(metric, own, checks)
    for condition in extra or []:
        conditions.append(
            condition.model_copy(update={"blocking": condition.blocking and blocking})
        )
    if needed:
        conditions.append(_signoff_condition(tier, needed, signoffs))
    verdict = _verdict(conditions, auto_advance_allowed=may_advance and confidence_met)
    # A metric no configured condition judges (a plugin's) carries no verdict, whatever it says.
    unjudged = {"passed": None, "limit": None}
    judged_metrics = [judged.get(id(m)) or m.model_copy(update=unjudged) for m in metrics]
    return verdict.model_copy(update={"metrics": judged_metrics})


def _judged(metric: EvalMetric, own: list[Condition], checks: list[_Check]) -> EvalMetric:
    """``metric`` with the verdict on its own conditions and the limits that apply.

    ``passed`` is None when none of its conditions blocks (advisory: the metric, or the tier)
    or when there is nothing to check beyond collecting the evidence.
    """
    limit = ", ".join(c.limit for c in checks if c.limit) or None
    checked = [c for c in own if not (c.name == "evidence" and c.passed)]
    passed: bool | None = None
    if checked and any(c.blocking for c in checked):
        passed = all(c.passed for c in checked)
    update: dict[str, object] = {"passed": passed, "limit": limit}
    floor = next((c.threshold for c in checks if c.name == "min"), None)
    if metric.threshold is None and floor is not None:
        update["threshold"] = floor  # a floor the project set: shown beside the value
    return metric.model_copy(update=update)


def metric_for(config: MetricConfig, metrics: list[EvalMetric]) -> EvalMetric | None:
    """The measurement ``config`` judges: by type, and for coverage by scope too.

    Two ``test_coverage`` entries (project and patch) each get their own figure, told apart
    by ``details.scope``; a lone entry takes the one metric of its type.
    """
    found = [m for m in metrics if m.type == config.type]
    scope = getattr(config, "scope", None)
    if len(found) > 1 and config.type == "test_coverage" and scope is not None:
        found = [m for m in found if m.details.get("scope", "all") == scope] or found
    return found[0] if found else None


def recount_signoffs(
    verdict: Verdict, tier: str, signoffs: Signoffs, *, auto_advance_allowed: bool | None = None
) -> Verdict:
    """The same verdict with sign-offs counted again from ``signoffs`` (``required`` of them).

    The Action runs the change's tests without a token, so reviews can only be read in its
    publish step; this replaces the sign-off condition and re-decides. Every other condition
    stands as the gate decided it, so sign-offs can never turn a ``fail`` into anything else.
    ``auto_advance_allowed`` is the rest (the tier allows it and the confidence advisory
    is met), when the caller knows it; without it, ``auto_advance`` survives only on a verdict
    that passes both times.
    """
    conditions = [c for c in verdict.conditions if c.metric != "signoff"]
    if signoffs.required:
        conditions.append(_signoff_condition(tier, signoffs.required, signoffs))
    allowed = verdict.auto_advance if auto_advance_allowed is None else auto_advance_allowed
    after = _verdict(conditions, auto_advance_allowed=allowed)
    return after.model_copy(update={"metrics": verdict.metrics})


def _partial_judgement(config: MetricConfig, metric: EvalMetric | None) -> str | None:
    """Why an ``llm_judge`` is only advisory: it saw part of the diff (issue 18), unless the
    configuration allows that. Never when its input was suspect: that fails closed."""
    if metric is None or not isinstance(config, LlmJudgeMetricConfig):
        return None
    details = metric.details
    if not details.get("diff_truncated") or details.get("injection_suspected"):
        return None
    if config.allow_truncated_diff:
        return None
    return (
        f"advisory only: the judge saw {details.get('diff_shown_chars')} of the diff's "
        f"{details.get('diff_chars')} characters; raise max_diff_chars, or set "
        "allow_truncated_diff: true to let a partial judgement block"
    )


def _signoff_condition(tier: str, needed: int, signoffs: Signoffs) -> Condition:
    got = len(signoffs.approved_by)
    who = f" ({', '.join(signoffs.approved_by)})" if got else ""
    return Condition(
        metric="signoff",
        name="signoffs",
        passed=got >= needed,
        message=f"{tier} needs {_plural(needed, 'human sign-off')}; got {got}{who}",
        value=float(got),
        threshold=float(needed),
    )


def verdict_of(conditions: list[Condition], *, auto_advance_allowed: bool) -> Verdict:
    """The decision ``conditions`` make (the policy's one rule): a blocking failure other
    than a sign-off fails, a missing sign-off waits for one; reasons most important first."""
    return _verdict(conditions, auto_advance_allowed=auto_advance_allowed)


def _verdict(conditions: list[Condition], *, auto_advance_allowed: bool) -> Verdict:
    failing = sorted(
        (c for c in conditions if c.blocking and not c.passed),
        key=lambda c: _PRIORITY.get(c.name, _PLUGIN_PRIORITY) if c.metric != "signoff" else 9,
    )
    if any(c.metric != "signoff" for c in failing):
        decision = Decision.FAIL
    elif failing:
        decision = Decision.NEEDS_SIGNOFF
    else:
        decision = Decision.PASS
    reasons = [c.message for c in failing]
    reasons += [f"advisory: {c.message}" for c in conditions if not c.blocking and not c.passed]
    return Verdict(
        decision=decision,
        reasons=reasons,
        conditions=conditions,
        auto_advance=decision is Decision.PASS and auto_advance_allowed,
    )


def _condition(metric: str, check: _Check, blocking: bool) -> Condition:
    return Condition(
        metric=metric,
        name=check.name,
        passed=check.passed,
        message=check.message,
        value=check.value,
        threshold=check.threshold,
        blocking=blocking,
    )


def _checks(
    gate: GateConfig, config: MetricConfig, metric: EvalMetric | None, tests: TestOutcomes
) -> list[_Check]:
    kind = config.type
    label: str = kind
    if kind == "test_coverage" and getattr(config, "scope", None) == "changed":
        label = "test_coverage (changed lines)"
    if metric is None or not metric.available or metric.value is None:
        why = (metric.reason if metric else None) or "no evidence was collected"
        status = metric.status.value if metric and metric.status else "missing"
        return [_Check("evidence", False, f"{label}: evidence {status}: {why}")]
    checks = [_Check("evidence", True, f"{label}: evidence collected")]
    minimum, origin = (config.min, "") if config.min is not None else _project_floor(config, metric)
    if minimum is not None:
        ok = metric.value >= minimum
        by_rounding = bool(origin) and not ok and _rounded_meets(metric)
        if by_rounding:  # coverage.py's own verdict, on its figure rounded to its precision
            ok = True
            origin = origin[:-1] + ", on the figure rounded as coverage.py rounds it)"
        shown, floor = format_pair(metric.value, minimum)
        word = "meets" if ok else "is below"
        message = f"{label}: {shown} {word} the minimum {floor}{origin}"
        uncovered = metric.details.get("uncovered") if kind == "requirement_coverage" else None
        if uncovered and not ok:
            message += f" (uncovered: {', '.join(map(str, uncovered[:10]))})"
        if kind == "checklist_completion" and not ok:
            message += _conflicts(metric, "conflicting")
        limit = f"min {floor}" + (" (rounded)" if by_rounding else "")
        checks.append(_Check("min", ok, message, metric.value, minimum, limit))
    hard_checks = _HARD_CHECKS.get(kind)
    if hard_checks is not None:
        checks.extend(hard_checks(gate, config, metric, tests))
    return checks


def _project_floor(config: MetricConfig, metric: EvalMetric) -> tuple[float | None, str]:
    """The project's own coverage floor when the gate sets none: coverage.py's ``fail_under``
    or pytest-cov's ``--cov-fail-under``, as the figure's details carry it (percent), for the
    whole project's figure only. A raw figure under it still meets it where coverage.py's
    rounding does (``_rounded_meets``)."""
    if config.type != "test_coverage" or getattr(config, "scope", None) == "changed":
        return None, ""
    percent = metric.details.get("fail_under")
    if not isinstance(percent, (int, float)) or isinstance(percent, bool) or percent <= 0:
        return None, ""
    origin = metric.details.get("fail_under_from")
    return min(float(percent), 100.0) / 100.0, f" ({origin})" if isinstance(origin, str) else ""


def below_project_floor(metric: EvalMetric) -> bool:
    """Whether a whole-project coverage figure is under the project's own floor (coverage.py's
    ``fail_under`` or ``--cov-fail-under``) as coverage.py judges it, rounding included."""
    if not metric.available or metric.value is None:
        return False
    percent = metric.details.get("fail_under")
    if not isinstance(percent, (int, float)) or isinstance(percent, bool) or percent <= 0:
        return False
    return metric.value < min(float(percent), 100.0) / 100.0 and not _rounded_meets(metric)


def _rounded_meets(metric: EvalMetric) -> bool:
    """Whether coverage.py passes ``metric``'s figure at its ``fail_under``: its
    ``should_fail_under`` compares the percentage rounded to ``precision`` decimals, or to the
    floor's own if more, and 100 only ever means 100. Computed here from the figures, never
    taken from the report, so a report cannot claim it."""
    details = metric.details
    percent = min(float(details.get("fail_under") or 0.0), 100.0)
    value = metric.value if metric.value is not None else 0.0
    total = value * 100.0
    counts = [details.get(key, 0) for key in ("covered_lines", "covered_branches",
                                              "num_statements", "num_branches")]
    if all(type(n) is int for n in counts):
        ran, of = counts[0] + counts[1], counts[2] + counts[3]
        if of > 0 and abs(ran / of - value) < 1e-12:
            total = (100.0 * ran) / of  # coverage.py's own arithmetic, to the last bit
    if percent == 100.0:
        return total == 100.0
    precision = details.get("precision", 0)
    places = precision if type(precision) is int else 0
    if percent != int(percent):
        exponent = Decimal(str(percent)).as_tuple().exponent
        places = max(places, -exponent if isinstance(exponent, int) else 0)
    return round(total, places) >= percent


def _test_checks(
    gate: GateConfig, config: MetricConfig, metric: EvalMetric, tests: TestOutcomes
) -> list[_Check]:
    limit = gate.hard_limit("max_failed_tests")
    broken = tests.failed + tests.errors
    checks = []
    if limit is not None:
        parts = [_plural(tests.failed, "test") + " failed"] if tests.failed else []
        if tests.errors:
            parts.append(_plural(tests.errors, "error"))
        what = " and ".join(parts) or "no test failed"
        message = f"test_pass_rate: {what} (max_failed_tests: {limit})"
        checks.append(
            _Check("tests_failed", broken <= limit, message, float(broken), limit,
                   f"max {limit:g} failed")
        )
    need = getattr(config, "min_tests", 1)
    ran = tests.ran
    message = f"test_pass_rate: {_plural(ran, 'test')} ran (min_tests: {need})"
    checks.append(_Check("tests_ran", ran >= need, message, float(ran), float(need)))
    return checks


def _security_checks(
    gate: GateConfig, _config: MetricConfig, metric: EvalMetric, _tests: TestOutcomes
) -> list[_Check]:
    limit = gate.hard_limit("max_high_severity")
    if limit is None:
        return []
    high = int(metric.details.get("by_severity", {}).get("HIGH", 0))
    where = [
        f"{item.get('rule')} at {item.get('file')}:{item.get('line')}"
        for item in metric.details.get("items", [])
        if item.get("severity") == "HIGH"
    ][:3]
    failed = breaks_limit(high, limit)
    at = f": {', '.join(where)}" if where and failed else ""
    message = (
        f"security_score: {_plural(high, 'HIGH-severity finding')} (max_high_severity: {limit}){at}"
    )
    if failed:
        message += _waiver_hint(metric, "HIGH")
    return [
        _Check("max_high_severity", not failed, message, float(high), float(limit),
               f"max {limit:g} HIGH")
    ]


def _lint_checks(
    gate: GateConfig, _config: MetricConfig, metric: EvalMetric, _tests: TestOutcomes
) -> list[_Check]:
    limit = gate.hard_limit("max_lint_violations")
    if limit is None:
        return []
    count = int(metric.details.get("violations", 0))
    message = f"lint_score: {_plural(count, 'violation')} (max_lint_violations: {limit})"
    failed = breaks_limit(count, limit)
    if failed:
        message += _waiver_hint(metric, None)
    return [
        _Check("max_lint_violations", not failed, message, float(count), float(limit),
               f"max {limit:g} {'violation' if limit == 1 else 'violations'}")
    ]


def _checklist_checks(
    _gate: GateConfig, _config: MetricConfig, metric: EvalMetric, _tests: TestOutcomes
) -> list[_Check]:
    missing = [str(m) for m in metric.details.get("required_missing", [])]
    if not getattr(_config, "required", None):
        return []
    message = (
        f"checklist_completion: required item(s) not checked: {', '.join(map(repr, missing))}"
        if missing
        else "checklist_completion: every required item is checked"
    )
    message += _conflicts(metric, "required_conflicting")
    return [
        _Check("checklist_required", not missing, message, float(len(missing)), 0.0,
               "required items checked")
    ]


def _coverage_path_checks(
    _gate: GateConfig, config: MetricConfig, metric: EvalMetric, _tests: TestOutcomes
) -> list[_Check]:
    floors: dict[str, float] = getattr(config, "paths", {})
    figures = metric.details.get("paths", {})
    checks = []
    for pattern, floor in floors.items():
        value = figures.get(pattern, {}).get("value")
        if value is None:
            message = (
                f"test_coverage[{pattern}]: no measured file matches; fix the path or "
                "remove the floor"
            )
            checks.append(_Check("min", False, message, None, floor))
            continue
        shown, wanted = format_pair(value, floor)
        word = "meets" if value >= floor else "is below"
        message = f"test_coverage[{pattern}]: {shown} {word} the minimum {wanted}"
        checks.append(_Check("min", value >= floor, message, value, floor))
    return checks


def _integrity_checks(
    _gate: GateConfig, config: MetricConfig, metric: EvalMetric, _tests: TestOutcomes
) -> list[_Check]:
    limit = getattr(config, "max_test_tampering", None)
    if limit is None:
        return []
    count = int(metric.details.get("findings", 0))
    where = [
        f"{item.get('rule')} at {item.get('file')}:{item.get('line')}"
        for item in metric.details.get("items", [])
    ][:3]
    at = f": {', '.join(where)}" if where and count > limit else ""
    message = (
        f"test_integrity: {_plural(count, 'sign')} of tampering with tests or checks "
        f"(max_test_tampering: {limit}){at}"
    )
    return [
        _Check("max_test_tampering", count <= limit, message, float(count), float(limit),
               f"max {limit:g} tampering")
    ]


_HardCheck = Callable[[GateConfig, MetricConfig, EvalMetric, TestOutcomes], list[_Check]]
_HARD_CHECKS: dict[str, _HardCheck] = {
    "test_pass_rate": _test_checks,
    "security_score": _security_checks,
    "lint_score": _lint_checks,
    "checklist_completion": _checklist_checks,
    "test_coverage": _coverage_path_checks,
    "test_integrity": _integrity_checks,
}


def _waiver_hint(metric: EvalMetric, severity: str | None) -> str:
    """What to do about the first blocking finding, the fix first: the finding and its line,
    then, only as a last resort, the waiver line to add (a reason and an end date are
    required). A waiver offered first would point the author, an agent most of all, around
    the gate rather than at the code."""
    first = next(
        (item for item in metric.details.get("items", [])
         if isinstance(item, dict) and (severity is None or item.get("severity") == severity)),
        None,
    )
    if first is None:
        return ""
    finding = " ".join(str(first.get("message") or "").split())[:160].rstrip(". ")
    what = f" ({finding})" if finding else ""
    if severity is None:  # the message does not say where: the first violation does
        where = f"{first.get('rule')} at {first.get('file')}:{first.get('line')}"
        fix = f"; fix them first, e.g. {where}{what}; `ruff check --fix` fixes some"
    else:
        fix = f"; fix it first{what}"
    last = "only if it is a false positive" if severity == "HIGH" else "only if it must stay"
    return (
        f"{fix}; {last}, waive it in gate.policy.waivers: {{rule: {first.get('rule')}, "
        f"paths: [{first.get('file')}], reason: \"why it is safe\", expires: YYYY-MM-DD}}"
    )


def _conflicts(metric: EvalMetric, key: str) -> str:
    """Items with a ticked and an unticked box, which count as unticked, said as such."""
    both = [str(text) for text in metric.details.get(key, [])][:5]
    if not both:
        return ""
    return (
        f"; {', '.join(map(repr, both))} {'has' if len(both) == 1 else 'have'} conflicting "
        "boxes ([x] and [ ] for the same item count as unchecked): keep one box per item"
    )


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"

"""How a change's risk tier rises: set by rules, then only ever raised.

``risk_rules`` (or ``gate.risk_tier``) give the starting tier; after that, what the gate learns
about the change can only raise it, never lower it, and each raise is said in the reason:

- from the change itself (``gate.change``): it edits the gate's own configuration or machinery;
- from the evidence (``EVIDENCE_FLOORS`` below): a metric whose findings mean a human must look,
  such as tampering with tests or text that tries to instruct the judge.

Pure: no IO, no clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import cast

from pytest_confgate.models import EvalMetric, RiskTier

TIER_ORDER: tuple[RiskTier, ...] = ("T0", "T1", "T2", "T3")

EvidenceFloor = Callable[[EvalMetric], "tuple[RiskTier, str] | None"]
"""For one metric: the tier its evidence demands at least, and why; None when it demands none."""

_LISTED_FINDINGS = 10


def integrity_floor(metric: EvalMetric) -> tuple[RiskTier, str] | None:
    """Tampering with tests or suppressions (issue 15): a human must look, and is told where.

    The collector puts the tier in ``details.tier_floor`` (None when the metric is advisory
    or ``max_test_tampering`` fails the gate instead).
    """
    floor = metric.details.get("tier_floor")
    items = metric.details.get("items") or []
    count = int(metric.details.get("findings", len(items)))
    if not metric.available or count == 0 or floor not in TIER_ORDER:
        return None
    listed = "; ".join(
        f"{item.get('file')}:{item.get('line')}: {item.get('message')}"
        for item in items[:_LISTED_FINDINGS]
    )
    more = f"; and {count - _LISTED_FINDINGS} more" if count > _LISTED_FINDINGS else ""
    noun = "sign" if count == 1 else "signs"
    return cast(RiskTier, floor), (
        f"test_integrity found {count} {noun} of tampering with tests or checks, so a human "
        f"must look: {listed}{more}"
    )



def _judge_floor(metric: EvalMetric) -> tuple[RiskTier, str] | None:
    """``llm_judge``: a human looks when the judge's input tried to instruct it (issue 21),
    or when the judge saw only part of the diff and the configuration did not accept that
    (``allow_truncated_diff``): then the judge is only advisory (issue 18)."""
    details = metric.details
    if details.get("injection_suspected"):
        hits = [
            str(hit.get("where") if isinstance(hit, dict) else hit)
            for hit in details.get("injection_hits") or []
        ]
        more = int(details.get("injection_hit_count") or len(hits)) - len(hits[:3])
        where = ", ".join(hits[:3]) + (f" and {more} more" if more > 0 else "")
        return "T2", f"text the LLM judge would read tries to instruct it ({where})"
    partial = details.get("diff_truncated") and not details.get("allow_truncated_diff")
    if partial and not details.get("advisory"):  # an advisory judge never decided anything
        shown, total = details.get("diff_shown_chars"), details.get("diff_chars")
        return "T2", f"the LLM judge saw only {shown} of the diff's {total} characters"
    return None


EVIDENCE_FLOORS: dict[str, EvidenceFloor] = {
    "test_integrity": integrity_floor,
    "llm_judge": _judge_floor,
}
"""Metric type -> its floor rule. A metric type without an entry never raises the tier."""


def tier_rank(tier: str) -> int:
    """0 for T0 .. 3 for T3; an unknown tier is a programming error."""
    if tier not in TIER_ORDER:
        raise ValueError(f"unknown risk tier {tier!r}: expected one of {', '.join(TIER_ORDER)}")
    return TIER_ORDER.index(tier)


def raised(tier: str, reason: str, floor: str, why: str) -> tuple[RiskTier, str]:
    """``tier`` raised to at least ``floor`` because of ``why``; the reason always says why."""
    if tier_rank(tier) < tier_rank(floor):
        return cast(RiskTier, floor), f"{reason}; raised to {floor}: {why}"
    return cast(RiskTier, tier), f"{reason}; {why}"


def raise_for_evidence(
    tier: str, reason: str, metrics: Iterable[EvalMetric]
) -> tuple[RiskTier, str]:
    """The tier after every metric's floor rule (``EVIDENCE_FLOORS``) is applied, in order."""
    current, why = cast(RiskTier, tier), reason
    for metric in metrics:
        rule = EVIDENCE_FLOORS.get(metric.type)
        demand = rule(metric) if rule is not None else None
        if demand is not None:
            current, why = raised(current, why, *demand)
    return current, why

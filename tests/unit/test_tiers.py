"""Risk tiers only rise once set, and every raise says why (SPEC 6)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_confgate.gate import tiers
from pytest_confgate.gate.tiers import TIER_ORDER, raise_for_evidence, raised, tier_rank
from pytest_confgate.models import EvalMetric


def test_a_raise_lifts_a_lower_tier_and_says_so() -> None:
    assert raised("T1", "set by gate.risk_tier", "T2", "edits conftest.py") == (
        "T2",
        "set by gate.risk_tier; raised to T2: edits conftest.py",
    )


def test_a_raise_never_lowers_a_tier_but_is_still_named() -> None:
    assert raised("T3", "src/auth/x.py matched", "T2", "edits conftest.py") == (
        "T3",
        "src/auth/x.py matched; edits conftest.py",
    )


@given(st.sampled_from(TIER_ORDER), st.sampled_from(TIER_ORDER))
def test_the_raised_tier_is_the_higher_of_the_two(tier: str, floor: str) -> None:
    result, _ = raised(tier, "r", floor, "why")
    assert tier_rank(result) == max(tier_rank(tier), tier_rank(floor))


def test_an_unknown_tier_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown risk tier 'T9'"):
        tier_rank("T9")


def test_evidence_raises_the_tier_only_through_a_registered_floor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def suspicious(metric: EvalMetric) -> tuple[str, str] | None:
        return ("T2", "a human must look") if metric.value == 0.0 else None

    monkeypatch.setitem(tiers.EVIDENCE_FLOORS, "probe", suspicious)
    clean = [EvalMetric(type="probe", value=1.0), EvalMetric(type="other", value=0.0)]
    found = [EvalMetric(type="probe", value=0.0)]
    assert raise_for_evidence("T1", "base", clean) == ("T1", "base")
    raised_for_evidence = raise_for_evidence("T1", "base", found)
    assert raised_for_evidence == ("T2", "base; raised to T2: a human must look")


def _judge(**details: object) -> EvalMetric:
    return EvalMetric(type="llm_judge", value=0.0, status="error", details=details)


def test_a_judge_whose_input_tried_to_instruct_it_raises_the_tier_naming_the_hits() -> None:
    hits = [{"where": f"src/a.py:{n}", "kind": "override", "text": "x"} for n in (3, 7, 9, 11)]
    judge = _judge(injection_suspected=True, injection_hits=hits, injection_hit_count=6)
    assert raise_for_evidence("T1", "set by gate.risk_tier", [judge]) == (
        "T2",
        "set by gate.risk_tier; raised to T2: text the LLM judge would read tries to instruct "
        "it (src/a.py:3, src/a.py:7, src/a.py:9 and 3 more)",
    )
    assert raise_for_evidence("T3", "r", [judge])[0] == "T3"


def test_a_judge_that_saw_part_of_the_diff_raises_the_tier_unless_that_is_allowed() -> None:
    partial = {"diff_truncated": True, "diff_chars": 15_000, "diff_shown_chars": 1_000}
    assert raise_for_evidence("T1", "r", [_judge(**partial)]) == (
        "T2",
        "r; raised to T2: the LLM judge saw only 1000 of the diff's 15000 characters",
    )
    allowed = _judge(**partial, allow_truncated_diff=True)
    advisory = _judge(**partial, advisory=True)
    assert raise_for_evidence("T1", "r", [allowed]) == ("T1", "r")
    assert raise_for_evidence("T1", "r", [advisory]) == ("T1", "r")


def test_a_clean_whole_judgement_raises_nothing() -> None:
    clean = _judge(injection_suspected=False, diff_truncated=False)
    assert raise_for_evidence("T0", "r", [clean]) == ("T0", "r")

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

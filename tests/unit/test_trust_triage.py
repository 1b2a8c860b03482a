"""Trust-weighted triage (seed agent-trust F3): pure ranking and the candidates flag."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.trust.triage import TriageRow, parse_candidates, rank_candidates

TRUST = {"fd-arch": 0.5, "fd-qa": 1.0, "fd-game": 0.05}


def test_candidates_are_ranked_by_base_times_trust_highest_first() -> None:
    rows = rank_candidates({"fd-arch": 0.9, "fd-qa": 0.6, "fd-game": 0.95}, TRUST.__getitem__)
    assert rows == [
        TriageRow("fd-qa", 0.6, 1.0, 0.6),
        TriageRow("fd-arch", 0.9, 0.5, 0.45),
        TriageRow("fd-game", 0.95, 0.05, 0.95 * 0.05),
    ]


def test_a_low_trust_agent_is_demoted_but_never_dropped() -> None:
    rows = rank_candidates({"fd-game": 1.0}, TRUST.__getitem__)
    assert [row.agent for row in rows] == ["fd-game"]
    assert rows[0].final_score == pytest.approx(0.05)


def test_trust_is_read_once_per_candidate() -> None:
    calls: list[str] = []

    def trust(agent: str) -> float:
        calls.append(agent)
        return 1.0

    rank_candidates({"a": 0.1, "b": 0.2}, trust)
    assert sorted(calls) == ["a", "b"]


def test_equal_final_scores_are_ordered_by_agent_name() -> None:
    rows = rank_candidates({"zeta": 0.5, "alpha": 0.5}, lambda _agent: 1.0)
    assert [row.agent for row in rows] == ["alpha", "zeta"]


def test_a_row_serialises_to_the_documented_json_keys() -> None:
    row = TriageRow("a", 0.9, 0.5, 0.45)
    assert row.to_json() == {"agent": "a", "base_score": 0.9, "trust": 0.5, "final_score": 0.45}


@pytest.mark.parametrize(
    ("text", "expected"),
    [("A=0.9,B=0.7", {"A": 0.9, "B": 0.7}), (" A = 1 , ,B=0 ", {"A": 1.0, "B": 0.0}),
     ("ns=x=0.5", {"ns=x": 0.5})],
    ids=["two-agents", "spaces-and-empty-items", "equals-inside-the-name"],
)
def test_candidates_parse_from_agent_equals_score(text: str, expected: dict[str, float]) -> None:
    assert parse_candidates(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [("A", "AGENT=SCORE"), ("A=high", "AGENT=SCORE"), ("=0.5", "AGENT=SCORE"),
     ("A=nan", "finite"), ("A=1,A=2", "given twice"), (" , ", "no candidates")],
    ids=["no-score", "not-a-number", "no-agent", "nan", "duplicate-agent", "empty"],
)
def test_bad_candidates_are_refused_naming_the_flag(text: str, message: str) -> None:
    with pytest.raises(EvidenceError, match="--candidates") as caught:
        parse_candidates(text)
    assert message in str(caught.value)


@given(
    candidates=st.dictionaries(
        st.text("abcxyz", min_size=1, max_size=4), st.floats(0, 1), min_size=1, max_size=8
    ),
    data=st.data(),
)
def test_ranking_does_not_depend_on_the_order_candidates_are_given(
    candidates: dict[str, float], data: st.DataObject
) -> None:
    trust = {agent: 0.05 + 0.95 * (sum(map(ord, agent)) % 7) / 6 for agent in candidates}
    order = data.draw(st.permutations(list(candidates)))
    shuffled = {agent: candidates[agent] for agent in order}
    first = rank_candidates(candidates, trust.__getitem__)
    assert first == rank_candidates(shuffled, trust.__getitem__)
    assert sorted(row.agent for row in first) == sorted(candidates)

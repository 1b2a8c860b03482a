"""Stage 5 of ``confgate rank``: the seed's ranking, confidence and auto-acceptance formulas."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_confgate.config.rank import AutoAcceptConfig
from pytest_confgate.rank.models import CATEGORIES, Evaluation
from pytest_confgate.rank.ranking import (
    calculate_category_consistency,
    calculate_ranking_confidence,
    js_number,
    rank_solutions,
    should_auto_accept,
    to_fixed,
)

SEED_COLUMNS = {  # the seed's "Solution Comparison Results" example, #1..#3
    "it1": (0.85, 0.75, 0.70, 0.90, 1.00),
    "it2": (0.95, 0.82, 0.75, 0.95, 1.00),
    "it3": (0.80, 0.78, 0.80, 0.85, 1.00),
}


def evaluation(
    sid: str, score: float, cats: tuple[float, ...] = (1.0,) * 5, confidence: float = 1.0,
    *, blocked: bool = False,
) -> Evaluation:
    return Evaluation(
        solution_id=sid, blocked=blocked, block_reasons=("tests fail",) if blocked else (),
        categories=dict(zip(CATEGORIES, cats, strict=True)), components={}, score=score,
        confidence=confidence,
    )


def test_ranking_confidence_reproduces_a_hand_computed_case() -> None:
    # gap 0.05 -> 0.5; mean confidence (0.9+0.8+0.7)/3 = 0.8; it2 beats it1 in 4 of 5 -> 0.8
    ordered = [
        evaluation("it2", 0.87, SEED_COLUMNS["it2"], 0.9),
        evaluation("it1", 0.82, SEED_COLUMNS["it1"], 0.8),
        evaluation("it3", 0.81, SEED_COLUMNS["it3"], 0.7),
    ]
    expected = 0.4 * 0.5 + 0.3 * 0.8 + 0.3 * 0.8
    assert calculate_ranking_confidence(ordered) == pytest.approx(expected, abs=1e-12)
    assert calculate_ranking_confidence(ordered) == pytest.approx(0.68, abs=1e-12)


@pytest.mark.parametrize(
    ("scores", "confidences", "firsts", "seconds", "expected"),
    [
        ((0.9, 0.7), (1.0, 1.0), (1.0,) * 5, (0.5,) * 5, 1.0),
        ((0.8, 0.8), (0.5, 0.5), (1.0,) * 5, (1.0,) * 5, 0.15),
        ((0.83, 0.80), (1.0, 0.6), (0.9, 0.8, 0.7, 0.6, 0.5), (0.8, 0.9, 0.7, 0.5, 0.6),
         0.4 * 0.3 + 0.3 * 0.8 + 0.3 * 0.4),
        ((0.5, 0.0), (1.0, 1.0), (1.0,) * 5, (0.0,) * 5, 1.0),
    ],
    ids=["big-gap-clean-sweep", "tie-everywhere", "small-gap-split-categories", "vs-blocked"],
)
def test_ranking_confidence_table(
    scores: tuple[float, float], confidences: tuple[float, float],
    firsts: tuple[float, ...], seconds: tuple[float, ...], expected: float,
) -> None:
    ordered = [evaluation("a", scores[0], firsts, confidences[0]),
               evaluation("b", scores[1], seconds, confidences[1])]
    assert calculate_ranking_confidence(ordered) == pytest.approx(expected, abs=1e-12)


def test_ranking_confidence_is_zero_without_solutions_and_one_for_a_single_solution() -> None:
    assert calculate_ranking_confidence([]) == 0.0
    assert calculate_ranking_confidence([evaluation("a", 0.3, confidence=0.1)]) == 1.0


def test_category_consistency_counts_only_strict_wins() -> None:
    first = evaluation("a", 0.9, (0.9, 0.9, 0.5, 0.5, 1.0))
    second = evaluation("b", 0.8, (0.8, 0.9, 0.6, 0.4, 1.0))
    assert calculate_category_consistency(first, second) == pytest.approx(2 / 5)


def test_winner_needs_confidence_of_at_least_point_six() -> None:
    close = rank_solutions([evaluation("a", 0.80, confidence=0.5), evaluation("b", 0.79,
                                                                            confidence=0.5)])
    assert close.winner is None
    clear = rank_solutions([evaluation("a", 0.95, (1.0,) * 5), evaluation("b", 0.5, (0.5,) * 5)])
    assert clear.winner is not None
    assert clear.winner.solution_id == "a"


def test_a_blocked_candidate_sorts_last_and_is_never_the_winner() -> None:
    only_blocked = rank_solutions([evaluation("c", 0.0, (0.0,) * 5, blocked=True)])
    assert only_blocked.confidence == 1.0
    assert only_blocked.winner is None
    mixed = rank_solutions([evaluation("c", 0.0, (0.0,) * 5, blocked=True),
                            evaluation("a", 0.1, (0.1,) * 5)])
    assert [s.solution_id for s in mixed.solutions] == ["a", "c"]


def test_pairwise_comparisons_cover_every_pair_and_category_with_ties() -> None:
    ranking = rank_solutions([evaluation("a", 0.9, (1.0, 0.5, 0.5, 0.5, 0.5)),
                              evaluation("b", 0.8, (0.5, 0.5, 0.9, 0.5, 0.5))])
    by_category = {c.category: c.winner for c in ranking.comparisons}
    assert by_category == {"correctness": "a", "quality": "tie", "efficiency": "b",
                           "completeness": "tie", "safety": "tie", "overall": "a"}


ENABLED = AutoAcceptConfig(enabled=True)


@pytest.mark.parametrize(
    ("config", "evaluations", "accept", "reason"),
    [
        (AutoAcceptConfig(), [evaluation("a", 1.0)], False, "Auto-acceptance disabled"),
        (ENABLED, [evaluation("a", 0.80, confidence=0.1), evaluation("b", 0.79, confidence=0.1)],
         False, "No clear winner"),
        (ENABLED, [evaluation("a", 0.80)], False, "Score 0.80 below threshold 0.85"),
        (ENABLED, [evaluation("a", 0.90, confidence=0.75)], False,
         "Confidence 0.75 below threshold 0.8"),
        (ENABLED, [evaluation("a", 0.90, (0.89, 1.0, 1.0, 1.0, 1.0))], False,
         "correctness score 0.89 below minimum 0.9"),
        (ENABLED, [evaluation("a", 0.90, (1.0, 1.0, 1.0, 1.0, 0.94))], False,
         "safety score 0.94 below minimum 0.95"),
        (ENABLED, [evaluation("a", 0.95), evaluation("b", 0.90, (0.9, 0.9, 0.9, 0.9, 0.9))],
         False, "Score gap 0.05 below minimum 0.1"),
        (ENABLED, [evaluation("a", 0.95), evaluation("b", 0.85, (0.9, 0.9, 0.9, 0.9, 0.9))],
         True, "All criteria met"),
        (ENABLED, [evaluation("a", 0.90)], True, "All criteria met"),
    ],
    ids=["disabled", "no-winner", "score", "confidence", "correctness-floor", "safety-floor",
         "gap", "gap-of-exactly-0.10-passes", "single-solution"],
)
def test_should_auto_accept_gives_the_seeds_reasons(
    config: AutoAcceptConfig, evaluations: list[Evaluation], accept: bool, reason: str
) -> None:
    answer = should_auto_accept(rank_solutions(evaluations), config)
    assert (answer.accept, answer.reason) == (accept, reason)


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.125, "0.13"), (0.8, "0.80"), (0.845, "0.84"), (1.0, "1.00"), (-0.0, "0.00"),
     (0.005, "0.01"), (0.994999, "0.99")],
    ids=["half-up-on-exact-half", "pads", "binary-below-half", "one", "negative-zero",
         "exact-half-small", "just-below"],
)
def test_to_fixed_matches_javascript(value: float, text: str) -> None:
    assert to_fixed(value) == text


@pytest.mark.parametrize(("value", "text"), [(0.85, "0.85"), (0.9, "0.9"), (1.0, "1"),
                                              (0.1, "0.1")], ids=["0.85", "0.9", "1", "0.1"])
def test_js_number_prints_thresholds_as_a_template_literal_would(value: float, text: str) -> None:
    assert js_number(value) == text


scores = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
candidates = st.lists(
    st.tuples(st.tuples(*[scores] * 5), scores, scores, st.booleans()), min_size=0, max_size=6
)


@given(candidates, st.randoms(use_true_random=False))
def test_ranking_does_not_depend_on_the_order_candidates_are_given_in(
    specs: list[tuple[tuple[float, ...], float, float, bool]], rnd: object
) -> None:
    evaluations = [evaluation(f"s{i}", 0.0 if b else s, c, conf, blocked=b)
                   for i, (c, s, conf, b) in enumerate(specs)]
    shuffled = list(evaluations)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    first, second = rank_solutions(evaluations), rank_solutions(shuffled)
    assert [s.solution_id for s in first.solutions] == [s.solution_id for s in second.solutions]
    assert first.confidence == second.confidence
    assert 0.0 <= first.confidence <= 1.0
    if first.winner is not None:
        assert not first.winner.evaluation.blocked

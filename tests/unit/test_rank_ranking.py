"""Stage 5 of ``confgate rank``: the seed's ranking, confidence and auto-acceptance formulas."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_confgate.config.rank import AutoAcceptConfig
from pytest_confgate.rank.models import CATEGORIES, AutoAccept, Evaluation
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
    *, blocked: bool = False, independent: tuple[str, ...] = ("cross",),
) -> Evaluation:
    return Evaluation(
        solution_id=sid, blocked=blocked, block_reasons=("tests fail",) if blocked else (),
        categories=dict(zip(CATEGORIES, cats, strict=True)), components={}, score=score,
        confidence=confidence, independent=() if blocked else independent,
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


def test_ranking_confidence_is_zero_without_solutions_and_never_one_for_a_lone_one() -> None:
    # issue 36: ranked alone, 21 of 24 never-accept candidates were the winner at 1.00.
    # Alone, at best the baseline's failing tests (the task) vouch for it: three quarters.
    assert calculate_ranking_confidence([]) == 0.0
    assert calculate_ranking_confidence([evaluation("a", 0.3, independent=("task",))]) == 0.75
    assert calculate_ranking_confidence([evaluation("a", 0.3, independent=())]) == 0.5


@pytest.mark.parametrize(("independent", "factor"),
                         [(("cross", "task"), 1.0), (("cross",), 1.0), (("task",), 0.75),
                          ((), 0.5)], ids=["both", "cross", "task-only", "own-tests-only"])
def test_the_leaders_independent_evidence_scales_the_seeds_confidence(
    independent: tuple[str, ...], factor: float
) -> None:
    ordered = [evaluation("a", 0.9, (1.0,) * 5, independent=independent),
               evaluation("b", 0.7, (0.5,) * 5)]
    assert calculate_ranking_confidence(ordered) == pytest.approx(1.0 * factor, abs=1e-12)


def test_a_leader_no_test_of_another_vouches_for_is_never_the_winner() -> None:
    # issue 36: a clear leader at 0.2 above the rest, but only its own tests say it works
    ranking = rank_solutions([evaluation("a", 0.95, independent=()),
                              evaluation("b", 0.75, (0.5,) * 5)])
    assert ranking.winner is None
    answer = should_auto_accept(ranking, AutoAcceptConfig(enabled=True, min_confidence=0.0))
    assert answer.reason == (
        "No clear winner: a ranks first but no other candidate's test ran on it: nothing it "
        "was not written to pass vouches for it")
    task_only = rank_solutions([evaluation("a", 0.95, independent=("task",)),
                                evaluation("b", 0.75, (0.5,) * 5)], allow_single=True)
    assert task_only.winner is None  # b is unblocked: its tests should have run on a


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
    assert only_blocked.confidence == 0.5  # nothing vouches for it
    assert only_blocked.winner is None
    mixed = rank_solutions([evaluation("c", 0.0, (0.0,) * 5, blocked=True),
                            evaluation("a", 0.1, (0.1,) * 5)])
    assert [s.solution_id for s in mixed.solutions] == ["a", "c"]


def test_a_ranking_of_blocked_candidates_says_why_there_is_no_winner() -> None:
    ranking = rank_solutions([evaluation("c", 0.0, (0.0,) * 5, blocked=True),
                              evaluation("d", 0.0, (0.0,) * 5, blocked=True)])
    answer = should_auto_accept(ranking, AutoAcceptConfig(enabled=True, min_confidence=0.0))
    assert answer == AutoAccept(False, "No clear winner: every candidate is blocked (stage 1)")


def test_pairwise_comparisons_cover_every_pair_and_category_with_ties() -> None:
    ranking = rank_solutions([evaluation("a", 0.9, (1.0, 0.5, 0.5, 0.5, 0.5)),
                              evaluation("b", 0.8, (0.5, 0.5, 0.9, 0.5, 0.5))])
    by_category = {c.category: c.winner for c in ranking.comparisons}
    assert by_category == {"correctness": "a", "quality": "tie", "efficiency": "b",
                           "completeness": "tie", "safety": "tie", "overall": "a"}


ENABLED = AutoAcceptConfig(enabled=True)
SINGLE = AutoAcceptConfig(enabled=True, allow_single=True)


@pytest.mark.parametrize(
    ("config", "evaluations", "accept", "reason"),
    [
        (AutoAcceptConfig(), [evaluation("a", 1.0)], False, "Auto-acceptance disabled"),
        (ENABLED.model_copy(update={"min_confidence": 0.0}),
         [evaluation("a", 0.80, confidence=0.1), evaluation("b", 0.79, confidence=0.1)],
         False, "No clear winner"),
        (SINGLE, [evaluation("a", 0.80)], False, "Score 0.80 below threshold 0.85"),
        (ENABLED, [evaluation("a", 0.90), evaluation("b", 0.86, confidence=0.75)], False,
         "Confidence 0.42 below threshold 0.8"),
        (SINGLE, [evaluation("a", 0.90, (0.89, 1.0, 1.0, 1.0, 1.0))], False,
         "correctness score 0.89 below minimum 0.9"),
        (SINGLE, [evaluation("a", 0.90, (1.0, 1.0, 1.0, 1.0, 0.94))], False,
         "safety score 0.94 below minimum 0.95"),
        (ENABLED.model_copy(update={"min_confidence": 0.5}),
         [evaluation("a", 0.95), evaluation("b", 0.90, (0.9, 0.9, 0.9, 0.9, 0.9))],
         False, "Score gap 0.05 below minimum 0.1"),
        (ENABLED, [evaluation("a", 0.95), evaluation("b", 0.85, (0.9, 0.9, 0.9, 0.9, 0.9))],
         True, "All criteria met"),
        (SINGLE, [evaluation("a", 0.90)], True, "All criteria met"),
    ],
    ids=["disabled", "no-winner", "score", "confidence", "correctness-floor", "safety-floor",
         "gap", "gap-of-exactly-0.10-passes", "single-solution-allowed"],
)
def test_should_auto_accept_gives_the_seeds_reasons(
    config: AutoAcceptConfig, evaluations: list[Evaluation], accept: bool, reason: str
) -> None:
    answer = should_auto_accept(rank_solutions(evaluations), config)
    assert (answer.accept, answer.reason) == (accept, reason)


def test_min_confidence_is_compared_with_the_rankings_confidence_not_the_evidence() -> None:
    # Issue 15: every candidate's evidence is complete (1.0), the ranking is not sure (0.76):
    # gap 0.1 -> 0.4, mean evidence 1.0 -> 0.3, a beats b in one category of five -> 0.06.
    ranking = rank_solutions([evaluation("a", 0.95, (1.0, 1.0, 1.0, 1.0, 1.0)),
                              evaluation("b", 0.85, (1.0, 1.0, 1.0, 1.0, 0.0))])
    assert ranking.confidence == pytest.approx(0.76)
    strict = AutoAcceptConfig(enabled=True, min_confidence=0.99)
    answer = should_auto_accept(ranking, strict)
    assert answer == AutoAccept(False, "Confidence 0.76 below threshold 0.99")


def test_a_refusal_for_confidence_names_it_even_without_a_winner() -> None:
    ranking = rank_solutions([evaluation("a", 0.90), evaluation("b", 0.90)])
    answer = should_auto_accept(ranking, AutoAcceptConfig(enabled=True, min_confidence=0.99))
    assert answer.reason.startswith("Confidence 0.30 below threshold 0.99")


@pytest.mark.parametrize(
    "evaluations",
    [[evaluation("lone", 0.99, independent=("task",))],
     [evaluation("lone", 0.99, independent=("task",)),
      evaluation("blocked", 0.0, (0.0,) * 5, blocked=True)]],
    ids=["alone", "the-other-is-blocked"],
)
def test_the_only_unblocked_candidate_is_not_accepted_unless_allowed(
    evaluations: list[Evaluation]
) -> None:
    # issue 36: only the task's tests vouch for it, so it is the winner only when
    # allow_single says they may, and never at a confidence of 1.00
    ranking = rank_solutions(evaluations)
    assert ranking.winner is None
    assert ranking.confidence == 0.75
    trusting = {"min_confidence": 0.7}
    refused = should_auto_accept(ranking, ENABLED.model_copy(update=trusting))
    assert not refused.accept
    assert refused.reason.startswith("Only one unblocked candidate")
    assert "allow_single" in refused.reason
    single = rank_solutions(evaluations, allow_single=True)
    assert single.winner is not None
    assert single.winner.solution_id == "lone"
    assert should_auto_accept(single, SINGLE) == AutoAccept(
        False, "Confidence 0.75 below threshold 0.8")
    assert should_auto_accept(single, SINGLE.model_copy(update=trusting)) == AutoAccept(
        True, "All criteria met")
    own_tests_only = rank_solutions([dataclasses.replace(evaluations[0], independent=())],
                                    allow_single=True)
    assert own_tests_only.winner is None


@pytest.mark.parametrize("names", [("zz-correct", "aa-buggy"), ("aa-correct", "zz-buggy")])
def test_an_exact_tie_shares_rank_one_and_has_no_winner_whatever_the_names(
    names: tuple[str, str]
) -> None:
    correct, buggy = names
    ranking = rank_solutions([evaluation(correct, 0.93), evaluation(buggy, 0.93 + 1e-12),
                              evaluation("third", 0.5, (0.5,) * 5)])
    assert [(s.solution_id, s.rank) for s in ranking.solutions] == [
        (correct, 1), (buggy, 1), ("third", 3)]
    assert ranking.winner is None
    assert ranking.tie == (correct, buggy)
    answer = should_auto_accept(ranking, ENABLED.model_copy(update={"min_confidence": 0.0}))
    assert answer.reason == f"No clear winner: {correct}, {buggy} tie at 0.93"
    assert {c.winner for c in ranking.comparisons
            if {c.solution_a, c.solution_b} == set(names)} == {"tie"}


def test_scores_further_apart_than_the_tolerance_do_not_tie() -> None:
    ranking = rank_solutions([evaluation("a", 0.93), evaluation("b", 0.93 + 2e-9)])
    assert [(s.solution_id, s.rank) for s in ranking.solutions] == [("b", 1), ("a", 2)]
    assert ranking.tie == ()


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
    assert {s.solution_id: s.rank for s in first.solutions} == {
        s.solution_id: s.rank for s in second.solutions}
    assert set(first.tie) == set(second.tie)
    assert (first.winner is None) == (second.winner is None)
    if first.winner is not None and second.winner is not None:
        assert first.winner.solution_id == second.winner.solution_id
    assert first.confidence == pytest.approx(second.confidence, abs=1e-12)
    assert 0.0 <= first.confidence <= 1.0
    if first.winner is not None:
        assert not first.winner.evaluation.blocked



def test_the_confidence_does_not_depend_on_which_of_two_tied_runners_up_is_given_first(
) -> None:
    """Found by the property above: two candidates sharing second place (scores 1e-9 and
    0.0, within ``TIE``) gave the gap to whichever was listed first: 0.25 or 0.249999996."""
    leader, low, lower = (evaluation("lead", 0.0625), evaluation("low", 1e-9),
                          evaluation("lower", 0.0))
    one = rank_solutions([leader, low, lower]).confidence
    other = rank_solutions([leader, lower, low]).confidence
    assert one == other

def test_a_candidate_the_safety_gate_halved_is_never_the_winner() -> None:
    flagged = Evaluation(
        solution_id="risky", blocked=False, block_reasons=(),
        categories=dict.fromkeys(CATEGORIES, 1.0) | {"safety": 0.0}, components={},
        score=0.45, confidence=1.0, multiplier=0.5, independent=("cross",),
    )
    alone = rank_solutions([flagged])
    assert alone.winner is None
    with_blocked = rank_solutions([flagged, evaluation("c", 0.0, (0.0,) * 5, blocked=True)])
    assert with_blocked.winner is None
    answer = should_auto_accept(with_blocked, SINGLE)
    assert answer.reason.startswith("No clear winner: risky ranks first but has a dangerous")

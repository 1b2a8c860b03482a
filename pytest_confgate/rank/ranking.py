"""Stage 5 (pure): sort, compare pairwise, ranking confidence, winner, auto-acceptance.

Formulas are the reference ranker's (``rankSolutions``, ``calculateRankingConfidence``,
``calculateCategoryConsistency``, ``shouldAutoAccept``) and this gate's and issue 15's
additions: a candidate blocked in stage 1 sorts last and is never the winner, nor is one
whose score the safety gate halved (a human must look); scores within
``TIE`` of each other share a rank, and a tie for first means no winner (nothing about a
candidate's name can break it: the tied keep the order they were given in); auto-acceptance
compares ``min_confidence`` with the ranking's confidence and never takes the only unblocked
candidate of a ranking unless ``allow_single`` says so.

Issue 36: the confidence says how much evidence there is. The score-gap figure is scaled by
what vouches for the leader besides its own tests (``Evaluation.independent``,
``EVIDENCE_FACTOR``): other candidates' tests that ran on it keep it whole; the baseline's
failing tests alone (a candidate ranked alone) leave three quarters of it; nothing but its
own tests leaves half. Only tests it was not written to pass are independent evidence: a
leader no other candidate's tests exercised is not the winner (the task's own tests are what
a special-cased table of the issue's examples passes), unless it is the only unblocked
candidate and ``allow_single`` says the task's tests may vouch for it alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import ROUND_HALF_UP, Decimal

from pytest_confgate.config.rank import AutoAcceptConfig
from pytest_confgate.rank.models import (
    CATEGORIES,
    AutoAccept,
    Comparison,
    Evaluation,
    RankedSolution,
    Ranking,
)

WINNER_CONFIDENCE = 0.6
"""``winner: confidence >= 0.6 ? solutions[0] : null``."""
GAP_FOR_FULL_CONFIDENCE = 0.1
_EPSILON = 1e-9
"""Float noise allowed when a gap is compared with its threshold (0.95 - 0.85 is a 0.1 gap)."""
TIE = 1e-9
"""Scores this close are equal: they share a rank, and equal leaders mean no winner."""
EVIDENCE_FACTOR = {"cross": 1.0, "task": 0.75, "": 0.5}
"""What is left of the ranking confidence, by the strongest independent evidence about the
leader: other candidates' tests, else the task's (the baseline's failing) tests, else none."""


def rank_solutions(
    evaluations: Iterable[Evaluation], extra_comparisons: Sequence[Comparison] = (),
    *, allow_single: bool = False,
) -> Ranking:
    """Seed ``rankSolutions``: best first, strengths and weaknesses, confidence, winner.

    The winner needs independent test evidence (``vouched``); ``allow_single`` lets the
    task's tests stand for it when it is the only unblocked candidate.

    The sort is stable and keyed on blocked and score only: equal scores keep the order the
    candidates were given in and share a rank (1, 1, 3), so no name decides an order.
    """
    given = list(evaluations)
    position = {id(e): index for index, e in enumerate(given)}
    by_score = sorted(given, key=lambda e: (e.blocked, -e.score))
    ranked = sorted(zip(shared_ranks(by_score), by_score, strict=True),
                    key=lambda pair: (pair[0], position[id(pair[1])]))
    ranks = [rank for rank, _ in ranked]
    ordered = [evaluation for _, evaluation in ranked]
    solutions = tuple(
        RankedSolution(
            evaluation=evaluation,
            rank=rank,
            strengths=identify_strengths(evaluation, ordered),
            weaknesses=tuple(note.text for note in evaluation.weaknesses),
        )
        for rank, evaluation in zip(ranks, ordered, strict=True)
    )
    confidence = calculate_ranking_confidence(ordered)
    tie = tuple(s.solution_id for s in solutions if s.rank == 1 and not s.evaluation.blocked)
    tie = tie if len(tie) > 1 else ()
    first = solutions[0] if solutions else None
    alone = sum(1 for s in solutions if not s.evaluation.blocked) == 1
    clear = (first is not None and not first.evaluation.blocked and not tie
             and first.evaluation.multiplier >= 1.0
             and vouched(first.evaluation, allow_single and alone)
             and confidence >= WINNER_CONFIDENCE)
    comparisons = (*pairwise_comparisons(ordered), *extra_comparisons)
    return Ranking(
        solutions=solutions,
        winner=first if clear else None,
        confidence=confidence,
        comparisons=comparisons,
        tie=tie,
    )


def shared_ranks(ordered: Sequence[Evaluation]) -> list[int]:
    """Competition ranks (1, 1, 3): a solution within ``TIE`` of the one before shares its
    rank, as long as both are blocked or both are not."""
    ranks: list[int] = []
    for index, evaluation in enumerate(ordered):
        previous = ordered[index - 1] if index else None
        same = previous is not None and previous.blocked == evaluation.blocked and (
            abs(previous.score - evaluation.score) <= TIE
        )
        ranks.append(ranks[-1] if same else index + 1)
    return ranks


def identify_strengths(evaluation: Evaluation, everyone: Sequence[Evaluation]) -> tuple[str, ...]:
    """The candidate's own strengths, plus each category where it alone scores best."""
    texts = [note.text for note in evaluation.strengths]
    rivals = [e for e in everyone if not e.blocked and e.solution_id != evaluation.solution_id]
    if evaluation.blocked or not rivals:
        return tuple(texts)
    for name in CATEGORIES:
        mine = evaluation.categories[name]
        if all(mine > rival.categories[name] + TIE for rival in rivals):
            texts.append(f"Best {name} of all candidates ({mine:.2f})")
    return tuple(texts)


def pairwise_comparisons(ordered: Sequence[Evaluation]) -> list[Comparison]:
    """Seed ``generatePairwiseComparisons``: every pair, every category and the overall score."""
    found: list[Comparison] = []
    for i, a in enumerate(ordered):
        for b in ordered[i + 1 :]:
            for name in (*CATEGORIES, "overall"):
                left = a.score if name == "overall" else a.categories[name]
                right = b.score if name == "overall" else b.categories[name]
                diff = left - right
                winner = (a.solution_id if diff > TIE else b.solution_id if diff < -TIE
                          else "tie")
                reasoning = (
                    f"{a.solution_id} {left:.2f} vs {b.solution_id} {right:.2f}"
                    + (" (equal)" if winner == "tie" else f": {winner} is better")
                )
                found.append(
                    Comparison(a.solution_id, b.solution_id, name, winner, diff, reasoning)
                )
    return found


def calculate_category_consistency(first: Evaluation, second: Evaluation) -> float:
    """The share of the five categories in which ``first`` strictly beats ``second``."""
    wins = sum(
        1 for name in CATEGORIES if first.categories[name] > second.categories[name] + TIE
    )
    return wins / len(CATEGORIES)


def calculate_ranking_confidence(ordered: Sequence[Evaluation]) -> float:
    """0.4 min(1, gap / 0.1) + 0.3 mean evaluation confidence + 0.3 consistency,
    times ``evidence_factor`` of the leader.

    ``ordered`` is best first. No solution -> 0.0; one solution -> the factor alone.
    """
    if not ordered:
        return 0.0
    if len(ordered) == 1:
        return evidence_factor(ordered[0])
    return _gap_confidence(ordered) * evidence_factor(ordered[0])


def vouched(leader: Evaluation, task_suffices: bool = False) -> bool:
    """Whether tests it was not written to pass vouch for ``leader``: other candidates'
    (``cross``), or, when ``task_suffices``, the baseline's failing tests (``task``)."""
    kinds = leader.independent
    return "cross" in kinds or (task_suffices and "task" in kinds)


def evidence_factor(leader: Evaluation) -> float:
    """``EVIDENCE_FACTOR`` for the strongest kind of independent evidence about ``leader``."""
    kinds = leader.independent
    return EVIDENCE_FACTOR["cross" if "cross" in kinds else "task" if "task" in kinds else ""]


def _gap_confidence(ordered: Sequence[Evaluation]) -> float:
    # By score, ranks shared as ``shared_ranks`` shares them: within a shared rank the order
    # the candidates were given in must not matter (the gap to 0.0 or to 1e-9 when both
    # share second place moved the confidence by 4e-9).
    by_score = sorted(ordered, key=lambda e: (e.blocked, -e.score))
    ranks = shared_ranks(by_score)
    first, second = by_score[0], by_score[1]
    mean_confidence = sum(e.confidence for e in ordered) / len(ordered)
    if ranks[1] == ranks[0]:
        return mean_confidence * 0.3  # tied leaders: no gap, neither beats the other
    gap = first.score - second.score  # the best of those sharing second place
    gap_confidence = 0.0 if gap <= TIE else min(1.0, gap / GAP_FOR_FULL_CONFIDENCE)
    # Against the weakest showing among those sharing second place.
    runners_up = [e for e, rank in zip(by_score, ranks, strict=True) if rank == ranks[1]]
    consistency = min(calculate_category_consistency(first, e) for e in runners_up)
    return gap_confidence * 0.4 + mean_confidence * 0.3 + consistency * 0.3


def should_auto_accept(ranking: Ranking, config: AutoAcceptConfig) -> AutoAccept:
    """``shouldAutoAccept``: the first unmet criterion, in the words.

    Issue 15 changes two things: ``min_confidence`` is compared with the ranking's confidence
    (the ``calculateRankingConfidence``; the candidate's evidence completeness is not
    how sure the ranking is), checked right after ``enabled`` so a refusal for confidence
    always names it; and the only unblocked candidate of a ranking is not accepted unless
    ``allow_single`` (nothing was compared, and its own tests are all that vouch for it).
    """
    if not config.enabled:
        return AutoAccept(False, "Auto-acceptance disabled")
    if ranking.confidence < config.min_confidence:
        return AutoAccept(
            False,
            f"Confidence {to_fixed(ranking.confidence)} below threshold "
            f"{js_number(config.min_confidence)}",
        )
    winner = ranking.winner
    if winner is None:
        return AutoAccept(False, _no_winner(ranking))
    unblocked = [s for s in ranking.solutions if not s.evaluation.blocked]
    if len(unblocked) == 1 and not config.allow_single:
        return AutoAccept(False, _ONLY_ONE)
    evaluation = winner.evaluation
    if winner.score < config.min_score:
        return AutoAccept(
            False, f"Score {to_fixed(winner.score)} below threshold {js_number(config.min_score)}"
        )
    for name in CATEGORIES:
        minimum: float = getattr(config.category_minimums, name)
        score = evaluation.categories[name]
        if score < minimum:
            return AutoAccept(
                False, f"{name} score {to_fixed(score)} below minimum {js_number(minimum)}"
            )
    if len(ranking.solutions) > 1:
        gap = winner.score - ranking.solutions[1].score
        if gap + _EPSILON < config.min_score_gap:
            return AutoAccept(
                False, f"Score gap {to_fixed(gap)} below minimum {js_number(config.min_score_gap)}"
            )
    return AutoAccept(True, "All criteria met")


_ONLY_ONE = ("Only one unblocked candidate: nothing to compare it with "
             "(set auto_accept.allow_single: true to accept a lone candidate)")


def _no_winner(ranking: Ranking) -> str:
    if ranking.tie:
        score = ranking.solutions[0].score
        return f"No clear winner: {', '.join(ranking.tie)} tie at {to_fixed(score)}"
    first = ranking.solutions[0] if ranking.solutions else None
    if first is not None and first.evaluation.blocked:
        return "No clear winner: every candidate is blocked (stage 1)"
    if first is not None and first.evaluation.multiplier < 1.0:
        return (f"No clear winner: {first.solution_id} ranks first but has a dangerous "
                "operation, a secret or a change to how it is tested or checked")
    lone = sum(1 for s in ranking.solutions if not s.evaluation.blocked) == 1
    if first is not None and lone and vouched(first.evaluation, task_suffices=True):
        return _ONLY_ONE
    if first is not None and not vouched(first.evaluation):
        return (f"No clear winner: {first.solution_id} ranks first but no other candidate's "
                "test ran on it: nothing it was not written to pass vouches for it")
    return "No clear winner"


def to_fixed(value: float, digits: int = 2) -> str:
    """JavaScript's ``Number.prototype.toFixed``: exact binary value, halves rounded up.

    Python's ``format`` rounds an exact half to even (``0.125`` -> ``0.12``); the reference
    ranker's reasons were written with ``toFixed`` (``0.125`` -> ``0.13``).
    """
    quantum = Decimal(1).scaleb(-digits)
    exact = Decimal(0) if value == 0 else Decimal(value)  # JS prints -0 as "0.00"
    return f"{exact.quantize(quantum, rounding=ROUND_HALF_UP):f}"


def js_number(value: float) -> str:
    """A number as a JavaScript template literal prints it: ``0.85``, ``0.9``, ``1``."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text

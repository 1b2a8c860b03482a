"""Stage 5 (pure): sort, compare pairwise, ranking confidence, winner, auto-acceptance.

Formulas are the seed's (``rankSolutions``, ``calculateRankingConfidence``,
``calculateCategoryConsistency``, ``shouldAutoAccept``) and SPEC 7's additions: a candidate
blocked in stage 1 sorts last and is never the winner. Ties in score sort by solution id, so
the ranking never depends on the order candidates were given in.
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
"""Seed: ``winner: confidence >= 0.6 ? solutions[0] : null``."""
GAP_FOR_FULL_CONFIDENCE = 0.1
_EPSILON = 1e-9
"""Float noise allowed when a gap is compared with its threshold (0.95 - 0.85 is a 0.1 gap)."""


def rank_solutions(
    evaluations: Iterable[Evaluation], extra_comparisons: Sequence[Comparison] = ()
) -> Ranking:
    """Seed ``rankSolutions``: best first, strengths and weaknesses, confidence, winner."""
    ordered = sorted(evaluations, key=lambda e: (e.blocked, -e.score, e.solution_id))
    solutions = tuple(
        RankedSolution(
            evaluation=evaluation,
            rank=index + 1,
            strengths=identify_strengths(evaluation, ordered),
            weaknesses=tuple(note.text for note in evaluation.weaknesses),
        )
        for index, evaluation in enumerate(ordered)
    )
    confidence = calculate_ranking_confidence(ordered)
    first = solutions[0] if solutions else None
    clear = first is not None and not first.evaluation.blocked and confidence >= WINNER_CONFIDENCE
    comparisons = (*pairwise_comparisons(ordered), *extra_comparisons)
    return Ranking(
        solutions=solutions,
        winner=first if clear else None,
        confidence=confidence,
        comparisons=comparisons,
    )


def identify_strengths(evaluation: Evaluation, everyone: Sequence[Evaluation]) -> tuple[str, ...]:
    """The candidate's own strengths, plus each category where it alone scores best."""
    texts = [note.text for note in evaluation.strengths]
    rivals = [e for e in everyone if not e.blocked and e.solution_id != evaluation.solution_id]
    if evaluation.blocked or not rivals:
        return tuple(texts)
    for name in CATEGORIES:
        mine = evaluation.categories[name]
        if all(mine > rival.categories[name] for rival in rivals):
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
                winner = a.solution_id if diff > 0 else b.solution_id if diff < 0 else "tie"
                reasoning = (
                    f"{a.solution_id} {left:.2f} vs {b.solution_id} {right:.2f}"
                    + (" (equal)" if winner == "tie" else f": {winner} is better")
                )
                found.append(
                    Comparison(a.solution_id, b.solution_id, name, winner, diff, reasoning)
                )
    return found


def calculate_category_consistency(first: Evaluation, second: Evaluation) -> float:
    """Seed: the share of the five categories in which ``first`` strictly beats ``second``."""
    wins = sum(1 for name in CATEGORIES if first.categories[name] > second.categories[name])
    return wins / len(CATEGORIES)


def calculate_ranking_confidence(ordered: Sequence[Evaluation]) -> float:
    """Seed: 0.4 min(1, gap / 0.1) + 0.3 mean evaluation confidence + 0.3 consistency.

    ``ordered`` is best first. No solution -> 0.0; one solution -> 1.0.
    """
    if not ordered:
        return 0.0
    if len(ordered) == 1:
        return 1.0
    gap = ordered[0].score - ordered[1].score
    gap_confidence = min(1.0, gap / GAP_FOR_FULL_CONFIDENCE)
    mean_confidence = sum(e.confidence for e in ordered) / len(ordered)
    consistency = calculate_category_consistency(ordered[0], ordered[1])
    return gap_confidence * 0.4 + mean_confidence * 0.3 + consistency * 0.3


def should_auto_accept(ranking: Ranking, config: AutoAcceptConfig) -> AutoAccept:
    """Seed ``shouldAutoAccept``: the first unmet criterion, in the seed's order and words."""
    if not config.enabled:
        return AutoAccept(False, "Auto-acceptance disabled")
    winner = ranking.winner
    if winner is None:
        return AutoAccept(False, "No clear winner")
    evaluation = winner.evaluation
    if winner.score < config.min_score:
        return AutoAccept(
            False, f"Score {to_fixed(winner.score)} below threshold {js_number(config.min_score)}"
        )
    if evaluation.confidence < config.min_confidence:
        return AutoAccept(
            False,
            f"Confidence {to_fixed(evaluation.confidence)} below threshold "
            f"{js_number(config.min_confidence)}",
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


def to_fixed(value: float, digits: int = 2) -> str:
    """JavaScript's ``Number.prototype.toFixed``: exact binary value, halves rounded up.

    Python's ``format`` rounds an exact half to even (``0.125`` -> ``0.12``); the seed's
    reasons were written with ``toFixed`` (``0.125`` -> ``0.13``).
    """
    quantum = Decimal(1).scaleb(-digits)
    exact = Decimal(0) if value == 0 else Decimal(value)  # JS prints -0 as "0.00"
    return f"{exact.quantize(quantum, rounding=ROUND_HALF_UP):f}"


def js_number(value: float) -> str:
    """A number as a JavaScript template literal prints it: ``0.85``, ``0.9``, ``1``."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text

"""Trust-weighted triage: pure ranking, no store, no clock.

``final_score = base_score * trust``; every candidate comes back (trust only reorders, it never
removes an agent), highest first, ties by agent name so the order never depends on input order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from pytest_confgate.exceptions import EvidenceError


@dataclass(frozen=True)
class TriageRow:
    """One candidate agent after weighting."""

    agent: str
    base_score: float
    trust: float
    final_score: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def rank_candidates(
    candidates: Mapping[str, float], trust: Callable[[str], float]
) -> list[TriageRow]:
    """Every candidate by ``base * trust``, highest first; ``trust`` is read once per agent."""
    rows = []
    for agent, base in candidates.items():
        multiplier = trust(agent)
        rows.append(TriageRow(agent, base, multiplier, base * multiplier))
    return sorted(rows, key=lambda row: (-row.final_score, row.agent))


def parse_candidates(text: str, flag: str = "--candidates") -> dict[str, float]:
    """``"A=0.9,B=0.7"`` -> ``{"A": 0.9, "B": 0.7}``; a bad item names itself and the flag."""
    candidates: dict[str, float] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        agent, sep, value = item.rpartition("=")
        agent = agent.strip()
        try:
            base = float(value)
        except ValueError:
            base = math.nan
        if not sep or not agent or not math.isfinite(base):
            raise EvidenceError(
                f"{flag} {item!r}: write AGENT=SCORE with a finite number, e.g. fd-arch=0.9"
            )
        if agent in candidates:
            raise EvidenceError(f"{flag}: agent {agent!r} is given twice; give each agent once")
        candidates[agent] = base
    if not candidates:
        raise EvidenceError(f"{flag} {text!r}: no candidates; write e.g. fd-arch=0.9,fd-qa=0.7")
    return candidates

"""The ranking store: every ranking (so feedback can name it) and the user's feedback.

SQLite beside the trust store (``.confgate/rank.db`` next to ``trust.db``), WAL mode, a busy
timeout and ``BEGIN IMMEDIATE`` writes so parallel jobs can share it; schema versioned with
``PRAGMA user_version``. A corrupt or newer database is a ``StoreError`` and is never
overwritten. The only ranking module that imports ``sqlite3``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pytest_confgate.exceptions import StoreError
from pytest_confgate.rank.feedback import Choice, FeedbackEvent
from pytest_confgate.rank.models import Ranking

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS rankings (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    winner TEXT,
    weights TEXT NOT NULL,
    solutions TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS feedback (
    ranking_id TEXT PRIMARY KEY REFERENCES rankings(id),
    choice TEXT NOT NULL,
    chosen_id TEXT,
    created_at TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class StoredSolution:
    """What feedback needs of one ranked solution."""

    solution_id: str
    rank: int
    blocked: bool
    categories: Mapping[str, float]


class RankStore:
    """Rankings and feedback in one SQLite file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"{self.path}: cannot open the ranking store ({exc})") from exc
        try:
            self._prepare(db)
            yield db
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{self.path}: the ranking store cannot be used ({exc}); move the file away "
                "to start a new one"
            ) from exc
        finally:
            db.close()

    def _prepare(self, db: sqlite3.Connection) -> None:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: written by a newer pytest-confgate (schema {version}, this "
                f"version reads {SCHEMA_VERSION}); upgrade pytest-confgate"
            )
        db.execute("PRAGMA journal_mode=WAL")
        if version < SCHEMA_VERSION:
            db.execute("BEGIN IMMEDIATE")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("COMMIT")

    def save_ranking(
        self, ranking_id: str, created_at: str, ranking: Ranking, weights: Mapping[str, float]
    ) -> None:
        """Keep a ranking so that ``confgate rank feedback RANKING_ID`` can refer to it."""
        solutions = [
            {
                "solution_id": s.solution_id,
                "rank": s.rank,
                "blocked": s.evaluation.blocked,
                "categories": dict(s.evaluation.categories),
            }
            for s in ranking.solutions
        ]
        winner = ranking.winner.solution_id if ranking.winner else None
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute(
                "INSERT OR REPLACE INTO rankings VALUES (?, ?, ?, ?, ?)",
                (ranking_id, created_at, winner, json.dumps(dict(weights)), json.dumps(solutions)),
            )
            db.execute("COMMIT")

    def solutions(self, ranking_id: str) -> list[StoredSolution]:
        """The stored solutions of one ranking, best first; ``StoreError`` when unknown."""
        with self._connect() as db:
            row = db.execute(
                "SELECT solutions FROM rankings WHERE id = ?", (ranking_id,)
            ).fetchone()
        if row is None:
            raise StoreError(
                f"{self.path}: no ranking {ranking_id!r}; use the ranking_id a `confgate rank` "
                "run printed"
            )
        return [_solution(item) for item in json.loads(row[0])]

    def record_feedback(
        self, ranking_id: str, choice: Choice, chosen_id: str | None, created_at: str
    ) -> None:
        """Store the user's decision; a second decision for the same ranking replaces the first."""
        known = self.solutions(ranking_id)
        if choice == "accepted_winner" and self._winner(ranking_id) is None:
            raise StoreError(
                f"ranking {ranking_id} has no winner (confidence below 0.6 or every candidate "
                "blocked); use --chose ID or --rejected-all"
            )
        if chosen_id is not None and chosen_id not in {s.solution_id for s in known}:
            names = ", ".join(s.solution_id for s in known)
            raise StoreError(
                f"--chose {chosen_id}: not a solution of ranking {ranking_id} (solutions: {names})"
            )
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute(
                "INSERT OR REPLACE INTO feedback VALUES (?, ?, ?, ?)",
                (ranking_id, choice, chosen_id, created_at),
            )
            db.execute("COMMIT")

    def _winner(self, ranking_id: str) -> str | None:
        with self._connect() as db:
            row = db.execute("SELECT winner FROM rankings WHERE id = ?", (ranking_id,)).fetchone()
        return None if row is None else row[0]

    def feedback_events(self) -> list[FeedbackEvent]:
        """Every stored decision as the (taken, other) category pair ``feedback`` learns from."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT f.choice, f.chosen_id, r.solutions FROM feedback f "
                "JOIN rankings r ON r.id = f.ranking_id ORDER BY f.created_at, f.ranking_id"
            ).fetchall()
        return [_event(choice, chosen, json.loads(text)) for choice, chosen, text in rows]


def _solution(item: Mapping[str, object]) -> StoredSolution:
    categories = item["categories"]
    assert isinstance(categories, dict)  # noqa: S101 - written by save_ranking above
    return StoredSolution(
        solution_id=str(item["solution_id"]),
        rank=int(str(item["rank"])),
        blocked=bool(item["blocked"]),
        categories={str(k): float(v) for k, v in categories.items()},
    )


def _event(choice: str, chosen_id: str | None, items: list[Mapping[str, object]]) -> FeedbackEvent:
    solutions = sorted((_solution(item) for item in items), key=lambda s: s.rank)
    if choice == "rejected_all" or len(solutions) < 2:
        return FeedbackEvent("rejected_all")
    first, second = solutions[0], solutions[1]
    if choice == "chose_other" and chosen_id != first.solution_id:
        taken = next((s for s in solutions if s.solution_id == chosen_id), None)
        if taken is None or taken.blocked:
            return FeedbackEvent("chose_other")
        return FeedbackEvent("chose_other", taken.categories, first.categories)
    if first.blocked or second.blocked:
        return FeedbackEvent("accepted_winner")
    return FeedbackEvent("accepted_winner", first.categories, second.categories)

"""The ranking store: every ranking (so feedback can name it) and the user's feedback.

An SQLite file beside the trust store (``.confgate/rank.db`` next to ``trust.db``; WAL, a busy
timeout and ``BEGIN IMMEDIATE`` writes so parallel jobs can share it; schema version in
``PRAGMA user_version``), or, given ``rank.db: postgresql://...`` (or a ``trust.db`` URL), the
tables ``confgate_rank_rankings`` / ``confgate_rank_feedback`` in that database, so a team's
feedback survives CI runners (issue 20). A corrupt or newer store is a ``StoreError`` and is
never overwritten. The only ranking module that imports ``sqlite3``; PostgreSQL is reached
through ``trust.server`` (psycopg imported only for a URL).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pytest_confgate.config.trust import server_url
from pytest_confgate.exceptions import StoreError
from pytest_confgate.rank.feedback import Choice, FeedbackEvent
from pytest_confgate.rank.models import Ranking
from pytest_confgate.trust.server import Server, driver

if TYPE_CHECKING:
    from pytest_confgate.config import ConfgateConfig

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
_SQLITE = {
    "save": "INSERT OR REPLACE INTO rankings VALUES (?, ?, ?, ?, ?)",
    "solutions": "SELECT solutions FROM rankings WHERE id = ?",
    "winner": "SELECT winner FROM rankings WHERE id = ?",
    "feedback": "INSERT OR REPLACE INTO feedback VALUES (?, ?, ?, ?)",
    "events": "SELECT f.choice, f.chosen_id, r.solutions FROM feedback f "
    "JOIN rankings r ON r.id = f.ranking_id ORDER BY f.created_at, f.ranking_id",
}
_PG_LOCK = 0x636F6E66_72616E6B  # "confrank": serialises creating the tables
_PG_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS confgate_rank_state (id integer PRIMARY KEY CHECK (id = 1),"
    " schema_version integer NOT NULL)",
    "CREATE TABLE IF NOT EXISTS confgate_rank_rankings (id text PRIMARY KEY,"
    " created_at text NOT NULL, winner text, weights text NOT NULL, solutions text NOT NULL)",
    "CREATE TABLE IF NOT EXISTS confgate_rank_feedback (ranking_id text PRIMARY KEY"
    " REFERENCES confgate_rank_rankings (id), choice text NOT NULL, chosen_id text,"
    " created_at text NOT NULL)",
    "INSERT INTO confgate_rank_state VALUES (1, 1) ON CONFLICT (id) DO NOTHING",
)
_POSTGRES = {
    "save": "INSERT INTO confgate_rank_rankings VALUES (%s, %s, %s, %s, %s) ON CONFLICT (id)"
    " DO UPDATE SET created_at = excluded.created_at, winner = excluded.winner,"
    " weights = excluded.weights, solutions = excluded.solutions",
    "solutions": "SELECT solutions FROM confgate_rank_rankings WHERE id = %s",
    "winner": "SELECT winner FROM confgate_rank_rankings WHERE id = %s",
    "feedback": "INSERT INTO confgate_rank_feedback VALUES (%s, %s, %s, %s)"
    " ON CONFLICT (ranking_id) DO UPDATE SET choice = excluded.choice,"
    " chosen_id = excluded.chosen_id, created_at = excluded.created_at",
    "events": "SELECT f.choice, f.chosen_id, r.solutions FROM confgate_rank_feedback f "
    "JOIN confgate_rank_rankings r ON r.id = f.ranking_id ORDER BY f.created_at, f.ranking_id",
}


def open_rank_store(config: ConfgateConfig, root: Path) -> RankStore:
    """``rank.db``, else ``rank.db`` beside ``trust.db``, or the trust store's database when
    that is a PostgreSQL URL; relative paths from ``root`` (the working directory)."""
    trust, rank = config.trust, config.rank
    local = root / ".confgate"
    location = rank.db if rank.db is not None else trust.db
    url = server_url(location)
    if url is not None:
        password_env = rank.password_env or trust.password_env
        return RankStore(Server(url, password_env, trust.connect_timeout_s), local)
    path = Path(location)
    path = path if path.is_absolute() else root / path
    return RankStore(path if rank.db is not None else path.parent / "rank.db")


@dataclass(frozen=True)
class StoredSolution:
    """What feedback needs of one ranked solution."""

    solution_id: str
    rank: int
    blocked: bool
    categories: Mapping[str, float]


class _Session(Protocol):
    def rows(self, name: str, params: Sequence[Any]) -> list[tuple[Any, ...]]: ...

    def write(self, name: str, params: Sequence[Any]) -> None: ...


class RankStore:
    """Rankings and feedback in one SQLite file, or in a PostgreSQL database."""

    def __init__(self, location: Path | Server, local_dir: Path | None = None) -> None:
        self.server = location if isinstance(location, Server) else None
        self.path = location if isinstance(location, Path) else None
        """The SQLite file; ``None`` for a server."""
        self.shown = location.shown if isinstance(location, Server) else str(location)
        self.local_dir = local_dir or (location.parent if isinstance(location, Path)
                                       else Path(".confgate"))
        """Where this machine keeps ranking state that is not shared (the baseline cache)."""

    @contextmanager
    def _session(self) -> Iterator[_Session]:
        if self.server is not None:
            with _PostgresSession.opened(self.server) as session:
                yield session
            return
        assert self.path is not None  # noqa: S101 - one of the two is always set
        with _SqliteSession.opened(self.path) as sqlite_session:
            yield sqlite_session

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
        with self._session() as db:
            db.write("save", (ranking_id, created_at, winner, json.dumps(dict(weights)),
                              json.dumps(solutions)))

    def solutions(self, ranking_id: str) -> list[StoredSolution]:
        """The stored solutions of one ranking, best first; ``StoreError`` when unknown."""
        with self._session() as db:
            rows = db.rows("solutions", (ranking_id,))
        if not rows:
            raise StoreError(
                f"{self.shown}: no ranking {ranking_id!r}; use the ranking_id a `confgate rank` "
                "run printed"
            )
        return [_solution(item) for item in json.loads(rows[0][0])]

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
        with self._session() as db:
            db.write("feedback", (ranking_id, choice, chosen_id, created_at))

    def _winner(self, ranking_id: str) -> str | None:
        with self._session() as db:
            rows = db.rows("winner", (ranking_id,))
        return None if not rows else rows[0][0]

    def feedback_events(self) -> list[FeedbackEvent]:
        """Every stored decision as the (taken, other) category pair ``feedback`` learns from."""
        with self._session() as db:
            rows = db.rows("events", ())
        return [_event(choice, chosen, json.loads(text)) for choice, chosen, text in rows]


class _SqliteSession:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    @classmethod
    @contextmanager
    def opened(cls, path: Path) -> Iterator[_SqliteSession]:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, timeout=10.0, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"{path}: cannot open the ranking store ({exc})") from exc
        try:
            _prepare_sqlite(db, path)
            yield cls(db)
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{path}: the ranking store cannot be used ({exc}); move the file away "
                "to start a new one"
            ) from exc
        finally:
            db.close()

    def rows(self, name: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return list(self._db.execute(_SQLITE[name], params).fetchall())

    def write(self, name: str, params: Sequence[Any]) -> None:
        self._db.execute("BEGIN IMMEDIATE")
        self._db.execute(_SQLITE[name], params)
        self._db.execute("COMMIT")


def _prepare_sqlite(db: sqlite3.Connection, path: Path) -> None:
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path}: written by a newer pytest-confgate (schema {version}, this "
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


class _PostgresSession:
    def __init__(self, conn: Any, server: Server) -> None:
        self._conn = conn
        self._server = server

    @classmethod
    @contextmanager
    def opened(cls, server: Server) -> Iterator[_PostgresSession]:
        psycopg = driver(server.shown)
        conn = server.connect()
        try:
            with conn:
                _prepare_postgres(conn, server)
                yield cls(conn, server)
        except psycopg.Error as exc:
            raise server.error(exc, "the ranking store cannot be used") from None

    def rows(self, name: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return list(self._conn.execute(_POSTGRES[name], params).fetchall())

    def write(self, name: str, params: Sequence[Any]) -> None:
        with self._conn.transaction():
            self._conn.execute(_POSTGRES[name], params)


def _prepare_postgres(conn: Any, server: Server) -> None:
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_LOCK,))
        for statement in _PG_SCHEMA:
            conn.execute(statement)
        version = conn.execute("SELECT schema_version FROM confgate_rank_state").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{server.shown}: written by a newer pytest-confgate (ranking schema {version}, "
            f"this version reads {SCHEMA_VERSION}); upgrade pytest-confgate"
        )


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

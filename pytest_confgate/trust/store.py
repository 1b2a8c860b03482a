"""The trust store (SPEC 9): SQLite, and the only module of the package that imports ``sqlite3``.

Safe under concurrent writers (xdist workers, parallel CI jobs): WAL, every write in
``BEGIN IMMEDIATE`` with a busy timeout and a bounded number of attempts. The schema is
versioned with ``PRAGMA user_version``; a database that is corrupt, newer than this version or
not ours is a ``StoreError`` naming the file and is never written to. Events are unique by
event id, so recording twice or replaying the spool twice stores one event.

A write that cannot be made (locked past the timeout, read-only or missing directory, a
corrupt file) never fails the caller: the events go to the spool, one JSON file per event in
``<db>.spool/`` (else a per-database folder under ``CONFGATE_SPOOL_DIR`` or the user cache),
and the next successful write replays them in its own transaction.

Scores are cached in the store (``score_cache``) for one configuration; new evidence clears
the cache in the same transaction that adds it. In ``mode: formula`` decay cancels out of
every ratio (``0.5 ** (age / h)`` is memoryless), so a cached table holds for any ``now`` at or
after the newest event; ``mode: bayesian`` caches per ``now``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pytest_confgate.config.trust import TrustConfig
from pytest_confgate.exceptions import ConfgateError, StoreError
from pytest_confgate.trust import formula
from pytest_confgate.trust.events import TrustEvent
from pytest_confgate.trust.formula import SEVERITIES, Bucket, TrustRow, TrustTable
from pytest_confgate.trust.schema import (
    AGENT_REVIEWS,
    BUCKETS,
    CACHED_TRUST,
    HEADER,
    PAIR_REVIEWS,
    SCHEMA,
    SCHEMA_VERSION,
)
from pytest_confgate.trust.spool import Spool

_INHERITED: list[sqlite3.Connection] = []
"""Read connections inherited through fork: kept open, never closed by the child."""


@dataclass(frozen=True)
class RecordOutcome:
    """What became of a write: ``stored`` (new events, replays included) or ``spooled``."""

    spooled: bool
    stored: int = 0
    replayed: int = 0
    spool: Path | None = None
    reason: str = ""


@dataclass(frozen=True)
class _State:
    version: int
    max_at: float | None
    cache_key: str | None
    cache_version: int | None


class TrustStore:
    """One trust database file, with its spool.

    Each write opens and closes its own connection. Reads share one connection per process,
    reopened when the file is replaced, so a cached ``trust_score`` is one SQL statement.
    """

    def __init__(
        self, path: Path, config: TrustConfig, *, fallback_spool: Path | None = None
    ) -> None:
        self.shown = path
        """The path as given (relative to the working directory), for messages."""
        self.path = Path(os.path.abspath(path))
        self.config = config
        self.spool = Spool(self.path, fallback_spool)
        self._uri = quote(str(self.path))
        self._key: str | None = None
        self._conn: sqlite3.Connection | None = None
        self._conn_ident: tuple[int, int, int] | None = None

    def close(self) -> None:
        """Close the shared read connection (a later read opens a new one)."""
        conn, ident = self._conn, self._conn_ident
        self._conn, self._conn_ident = None, None
        if conn is not None and ident is not None and ident[0] != os.getpid():
            # Never close a connection inherited through fork: it is the parent's (SQLite FAQ).
            _INHERITED.append(conn)
        elif conn is not None:
            conn.close()

    def __enter__(self) -> TrustStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- writes ---------------------------------------------------------------------------

    def record(self, events: Sequence[TrustEvent]) -> RecordOutcome:
        """Store ``events`` (and replay the spool), or spool them; never raises, never hangs."""
        try:
            stored, replayed = self._write(events)
        except (sqlite3.Error, OSError, ConfgateError) as exc:
            reason = str(exc) if isinstance(exc, StoreError) else f"{self.shown}: {exc}"
            return RecordOutcome(True, spool=self.spool.put(events), reason=reason)
        return RecordOutcome(False, stored=stored, replayed=replayed)

    def replay_spool(self) -> RecordOutcome:
        """Move spooled events into the database now (any write does this too)."""
        return self.record([])

    @contextlib.contextmanager
    def write_transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` on a schema-checked connection; commits on success."""
        conn = self._connect(create=True)
        try:
            self._check_schema(conn)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL: a crash loses no commit
            conn.execute("BEGIN IMMEDIATE")
            try:
                if self._check_schema(conn) == 0:
                    for statement in SCHEMA:
                        conn.execute(statement)
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        finally:
            conn.close()

    def _write(self, events: Sequence[TrustEvent]) -> tuple[int, int]:
        attempts = self.config.write_attempts
        for attempt in range(attempts):
            spooled = self.spool.pending()
            try:
                with self.write_transaction() as conn:
                    stored = insert_events(conn, [event for _, event in spooled] + list(events))
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc) or attempt == attempts - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))
                continue
            for path, _ in spooled:
                path.unlink(missing_ok=True)
            return stored, len(spooled)
        raise AssertionError("unreachable: the last attempt raises or returns")

    def spooled_count(self) -> int:
        """Events waiting in the spool for the next successful write."""
        return self.spool.count()

    # -- reads ----------------------------------------------------------------------------

    def table(self, now: float) -> TrustTable:
        """Every score, from the cache when it holds for ``now``; an absent store is empty."""
        with self._reader() as conn:
            if conn is None:
                return TrustTable(self.config.mode, {}, {})
            _ensure_math(conn)
            conn.execute("BEGIN")  # one snapshot for the state and every query
            state = _state(conn)
            key = self._cache_key(now)
            if self._cache_holds(state, key, now):
                return _cached_table(conn, self.config.mode)
            table = self._compute(conn, now)
            conn.execute("COMMIT")
            if self.config.mode == "bayesian" or state.max_at is None or now >= state.max_at:
                with contextlib.suppress(sqlite3.Error):
                    self._store_cache(conn, table, key, state.version)
            return table

    def trust_score(self, agent: str, project: str, now: float) -> float:
        """One pair's trust: two indexed reads when the cache holds, else the whole table."""
        with self._reader() as conn:
            if conn is None:
                return formula.NEUTRAL
            # One statement, so the cache state and the row come from one snapshot.
            *state, trust = conn.execute(CACHED_TRUST, (agent, project)).fetchone()
            if self._cache_holds(_State(int(state[0] or 0), *state[1:]), self._cache_key(now), now):
                return float(trust) if trust is not None else formula.NEUTRAL
        return self.table(now).trust(agent, project)

    def count_events(self) -> int:
        """How many events the database holds (0 without a database)."""
        with self._reader() as conn:
            if conn is None:
                return 0
            return int(conn.execute("SELECT count(*) FROM events").fetchone()[0])

    @contextlib.contextmanager
    def _reader(self) -> Iterator[sqlite3.Connection | None]:
        """A connection inside a read transaction (one snapshot), or ``None`` without data."""
        if not self.path.exists():
            yield None
            return
        conn = self._read_connection()
        try:
            if self._check_schema(conn) == 0:
                yield None
                return
            yield conn
            if conn.in_transaction:
                conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            self.close()
            raise StoreError(f"{self.shown}: the trust store cannot be read ({exc})") from exc
        except sqlite3.DatabaseError as exc:
            self.close()
            raise StoreError(
                f"{self.shown}: the trust store is corrupt ({exc}); it was left untouched. "
                "Move it away to start a new one, or restore a backup"
            ) from exc
        except BaseException:
            self.close()
            raise

    def _read_connection(self) -> sqlite3.Connection:
        """The shared read connection; a new one after a fork or when the file was replaced."""
        try:
            stat = os.stat(self.path)
        except OSError as exc:
            raise StoreError(f"{self.shown}: the trust store cannot be read ({exc})") from exc
        ident = (os.getpid(), stat.st_dev, stat.st_ino)
        if self._conn is not None and self._conn_ident == ident:
            return self._conn
        self.close()
        self._conn = self._connect(create=False)
        self._conn_ident = ident
        return self._conn

    def _compute(self, conn: sqlite3.Connection, now: float) -> TrustTable:
        buckets = [
            Bucket(agent, project, bool(accepted), SEVERITIES[severity], count, decay)
            for agent, project, accepted, severity, count, decay in conn.execute(
                BUCKETS, (now, self.config.half_life_days)
            )
        ]
        pair_reviews = {(a, p): n for a, p, n in conn.execute(PAIR_REVIEWS)}
        agent_reviews = dict(conn.execute(AGENT_REVIEWS).fetchall())
        return formula.score_table(buckets, pair_reviews, agent_reviews, self.config)

    def _cache_key(self, now: float) -> str:
        if self._key is not None and self.config.mode == "formula":
            return self._key
        settings = self.config.model_dump(
            include={"mode", "half_life_days", "full_weight_reviews", "floor",
                     "severity_weights", "prior_strength"}
        )
        if self.config.mode == "bayesian":  # decayed counts do not cancel out: per instant
            settings["now"] = now
        key = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()
        self._key = key
        return key

    def _cache_holds(self, state: _State, key: str, now: float) -> bool:
        if state.cache_key != key or state.cache_version != state.version:
            return False
        return self.config.mode == "bayesian" or state.max_at is None or now >= state.max_at

    def _store_cache(
        self, conn: sqlite3.Connection, table: TrustTable, key: str, version: int
    ) -> None:
        """Best effort, one short try: a busy store just means the next read computes again."""
        conn.execute("PRAGMA busy_timeout = 50")
        try:
            conn.execute("BEGIN IMMEDIATE")
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(self.config.busy_timeout_ms)}")
        try:
            if _state(conn).version == version:  # no evidence arrived since the computation
                conn.execute("DELETE FROM score_cache")
                conn.executemany(
                    "INSERT INTO score_cache VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [
                        (r.agent, r.project or "", int(r.project is None), r.trust, r.reviews,
                         r.accepted, r.discarded)
                        for r in table.rows()
                    ],
                )
                conn.execute(
                    "INSERT OR REPLACE INTO meta (name, value) VALUES ('cache_key', ?),"
                    " ('cache_version', ?)",
                    (key, version),
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    # -- connection and schema ------------------------------------------------------------

    def _connect(self, *, create: bool) -> sqlite3.Connection:
        self._check_header()
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        mode = "rwc" if create else "rw"
        uri = f"file:{self._uri}?mode={mode}"
        try:
            return sqlite3.connect(
                uri, uri=True, timeout=self.config.busy_timeout_ms / 1000, isolation_level=None
            )
        except sqlite3.OperationalError as exc:
            if create:
                raise
            raise StoreError(f"{self.shown}: the trust store cannot be opened ({exc})") from exc

    def _check_header(self) -> None:
        """A non-empty file that is not SQLite is someone else's: refuse before SQLite opens it."""
        try:
            with self.path.open("rb") as handle:
                head = handle.read(len(HEADER))
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StoreError(f"{self.shown}: the trust store cannot be read ({exc})") from exc
        if head and head != HEADER:
            raise StoreError(
                f"{self.shown}: not an SQLite database; it was left untouched. Move it away to "
                "start a new trust store, or point trust.db (or --db) at another file"
            )

    def _check_schema(self, conn: sqlite3.Connection) -> int:
        """The schema version (0: a new, empty database); corrupt, newer or foreign raises."""
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            tables = 0
            if version == 0:
                tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        except sqlite3.OperationalError:
            raise
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{self.shown}: the trust store is corrupt ({exc}); it was left untouched. "
                "Move it away to start a new one, or restore a backup"
            ) from exc
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.shown}: the trust store has schema version {version}, newer than this "
                f"pytest-confgate understands ({SCHEMA_VERSION}); upgrade pytest-confgate or "
                "point trust.db (or --db) at another file"
            )
        if version == 0 and tables:
            raise StoreError(
                f"{self.shown}: an SQLite database that is not a confgate trust store; it was "
                "left untouched. Point trust.db (or --db) at another file"
            )
        return version


def insert_events(conn: sqlite3.Connection, events: Sequence[TrustEvent]) -> int:
    """Insert inside the caller's write transaction; returns how many were new."""
    pairs: dict[tuple[str, str], int] = {}
    inserted = 0
    newest: float | None = None
    for event in events:
        key = (event.agent, event.project)
        if key not in pairs:
            conn.execute("INSERT OR IGNORE INTO pairs (agent, project) VALUES (?, ?)", key)
            pairs[key] = conn.execute(
                "SELECT pair FROM pairs WHERE agent = ? AND project = ?", key
            ).fetchone()[0]
        cursor = conn.execute(
            "INSERT OR IGNORE INTO events (event_id, pair, accepted, severity, finding, run, at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (event.event_id, pairs[key], int(event.accepted), SEVERITIES.index(event.severity),
             event.finding, event.run, event.at),
        )
        if cursor.rowcount > 0:
            inserted += 1
            newest = event.at if newest is None else max(newest, event.at)
            conn.execute("INSERT OR IGNORE INTO runs VALUES (?, ?)", (pairs[key], event.run))
            conn.execute("INSERT OR IGNORE INTO agent_runs VALUES (?, ?)", (event.agent, event.run))
    if inserted:  # new evidence: a new version, and the cached scores no longer hold
        conn.execute("UPDATE meta SET value = value + 1 WHERE name = 'evidence_version'")
        conn.execute(
            "UPDATE meta SET value = max(coalesce(value, ?1), ?1) WHERE name = 'max_at'",
            (newest,),
        )
        conn.execute("DELETE FROM score_cache")
        conn.execute("DELETE FROM meta WHERE name IN ('cache_key', 'cache_version')")
    return inserted


def _state(conn: sqlite3.Connection) -> _State:
    values: dict[str, Any] = dict(conn.execute("SELECT name, value FROM meta").fetchall())
    version = values.get("cache_version")
    max_at = values.get("max_at")
    key = values.get("cache_key")
    return _State(
        int(values.get("evidence_version") or 0),
        float(max_at) if isinstance(max_at, (int, float)) else None,
        key if isinstance(key, str) else None,
        int(version) if isinstance(version, int) else None,
    )


def _cached_table(conn: sqlite3.Connection, mode: str) -> TrustTable:
    pairs: dict[tuple[str, str], TrustRow] = {}
    agents: dict[str, TrustRow] = {}
    query = "SELECT agent, project, is_global, trust, reviews, accepted, discarded FROM score_cache"
    for agent, project, is_global, trust, reviews, accepted, discarded in conn.execute(query):
        if is_global:
            agents[agent] = TrustRow(agent, None, trust, reviews, accepted, discarded)
        else:
            pairs[(agent, project)] = TrustRow(agent, project, trust, reviews, accepted, discarded)
    return TrustTable(mode, pairs, agents)


def _ensure_math(conn: sqlite3.Connection) -> None:
    """SQLite built without math functions (older Pythons' bundles): provide ``pow``."""
    try:
        conn.execute("SELECT pow(0.5, 1.0)")
    except sqlite3.OperationalError:
        conn.create_function("pow", 2, math.pow, deterministic=True)


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text

"""What runs inside the SQLite trust store's transactions, on a connection the store opened:
inserting events, applying retractions, counting review runs, caching scores, reading a
snapshot. ``sqlite_store`` owns connections, checks and errors; ``schema`` holds the SQL.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pytest_confgate.trust.events import Retraction, TrustEvent
from pytest_confgate.trust.formula import SEVERITIES, Bucket, TrustRow, TrustTable
from pytest_confgate.trust.schema import (
    AGENT_REVIEWS,
    BUCKETS,
    COUNT_RUN,
    PAIR_REVIEWS,
)
from pytest_confgate.trust.store import Evidence, StoreState

if TYPE_CHECKING:
    import sqlite3


class Snapshot:
    """One read transaction of the SQLite store (``store.Snapshot``)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def state(self) -> StoreState:
        values: dict[str, Any] = dict(self._conn.execute("SELECT name, value FROM meta"))
        return state_of(values.get("evidence_version"), values.get("max_at"),
                         values.get("cache_key"), values.get("cache_version"))

    def cached_table(self, mode: str, new_agent: float) -> TrustTable:
        pairs: dict[tuple[str, str], TrustRow] = {}
        agents: dict[str, TrustRow] = {}
        query = ("SELECT agent, project, is_global, trust, reviews, accepted, discarded"
                 " FROM score_cache")
        for agent, project, is_global, *numbers in self._conn.execute(query):
            if is_global:
                agents[agent] = TrustRow(agent, None, *numbers)
            else:
                pairs[(agent, project)] = TrustRow(agent, project, *numbers)
        row = self._conn.execute("SELECT value FROM meta WHERE name = 'cache_default'").fetchone()
        default = float(row[0]) if row is not None and row[0] is not None else new_agent
        return TrustTable(mode, pairs, agents, default)

    def evidence(self, now: float, half_life_days: float) -> Evidence:
        buckets = [
            Bucket(agent, project, bool(accepted), SEVERITIES[severity], count, decay)
            for agent, project, accepted, severity, count, decay in self._conn.execute(
                BUCKETS, {"now": now, "half_life": half_life_days}
            )
        ]
        pair_reviews = {(a, p): n for a, p, n in self._conn.execute(PAIR_REVIEWS)}
        agent_reviews = dict(self._conn.execute(AGENT_REVIEWS).fetchall())
        return Evidence(buckets, pair_reviews, agent_reviews)


def insert_events(conn: sqlite3.Connection, events: Sequence[TrustEvent]) -> int:
    """Insert inside the caller's write transaction; returns how many were new."""
    pairs: dict[tuple[str, str], int] = {}
    runs: Counter[tuple[int, str, str]] = Counter()
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
            runs[(pairs[key], event.agent, event.run)] += 1
    for (pair, agent, run), count in runs.items():
        _count_run(conn, pair, agent, run, count)
    if inserted:  # new evidence: a new version, and the cached scores no longer hold
        conn.execute(
            "UPDATE meta SET value = max(coalesce(value, :at), :at) WHERE name = 'max_at'",
            {"at": newest},
        )
        _new_evidence(conn)
    return inserted


def apply_retractions(
    conn: sqlite3.Connection, retractions: Sequence[Retraction]
) -> tuple[int, list[str]]:
    applied, unknown = 0, []
    for item in retractions:
        row = conn.execute(
            "SELECT e.pair, p.agent, e.run, e.retracted FROM events AS e JOIN pairs AS p"
            " USING (pair) WHERE e.event_id = ?", (item.event_id,),
        ).fetchone()
        if row is None:
            unknown.append(item.event_id)
            continue
        cursor = conn.execute(
            "INSERT OR IGNORE INTO retractions (event_id, reason, actor, at) VALUES (?, ?, ?, ?)",
            (item.event_id, item.reason, item.by, item.at),
        )
        if cursor.rowcount > 0 and not row[3]:
            conn.execute("UPDATE events SET retracted = 1 WHERE event_id = ?", (item.event_id,))
            _count_run(conn, row[0], row[1], row[2], -1)
            applied += 1
    if applied:
        _new_evidence(conn)
    return applied, unknown


def _count_run(conn: sqlite3.Connection, pair: int, agent: str, run: str, step: int) -> None:
    """Distinct review runs are counted by how many live events name them."""
    for (create, add, drop), key in zip(COUNT_RUN, (pair, agent), strict=True):
        conn.execute(create, (key, run))
        conn.execute(add, (step, key, run))
        conn.execute(drop, (key, run))


def _new_evidence(conn: sqlite3.Connection) -> None:
    conn.execute("UPDATE meta SET value = value + 1 WHERE name = 'evidence_version'")
    conn.execute("DELETE FROM score_cache")
    conn.execute("DELETE FROM meta WHERE name IN ('cache_key', 'cache_version', 'cache_default')")


def store_cache(
    conn: sqlite3.Connection, table: TrustTable, key: str, version: int, busy_ms: int
) -> None:
    conn.execute("PRAGMA busy_timeout = 50")
    try:
        conn.execute("BEGIN IMMEDIATE")
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
    try:
        current = conn.execute(
            "SELECT value FROM meta WHERE name = 'evidence_version'"
        ).fetchone()[0]
        if int(current or 0) == version:  # no evidence arrived since the computation
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
                " ('cache_version', ?), ('cache_default', ?)",
                (key, version, table.new_agent),
            )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def state_of(version: Any, max_at: Any, key: Any, cache_version: Any) -> StoreState:
    return StoreState(
        int(version or 0),
        float(max_at) if isinstance(max_at, (int, float)) else None,
        key if isinstance(key, str) else None,
        int(cache_version) if isinstance(cache_version, int) else None,
    )


def event_of(row: Sequence[Any]) -> TrustEvent:
    event_id, accepted, agent, project, finding, severity, run, at = row
    del event_id  # derived from the fields
    kind = "finding_accepted" if accepted else "finding_discarded"
    return TrustEvent(kind, agent, project, finding, SEVERITIES[severity], run, float(at))

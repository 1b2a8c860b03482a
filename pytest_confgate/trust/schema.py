"""The SQLite trust store's SQL (schema version 2): text only; ``sqlite_store`` runs it.

``MIGRATIONS[v]`` takes a store from version ``v`` to ``v + 1``; ``confgate trust migrate``
runs them in one transaction. Version 1 had no retractions and no run counts.
"""

from __future__ import annotations

from pytest_confgate.trust.store import SCHEMA_VERSION

HEADER = b"SQLite format 3\x00"
_RUNS = (
    "CREATE TABLE {name} (pair INTEGER NOT NULL, run TEXT NOT NULL, n INTEGER NOT NULL,"
    " PRIMARY KEY (pair, run)) WITHOUT ROWID"
)
_AGENT_RUNS = (
    "CREATE TABLE {name} (agent TEXT NOT NULL, run TEXT NOT NULL, n INTEGER NOT NULL,"
    " PRIMARY KEY (agent, run)) WITHOUT ROWID"
)
# Covering: the report's GROUP BY reads the live events (retracted = 0) in order from the
# index alone, never the table (a partial index would not be covering in SQLite).
_COVERING = "CREATE INDEX events_by_pair ON events (retracted, pair, accepted, severity, at)"
_RETRACTIONS = (
    "CREATE TABLE retractions (event_id TEXT PRIMARY KEY REFERENCES events (event_id),"
    " reason TEXT NOT NULL, actor TEXT NOT NULL, at REAL NOT NULL)"
)
SCHEMA = (
    "CREATE TABLE pairs (pair INTEGER PRIMARY KEY, agent TEXT NOT NULL, project TEXT NOT NULL,"
    " UNIQUE (agent, project))",
    "CREATE TABLE events (seq INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE,"
    " pair INTEGER NOT NULL REFERENCES pairs (pair),"
    " accepted INTEGER NOT NULL CHECK (accepted IN (0, 1)),"
    " severity INTEGER NOT NULL CHECK (severity BETWEEN 0 AND 3),"
    " finding TEXT NOT NULL, run TEXT NOT NULL, at REAL NOT NULL,"
    " retracted INTEGER NOT NULL DEFAULT 0)",
    _COVERING,
    _RUNS.format(name="runs"),
    _AGENT_RUNS.format(name="agent_runs"),
    _RETRACTIONS,
    "CREATE TABLE meta (name TEXT PRIMARY KEY, value)",
    "CREATE TABLE score_cache (agent TEXT NOT NULL, project TEXT NOT NULL,"
    " is_global INTEGER NOT NULL, trust REAL NOT NULL, reviews INTEGER NOT NULL,"
    " accepted INTEGER NOT NULL, discarded INTEGER NOT NULL,"
    " PRIMARY KEY (agent, is_global, project)) WITHOUT ROWID",
    "INSERT INTO meta (name, value) VALUES ('evidence_version', 0), ('max_at', NULL)",
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        "ALTER TABLE events ADD COLUMN retracted INTEGER NOT NULL DEFAULT 0",
        "DROP INDEX events_by_pair",
        _COVERING,
        _RUNS.format(name="runs_v2"),
        "INSERT INTO runs_v2 SELECT pair, run, count(*) FROM events GROUP BY pair, run",
        "DROP TABLE runs",
        "ALTER TABLE runs_v2 RENAME TO runs",
        _AGENT_RUNS.format(name="agent_runs_v2"),
        "INSERT INTO agent_runs_v2 SELECT p.agent, e.run, count(*) FROM events AS e"
        " JOIN pairs AS p USING (pair) GROUP BY p.agent, e.run",
        "DROP TABLE agent_runs",
        "ALTER TABLE agent_runs_v2 RENAME TO agent_runs",
        _RETRACTIONS,
        "DELETE FROM score_cache",
        "DELETE FROM meta WHERE name IN ('cache_key', 'cache_version')",
        "PRAGMA user_version = 2",
    ),
}
BUCKETS = (
    "SELECT p.agent, p.project, b.accepted, b.severity, b.n, b.decay FROM"
    " (SELECT pair, accepted, severity, count(*) AS n,"
    # formula.age_days and formula.decay_weight, in the same order of operations.
    "  sum(pow(0.5, ((:now - min(at, :now)) / 86400.0) / :half_life)) AS decay"
    "  FROM events WHERE retracted = 0 GROUP BY pair, accepted, severity) AS b"
    " JOIN pairs AS p USING (pair)"
)
PAIR_REVIEWS = (
    "SELECT p.agent, p.project, r.n FROM (SELECT pair, count(*) AS n FROM runs GROUP BY pair)"
    " AS r JOIN pairs AS p USING (pair)"
)
AGENT_REVIEWS = "SELECT agent, count(*) FROM agent_runs GROUP BY agent"
CACHED_TRUST = (
    "SELECT (SELECT value FROM meta WHERE name = 'evidence_version'),"
    " (SELECT value FROM meta WHERE name = 'max_at'),"
    " (SELECT value FROM meta WHERE name = 'cache_key'),"
    " (SELECT value FROM meta WHERE name = 'cache_version'),"
    " coalesce((SELECT trust FROM score_cache WHERE agent = :agent AND ((is_global = 0 AND"
    " project = :project) OR (is_global = 1 AND project = '')) ORDER BY is_global LIMIT 1),"
    " (SELECT value FROM meta WHERE name = 'cache_default'))"
)
COUNT_RUN = (
    ("INSERT OR IGNORE INTO runs VALUES (?, ?, 0)",
     "UPDATE runs SET n = n + ? WHERE pair = ? AND run = ?",
     "DELETE FROM runs WHERE pair = ? AND run = ? AND n <= 0"),
    ("INSERT OR IGNORE INTO agent_runs VALUES (?, ?, 0)",
     "UPDATE agent_runs SET n = n + ? WHERE agent = ? AND run = ?",
     "DELETE FROM agent_runs WHERE agent = ? AND run = ? AND n <= 0"),
)
"""Per table (pairs' runs, agents' runs): make the row, add to its count, drop it at zero."""
EVENT_COLUMNS = (
    "SELECT e.event_id, e.accepted, p.agent, p.project, e.finding, e.severity, e.run, e.at"
    " FROM events AS e JOIN pairs AS p USING (pair)"
)
RETRACTED = (
    "SELECT e.event_id, e.accepted, p.agent, p.project, e.finding, e.severity, e.run, e.at,"
    " r.reason, r.actor, r.at FROM retractions AS r JOIN events AS e USING (event_id)"
    " JOIN pairs AS p USING (pair) ORDER BY r.at DESC, r.event_id"
)

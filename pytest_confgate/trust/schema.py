"""The trust store's SQL (schema version 1): text only; ``store`` is what runs it."""

from __future__ import annotations

SCHEMA_VERSION = 1
HEADER = b"SQLite format 3\x00"
SCHEMA = (
    "CREATE TABLE pairs (pair INTEGER PRIMARY KEY, agent TEXT NOT NULL, project TEXT NOT NULL,"
    " UNIQUE (agent, project))",
    "CREATE TABLE events (seq INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE,"
    " pair INTEGER NOT NULL REFERENCES pairs (pair),"
    " accepted INTEGER NOT NULL CHECK (accepted IN (0, 1)),"
    " severity INTEGER NOT NULL CHECK (severity BETWEEN 0 AND 3),"
    " finding TEXT NOT NULL, run TEXT NOT NULL, at REAL NOT NULL)",
    # Covering index: the report's GROUP BY reads it in order, never the table (SPEC 11).
    "CREATE INDEX events_by_pair ON events (pair, accepted, severity, at)",
    "CREATE TABLE runs (pair INTEGER NOT NULL, run TEXT NOT NULL, PRIMARY KEY (pair, run))"
    " WITHOUT ROWID",
    "CREATE TABLE agent_runs (agent TEXT NOT NULL, run TEXT NOT NULL,"
    " PRIMARY KEY (agent, run)) WITHOUT ROWID",
    "CREATE TABLE meta (name TEXT PRIMARY KEY, value)",
    "CREATE TABLE score_cache (agent TEXT NOT NULL, project TEXT NOT NULL,"
    " is_global INTEGER NOT NULL, trust REAL NOT NULL, reviews INTEGER NOT NULL,"
    " accepted INTEGER NOT NULL, discarded INTEGER NOT NULL,"
    " PRIMARY KEY (agent, is_global, project)) WITHOUT ROWID",
    "INSERT INTO meta (name, value) VALUES ('evidence_version', 0), ('max_at', NULL)",
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)
BUCKETS = (
    "SELECT p.agent, p.project, b.accepted, b.severity, b.n, b.decay FROM"
    " (SELECT pair, accepted, severity, count(*) AS n,"
    # formula.age_days and formula.decay_weight, in the same order of operations.
    "  sum(pow(0.5, ((?1 - min(at, ?1)) / 86400.0) / ?2)) AS decay"
    "  FROM events GROUP BY pair, accepted, severity) AS b JOIN pairs AS p USING (pair)"
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
    " (SELECT trust FROM score_cache WHERE agent = ?1 AND ((is_global = 0 AND project = ?2)"
    "  OR (is_global = 1 AND project = '')) ORDER BY is_global LIMIT 1)"
)

"""The PostgreSQL trust store's SQL (schema version 2): text only; ``postgres_store`` runs it.

Every table is prefixed ``confgate_trust_`` so the store can share a database (and a schema,
chosen with ``?options=-csearch_path%3D...`` in the URL) with anything else. The version lives in
the one-row ``confgate_trust_state`` table beside the evidence version and the cache key.
``MIGRATIONS[v]`` takes a store from ``v`` to ``v + 1`` (none yet: PostgreSQL starts at 2).
"""

from __future__ import annotations

from pytest_confgate.trust.store import SCHEMA_VERSION

STATE_TABLE = "confgate_trust_state"
LOCK_KEY = 0x636F6E66_67617465  # "confgate": serialises schema changes (advisory lock)
SCHEMA = (
    "CREATE TABLE confgate_trust_state (id integer PRIMARY KEY CHECK (id = 1),"
    " schema_version integer NOT NULL, evidence_version bigint NOT NULL DEFAULT 0,"
    " max_at double precision, cache_key text, cache_version bigint,"
    " cache_default double precision)",
    "CREATE TABLE confgate_trust_pairs (pair integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    " agent text NOT NULL, project text NOT NULL, UNIQUE (agent, project))",
    "CREATE TABLE confgate_trust_events (seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    " event_id text NOT NULL UNIQUE, pair integer NOT NULL REFERENCES confgate_trust_pairs,"
    " accepted boolean NOT NULL, severity smallint NOT NULL CHECK (severity BETWEEN 0 AND 3),"
    " finding text NOT NULL, run text NOT NULL, at double precision NOT NULL,"
    " retracted boolean NOT NULL DEFAULT false)",
    # Covering and partial: the report's GROUP BY is an index-only scan.
    "CREATE INDEX confgate_trust_events_by_pair ON confgate_trust_events"
    " (pair, accepted, severity, at) WHERE NOT retracted",
    "CREATE TABLE confgate_trust_runs (pair integer NOT NULL, run text NOT NULL,"
    " n integer NOT NULL, PRIMARY KEY (pair, run))",
    "CREATE TABLE confgate_trust_agent_runs (agent text NOT NULL, run text NOT NULL,"
    " n integer NOT NULL, PRIMARY KEY (agent, run))",
    "CREATE TABLE confgate_trust_retractions (event_id text PRIMARY KEY"
    " REFERENCES confgate_trust_events (event_id), reason text NOT NULL, actor text NOT NULL,"
    " at double precision NOT NULL)",
    "CREATE TABLE confgate_trust_score_cache (agent text NOT NULL, project text NOT NULL,"
    " is_global boolean NOT NULL, trust double precision NOT NULL, reviews integer NOT NULL,"
    " accepted integer NOT NULL, discarded integer NOT NULL,"
    " PRIMARY KEY (agent, is_global, project))",
    # S608: the version is our own constant, not input.
    f"INSERT INTO confgate_trust_state (id, schema_version) VALUES (1, {SCHEMA_VERSION})",  # noqa: S608
)
MIGRATIONS: dict[int, tuple[str, ...]] = {}
STATE = (
    "SELECT schema_version, evidence_version, max_at, cache_key, cache_version"
    " FROM confgate_trust_state WHERE id = 1"
)
INSERT_PAIRS = (
    "INSERT INTO confgate_trust_pairs (agent, project)"
    " SELECT agent, project FROM unnest(%s::text[], %s::text[]) AS t (agent, project)"
    " ORDER BY agent, project ON CONFLICT (agent, project) DO NOTHING"
)
# Sorted inserts, so two writers take their locks in the same order; a new event counts its
# review run for the pair and for the agent in the same statement.
INSERT_EVENTS = """
WITH incoming AS (
  SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::boolean[], %s::smallint[],
                       %s::text[], %s::text[], %s::float8[])
    AS t (event_id, agent, project, accepted, severity, finding, run, at)
), new AS (
  INSERT INTO confgate_trust_events (event_id, pair, accepted, severity, finding, run, at)
  SELECT i.event_id, p.pair, i.accepted, i.severity, i.finding, i.run, i.at
  FROM incoming AS i JOIN confgate_trust_pairs AS p USING (agent, project)
  ORDER BY i.event_id
  ON CONFLICT (event_id) DO NOTHING
  RETURNING pair, run, at
), pair_runs AS (
  INSERT INTO confgate_trust_runs AS r (pair, run, n)
  SELECT pair, run, count(*) FROM new GROUP BY pair, run ORDER BY pair, run
  ON CONFLICT (pair, run) DO UPDATE SET n = r.n + excluded.n
), agent_runs AS (
  INSERT INTO confgate_trust_agent_runs AS r (agent, run, n)
  SELECT p.agent, new.run, count(*) FROM new JOIN confgate_trust_pairs AS p USING (pair)
  GROUP BY p.agent, new.run ORDER BY 1, 2
  ON CONFLICT (agent, run) DO UPDATE SET n = r.n + excluded.n
)
SELECT count(*), max(at) FROM new
"""
NEW_EVIDENCE = (
    "UPDATE confgate_trust_state SET evidence_version = evidence_version + 1,"
    " max_at = greatest(max_at, %s::float8), cache_key = NULL, cache_version = NULL,"
    " cache_default = NULL WHERE id = 1"
)
CLEAR_CACHE = "DELETE FROM confgate_trust_score_cache"
FIND_FOR_RETRACTION = (
    "SELECT e.pair, p.agent, e.run, e.retracted FROM confgate_trust_events AS e"
    " JOIN confgate_trust_pairs AS p USING (pair) WHERE e.event_id = %s FOR UPDATE OF e"
)
INSERT_RETRACTION = (
    "INSERT INTO confgate_trust_retractions (event_id, reason, actor, at)"
    " VALUES (%s, %s, %s, %s) ON CONFLICT (event_id) DO NOTHING"
)
RETRACT = (
    "WITH gone AS (UPDATE confgate_trust_events SET retracted = true WHERE event_id = %s),"
    " r AS (UPDATE confgate_trust_runs SET n = n - 1 WHERE pair = %s AND run = %s),"
    " a AS (UPDATE confgate_trust_agent_runs SET n = n - 1 WHERE agent = %s AND run = %s)"
    " SELECT 1"
)
DROP_EMPTY_RUNS = (
    "DELETE FROM confgate_trust_runs WHERE pair = %s AND run = %s AND n <= 0",
    "DELETE FROM confgate_trust_agent_runs WHERE agent = %s AND run = %s AND n <= 0",
)
BUCKETS = (
    "SELECT p.agent, p.project, b.accepted, b.severity, b.n, b.decay FROM"
    " (SELECT pair, accepted, severity, count(*) AS n,"
    # formula.age_days and formula.decay_weight, in the same order of operations.
    "  sum(power(0.5::float8, ((%(now)s - least(at, %(now)s)) / 86400.0::float8) / %(h)s))"
    "  AS decay FROM confgate_trust_events WHERE NOT retracted"
    "  GROUP BY pair, accepted, severity) AS b"
    " JOIN confgate_trust_pairs AS p USING (pair)"
)
PAIR_REVIEWS = (
    "SELECT p.agent, p.project, count(*) FROM confgate_trust_runs AS r"
    " JOIN confgate_trust_pairs AS p USING (pair) GROUP BY p.agent, p.project"
)
AGENT_REVIEWS = "SELECT agent, count(*) FROM confgate_trust_agent_runs GROUP BY agent"
CACHED_TABLE = (
    "SELECT agent, project, is_global, trust, reviews, accepted, discarded"
    " FROM confgate_trust_score_cache"
)
CACHE_DEFAULT = "SELECT cache_default FROM confgate_trust_state WHERE id = 1"
CACHED_TRUST = (
    "SELECT s.schema_version, s.evidence_version, s.max_at, s.cache_key, s.cache_version,"
    " coalesce((SELECT c.trust FROM confgate_trust_score_cache AS c WHERE c.agent = %s AND"
    " ((NOT c.is_global AND c.project = %s) OR (c.is_global AND c.project = ''))"
    " ORDER BY c.is_global LIMIT 1), s.cache_default)"
    " FROM confgate_trust_state AS s WHERE s.id = 1"
)
LOCK_STATE = "SELECT evidence_version FROM confgate_trust_state WHERE id = 1 FOR UPDATE"
STORE_CACHE = (
    "INSERT INTO confgate_trust_score_cache"
    " SELECT * FROM unnest(%s::text[], %s::text[], %s::boolean[], %s::float8[], %s::int[],"
    " %s::int[], %s::int[])"
)
SET_CACHE_KEY = (
    "UPDATE confgate_trust_state SET cache_key = %s, cache_version = %s, cache_default = %s"
    " WHERE id = 1"
)
EVENT_COLUMNS = (
    "SELECT e.event_id, e.accepted, p.agent, p.project, e.finding, e.severity, e.run, e.at"
    " FROM confgate_trust_events AS e JOIN confgate_trust_pairs AS p USING (pair)"
)
RETRACTED = (
    "SELECT e.event_id, e.accepted, p.agent, p.project, e.finding, e.severity, e.run, e.at,"
    " r.reason, r.actor, r.at FROM confgate_trust_retractions AS r"
    " JOIN confgate_trust_events AS e USING (event_id)"
    " JOIN confgate_trust_pairs AS p USING (pair) ORDER BY r.at DESC, r.event_id"
)

"""Agent trust: record review outcomes, score agents, weight triage.

The Python API. These functions are the IO edge: they read the clock when ``now`` is not
given and the configuration when ``config`` is not given; ``formula`` and ``triage`` stay pure.
Times are POSIX seconds (UTC). Modules:

    events          review outcomes and retractions, their ids and JSON forms (pure)
    formula         trust from summed evidence, the reference both stores match (pure)
    triage          candidates by base score x trust (pure)
    report          the report's rows, text table and HTML page (pure)
    store           the store interface both backends keep, and what they share
    sqlite_store    a file (the default): the only module that imports sqlite3
    schema          the SQLite store's SQL and migrations
    postgres_store  a postgresql:// URL, shared by a team (issue 20)
    pg_schema       the PostgreSQL store's SQL
    server          PostgreSQL connections: the only module that imports psycopg
    spool           events a write could not store, until the next write that can

    >>> from pytest_confgate.trust import triage, trust_score
    >>> trust_score("fd-architecture", "my-service")       # 1.0 until evidence exists
    >>> triage({"fd-architecture": 0.9, "fd-game-design": 0.7}, "my-service")
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from pytest_confgate.config.trust import TrustConfig, server_url
from pytest_confgate.exceptions import StoreError
from pytest_confgate.trust.events import Retraction, TrustEvent
from pytest_confgate.trust.formula import NEUTRAL, TrustRow, TrustTable
from pytest_confgate.trust.postgres_store import PostgresTrustStore
from pytest_confgate.trust.server import Server
from pytest_confgate.trust.sqlite_store import SqliteTrustStore
from pytest_confgate.trust.store import RecordOutcome, TrustStore
from pytest_confgate.trust.triage import TriageRow, rank_candidates

__all__ = [
    "PostgresTrustStore",
    "RecordOutcome",
    "Retraction",
    "SqliteTrustStore",
    "TriageRow",
    "TrustEvent",
    "TrustRow",
    "TrustStore",
    "TrustTable",
    "default_project",
    "open_store",
    "record",
    "triage",
    "triage_with_store",
    "trust_score",
]

Warn = Callable[[str], None]
_MAX_OPEN = 8
_OPEN: dict[tuple[str, TrustConfig], TrustStore] = {}


def open_store(config: TrustConfig | None = None, db: str | Path | None = None) -> TrustStore:
    """The store at ``db`` (else ``trust.db``): a path (SQLite, relative to the working
    directory) or a ``postgresql://`` URL; any other URL scheme is a ``StoreError``."""
    trust = config if config is not None else _config_from_cwd()
    location = str(db) if db is not None else trust.db
    try:
        url = server_url(location)
    except ValueError as exc:
        raise StoreError(str(exc)) from None
    if url is None:
        return SqliteTrustStore(Path(location), trust)
    return PostgresTrustStore(Server(url, trust.password_env, trust.connect_timeout_s), trust)


def record(
    events: Sequence[TrustEvent],
    *,
    config: TrustConfig | None = None,
    db: str | Path | None = None,
) -> RecordOutcome:
    """Store review outcomes; a write that cannot be made is spooled, never raised."""
    return open_store(config, db).record(events)


def trust_score(
    agent: str,
    project: str,
    *,
    config: TrustConfig | None = None,
    db: str | Path | None = None,
    now: float | None = None,
) -> float:
    """The agent's trust in [floor, 1.0] for ``project``; 1.0 without any evidence.

    Cached in the store, and the store stays open between calls: pass ``config`` to skip
    reading the configuration file each call.
    """
    fresh = open_store(config, db)
    key = (fresh.location, fresh.config)
    store = _OPEN.setdefault(key, fresh)
    if len(_OPEN) > _MAX_OPEN:
        _OPEN.pop(next(iter(_OPEN))).close()
    return store.trust_score(agent, project, _now(now))


def triage(
    candidates: Mapping[str, float],
    project: str,
    *,
    config: TrustConfig | None = None,
    db: str | Path | None = None,
    now: float | None = None,
    warn: Warn | None = None,
) -> list[TriageRow]:
    """Candidates by ``base * trust``, highest first, none dropped; scores read once."""
    return triage_with_store(open_store(config, db), candidates, project, _now(now), warn)


def triage_with_store(
    store: TrustStore,
    candidates: Mapping[str, float],
    project: str,
    now: float,
    warn: Warn | None = None,
) -> list[TriageRow]:
    """``triage`` on an open store: no store or an unreadable one means 1.0 for every agent."""
    table: TrustTable | None = None
    reason = f"no trust store at {store.shown} yet"
    try:
        if store.exists():
            table = store.table(now)
    except StoreError as exc:
        reason = str(exc)
    if table is None:
        if warn is not None:
            warn(f"{reason}; every trust multiplier is {NEUTRAL}")
        return rank_candidates(candidates, lambda _agent: NEUTRAL)
    loaded = table
    return rank_candidates(candidates, lambda agent: loaded.trust(agent, project))


def default_project(configured: str | None, root: Path) -> str:
    """``project`` from the config, else ``GITHUB_REPOSITORY``, else the folder's name."""
    return configured or os.environ.get("GITHUB_REPOSITORY") or root.resolve().name


def _now(now: float | None) -> float:
    return time.time() if now is None else now


def _config_from_cwd() -> TrustConfig:
    from pytest_confgate.config.loader import load_config

    return load_config(Path.cwd()).config.trust

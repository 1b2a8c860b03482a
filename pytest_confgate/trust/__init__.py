"""Agent trust (SPEC 9, seed agent-trust): record review outcomes, score agents, weight triage.

The Python API. These functions are the IO edge: they read the clock when ``now`` is not
given and the configuration when ``config`` is not given; ``formula`` and ``triage`` stay pure.
``store`` is the only module that touches SQLite. Times are POSIX seconds (UTC).

    >>> from pytest_confgate.trust import triage, trust_score
    >>> trust_score("fd-architecture", "my-service")       # 1.0 until evidence exists
    >>> triage({"fd-architecture": 0.9, "fd-game-design": 0.7}, "my-service")
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from pytest_confgate.config.trust import TrustConfig
from pytest_confgate.exceptions import StoreError
from pytest_confgate.trust.events import TrustEvent
from pytest_confgate.trust.formula import NEUTRAL, TrustRow, TrustTable
from pytest_confgate.trust.store import RecordOutcome, TrustStore
from pytest_confgate.trust.triage import TriageRow, rank_candidates

__all__ = [
    "RecordOutcome",
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
    """The store at ``db`` (else ``trust.db``), relative paths from the working directory."""
    trust = config if config is not None else _config_from_cwd()
    return TrustStore(Path(db if db is not None else trust.db), trust)


def record(
    events: Sequence[TrustEvent],
    *,
    config: TrustConfig | None = None,
    db: str | Path | None = None,
) -> RecordOutcome:
    """Store review outcomes; a write that cannot be made is spooled, never raised (SPEC 9)."""
    return open_store(config, db).record(events)


def trust_score(
    agent: str,
    project: str,
    *,
    config: TrustConfig | None = None,
    db: str | Path | None = None,
    now: float | None = None,
) -> float:
    """The agent's trust in [floor, 1.0] for ``project``; 1.0 without any evidence (SPEC 9).

    Cached in the store, and the store stays open between calls: pass ``config`` to skip
    reading the configuration file each call.
    """
    fresh = open_store(config, db)
    key = (str(fresh.path), fresh.config)
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
    """Candidates by ``base * trust``, highest first, none dropped; scores read once (seed F3)."""
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
    if not store.path.exists():
        reason = f"no trust store at {store.path} yet"
    else:
        try:
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
    """SPEC 3: ``project`` from the config, else ``GITHUB_REPOSITORY``, else the folder's name."""
    return configured or os.environ.get("GITHUB_REPOSITORY") or root.resolve().name


def _now(now: float | None) -> float:
    return time.time() if now is None else now


def _config_from_cwd() -> TrustConfig:
    from pytest_confgate.config.loader import load_config

    return load_config(Path.cwd()).config.trust

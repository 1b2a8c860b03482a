"""The trust store's one interface (issue 20): what every backend promises, shared logic.

Two backends implement it: ``sqlite_store`` (a file, the default; the only trust module that
imports ``sqlite3`` at run time) and ``postgres_store`` (a ``postgresql://`` URL; psycopg is
imported only by ``server``, and only when a URL is given). Both keep the same promises:

- an event is stored once by its id, whatever the number of concurrent writers;
- the schema is versioned: the first write creates it, an older one is migrated only by
  ``confgate trust migrate``, a newer one (or a damaged or foreign store) is refused by name
  and never written to;
- ``record`` never raises and never hangs: a write that cannot be made goes to the ``spool``
  and the next write that can be made replays it in its own transaction;
- scores are cached in the store for one configuration; the transaction that adds evidence or
  a retraction clears the cache. In ``mode: formula`` decay cancels out of every ratio
  (``0.5 ** (age / h)`` is memoryless), so a cached table holds for any ``now`` at or after
  the newest event; ``mode: bayesian`` caches per ``now``;
- a retraction removes its event's effect; both stay in the history and the export.

This module holds what does not depend on the database: the retry loop and the spool, the
cache rules, the table from the formula, retraction and import. Backends raise ``StoreError``
(``StoreBusy`` when another attempt may succeed), never their driver's exceptions.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pytest_confgate.config.trust import TrustConfig
from pytest_confgate.exceptions import StoreError
from pytest_confgate.trust import formula
from pytest_confgate.trust.events import RetractedEvent, Retraction, TrustEvent
from pytest_confgate.trust.formula import Bucket, TrustTable
from pytest_confgate.trust.spool import Spool

SCHEMA_VERSION = 2
"""Both backends: 1 was the first SQLite store; 2 added retractions and run counts."""
IMPORT_BATCH = 5000


class StoreBusy(StoreError):
    """Another writer holds the store, or the server went away: another attempt may succeed."""


@dataclass(frozen=True)
class RecordOutcome:
    """What became of a write: ``stored`` (new events, replays included) or ``spooled``."""

    spooled: bool
    stored: int = 0
    replayed: int = 0
    spool: Path | None = None
    reason: str = ""


@dataclass(frozen=True)
class WriteResult:
    """One write transaction: new events, new retractions, retractions of unknown events."""

    events: int = 0
    retractions: int = 0
    unknown: tuple[str, ...] = ()


@dataclass
class ImportOutcome:
    """``confgate trust import``: what was read and what was new."""

    events: int = 0
    new_events: int = 0
    retractions: int = 0
    new_retractions: int = 0
    unknown: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class StoreState:
    """The evidence version and what the score cache was computed for."""

    version: int
    max_at: float | None
    cache_key: str | None
    cache_version: int | None


@dataclass(frozen=True)
class Evidence:
    """What ``formula.score_table`` needs, summed by the database."""

    buckets: list[Bucket]
    pair_reviews: dict[tuple[str, str], int]
    agent_reviews: dict[str, int]


class Snapshot(Protocol):
    """One read transaction of a backend: every answer from the same snapshot."""

    def state(self) -> StoreState: ...

    def cached_table(self, mode: str, new_agent: float) -> TrustTable: ...

    def evidence(self, now: float, half_life_days: float) -> Evidence: ...


class TrustStore(ABC):
    """One trust store (a file or a server database) with its spool."""

    def __init__(self, shown: str, location: str, config: TrustConfig, spool: Spool) -> None:
        self.shown = shown
        """Where the store is, for messages: the path as given, or the URL (no password)."""
        self.location = location
        """What identifies the store: the absolute path, or the URL."""
        self.config = config
        self.spool = spool
        self._key: str | None = None

    # -- what a backend provides ----------------------------------------------------------

    @abstractmethod
    def exists(self) -> bool:
        """Whether there is a store to read (a missing one reads as empty)."""

    @abstractmethod
    def close(self) -> None:
        """Release connections (a later call opens new ones)."""

    @abstractmethod
    def _snapshot(self) -> AbstractContextManager[Snapshot | None]:
        """A read transaction, or ``None`` when there is no store yet."""

    @abstractmethod
    def _cached_trust(self, agent: str, project: str) -> tuple[StoreState, float | None] | None:
        """The cache state and the pair's cached trust in one statement (``None``: no store)."""

    @abstractmethod
    def _store_cache(self, table: TrustTable, key: str, version: int) -> None:
        """Keep ``table`` as the cache, unless evidence arrived since ``version``; best effort."""

    @abstractmethod
    def _write(
        self, events: Sequence[TrustEvent], retractions: Sequence[Retraction]
    ) -> WriteResult:
        """One write transaction: the schema checked (a fresh store created), events inserted
        (existing ids skipped), then retractions applied."""

    @abstractmethod
    def count_events(self) -> int:
        """How many events the store holds, retracted ones included (0 without a store)."""

    @abstractmethod
    def find_event(self, prefix: str) -> TrustEvent:
        """The event whose id is or starts with ``prefix``; ``StoreError`` when none or several."""

    @abstractmethod
    def retracted(self) -> list[RetractedEvent]:
        """Every retraction with its event, newest first."""

    @abstractmethod
    def export(self) -> Iterator[TrustEvent | Retraction]:
        """Every event in the order stored, then every retraction (streamed)."""

    @abstractmethod
    def migrate(self) -> tuple[int, int]:
        """Bring the schema to ``SCHEMA_VERSION`` (creating it); returns (before, after)."""

    # -- writes ---------------------------------------------------------------------------

    def __enter__(self) -> TrustStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def record(self, events: Sequence[TrustEvent]) -> RecordOutcome:
        """Store ``events`` (and replay the spool), or spool them; never raises, never hangs."""
        try:
            stored, replayed = self._record(events)
        except (StoreError, OSError) as exc:
            reason = str(exc) if isinstance(exc, StoreError) else f"{self.shown}: {exc}"
            return RecordOutcome(True, spool=self.spool.put(events), reason=reason)
        return RecordOutcome(False, stored=stored, replayed=replayed)

    def replay_spool(self) -> RecordOutcome:
        """Move spooled events into the database now (any write does this too)."""
        return self.record([])

    def spooled_count(self) -> int:
        """Events waiting in the spool for the next successful write."""
        return self.spool.count()

    def _record(self, events: Sequence[TrustEvent]) -> tuple[int, int]:
        spooled: list[tuple[Path, TrustEvent]] = []

        def write() -> WriteResult:
            spooled[:] = self.spool.pending()
            return self._write([event for _, event in spooled] + list(events), ())

        result = self._with_retries(write)
        for path, _ in spooled:
            path.unlink(missing_ok=True)
        return result.events, len(spooled)

    def _with_retries(self, write: Callable[[], WriteResult]) -> WriteResult:
        attempts = self.config.write_attempts
        for attempt in range(attempts):
            try:
                return write()
            except StoreBusy:
                if attempt == attempts - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable: the last attempt raises or returns")

    def retract(self, event_id: str, reason: str, by: str, at: float) -> tuple[Retraction, bool]:
        """Take back the event ``event_id`` (or a unique prefix of it, 8 digits at least).

        Returns the retraction in force and whether it is new (a second retraction of the same
        event keeps the first). Not spooled: the caller is a person who can try again.
        """
        from pytest_confgate.trust.events import retraction

        event = self.find_event(event_id)
        wanted = retraction(event.event_id, reason, by, at)
        result = self._with_retries(lambda: self._write((), (wanted,)))
        if result.retractions:
            return wanted, True
        kept = next(r.retraction for r in self.retracted() if r.event.event_id == event.event_id)
        return kept, False

    def import_records(self, records: Iterable[TrustEvent | Retraction]) -> ImportOutcome:
        """Store exported lines: events in batches (existing ids skipped), retractions last so
        their events are in. Idempotent: importing the same lines again adds nothing."""
        outcome = ImportOutcome()
        batch: list[TrustEvent] = []
        retractions: list[Retraction] = []
        for item in records:
            if isinstance(item, Retraction):
                retractions.append(item)
                continue
            batch.append(item)
            if len(batch) >= IMPORT_BATCH:
                self._import_batch(batch, (), outcome)
                batch = []
        self._import_batch(batch, retractions, outcome)
        return outcome

    def _import_batch(
        self, events: Sequence[TrustEvent], retractions: Sequence[Retraction],
        outcome: ImportOutcome,
    ) -> None:
        if not events and not retractions:
            return
        result = self._with_retries(lambda: self._write(events, retractions))
        outcome.events += len(events)
        outcome.new_events += result.events
        outcome.retractions += len(retractions)
        outcome.new_retractions += result.retractions
        outcome.unknown.extend(result.unknown)

    # -- reads ----------------------------------------------------------------------------

    def table(self, now: float) -> TrustTable:
        """Every score, from the cache when it holds for ``now``; an absent store is empty."""
        key = self._cache_key(now)
        with self._snapshot() as snapshot:
            if snapshot is None:
                return formula.score_table([], {}, {}, self.config)
            state = snapshot.state()
            if self._cache_holds(state, key, now):
                return snapshot.cached_table(self.config.mode, self._empty_new_agent())
            evidence = snapshot.evidence(now, self.config.half_life_days)
        table = formula.score_table(
            evidence.buckets, evidence.pair_reviews, evidence.agent_reviews, self.config
        )
        if self.config.mode == "bayesian" or state.max_at is None or now >= state.max_at:
            with contextlib.suppress(StoreError):
                self._store_cache(table, key, state.version)
        return table

    def trust_score(self, agent: str, project: str, now: float) -> float:
        """One pair's trust: one indexed statement when the cache holds, else the whole table."""
        cached = self._cached_trust(agent, project)
        if cached is None:
            return self._empty_new_agent()
        state, trust = cached
        if trust is not None and self._cache_holds(state, self._cache_key(now), now):
            return trust
        return self.table(now).trust(agent, project)

    def _empty_new_agent(self) -> float:
        return formula.score_table([], {}, {}, self.config).new_agent

    def _cache_key(self, now: float) -> str:
        if self._key is not None and self.config.mode == "formula":
            return self._key
        settings = self.config.model_dump(
            include={"mode", "half_life_days", "full_weight_reviews", "floor",
                     "severity_weights", "prior_strength", "new_agent", "new_agent_prior"}
        )
        if self.config.mode == "bayesian":  # decayed counts do not cancel out: per instant
            settings["now"] = now
        key = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()
        self._key = key
        return key

    def _cache_holds(self, state: StoreState, key: str, now: float) -> bool:
        if state.cache_key != key or state.cache_version != state.version:
            return False
        return self.config.mode == "bayesian" or state.max_at is None or now >= state.max_at


def older_schema(shown: str, version: int) -> StoreError:
    """The error for a store an older pytest-confgate wrote: migrate it explicitly."""
    return StoreError(
        f"{shown}: the trust store has schema version {version}, older than this "
        f"pytest-confgate ({SCHEMA_VERSION}); run `confgate trust migrate --db {shown}` once "
        "(back it up first), then try again"
    )


def newer_schema(shown: str, version: int) -> StoreError:
    """The error for a store a newer pytest-confgate wrote: never touched."""
    return StoreError(
        f"{shown}: the trust store has schema version {version}, newer than this "
        f"pytest-confgate understands ({SCHEMA_VERSION}); upgrade pytest-confgate or "
        "point trust.db (or --db) at another store"
    )


def unknown_event(shown: str, prefix: str, matches: int) -> StoreError:
    """No event, or several, for an id the user typed."""
    if matches == 0:
        return StoreError(
            f"{shown}: no event with id {prefix!r}; `confgate trust export` lists every "
            "event with its event_id"
        )
    return StoreError(
        f"{shown}: {matches} events have ids starting with {prefix!r}; give more digits"
    )

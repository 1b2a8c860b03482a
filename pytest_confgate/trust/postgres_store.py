"""The PostgreSQL trust store (issue 20): one database shared by a team's repositories and CI.

The same promises as the SQLite file (``store``): events inserted with ``ON CONFLICT DO
NOTHING`` so any number of writers store each id once; schema version in
``confgate_trust_state``, created by the first write (under an advisory lock), migrated only by
``confgate trust migrate``, refused when newer; a write that cannot be made (server down,
locks held past ``busy_timeout_ms``) is spooled locally and replayed; decay summed in SQL over a
covering index. One connection per process, opened on first use and again after a fork or a
lost connection; reads run in one ``REPEATABLE READ`` snapshot, a cached ``trust_score`` is one
statement (one round trip).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pytest_confgate.config.trust import TrustConfig
from pytest_confgate.exceptions import StoreError
from pytest_confgate.trust import pg_schema as sql
from pytest_confgate.trust.events import RetractedEvent, Retraction, TrustEvent
from pytest_confgate.trust.formula import SEVERITIES, Bucket, TrustRow, TrustTable
from pytest_confgate.trust.server import Server, driver
from pytest_confgate.trust.spool import Spool
from pytest_confgate.trust.store import (
    SCHEMA_VERSION,
    Evidence,
    StoreState,
    TrustStore,
    WriteResult,
    newer_schema,
    older_schema,
    unknown_event,
)

if TYPE_CHECKING:
    import psycopg

T = TypeVar("T")
_EXPORT_BATCH = 5000


class PostgresTrustStore(TrustStore):
    """The trust tables in one PostgreSQL database, with a local spool."""

    def __init__(self, server: Server, config: TrustConfig) -> None:
        super().__init__(server.shown, server.url, config, Spool(None, server.url))
        self.server = server
        self._conn: psycopg.Connection[Any] | None = None
        self._seen: psycopg.Connection[Any] | None = None
        self._pid = 0

    def exists(self) -> bool:
        return self._call(self._has_tables, "cannot read the trust store")

    def close(self) -> None:
        conn, self._conn, self._seen = self._conn, None, None
        if conn is not None and self._pid == os.getpid():
            with contextlib.suppress(Exception):
                conn.close()

    # -- writes ---------------------------------------------------------------------------

    def _write(
        self, events: Sequence[TrustEvent], retractions: Sequence[Retraction]
    ) -> WriteResult:
        def write(conn: psycopg.Connection[Any]) -> WriteResult:
            with conn.transaction():
                version = self._version(conn)
                if version == 0 and self._version(conn, lock=True) == 0:
                    self._create(conn)  # the first write creates the store
                    version = SCHEMA_VERSION
                self._check_version(version or self._version(conn))
                stored = _insert_events(conn, events)
                applied, unknown = _apply_retractions(conn, retractions)
            return WriteResult(stored, applied, tuple(unknown))

        return self._call(write, "cannot write the trust store")

    def migrate(self) -> tuple[int, int]:
        def migrate(conn: psycopg.Connection[Any]) -> tuple[int, int]:
            with conn.transaction():
                conn.execute("SELECT set_config('statement_timeout', '0', true)")
                before = self._version(conn, lock=True)
                if before > SCHEMA_VERSION:
                    raise newer_schema(self.shown, before)
                if before == 0:
                    self._create(conn)
                for step in range(before or SCHEMA_VERSION, SCHEMA_VERSION):
                    if step not in sql.MIGRATIONS:
                        raise StoreError(f"{self.shown}: no migration from schema {step}; "
                                         "this store was not written by pytest-confgate")
                    for statement in sql.MIGRATIONS[step]:
                        conn.execute(statement)
            return before, SCHEMA_VERSION

        return self._call(migrate, "the migration failed, nothing changed")

    def _create(self, conn: psycopg.Connection[Any]) -> None:
        try:
            for statement in sql.SCHEMA:
                conn.execute(statement)
        except driver(self.shown).errors.InsufficientPrivilege as exc:
            raise StoreError(self.server.scrub(
                f"{self.shown}: this role may not create the trust tables ({exc}); run "
                f"`confgate trust migrate --db {self.shown}` once as a role that may, then "
                "grant this one SELECT, INSERT, UPDATE, DELETE on them"
            )) from None

    # -- reads ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[_Snapshot | None]:
        if not self._call(self._has_tables, "cannot read the trust store"):
            yield None
            return
        conn = self._connection()
        try:
            with conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                snapshot = _Snapshot(conn)
                self._check_version(snapshot.version())
                yield snapshot
        except driver(self.shown).Error as exc:
            self._lost(exc)
            raise self.server.error(exc, "cannot read the trust store") from None

    def _cached_trust(self, agent: str, project: str) -> tuple[StoreState, float | None] | None:
        def read(conn: psycopg.Connection[Any]) -> tuple[StoreState, float | None] | None:
            if not self._has_tables(conn):
                return None
            row = conn.execute(sql.CACHED_TRUST, (agent, project)).fetchone()
            if row is None:
                return None
            self._check_version(row[0])
            trust = row[5]
            return _state_of(row[1:5]), (float(trust) if trust is not None else None)

        return self._call(read, "cannot read the trust store")

    def _store_cache(self, table: TrustTable, key: str, version: int) -> None:
        rows = table.rows()
        columns = [
            [r.agent for r in rows], [r.project or "" for r in rows],
            [r.project is None for r in rows], [r.trust for r in rows],
            [r.reviews for r in rows], [r.accepted for r in rows], [r.discarded for r in rows],
        ]

        def store(conn: psycopg.Connection[Any]) -> None:
            with conn.transaction():
                conn.execute("SELECT set_config('lock_timeout', '50ms', true)")
                current = conn.execute(sql.LOCK_STATE).fetchone()
                if current is None or int(current[0]) != version:
                    return  # evidence arrived since the computation
                conn.execute(sql.CLEAR_CACHE)
                conn.execute(sql.STORE_CACHE, columns)
                conn.execute(sql.SET_CACHE_KEY, (key, version, table.new_agent))

        self._call(store, "cannot cache the scores", retry_lost=False)

    def count_events(self) -> int:
        def count(conn: psycopg.Connection[Any]) -> int:
            if not self._current(conn):
                return 0
            row = conn.execute("SELECT count(*) FROM confgate_trust_events").fetchone()
            return int(row[0]) if row else 0

        return self._call(count, "cannot read the trust store")

    def find_event(self, prefix: str) -> TrustEvent:
        def find(conn: psycopg.Connection[Any]) -> list[Any]:
            if not self._current(conn):
                return []
            return conn.execute(
                f"{sql.EVENT_COLUMNS} WHERE e.event_id >= %s AND e.event_id < %s LIMIT 2",
                (prefix, prefix + "g"),
            ).fetchall()

        rows = self._call(find, "cannot read the trust store")
        if len(rows) != 1:
            raise unknown_event(self.shown, prefix, len(rows))
        return _event(rows[0])

    def retracted(self) -> list[RetractedEvent]:
        def read(conn: psycopg.Connection[Any]) -> list[Any]:
            return conn.execute(sql.RETRACTED).fetchall() if self._current(conn) else []

        return [
            RetractedEvent(_event(row[:8]), Retraction(row[0], row[8], row[9], row[10]))
            for row in self._call(read, "cannot read the trust store")
        ]

    def export(self) -> Iterator[TrustEvent | Retraction]:
        if not self._call(self._current, "cannot read the trust store"):
            return
        conn = self._connection()
        try:
            with conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                with conn.cursor(name="confgate_trust_export") as cursor:
                    cursor.itersize = _EXPORT_BATCH
                    cursor.execute(f"{sql.EVENT_COLUMNS} ORDER BY e.seq")
                    for row in cursor:
                        yield _event(row)
                for row in conn.execute(
                    "SELECT event_id, reason, actor, at FROM confgate_trust_retractions"
                    " ORDER BY at, event_id"
                ):
                    yield Retraction(*row)
        except driver(self.shown).Error as exc:
            self._lost(exc)
            raise self.server.error(exc, "cannot export the trust store") from None

    # -- connection and schema ------------------------------------------------------------

    def _connection(self) -> psycopg.Connection[Any]:
        """This process's connection: a new one after a fork or when the old one broke."""
        if self._conn is not None and (self._pid != os.getpid() or self._conn.closed):
            self._conn = None  # a forked child never touches the parent's socket
        if self._conn is None:
            conn = self.server.connect()
            timeout = f"{int(self.config.busy_timeout_ms)}ms"
            conn.execute("SELECT set_config('lock_timeout', %s, false)", (timeout,))
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def _call(
        self, work: Callable[[psycopg.Connection[Any]], T], doing: str, *,
        retry_lost: bool = True,
    ) -> T:
        """``work`` on this process's connection; driver errors become ``StoreError``, and a
        connection lost before the call is reopened once."""
        psycopg = driver(self.shown)
        for attempt in range(2):
            conn = self._connection()
            try:
                return work(conn)
            except psycopg.Error as exc:
                lost = self._lost(exc)
                if lost and retry_lost and attempt == 0:
                    continue
                raise self.server.error(exc, doing) from None
        raise AssertionError("unreachable: the second attempt returns or raises")

    def _lost(self, exc: Exception) -> bool:
        """Forget a broken connection; whether it was one."""
        conn = self._conn
        if conn is not None and (conn.closed or conn.broken):
            self.close()
            return True
        del exc
        return False

    def _has_tables(self, conn: psycopg.Connection[Any], *, fresh: bool = False) -> bool:
        """Whether our tables exist; once seen, remembered for this connection."""
        if conn is self._seen and not fresh:
            return True
        row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (sql.STATE_TABLE,)).fetchone()
        if row is not None and row[0]:
            self._seen = conn
            return True
        return False

    def _version(self, conn: psycopg.Connection[Any], *, lock: bool = False) -> int:
        """The schema version, 0 without our tables; ``lock`` serialises creating them."""
        if lock:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (sql.LOCK_KEY,))
        if not self._has_tables(conn, fresh=lock):
            return 0
        state = conn.execute("SELECT schema_version FROM confgate_trust_state").fetchone()
        return int(state[0]) if state else 0

    def _current(self, conn: psycopg.Connection[Any]) -> bool:
        """Whether there is a store to read; one at another schema version raises."""
        version = self._version(conn)
        if version:
            self._check_version(version)
        return version != 0

    def _check_version(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            raise newer_schema(self.shown, version)
        if version < SCHEMA_VERSION:
            raise older_schema(self.shown, version)


class _Snapshot:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn
        self._state: tuple[Any, ...] | None = None

    def version(self) -> int:
        return int(self._row()[0])

    def state(self) -> StoreState:
        return _state_of(self._row()[1:])

    def _row(self) -> tuple[Any, ...]:
        if self._state is None:
            row = self._conn.execute(sql.STATE).fetchone()
            if row is None:
                raise StoreError("confgate_trust_state has no row; run `confgate trust migrate`")
            self._state = tuple(row)
        return self._state

    def cached_table(self, mode: str, new_agent: float) -> TrustTable:
        pairs: dict[tuple[str, str], TrustRow] = {}
        agents: dict[str, TrustRow] = {}
        for agent, project, is_global, *numbers in self._conn.execute(sql.CACHED_TABLE):
            if is_global:
                agents[agent] = TrustRow(agent, None, *numbers)
            else:
                pairs[(agent, project)] = TrustRow(agent, project, *numbers)
        row = self._conn.execute(sql.CACHE_DEFAULT).fetchone()
        default = float(row[0]) if row is not None and row[0] is not None else new_agent
        return TrustTable(mode, pairs, agents, default)

    def evidence(self, now: float, half_life_days: float) -> Evidence:
        buckets = [
            Bucket(agent, project, bool(accepted), SEVERITIES[severity], int(count), decay)
            for agent, project, accepted, severity, count, decay in self._conn.execute(
                sql.BUCKETS, {"now": float(now), "h": float(half_life_days)}
            )
        ]
        pair_reviews = {(a, p): int(n) for a, p, n in self._conn.execute(sql.PAIR_REVIEWS)}
        agent_reviews = {a: int(n) for a, n in self._conn.execute(sql.AGENT_REVIEWS)}
        return Evidence(buckets, pair_reviews, agent_reviews)


def _insert_events(conn: psycopg.Connection[Any], events: Sequence[TrustEvent]) -> int:
    unique = list({event.event_id: event for event in reversed(events)}.values())
    if not unique:
        return 0
    pairs = sorted({(event.agent, event.project) for event in unique})
    conn.execute(sql.INSERT_PAIRS, ([a for a, _ in pairs], [p for _, p in pairs]))
    columns = [
        [e.event_id for e in unique], [e.agent for e in unique], [e.project for e in unique],
        [e.accepted for e in unique], [SEVERITIES.index(e.severity) for e in unique],
        [e.finding for e in unique], [e.run for e in unique], [float(e.at) for e in unique],
    ]
    row = conn.execute(sql.INSERT_EVENTS, columns).fetchone()
    stored = int(row[0]) if row else 0
    if stored:  # new evidence: a new version, and the cached scores no longer hold
        conn.execute(sql.NEW_EVIDENCE, (row[1] if row else None,))
        conn.execute(sql.CLEAR_CACHE)
    return stored


def _apply_retractions(
    conn: psycopg.Connection[Any], retractions: Sequence[Retraction]
) -> tuple[int, list[str]]:
    applied, unknown = 0, []
    for item in sorted(retractions, key=lambda r: r.event_id):
        found = conn.execute(sql.FIND_FOR_RETRACTION, (item.event_id,)).fetchone()
        if found is None:
            unknown.append(item.event_id)
            continue
        pair, agent, run, already = found
        cursor = conn.execute(
            sql.INSERT_RETRACTION, (item.event_id, item.reason, item.by, item.at)
        )
        if cursor.rowcount > 0 and not already:
            conn.execute(sql.RETRACT, (item.event_id, pair, run, agent, run))
            conn.execute(sql.DROP_EMPTY_RUNS[0], (pair, run))
            conn.execute(sql.DROP_EMPTY_RUNS[1], (agent, run))
            applied += 1
    if applied:
        conn.execute(sql.NEW_EVIDENCE, (None,))
        conn.execute(sql.CLEAR_CACHE)
    return applied, unknown


def _state_of(row: Sequence[Any]) -> StoreState:
    version, max_at, key, cache_version = row
    return StoreState(
        int(version or 0),
        float(max_at) if max_at is not None else None,
        key if isinstance(key, str) else None,
        int(cache_version) if cache_version is not None else None,
    )


def _event(row: Sequence[Any]) -> TrustEvent:
    _, accepted, agent, project, finding, severity, run, at = row
    kind = "finding_accepted" if accepted else "finding_discarded"
    return TrustEvent(kind, agent, project, finding, SEVERITIES[severity], run, float(at))


"""The SQLite trust store, the default: one file, and the only trust module that
imports ``sqlite3``.

Safe under concurrent writers (xdist workers, parallel CI jobs): WAL, every write in
``BEGIN IMMEDIATE`` with a busy timeout and a bounded number of attempts. The schema version is
``PRAGMA user_version``. A file that is not SQLite, not ours, newer, older (until migrated) or
damaged is a ``StoreError`` naming it and is never written to. Damage is found with
``PRAGMA quick_check`` once per file identity (device, inode, size, modification time): the
identity last checked, or last written by this code, is kept beside the file in
``<db>.checked``, so the check runs again only after someone else changed the file.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from urllib.parse import quote

from pytest_confgate.config.trust import TrustConfig
from pytest_confgate.exceptions import StoreError
from pytest_confgate.trust.events import RetractedEvent, Retraction, TrustEvent
from pytest_confgate.trust.formula import TrustTable
from pytest_confgate.trust.schema import (
    CACHED_TRUST,
    EVENT_COLUMNS,
    HEADER,
    MIGRATIONS,
    RETRACTED,
    SCHEMA,
)
from pytest_confgate.trust.spool import Spool
from pytest_confgate.trust.sqlite_rows import (
    Snapshot,
    apply_retractions,
    event_of,
    insert_events,
    state_of,
    store_cache,
)
from pytest_confgate.trust.store import (
    SCHEMA_VERSION,
    StoreBusy,
    StoreState,
    TrustStore,
    WriteResult,
    newer_schema,
    older_schema,
    unknown_event,
)

__all__ = ["SqliteTrustStore", "insert_events"]

_INHERITED: list[sqlite3.Connection] = []
"""Read connections inherited through fork: kept open, never closed by the child."""
_SOUND: set[tuple[int, int, int, int]] = set()
"""File identities this process has seen pass ``quick_check`` (or written itself)."""
Identity = tuple[int, int, int, int]


class SqliteTrustStore(TrustStore):
    """One trust database file, with its spool.

    Each write opens and closes its own connection. Reads share one connection per process,
    reopened when the file is replaced, so a cached ``trust_score`` is one SQL statement.
    """

    def __init__(
        self, path: Path, config: TrustConfig, *, fallback_spool: Path | None = None
    ) -> None:
        self.path = Path(os.path.abspath(path))
        spool = Spool(self.path.with_name(self.path.name + ".spool"), str(self.path),
                      fallback_spool)
        super().__init__(str(path), str(self.path), config, spool)
        self._uri = quote(str(self.path))
        self._conn: sqlite3.Connection | None = None
        self._conn_ident: tuple[int, int, int] | None = None

    def exists(self) -> bool:
        return self.path.exists()

    def close(self) -> None:
        conn, ident = self._conn, self._conn_ident
        self._conn, self._conn_ident = None, None
        if conn is not None and ident is not None and ident[0] != os.getpid():
            # Never close a connection inherited through fork: it is the parent's (SQLite FAQ).
            _INHERITED.append(conn)
        elif conn is not None:
            self._closing(conn)

    # -- writes ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def write_transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` on a checked connection at the current schema; commits."""
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
            self._closing(conn)

    def _write(
        self, events: Sequence[TrustEvent], retractions: Sequence[Retraction]
    ) -> WriteResult:
        try:
            with self.write_transaction() as conn:
                stored = insert_events(conn, events)
                applied, unknown = apply_retractions(conn, retractions)
        except (sqlite3.Error, OSError) as exc:
            raise self._failure(exc, "cannot be written") from exc
        return WriteResult(stored, applied, tuple(unknown))

    def migrate(self) -> tuple[int, int]:
        try:
            conn = self._connect(create=True)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.shown}: {exc}") from exc
        try:
            before = self._check_schema(conn, migrating=True)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("BEGIN IMMEDIATE")
            try:
                version = self._check_schema(conn, migrating=True)
                steps = SCHEMA if version == 0 else [
                    statement for step in range(version, SCHEMA_VERSION)
                    for statement in MIGRATIONS[step]
                ]
                for statement in steps:
                    conn.execute(statement)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise StoreError(
                f"{self.shown}: the migration failed, nothing changed ({exc})"
            ) from exc
        finally:
            self._closing(conn)
        return before, SCHEMA_VERSION

    # -- reads ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[Snapshot | None]:
        with self._reader() as conn:
            if conn is None:
                yield None
                return
            _ensure_math(conn)
            conn.execute("BEGIN")  # one snapshot for the state and every query
            yield Snapshot(conn)

    def _cached_trust(self, agent: str, project: str) -> tuple[StoreState, float | None] | None:
        with self._reader() as conn:
            if conn is None:
                return None
            # One statement, so the cache state and the row come from one snapshot.
            names = {"agent": agent, "project": project}
            *state, trust = conn.execute(CACHED_TRUST, names).fetchone()
        return state_of(*state), (float(trust) if trust is not None else None)

    def _store_cache(self, table: TrustTable, key: str, version: int) -> None:
        """Best effort, one short try: a busy store just means the next read computes again."""
        try:
            with self._reader() as conn:
                if conn is not None:
                    store_cache(conn, table, key, version, self.config.busy_timeout_ms)
        except sqlite3.Error:
            return

    def count_events(self) -> int:
        with self._reader() as conn:
            if conn is None:
                return 0
            return int(conn.execute("SELECT count(*) FROM events").fetchone()[0])

    def find_event(self, prefix: str) -> TrustEvent:
        with self._reader() as conn:
            rows = [] if conn is None else conn.execute(
                f"{EVENT_COLUMNS} WHERE e.event_id >= ? AND e.event_id < ? LIMIT 2",
                (prefix, prefix + "g"),
            ).fetchall()
        if len(rows) != 1:
            raise unknown_event(self.shown, prefix, len(rows))
        return event_of(rows[0])

    def retracted(self) -> list[RetractedEvent]:
        with self._reader() as conn:
            rows = [] if conn is None else conn.execute(RETRACTED).fetchall()
        return [
            RetractedEvent(event_of(row[:8]), Retraction(row[0], row[8], row[9], row[10]))
            for row in rows
        ]

    def export(self) -> Iterator[TrustEvent | Retraction]:
        with self._reader() as conn:
            if conn is None:
                return
            conn.execute("BEGIN")  # events and retractions from one snapshot
            for row in conn.execute(f"{EVENT_COLUMNS} ORDER BY e.seq"):
                yield event_of(row)
            for row in conn.execute("SELECT event_id, reason, actor, at FROM retractions"
                                    " ORDER BY at, event_id"):
                yield Retraction(*row)

    @contextlib.contextmanager
    def _reader(self) -> Iterator[sqlite3.Connection | None]:
        """A checked connection at the current schema, or ``None`` without data."""
        if not self.path.exists():
            yield None
            return
        try:
            conn = self._read_connection()
            if self._check_schema(conn) == 0:
                yield None
                return
            yield conn
            if conn.in_transaction:
                conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self.close()
            raise self._failure(exc, "cannot be read") from exc
        except BaseException:
            self.close()
            raise

    def _read_connection(self) -> sqlite3.Connection:
        """The shared read connection; a new one after a fork or when the file was replaced."""
        try:
            stat = os.stat(self.path)
        except OSError as exc:
            raise StoreError(f"{self.shown}: the trust store cannot be read ({exc})") from exc
        self._ensure_sound(_identity_of(stat))
        ident = (os.getpid(), stat.st_dev, stat.st_ino)
        if self._conn is not None and self._conn_ident == ident:
            return self._conn
        self.close()
        self._conn = self._connect(create=False)
        self._conn_ident = ident
        return self._conn

    # -- connection, soundness and schema -------------------------------------------------

    def _connect(self, *, create: bool) -> sqlite3.Connection:
        self._check_header()
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(OSError):
                self._ensure_sound(_identity_of(os.stat(self.path)))
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

    def _closing(self, conn: sqlite3.Connection) -> None:
        """Close ``conn``: the file was checked before it was opened, and what SQLite wrote
        through it (commits, the checkpoint on close) keeps it sound."""
        conn.close()
        self._vouch()

    def _ensure_sound(self, identity: Identity) -> None:
        """``quick_check`` once per file identity; a damaged file is refused by name."""
        if identity in _SOUND or identity[2] == 0:
            return
        self._check_header()
        if self._checked() == identity:
            _SOUND.add(identity)
            return
        try:
            conn = sqlite3.connect(f"file:{self._uri}?mode=ro", uri=True,
                                   timeout=self.config.busy_timeout_ms / 1000)
            try:
                found = [row[0] for row in conn.execute("PRAGMA quick_check(5)")]
            finally:
                conn.close()
        except sqlite3.Error as exc:
            raise self._failure(exc, "cannot be read") from exc
        if found != ["ok"]:
            raise self._corrupt("; ".join(str(line) for line in found))
        _SOUND.add(identity)
        self._vouch()

    def _checked(self) -> Identity | None:
        try:
            data = json.loads(self._checked_path().read_text(encoding="utf-8"))
            return (int(data[0]), int(data[1]), int(data[2]), int(data[3]))
        except (OSError, ValueError, TypeError, IndexError, KeyError):
            return None

    def _vouch(self) -> None:
        """Remember the file's identity now as sound, beside it (best effort)."""
        identity = _identity(self.path)
        if identity is None:
            return
        _SOUND.add(identity)
        if self._checked() == identity:
            return
        target = self._checked_path()
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        with contextlib.suppress(OSError):
            tmp.write_text(json.dumps(list(identity)), encoding="utf-8")
            os.replace(tmp, target)

    def _checked_path(self) -> Path:
        return self.path.with_name(self.path.name + ".checked")

    def _failure(self, exc: sqlite3.Error | OSError, doing: str) -> StoreError:
        """A driver or file error as ours: busy is worth another attempt, damage is named."""
        if isinstance(exc, sqlite3.OperationalError) and _is_busy(exc):
            return StoreBusy(f"{self.shown}: {exc}")
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(
            exc, sqlite3.OperationalError
        ):
            return self._corrupt(exc)
        return StoreError(f"{self.shown}: the trust store {doing} ({exc})")

    def _corrupt(self, detail: object) -> StoreError:
        detail = " ".join(str(detail).split())
        return StoreError(
            f"{self.shown}: the trust store is damaged ({detail}); it was left untouched. "
            "Move it away to start a new one, or restore a backup"
        )

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

    def _check_schema(self, conn: sqlite3.Connection, *, migrating: bool = False) -> int:
        """The schema version (0: a new, empty database); corrupt, foreign, newer or (unless
        migrating) older raises."""
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            tables = 0
            if version == 0:
                tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        except sqlite3.OperationalError:
            raise
        except sqlite3.DatabaseError as exc:
            raise self._corrupt(exc) from exc
        if version > SCHEMA_VERSION:
            raise newer_schema(self.shown, version)
        if version == 0 and tables:
            raise StoreError(
                f"{self.shown}: an SQLite database that is not a confgate trust store; it was "
                "left untouched. Point trust.db (or --db) at another file"
            )
        if 0 < version < SCHEMA_VERSION and not migrating:
            raise older_schema(self.shown, version)
        return version


def _identity(path: Path) -> Identity | None:
    try:
        return _identity_of(os.stat(path))
    except OSError:
        return None


def _identity_of(stat: os.stat_result) -> Identity:
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)


def _ensure_math(conn: sqlite3.Connection) -> None:
    """SQLite built without math functions (older Pythons' bundles): provide ``pow``."""
    try:
        conn.execute("SELECT pow(0.5, 1.0)")
    except sqlite3.OperationalError:
        conn.create_function("pow", 2, math.pow, deterministic=True)


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


"""The trust stores under real concurrent writer processes and a writer killed mid-transaction.

SPEC 9: WAL, ``BEGIN IMMEDIATE``, a busy timeout and bounded retry; nothing lost, nothing
duplicated; a crash leaves a consistent database holding every committed event. The same
writers against PostgreSQL (issue 20): ``INSERT ... ON CONFLICT DO NOTHING`` stores each id once.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_confgate.config.trust import TrustConfig
from pytest_confgate.trust import open_store
from pytest_confgate.trust.events import TrustEvent
from pytest_confgate.trust.sqlite_store import SqliteTrustStore as TrustStore

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

WORKERS = 4
PER_WORKER = 1000
SHARED = 250

WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from pytest_confgate.config.trust import TrustConfig
    from pytest_confgate.trust import open_store
    from pytest_confgate.trust.events import TrustEvent

    db, worker, go = sys.argv[1], sys.argv[2], Path(sys.argv[5])
    count, shared = int(sys.argv[3]), int(sys.argv[4])
    store = open_store(TrustConfig(), db)  # a path or a postgresql:// URL
    while not go.exists():
        time.sleep(0.005)
    for i in range(count):
        # Every worker also records the same shared events: duplicates across processes.
        finding = f"shared-{i}" if i < shared else f"w{worker}-{i}"
        agent = "fd-shared" if i < shared else f"fd-{worker}"
        event = TrustEvent("finding_accepted" if i % 3 else "finding_discarded", agent, "svc",
                           finding, "P" + str(i % 4), f"run-{i % 50}", 1.7e9 + i)
        outcome = store.record([event])
        if not outcome.spooled:
            print(finding, flush=True)
    """
)

HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from pytest_confgate.config.trust import TrustConfig
    from pytest_confgate.trust.events import TrustEvent
    from pytest_confgate.trust.sqlite_store import SqliteTrustStore as TrustStore, insert_events

    def event(name):
        return TrustEvent("finding_accepted", "fd-arch", "svc", name, "P1", "run-1", 1.7e9)

    store = TrustStore(Path(sys.argv[1]), TrustConfig())
    for i in range(200):
        assert not store.record([event(f"committed-{i}")]).spooled
    with store.write_transaction() as conn:
        insert_events(conn, [event(f"uncommitted-{i}") for i in range(100)])
        print("holding the write lock", flush=True)
        time.sleep(120)
    """
)


def _spawn(script: Path, *args: str, spool: Path | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "CONFGATE_SPOOL_DIR": str(spool)} if spool else None
    return subprocess.Popen(
        [sys.executable, str(script), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=env,
    )


def _integrity(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def _findings(db: Path) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        return [row[0] for row in conn.execute("SELECT finding FROM events")]
    finally:
        conn.close()


def _write_concurrently(db: str, tmp_path: Path) -> tuple[TrustStore | Any, set[str]]:
    """4 processes x 1,000 events, 250 of them the same in every process; the store after
    the spool was replayed, and the findings the writers saw stored."""
    go = tmp_path / "go"
    script = tmp_path / "writer.py"
    script.write_text(WRITER, encoding="utf-8")
    spool = tmp_path / "spool"
    workers = [
        _spawn(script, db, str(n), str(PER_WORKER), str(SHARED), str(go), spool=spool)
        for n in range(WORKERS)
    ]
    go.touch()  # all start writing at once
    stored: set[str] = set()
    for worker in workers:
        out, err = worker.communicate(timeout=600)
        assert worker.returncode == 0, err
        stored.update(out.split())
    os.environ["CONFGATE_SPOOL_DIR"] = str(spool)
    try:
        store = open_store(TrustConfig(), db)
        store.replay_spool()  # anything that waited past the lock is stored now
        assert store.spooled_count() == 0
    finally:
        del os.environ["CONFGATE_SPOOL_DIR"]
    return store, stored


EXPECTED = {f"shared-{i}" for i in range(SHARED)} | {
    f"w{n}-{i}" for n in range(WORKERS) for i in range(SHARED, PER_WORKER)
}


def test_concurrent_writer_processes_lose_no_event_and_duplicate_none(tmp_path: Path) -> None:
    db = tmp_path / "trust.db"
    store, stored = _write_concurrently(str(db), tmp_path)
    findings = _findings(db)
    assert len(findings) == len(EXPECTED) == WORKERS * (PER_WORKER - SHARED) + SHARED
    assert set(findings) == EXPECTED
    assert stored <= EXPECTED
    assert _integrity(db) == "ok"
    table = store.table(1.8e9)
    assert sum(row.accepted + row.discarded for row in table.agents.values()) == len(EXPECTED)


def test_concurrent_writer_processes_into_postgresql_store_each_event_once(
    postgres_url: str, tmp_path: Path,
) -> None:
    store, stored = _write_concurrently(postgres_url, tmp_path)
    assert store.count_events() == len(EXPECTED) == 3250
    assert {e.finding for e in store.export() if isinstance(e, TrustEvent)} == EXPECTED
    assert stored <= EXPECTED
    table = store.table(1.8e9)
    assert sum(row.accepted + row.discarded for row in table.agents.values()) == 3250
    assert table.agents["fd-shared"].accepted + table.agents["fd-shared"].discarded == SHARED


def test_a_writer_killed_holding_a_transaction_leaves_every_committed_event(
    tmp_path: Path,
) -> None:
    db = tmp_path / "trust.db"
    script = tmp_path / "holder.py"
    script.write_text(HOLDER, encoding="utf-8")
    holder = _spawn(script, str(db))
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "holding the write lock"
        os.kill(holder.pid, signal.SIGKILL)
    finally:
        holder.kill()
        holder.communicate(timeout=30)
    assert holder.returncode == -signal.SIGKILL
    assert _integrity(db) == "ok"
    findings = _findings(db)
    assert sorted(findings) == sorted(f"committed-{i}" for i in range(200))
    store = TrustStore(db, TrustConfig(busy_timeout_ms=500), fallback_spool=tmp_path / "fb")
    after = store.record([TrustEvent("finding_discarded", "fd-arch", "svc", "after", "P1",
                                     "run-2", 1.7e9)])
    assert (after.spooled, after.stored) == (False, 1)  # the dead writer's lock is gone
    assert store.table(1.8e9).pairs[("fd-arch", "svc")].discarded == 1


def test_writers_killed_at_a_random_moment_keep_everything_they_committed(
    tmp_path: Path,
) -> None:
    db = tmp_path / "trust.db"
    go = tmp_path / "go"
    script = tmp_path / "writer.py"
    script.write_text(WRITER, encoding="utf-8")
    workers = [_spawn(script, str(db), str(n), "5000", "0", str(go)) for n in range(2)]
    go.touch()
    committed: list[str] = []
    for worker in workers:
        assert worker.stdout is not None
        committed.extend(worker.stdout.readline().strip() for _ in range(150))
    time.sleep(0.05)
    for worker in workers:
        os.kill(worker.pid, signal.SIGKILL)
    for worker in workers:
        out, _ = worker.communicate(timeout=30)
        committed.extend(out.split())  # printed after commit, before the kill
    assert _integrity(db) == "ok"
    findings = _findings(db)
    assert len(findings) == len(set(findings))
    assert set(committed) <= set(findings)
    assert len(committed) >= 300

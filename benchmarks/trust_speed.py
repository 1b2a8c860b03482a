"""Trust store speed: report over 1,000,000 events <= 1 s; cached trust_score <= 1 ms.

Run: ``python benchmarks/trust_speed.py [--events 1000000] [--db PATH | --db postgresql://...]``
(``--password-env NAME`` when the server needs a password). Builds a store of realistic shape
(20 agents, 10 projects, review runs of 10 agents x 5 findings, one year of events) through the
store's own import path, then measures, for either backend:

- cold report: one new event arrives (clearing the cache), then the whole table + rows + text;
- warm report: the same from the score cache;
- cached ``trust_score``: one pair, many calls through the public API (the store stays open).

A PostgreSQL store is vacuumed and analysed after the build, as autovacuum would do on a live
server, so the report can read the covering index alone. Prints the figures; asserts nothing
about time (these are measurements, not tests).
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from pytest_confgate.config.trust import TrustConfig
from pytest_confgate.trust import open_store, trust_score
from pytest_confgate.trust.events import TrustEvent
from pytest_confgate.trust.postgres_store import PostgresTrustStore
from pytest_confgate.trust.report import render_table, report_rows
from pytest_confgate.trust.sqlite_store import SqliteTrustStore
from pytest_confgate.trust.store import TrustStore

AGENTS = [f"fd-agent-{i:02d}" for i in range(20)]
PROJECTS = [f"project-{i:02d}" for i in range(10)]
SEVERITIES = ("P0", "P1", "P2", "P2", "P3", "P3")  # low severities are the common ones
START = 1_700_000_000.0
YEAR = 365 * 86400.0


def events(prefix: str, seed: int = 8) -> Iterator[TrustEvent]:
    """Events of the benchmark's shape without end; review runs are named ``prefix-N``."""
    rng = random.Random(seed)  # noqa: S311 - synthetic data, not security
    for run in itertools.count(1):
        project = rng.choice(PROJECTS)
        at = START + rng.random() * YEAR
        for agent in rng.sample(AGENTS, 10):
            precision = 0.2 + 0.75 * (AGENTS.index(agent) / len(AGENTS))
            for finding in range(5):
                accepted = rng.random() < precision
                yield TrustEvent(
                    "finding_accepted" if accepted else "finding_discarded",
                    agent, project, f"{agent}-{finding}", rng.choice(SEVERITIES),
                    f"{prefix}-{run}", at + finding,
                )


def build(store: TrustStore, count: int) -> float:
    """``count`` new events through ``import_records`` (batches of 5,000); seconds taken."""
    started = time.perf_counter()
    stream = events(f"run{store.count_events()}")
    batch = 100_000
    for offset in range(0, count, batch):
        store.import_records(itertools.islice(stream, min(batch, count - offset)))
        print(f"  {offset + min(batch, count - offset):,} events stored", file=sys.stderr)
    return time.perf_counter() - started


def describe(store: TrustStore) -> str:
    if isinstance(store, SqliteTrustStore):
        import sqlite3

        size = store.path.stat().st_size / 1e6
        return f"{store.path}, sqlite {sqlite3.sqlite_version}, {size:.0f} MB"
    assert isinstance(store, PostgresTrustStore)
    conn = store.server.connect()
    try:
        version = conn.execute("SHOW server_version").fetchone()
        size = conn.execute(
            "SELECT pg_total_relation_size('confgate_trust_events')"
        ).fetchone()
    finally:
        conn.close()
    return (f"{store.shown}, PostgreSQL {version[0] if version else '?'}, "
            f"{(size[0] if size else 0) / 1e6:.0f} MB")


def vacuum(store: TrustStore) -> None:
    """What autovacuum does on a live server: visibility map and statistics up to date."""
    if isinstance(store, PostgresTrustStore):
        conn = store.server.connect()
        try:
            conn.execute("VACUUM (ANALYZE) confgate_trust_events")
            conn.execute("VACUUM (ANALYZE) confgate_trust_runs")
            conn.execute("VACUUM (ANALYZE) confgate_trust_agent_runs")
        finally:
            conn.close()


def full_report(store: TrustStore, now: float) -> int:
    table = store.table(now)
    rows = report_rows(table, store.config.low_trust)
    render_table(rows, store.config.low_trust, table.mode)
    return len(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--db", help="a store path or a postgresql:// URL (built when short)")
    parser.add_argument("--password-env", help="the variable holding the server's password")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    config = TrustConfig(password_env=args.password_env)
    folder = tempfile.mkdtemp(prefix="confgate-trust-bench-")
    db = args.db or str(Path(folder) / "trust.db")
    store = open_store(config, db)
    have = store.count_events()
    if have < args.events:
        seconds = build(store, args.events - have)
        vacuum(store)
        print(f"built {args.events - have:,} events in {seconds:.1f} s "
              f"({(args.events - have) / seconds:,.0f} events/s)")
    print(f"store: {describe(store)} ({store.count_events():,} events), "
          f"Python {sys.version.split()[0]}")
    now = START + YEAR + 86400.0
    cold, warm, writes = [], [], []
    rows = 0
    for rep in range(args.repeat):
        event = TrustEvent("finding_accepted", AGENTS[0], PROJECTS[0], f"bench-{rep}-{time.time()}",
                           "P1", f"bench-run-{rep}", now - 10.0)
        started = time.perf_counter()
        store.record([event])
        writes.append(time.perf_counter() - started)
        started = time.perf_counter()
        rows = full_report(store, now)
        cold.append(time.perf_counter() - started)
        started = time.perf_counter()
        full_report(store, now)
        warm.append(time.perf_counter() - started)
    calls = []
    for _ in range(2000):
        started = time.perf_counter()
        trust_score(AGENTS[3], PROJECTS[4], config=config, db=db, now=now)
        calls.append(time.perf_counter() - started)
    print(f"report rows: {rows}")
    print(f"one record() into the full store: median {statistics.median(writes) * 1e3:.1f} ms")
    print(f"full report, cold (after new evidence): median {statistics.median(cold):.3f} s, "
          f"max {max(cold):.3f} s  (target <= 1 s)")
    print(f"full report, warm (score cache):         median {statistics.median(warm) * 1e3:.2f} ms")
    calls.sort()
    print(f"cached trust_score: median {statistics.median(calls) * 1e3:.3f} ms, "
          f"p95 {calls[int(len(calls) * 0.95)] * 1e3:.3f} ms  (target <= 1 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Trust store speed (SPEC 11): report over 1,000,000 events <= 1 s; cached trust_score <= 1 ms.

Run: ``python benchmarks/trust_speed.py [--events 1000000] [--db PATH]``. Builds a store of
realistic shape (20 agents, 10 projects, review runs of 10 agents x 5 findings, one year of
events) through the store's own insert path, then measures:

- cold report: one new event arrives (clearing the cache), then the whole table + rows + text;
- warm report: the same from the score cache;
- cached ``trust_score``: one pair, many calls, each opening its own connection.

Prints the figures; asserts nothing about time (these are measurements, not tests).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pytest_confgate.config.trust import TrustConfig
from pytest_confgate.trust import trust_score
from pytest_confgate.trust.events import TrustEvent
from pytest_confgate.trust.report import render_table, report_rows
from pytest_confgate.trust.store import TrustStore, insert_events

AGENTS = [f"fd-agent-{i:02d}" for i in range(20)]
PROJECTS = [f"project-{i:02d}" for i in range(10)]
SEVERITIES = ("P0", "P1", "P2", "P2", "P3", "P3")  # low severities are the common ones
START = 1_700_000_000.0
YEAR = 365 * 86400.0


def build(store: TrustStore, count: int, seed: int = 8) -> float:
    """``count`` events in batches of 20,000 through ``insert_events``; returns seconds taken."""
    rng = random.Random(seed)  # noqa: S311 - synthetic data, not security
    started = time.perf_counter()
    made = 0
    run = 0
    while made < count:
        batch = []
        while len(batch) < 20_000 and made + len(batch) < count:
            run += 1
            project = rng.choice(PROJECTS)
            at = START + rng.random() * YEAR
            for agent in rng.sample(AGENTS, 10):
                precision = 0.2 + 0.75 * (AGENTS.index(agent) / len(AGENTS))
                for finding in range(5):
                    accepted = rng.random() < precision
                    batch.append(
                        TrustEvent(
                            "finding_accepted" if accepted else "finding_discarded",
                            agent, project, f"{agent}-{finding}", rng.choice(SEVERITIES),
                            f"run-{run}", at + finding,
                        )
                    )
        batch = batch[: count - made]
        with store.write_transaction() as conn:
            insert_events(conn, batch)
        made += len(batch)
    return time.perf_counter() - started


def full_report(store: TrustStore, now: float) -> int:
    table = store.table(now)
    rows = report_rows(table, store.config.low_trust)
    render_table(rows, store.config.low_trust, table.mode)
    return len(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--db", help="reuse this store (built when missing)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    config = TrustConfig()
    folder = tempfile.mkdtemp(prefix="confgate-trust-bench-")
    path = Path(args.db) if args.db else Path(folder) / "trust.db"
    store = TrustStore(path, config, fallback_spool=Path(folder) / "spool")
    if store.count_events() < args.events:
        seconds = build(store, args.events - store.count_events())
        print(f"built {args.events:,} events in {seconds:.1f} s "
              f"({args.events / seconds:,.0f} events/s, {path.stat().st_size / 1e6:.0f} MB)")
    print(f"store: {path} ({store.count_events():,} events), sqlite "
          f"{__import__('sqlite3').sqlite_version}, Python {sys.version.split()[0]}")
    now = START + YEAR + 86400.0
    cold, warm, writes = [], [], []
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
        trust_score(AGENTS[3], PROJECTS[4], config=config, db=path, now=now)
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

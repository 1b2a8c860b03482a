"""The trust store: a real SQLite file in tmp_path (SPEC 9 store rules)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_confgate.config.trust import TrustConfig
from pytest_confgate.exceptions import StoreError
from pytest_confgate.trust.events import TrustEvent
from pytest_confgate.trust.formula import buckets_from_outcomes, score_table
from pytest_confgate.trust.store import SCHEMA_VERSION, TrustStore

DAY = 86400.0
NOW = 1_750_000_000.0


def make_event(
    finding: str = "f1",
    *,
    accepted: bool = True,
    agent: str = "fd-arch",
    project: str = "svc",
    severity: str = "P2",
    run: str = "r1",
    at: float = NOW,
) -> TrustEvent:
    kind = "finding_accepted" if accepted else "finding_discarded"
    return TrustEvent(kind, agent, project, finding, severity, run, at)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[TrustStore]:
    with TrustStore(
        tmp_path / "data" / "trust.db", TrustConfig(), fallback_spool=tmp_path / "fb"
    ) as opened:
        yield opened


def test_a_first_write_creates_a_wal_database_with_the_schema_version(store: TrustStore) -> None:
    outcome = store.record([make_event()])
    assert (outcome.spooled, outcome.stored) == (False, 1)
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_the_same_event_recorded_twice_is_stored_once(store: TrustStore) -> None:
    store.record([make_event(), make_event()])
    again = store.record([make_event(at=NOW + 60)])  # a later recording of the same outcome
    assert again.stored == 0
    assert store.count_events() == 1


def test_a_different_outcome_for_another_finding_is_a_new_event(store: TrustStore) -> None:
    store.record([make_event("f1"), make_event("f2"), make_event("f1", run="r2")])
    assert store.count_events() == 3


def test_reading_without_a_database_creates_nothing(store: TrustStore) -> None:
    assert store.table(NOW).rows() == []
    assert store.trust_score("fd-arch", "svc", NOW) == 1.0
    assert not store.path.exists()
    assert not store.path.parent.exists()


def _foreign_bytes(path: Path, data: bytes) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


def _newer_database(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE future (x)")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    return path.read_bytes()


def _other_apps_database(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE invoices (id)")
    conn.close()
    return path.read_bytes()


def _truncated_database(path: Path) -> bytes:
    with sqlite3.connect(path.parent / "good.db") as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 200)
        conn.execute("PRAGMA user_version = 1")
    conn.close()
    data = (path.parent / "good.db").read_bytes()
    return _foreign_bytes(path, data[:100] + b"\xff" * 3000 + data[3100:])


BAD_FILES = {
    "not-sqlite": lambda path: _foreign_bytes(path, b"this is a text file, not a database\n" * 5),
    "newer-schema": _newer_database,
    "someone-elses-database": _other_apps_database,
    "corrupt-pages": _truncated_database,
}


@pytest.mark.parametrize("make_bad", BAD_FILES.values(), ids=BAD_FILES.keys())
def test_a_file_that_is_not_our_database_is_an_error_naming_it_and_is_never_written(
    store: TrustStore, make_bad: object
) -> None:
    store.path.parent.mkdir(parents=True)
    before = make_bad(store.path)  # type: ignore[operator]
    with pytest.raises(StoreError, match=str(store.path).replace("\\", "\\\\")):
        store.table(NOW)
    outcome = store.record([make_event()])
    assert outcome.spooled
    assert str(store.path) in outcome.reason
    assert store.path.read_bytes() == before
    assert outcome.spool == store.spool.primary
    assert len(list(store.spool.primary.glob("*.json"))) == 1


def test_a_newer_database_says_to_upgrade(store: TrustStore) -> None:
    store.path.parent.mkdir(parents=True)
    _newer_database(store.path)
    with pytest.raises(StoreError, match="newer than this pytest-confgate"):
        store.trust_score("a", "b", NOW)


def test_a_write_that_waits_past_the_lock_is_spooled_and_replayed_by_the_next_write(
    tmp_path: Path,
) -> None:
    config = TrustConfig(busy_timeout_ms=50, write_attempts=2)
    store = TrustStore(tmp_path / "trust.db", config, fallback_spool=tmp_path / "fb")
    store.record([make_event("f0")])
    holder = sqlite3.connect(store.path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer that keeps the lock
    try:
        outcome = store.record([make_event("f1")])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert outcome.spooled
    assert "locked" in outcome.reason
    assert store.spooled_count() == 1
    assert store.count_events() == 1
    after = store.record([make_event("f2")])
    assert (after.spooled, after.stored, after.replayed) == (False, 2, 1)
    assert store.count_events() == 3
    assert store.spooled_count() == 0


def test_a_database_folder_that_cannot_be_made_spools_to_the_fallback_folder(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "state"
    blocker.write_text("a file where the folder should be")
    store = TrustStore(blocker / "trust.db", TrustConfig(), fallback_spool=tmp_path / "fb")
    outcome = store.record([make_event("f1"), make_event("f2")])
    assert outcome.spooled
    assert outcome.spool == tmp_path / "fb"
    assert store.spooled_count() == 2
    blocker.unlink()  # the folder becomes writable
    assert store.record([]).replayed == 2
    assert store.count_events() == 2
    assert store.spooled_count() == 0


def test_an_event_spooled_twice_is_still_stored_once(store: TrustStore) -> None:
    store.spool.primary.mkdir(parents=True)
    (store.spool.primary / "copy.json").write_text(
        '{"event": "finding_accepted", "agent": "fd-arch", "project": "svc", "finding": "f1",'
        f' "severity": "P2", "run": "r1", "at": {NOW}}}'
    )
    store.record([make_event("f1")])
    assert store.count_events() == 1
    assert store.spooled_count() == 0


def test_a_malformed_spool_file_is_set_aside_and_does_not_stop_writes(store: TrustStore) -> None:
    store.spool.primary.mkdir(parents=True)
    (store.spool.primary / "broken.json").write_text("{not json")
    assert not store.record([make_event()]).spooled
    assert (store.spool.primary / "broken.bad").exists()
    assert store.count_events() == 1


def _cache_rows(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        count = int(conn.execute("SELECT count(*) FROM score_cache").fetchone()[0])
    conn.close()
    return count


def test_scores_are_cached_and_new_evidence_clears_the_cache(store: TrustStore) -> None:
    store.record([make_event("f1"), make_event("f2", accepted=False, run="r2")])
    assert _cache_rows(store.path) == 0
    first = store.table(NOW)
    assert _cache_rows(store.path) == 2  # one pair row and one global row
    assert store.trust_score("fd-arch", "svc", NOW + 10 * DAY) == first.trust("fd-arch", "svc")
    store.record([make_event("f3", accepted=False, run="r3")])
    assert _cache_rows(store.path) == 0
    assert store.trust_score("fd-arch", "svc", NOW) == pytest.approx(1 / 3)


def test_the_cache_answers_for_a_new_project_and_an_unknown_agent(store: TrustStore) -> None:
    store.record([make_event("f1", severity="P0"), make_event("f2", accepted=False)])
    store.table(NOW)
    assert _cache_rows(store.path) == 2
    assert store.trust_score("fd-arch", "new-project", NOW) == pytest.approx(0.8)
    assert store.trust_score("nobody", "svc", NOW) == 1.0


def test_a_time_before_the_newest_event_is_computed_not_read_from_the_cache(
    store: TrustStore,
) -> None:
    store.record([make_event("old", at=NOW - 30 * DAY), make_event("new", accepted=False)])
    assert store.table(NOW).trust("fd-arch", "svc") == pytest.approx(0.5 / 1.5)
    # Asked as of 30 days earlier, the discarded event is "in the future" and counts fully.
    assert store.trust_score("fd-arch", "svc", NOW - 30 * DAY) == pytest.approx(0.5)


def test_a_changed_configuration_does_not_read_another_configurations_cache(
    tmp_path: Path,
) -> None:
    path = tmp_path / "trust.db"
    TrustStore(path, TrustConfig()).record(
        [make_event("f1", severity="P0"), make_event("f2", accepted=False)]
    )
    assert TrustStore(path, TrustConfig()).trust_score("fd-arch", "svc", NOW) == pytest.approx(0.8)
    flat = TrustConfig(severity_weights={"P0": 1.0, "P1": 1.0, "P2": 1.0, "P3": 1.0})
    assert TrustStore(path, flat).trust_score("fd-arch", "svc", NOW) == pytest.approx(0.5)


def test_bayesian_scores_depend_on_now_and_are_cached_per_instant(tmp_path: Path) -> None:
    config = TrustConfig(mode="bayesian")
    store = TrustStore(tmp_path / "trust.db", config)
    store.record([make_event("f1")])
    today = store.trust_score("fd-arch", "svc", NOW)
    later = store.trust_score("fd-arch", "svc", NOW + 60 * DAY)
    assert today == pytest.approx((1 + 5 * 2 / 3) / 6)
    global_later = (0.25 + 1) / (0.25 + 2)
    assert later == pytest.approx((0.25 + 5 * global_later) / (0.25 + 5))
    assert store.table(NOW).mode == "bayesian"


events_strategy = st.lists(
    st.builds(
        make_event,
        finding=st.text("abcdef", min_size=1, max_size=3),
        accepted=st.booleans(),
        agent=st.sampled_from(["a", "b", "c"]),
        project=st.sampled_from(["x", "y"]),
        severity=st.sampled_from(["P0", "P1", "P2", "P3"]),
        run=st.sampled_from(["r1", "r2", "r3", "r4"]),
        at=st.floats(NOW - 200 * DAY, NOW + 5 * DAY),
    ),
    max_size=25,
)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(events=events_strategy, mode=st.sampled_from(["formula", "bayesian"]))
def test_the_stores_sql_gives_the_pure_formulas_numbers(
    tmp_path_factory: pytest.TempPathFactory, events: list[TrustEvent], mode: str
) -> None:
    config = TrustConfig(mode=mode)  # type: ignore[arg-type]
    store = TrustStore(tmp_path_factory.mktemp("db") / "trust.db", config)
    store.record(events)
    store.close()
    first: dict[str, TrustEvent] = {}
    for event in events:  # the first recording of an event id is the one kept
        first.setdefault(event.event_id, event)
    unique = list(first.values())
    expected = score_table(
        *buckets_from_outcomes([e.outcome() for e in unique], NOW, config), config
    )
    actual = store.table(NOW)
    assert [(r.agent, r.project, r.reviews, r.accepted, r.discarded) for r in actual.rows()] == [
        (r.agent, r.project, r.reviews, r.accepted, r.discarded) for r in expected.rows()
    ]
    for got, want in zip(actual.rows(), expected.rows(), strict=True):
        assert got.trust == pytest.approx(want.trust, rel=1e-9, abs=1e-12)

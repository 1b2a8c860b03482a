"""The trust store: a real SQLite file in tmp_path (SPEC 9 store rules)."""

from __future__ import annotations

import itertools
import json
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
from pytest_confgate.trust.sqlite_store import SqliteTrustStore as TrustStore
from pytest_confgate.trust.store import SCHEMA_VERSION

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
    assert store.spool.primary is not None
    store.spool.primary.mkdir(parents=True)
    (store.spool.primary / "copy.json").write_text(
        '{"event": "finding_accepted", "agent": "fd-arch", "project": "svc", "finding": "f1",'
        f' "severity": "P2", "run": "r1", "at": {NOW}}}'
    )
    store.record([make_event("f1")])
    assert store.count_events() == 1
    assert store.spooled_count() == 0


def test_a_malformed_spool_file_is_set_aside_and_reported_until_handled(
    store: TrustStore,
) -> None:
    assert store.spool.primary is not None
    store.spool.primary.mkdir(parents=True)
    (store.spool.primary / "broken.json").write_text("{not json")
    assert [line.split(":")[0] for line in store.spool.problems()] == [
        str(store.spool.primary / "broken.json")
    ]
    assert not store.record([make_event()]).spooled
    assert store.count_events() == 1
    set_aside = store.spool.primary / "broken.bad"
    assert set_aside.exists()
    for _ in range(2):  # still there on every later write: nothing is dropped without a word
        store.record([make_event("again")])
        (problem,) = store.spool.problems()
        assert problem.startswith(f"{set_aside}: ")
    set_aside.unlink()  # handled
    assert store.spool.problems() == []


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
    max_examples=30, deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
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


def _fill(store: TrustStore, count: int = 3000) -> None:
    outcome = store.record(
        [make_event(f"f{i}", accepted=i % 3 > 0, run=f"r{i % 40}") for i in range(count)]
    )
    assert (outcome.spooled, outcome.stored) == (False, count)
    store.close()  # the last connection's close checkpoints the WAL into the file


def _damage_one_page(path: Path) -> bytes:
    """Garbage over one page in the middle, in place: same file, same size (issue 18)."""
    page = 4096
    middle = path.stat().st_size // page // 2
    with path.open("r+b") as handle:
        handle.seek(middle * page)
        handle.write(b"\xff" * 64)
    return path.read_bytes()


def test_a_database_with_one_damaged_page_is_refused_by_name_and_never_written(
    store: TrustStore,
) -> None:
    _fill(store)
    assert store.table(NOW).pairs  # used, checked and trusted before the damage
    store.close()
    before = _damage_one_page(store.path)
    outcome = store.record([make_event("after-the-damage")])
    assert outcome.spooled
    assert f"{store.shown}: the trust store is damaged" in outcome.reason
    assert "\n" not in outcome.reason
    assert store.path.read_bytes() == before
    with pytest.raises(StoreError, match="is damaged"):
        store.table(NOW)
    with pytest.raises(StoreError, match="is damaged"):
        store.trust_score("fd-arch", "svc", NOW)


def test_the_checked_identity_is_kept_beside_the_file_after_each_write(
    store: TrustStore,
) -> None:
    _fill(store, 50)
    stat = store.path.stat()
    checked = json.loads(Path(f"{store.path}.checked").read_text(encoding="utf-8"))
    assert checked == [stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns]


# The schema pytest-confgate 0.1 wrote (version 1): no retractions, no run counts.
V1_SCHEMA = (
    "CREATE TABLE pairs (pair INTEGER PRIMARY KEY, agent TEXT NOT NULL, project TEXT NOT NULL,"
    " UNIQUE (agent, project))",
    "CREATE TABLE events (seq INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE,"
    " pair INTEGER NOT NULL REFERENCES pairs (pair), accepted INTEGER NOT NULL,"
    " severity INTEGER NOT NULL, finding TEXT NOT NULL, run TEXT NOT NULL, at REAL NOT NULL)",
    "CREATE INDEX events_by_pair ON events (pair, accepted, severity, at)",
    "CREATE TABLE runs (pair INTEGER NOT NULL, run TEXT NOT NULL, PRIMARY KEY (pair, run))"
    " WITHOUT ROWID",
    "CREATE TABLE agent_runs (agent TEXT NOT NULL, run TEXT NOT NULL,"
    " PRIMARY KEY (agent, run)) WITHOUT ROWID",
    "CREATE TABLE meta (name TEXT PRIMARY KEY, value)",
    "CREATE TABLE score_cache (agent TEXT NOT NULL, project TEXT NOT NULL,"
    " is_global INTEGER NOT NULL, trust REAL NOT NULL, reviews INTEGER NOT NULL,"
    " accepted INTEGER NOT NULL, discarded INTEGER NOT NULL,"
    " PRIMARY KEY (agent, is_global, project)) WITHOUT ROWID",
    "INSERT INTO meta (name, value) VALUES ('evidence_version', 0), ('max_at', NULL)",
    "PRAGMA user_version = 1",
)


def _version_1_store(path: Path, events: list[TrustEvent]) -> None:
    """A store as version 1 wrote it, events and distinct runs included."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in V1_SCHEMA:
        conn.execute(statement)
    for event in events:
        conn.execute("INSERT OR IGNORE INTO pairs (agent, project) VALUES (?, ?)",
                     (event.agent, event.project))
        pair = conn.execute("SELECT pair FROM pairs WHERE agent = ? AND project = ?",
                            (event.agent, event.project)).fetchone()[0]
        conn.execute("INSERT INTO events (event_id, pair, accepted, severity, finding, run, at)"
                     " VALUES (?, ?, ?, ?, ?, ?, ?)",
                     (event.event_id, pair, int(event.accepted),
                      ["P0", "P1", "P2", "P3"].index(event.severity), event.finding, event.run,
                      event.at))
        conn.execute("INSERT OR IGNORE INTO runs VALUES (?, ?)", (pair, event.run))
        conn.execute("INSERT OR IGNORE INTO agent_runs VALUES (?, ?)", (event.agent, event.run))
    conn.close()


def test_an_older_store_is_refused_until_migrated_explicitly_and_keeps_its_scores(
    store: TrustStore,
) -> None:
    old = [make_event("a", severity="P0", run="r1"), make_event("b", accepted=False, run="r2"),
           make_event("c", project="web", run="r1")]
    _version_1_store(store.path, old)
    with pytest.raises(StoreError, match="schema version 1, older than this pytest-confgate"):
        store.table(NOW)
    outcome = store.record([make_event("new", run="r3")])
    assert outcome.spooled
    assert "`confgate trust migrate --db " in outcome.reason
    assert store.migrate() == (1, SCHEMA_VERSION)
    assert store.migrate() == (SCHEMA_VERSION, SCHEMA_VERSION)
    expected = score_table(
        *buckets_from_outcomes([e.outcome() for e in old], NOW, store.config), store.config
    )
    assert store.table(NOW).rows() == expected.rows()
    assert store.record([]).replayed == 1  # the spooled event goes in now
    assert store.count_events() == 4
    assert store.table(NOW).pairs[("fd-arch", "svc")].reviews == 3


def test_a_retraction_removes_the_events_effect_and_keeps_it_in_history(
    store: TrustStore,
) -> None:
    wrong = make_event("f2", accepted=False, run="r2")
    store.record([make_event("f1", severity="P0"), wrong])
    assert store.trust_score("fd-arch", "svc", NOW) == pytest.approx(0.8)
    kept, new = store.retract(wrong.event_id[:8], "recorded against the wrong agent",
                              "alice", NOW + 1)
    assert new
    assert kept.event_id == wrong.event_id
    assert store.trust_score("fd-arch", "svc", NOW) == 1.0
    row = store.table(NOW).pairs[("fd-arch", "svc")]
    assert (row.accepted, row.discarded, row.reviews) == (1, 0, 1)  # r2 no longer counts
    assert store.count_events() == 2  # kept
    (item,) = store.retracted()
    assert (item.event, item.retraction.reason, item.retraction.by) == (
        wrong, "recorded against the wrong agent", "alice")
    again, new_again = store.retract(wrong.event_id, "a second reason", "bob", NOW + 2)
    assert (new_again, again.reason) == (False, "recorded against the wrong agent")
    store.record([wrong])  # recording it again does not bring it back
    assert store.trust_score("fd-arch", "svc", NOW) == 1.0


def test_retracting_an_unknown_or_ambiguous_id_is_an_error(store: TrustStore) -> None:
    store.record([make_event(f"f{i}") for i in range(40)])
    with pytest.raises(StoreError, match="no event with id 'ffffffffff'"):
        store.retract("ffffffffff", "why", "me", NOW)
    ids = sorted(make_event(f"f{i}").event_id for i in range(40))
    shared = next(a[:1] for a, b in itertools.pairwise(ids) if a[:1] == b[:1])
    with pytest.raises(StoreError, match="events have ids starting with"):
        store.find_event(shared)


def test_export_then_import_into_a_new_store_gives_the_same_table_and_is_idempotent(
    store: TrustStore, tmp_path: Path,
) -> None:
    events = [make_event(f"f{i}", accepted=i % 2 == 0, run=f"r{i % 3}", at=NOW - i * DAY)
              for i in range(12)]
    store.record(events)
    store.retract(events[0].event_id, "duplicate finding", "alice", NOW)
    lines = list(store.export())
    assert lines[:12] == events
    copy = TrustStore(tmp_path / "copy.db", TrustConfig())
    first = copy.import_records(lines)
    assert (first.new_events, first.new_retractions, first.unknown) == (12, 1, [])
    again = copy.import_records(lines)
    assert (again.events, again.new_events, again.new_retractions) == (12, 0, 0)
    assert copy.table(NOW).rows() == store.table(NOW).rows()
    assert [r.retraction for r in copy.retracted()] == [r.retraction for r in store.retracted()]


@pytest.mark.parametrize("mode", ["neutral", "global", "prior"])
def test_the_cache_answers_a_new_agent_with_the_configured_start(
    tmp_path: Path, mode: str
) -> None:
    config = TrustConfig(new_agent=mode, new_agent_prior=0.3)  # type: ignore[arg-type]
    store = TrustStore(tmp_path / "trust.db", config)
    assert store.trust_score("fd-unseen", "svc", NOW) == (0.3 if mode == "prior" else 1.0)
    store.record([make_event("f1"), make_event("f2", accepted=False, run="r2")])
    expected = {"neutral": 1.0, "global": 0.5, "prior": 0.3}[mode]
    assert store.table(NOW).trust("fd-unseen", "svc") == pytest.approx(expected)
    assert _cache_rows(store.path) == 2
    assert store.trust_score("fd-unseen", "svc", NOW) == pytest.approx(expected)

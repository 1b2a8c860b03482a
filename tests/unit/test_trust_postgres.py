"""The PostgreSQL trust store against a real, throwaway server (issue 20, ``tests/pgcluster``)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pgcluster
import psycopg
import pytest

from pytest_confgate.config.trust import TrustConfig
from pytest_confgate.exceptions import StoreError
from pytest_confgate.trust import open_store
from pytest_confgate.trust.events import TrustEvent
from pytest_confgate.trust.postgres_store import PostgresTrustStore
from pytest_confgate.trust.server import Server
from pytest_confgate.trust.store import SCHEMA_VERSION, TrustStore

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

NOW = 1_750_000_000.0
DAY = 86400.0


def make_event(finding: str = "f1", *, accepted: bool = True, agent: str = "fd-arch",
               project: str = "svc", severity: str = "P2", run: str = "r1",
               at: float = NOW) -> TrustEvent:
    kind = "finding_accepted" if accepted else "finding_discarded"
    return TrustEvent(kind, agent, project, finding, severity, run, at)


@pytest.fixture
def store(postgres_url: str, tmp_path_factory: pytest.TempPathFactory,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[TrustStore]:
    monkeypatch.setenv("CONFGATE_SPOOL_DIR", str(tmp_path_factory.mktemp("spool")))
    with open_store(TrustConfig(), postgres_url) as opened:
        assert isinstance(opened, PostgresTrustStore)
        yield opened


def _sql(url: str, statement: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(statement)  # type: ignore[arg-type]  # the tests' own SQL
        return cursor.fetchall() if cursor.description else []


def test_a_first_write_creates_the_schema_and_the_same_event_twice_is_stored_once(
    store: TrustStore, postgres_url: str,
) -> None:
    assert not store.exists()
    assert store.table(NOW).rows() == []
    first = store.record([make_event(), make_event()])
    again = store.record([make_event(at=NOW + 60)])  # a later recording of the same outcome
    assert (first.spooled, first.stored, again.stored) == (False, 1, 0)
    assert store.count_events() == 1
    assert _sql(postgres_url, "SELECT schema_version FROM confgate_trust_state") == [
        (SCHEMA_VERSION,)
    ]


def test_scores_are_cached_in_the_database_and_new_evidence_clears_them(
    store: TrustStore, postgres_url: str,
) -> None:
    store.record([make_event("f1", severity="P0"), make_event("f2", accepted=False, run="r2")])
    assert store.table(NOW).trust("fd-arch", "svc") == pytest.approx(0.8)
    assert _sql(postgres_url, "SELECT count(*) FROM confgate_trust_score_cache") == [(2,)]
    assert store.trust_score("fd-arch", "svc", NOW + 10 * DAY) == pytest.approx(0.8)
    assert store.trust_score("fd-arch", "new-project", NOW) == pytest.approx(0.8)
    assert store.trust_score("nobody", "svc", NOW) == 1.0
    store.record([make_event("f3", accepted=False, run="r3")])
    assert _sql(postgres_url, "SELECT count(*) FROM confgate_trust_score_cache") == [(0,)]
    assert store.trust_score("fd-arch", "svc", NOW) == pytest.approx(4 / 6)


def test_a_newer_schema_is_refused_by_name_and_never_written(
    store: TrustStore, postgres_url: str,
) -> None:
    store.record([make_event()])
    _sql(postgres_url, "UPDATE confgate_trust_state SET schema_version = 9")
    outcome = store.record([make_event("f2")])
    assert outcome.spooled
    assert f"{postgres_url}: the trust store has schema version 9, newer than" in outcome.reason
    assert _sql(postgres_url, "SELECT count(*) FROM confgate_trust_events") == [(1,)]
    with pytest.raises(StoreError, match="schema version 9, newer"):
        store.table(NOW)
    with pytest.raises(StoreError, match="schema version 9, newer"):
        store.trust_score("fd-arch", "svc", NOW)
    with pytest.raises(StoreError, match="schema version 9, newer"):
        store.migrate()


def test_an_older_schema_waits_for_confgate_trust_migrate(
    store: TrustStore, postgres_url: str,
) -> None:
    store.record([make_event()])
    _sql(postgres_url, "UPDATE confgate_trust_state SET schema_version = 1")
    outcome = store.record([make_event("f2")])
    assert outcome.spooled
    assert f"run `confgate trust migrate --db {postgres_url}`" in outcome.reason


def test_a_server_that_cannot_be_reached_spools_and_the_next_write_replays(
    postgres_cluster: pgcluster.Cluster, tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CONFGATE_SPOOL_DIR", str(tmp_path_factory.mktemp("spool")))
    url = postgres_cluster.url("created_later")
    store = open_store(TrustConfig(connect_timeout_s=5), url)
    outcome = store.record([make_event("f1"), make_event("f2")])
    assert outcome.spooled
    assert outcome.spool is not None
    assert f"{url}: cannot connect" in outcome.reason
    assert store.spooled_count() == 2
    postgres_cluster.execute("CREATE DATABASE created_later")  # the server is back
    after = store.record([make_event("f3")])
    assert (after.spooled, after.stored, after.replayed) == (False, 3, 2)
    assert store.spooled_count() == 0
    assert store.count_events() == 3


def test_a_lost_connection_is_reopened(store: TrustStore, postgres_url: str) -> None:
    store.record([make_event()])
    assert store.trust_score("fd-arch", "svc", NOW) == 1.0
    _sql(postgres_url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
         " WHERE application_name = 'confgate'")
    assert store.trust_score("fd-arch", "svc", NOW) == 1.0
    assert not store.record([make_event("f2")]).spooled


def test_the_password_comes_from_the_variable_password_env_names(
    postgres_cluster: pgcluster.Cluster, postgres_url: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    database = postgres_url.rsplit("/", 1)[1]
    url = postgres_cluster.url(database, user=pgcluster.SECRET_USER)
    config = TrustConfig(password_env="TEAM_TRUST_PASSWORD")  # noqa: S106 - a variable's name
    monkeypatch.delenv("TEAM_TRUST_PASSWORD", raising=False)
    with pytest.raises(StoreError, match=r"TEAM_TRUST_PASSWORD \(password_env\) is not set"):
        open_store(config, url).table(NOW)
    monkeypatch.setenv("TEAM_TRUST_PASSWORD", "wrong-horse-battery")
    with pytest.raises(StoreError) as refused:
        open_store(config, url).table(NOW)
    assert "password authentication failed" in str(refused.value)
    assert "wrong-horse-battery" not in str(refused.value)
    monkeypatch.setenv("TEAM_TRUST_PASSWORD", pgcluster.SECRET_PASSWORD)
    with open_store(config, url) as store:
        assert not store.record([make_event()]).spooled
        assert store.count_events() == 1


def test_driver_messages_never_show_the_password() -> None:
    server = Server("postgresql://ci@db.example/trust", "PW_FOR_SCRUB_TEST")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PW_FOR_SCRUB_TEST", "p4ss-w0rd")
        assert server.scrub("FATAL: p4ss-w0rd rejected for postgresql://a:b@h/d") == (
            "FATAL: *** rejected for postgresql://a:***@h/d"
        )


def test_the_sqlite_default_never_imports_psycopg(tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp("plain")
    script = (
        "import sys\n"
        "from pytest_confgate.cli import main\n"
        "assert main(['trust', 'record', '--event', 'finding_accepted', '--agent', 'a',"
        " '--project', 'p', '--finding', 'f', '--severity', 'P2', '--run', 'r']) == 0\n"
        "assert main(['trust', 'report']) == 0\n"
        "print('psycopg' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=folder, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "False"


def test_retractions_export_and_import_work_on_the_server_too(
    store: TrustStore, tmp_path_factory: pytest.TempPathFactory,
) -> None:
    events = [make_event(f"f{i}", accepted=i % 2 == 0, run=f"r{i % 3}") for i in range(9)]
    store.record(events)
    kept, new = store.retract(events[1].event_id[:12], "wrong agent", "alice", NOW)
    assert new
    assert store.retract(events[1].event_id, "again", "bob", NOW)[0] == kept
    exported = list(store.export())
    assert sorted(e.event_id for e in exported[:9] if isinstance(e, TrustEvent)) == sorted(
        e.event_id for e in events
    )
    assert exported[9] == kept
    copy = open_store(TrustConfig(), tmp_path_factory.mktemp("copy") / "trust.db")
    assert copy.import_records(exported).new_retractions == 1
    assert copy.table(NOW).rows() == store.table(NOW).rows()
    assert [r.retraction for r in copy.retracted()] == [r.retraction for r in store.retracted()]


def test_a_least_privilege_role_is_told_to_migrate_first_then_works_with_grants(
    postgres_cluster: pgcluster.Cluster, postgres_url: str,
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CONFGATE_SPOOL_DIR", str(tmp_path_factory.mktemp("spool")))
    database = postgres_url.rsplit("/", 1)[1]
    role = f"ci_{database}"
    _sql(postgres_url, f"CREATE ROLE {role} LOGIN")
    _sql(postgres_url, f"REVOKE CREATE ON SCHEMA public FROM PUBLIC, {role}")
    ci = open_store(TrustConfig(), postgres_cluster.url(database, user=role))
    outcome = ci.record([make_event()])
    assert outcome.spooled
    assert "may not create the trust tables" in outcome.reason
    assert "`confgate trust migrate --db " in outcome.reason
    assert open_store(TrustConfig(), postgres_url).migrate() == (0, SCHEMA_VERSION)
    _sql(postgres_url, f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public"
                       f" TO {role}")
    after = ci.record([make_event("f2")])
    assert (after.spooled, after.stored, after.replayed) == (False, 2, 1)
    assert ci.table(NOW).pairs[("fd-arch", "svc")].accepted == 2

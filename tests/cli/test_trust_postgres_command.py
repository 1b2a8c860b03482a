"""``confgate trust`` against a real PostgreSQL server (issue 20's contract), beside SQLite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pgcluster
import psycopg
import pytest

from pytest_confgate.cli import main

pytestmark = [pytest.mark.usefixtures("trust_project"), pytest.mark.one_python]

EVENTS = [  # (event, agent, finding, severity, run, at): several per bucket, several ages
    ("finding_accepted", "fd-arch", "F1", "P0", "r1", "2025-01-01T00:00:00Z"),
    ("finding_discarded", "fd-arch", "F2", "P2", "r1", "2025-01-10T08:00:00Z"),
    ("finding_discarded", "fd-arch", "F3", "P2", "r2", "2025-01-17T13:30:00Z"),
    ("finding_discarded", "fd-arch", "F4", "P2", "r3", "2025-01-29T23:59:59Z"),
    ("finding_accepted", "fd-arch", "F5", "P3", "r3", "2025-01-30T00:00:00Z"),
    ("finding_accepted", "fd-game", "G1", "P1", "r2", "2024-12-01T00:00:00Z"),
    ("finding_discarded", "fd-game", "G2", "P1", "r3", "2025-01-20T00:00:00Z"),
]
NOW = "2025-01-31T00:00:00Z"


def record_all(db: str, project: str = "svc") -> None:
    for event, agent, finding, severity, run, at in EVENTS:
        assert main(["trust", "record", "--db", db, "--event", event, "--agent", agent,
                     "--project", project, "--finding", finding, "--severity", severity,
                     "--run", run, "--at", at]) == 0


def report(capsys: pytest.CaptureFixture[str], db: str, *extra: str) -> list[dict[str, Any]]:
    capsys.readouterr()
    assert main(["trust", "report", "--db", db, "--json", "--now", NOW, *extra]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    rows: list[dict[str, Any]] = json.loads(out)
    return rows


def test_record_then_report_on_postgresql_gives_the_sqlite_scores(
    capsys: pytest.CaptureFixture[str], postgres_url: str,
) -> None:
    record_all(postgres_url)
    record_all("local/trust.db")
    assert capsys.readouterr() == ("", "")  # silent on success, both
    with psycopg.connect(postgres_url) as conn:  # in the server, not in a folder named like it
        assert conn.execute("SELECT count(*) FROM confgate_trust_events").fetchone() == (7,)
    assert sorted(p.name for p in Path.cwd().iterdir()) == ["local"]
    server, local = report(capsys, postgres_url), report(capsys, "local/trust.db")
    assert len(server) == 4
    assert server == local  # the same rows and the same numbers, to the last digit


def test_recording_the_same_event_twice_into_postgresql_stores_it_once(
    capsys: pytest.CaptureFixture[str], postgres_url: str,
) -> None:
    for at in ("2025-01-02", "2025-01-03"):
        assert main(["trust", "record", "--db", postgres_url, "--event", "finding_accepted",
                     "--agent", "fd-arch", "--project", "svc", "--finding", "F1",
                     "--severity", "P2", "--run", "r1", "--at", at]) == 0
    with psycopg.connect(postgres_url) as conn:
        row = conn.execute("SELECT count(*) FROM confgate_trust_events").fetchone()
    assert row == (1,)
    (pair,) = (r for r in report(capsys, postgres_url) if r["scope"] == "project")
    assert (pair["accepted"], pair["reviews"]) == (1, 1)


def test_export_import_moves_a_file_to_the_server_and_back(
    capsys: pytest.CaptureFixture[str], postgres_url: str,
) -> None:
    record_all("first.db")
    capsys.readouterr()
    assert main(["trust", "retract", _event_id(capsys, "first.db", "F2"), "--reason", "dup",
                 "--db", "first.db"]) == 0
    assert main(["trust", "export", "--db", "first.db", "-o", "a.jsonl"]) == 0
    assert main(["trust", "import", "a.jsonl", "--db", postgres_url]) == 0
    assert main(["trust", "import", "a.jsonl", "--db", postgres_url]) == 0  # idempotent
    assert main(["trust", "export", "--db", postgres_url, "-o", "b.jsonl"]) == 0
    assert main(["trust", "import", "b.jsonl", "--db", "back.db"]) == 0
    first = report(capsys, "first.db")
    assert report(capsys, postgres_url) == first
    assert report(capsys, "back.db") == first
    assert sorted(Path("a.jsonl").read_text().splitlines()) == sorted(
        Path("b.jsonl").read_text().splitlines()
    )


def _event_id(capsys: pytest.CaptureFixture[str], db: str, finding: str) -> str:
    capsys.readouterr()
    assert main(["trust", "export", "--db", db]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return str(next(line["event_id"] for line in lines if line.get("finding") == finding))


def test_migrate_creates_the_tables_on_the_server(
    capsys: pytest.CaptureFixture[str], postgres_url: str,
) -> None:
    assert main(["trust", "migrate", "--db", postgres_url]) == 0
    assert f"{postgres_url}: created at schema 2" in capsys.readouterr().out
    assert main(["trust", "migrate", "--db", postgres_url]) == 0
    assert "already at schema 2" in capsys.readouterr().out


def test_a_server_password_comes_from_password_env_and_is_never_printed(
    capsys: pytest.CaptureFixture[str], postgres_cluster: pgcluster.Cluster, postgres_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = postgres_cluster.url(postgres_url.rsplit("/", 1)[1], user=pgcluster.SECRET_USER)
    Path("confgate.yml").write_text(
        f"trust:\n  db: {url}\n  password_env: TRUST_DB_PASSWORD\n", encoding="utf-8"
    )
    monkeypatch.setenv("TRUST_DB_PASSWORD", "not-the-password-0451")
    assert main(["trust", "report"]) == 2
    err = capsys.readouterr().err
    assert "password authentication failed" in err
    assert "not-the-password-0451" not in err
    monkeypatch.setenv("TRUST_DB_PASSWORD", pgcluster.SECRET_PASSWORD)
    record_all(url)
    assert report(capsys, url)[0]["agent"] == "fd-arch"


def test_record_to_an_unreachable_server_spools_and_report_says_so(
    capsys: pytest.CaptureFixture[str], postgres_cluster: pgcluster.Cluster,
) -> None:
    url = postgres_cluster.url("not_created_yet")
    record_all(url)
    err = capsys.readouterr().err
    assert f"{url}: cannot connect" in err
    assert "kept in " in err
    postgres_cluster.execute("CREATE DATABASE not_created_yet")
    assert main(["trust", "record", "--db", url, "--event", "finding_accepted", "--agent",
                 "fd-new", "--project", "svc", "--finding", "N1", "--severity", "P2",
                 "--run", "r9", "--at", NOW]) == 0  # replays the spool first
    rows = report(capsys, url)
    assert {r["agent"] for r in rows} == {"fd-arch", "fd-game", "fd-new"}
    assert sum(r["accepted"] + r["discarded"] for r in rows if r["scope"] == "global") == 8

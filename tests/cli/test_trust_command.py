"""``confgate trust record|resolve|triage|report`` through ``cli.main`` on a real store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_confgate.cli import main

pytestmark = [pytest.mark.usefixtures("trust_project"), pytest.mark.one_python]

NOW = "2025-01-31T00:00:00Z"


def record(*extra: str, event: str = "finding_accepted", agent: str = "fd-arch",
           finding: str = "F1", severity: str = "P2", run: str = "r1",
           project: str = "svc") -> int:
    return main(["trust", "record", "--event", event, "--agent", agent, "--project", project,
                 "--finding", finding, "--severity", severity, "--run", run, *extra])


def report_json(capsys: pytest.CaptureFixture[str], *extra: str) -> list[dict[str, Any]]:
    capsys.readouterr()
    assert main(["trust", "report", "--json", "--now", NOW, *extra]) == 0
    rows: list[dict[str, Any]] = json.loads(capsys.readouterr().out)
    return rows


def row_of(rows: list[dict[str, Any]], agent: str, project: str | None) -> dict[str, Any]:
    return next(r for r in rows if r["agent"] == agent and r["project"] == project)


def test_record_is_silent_and_the_report_shows_the_hand_computed_trust(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert record("--severity", "P0", "--at", "2025-01-01T00:00:00Z") == 0
    assert record("--at", NOW, event="finding_discarded", finding="F2", run="r2") == 0
    assert capsys.readouterr() == ("", "")
    assert Path(".confgate/trust.db").is_file()
    rows = report_json(capsys)
    pair = row_of(rows, "fd-arch", "svc")
    assert pair["trust"] == pytest.approx(2 / 3)  # P0 x 0.5 (30 days) against P2 x 1
    assert (pair["reviews"], pair["accepted"], pair["discarded"]) == (2, 1, 1)
    assert (pair["scope"], pair["low_trust"]) == ("project", False)
    assert row_of(rows, "fd-arch", None)["scope"] == "global"


def test_recording_the_same_event_twice_counts_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert record("--at", "2025-01-02") == 0
    assert record("--at", "2025-01-03") == 0
    pair = row_of(report_json(capsys), "fd-arch", "svc")
    assert (pair["accepted"], pair["reviews"]) == (1, 1)


def _findings(path: Path, **extra: Any) -> Path:
    data = {
        "findings": [
            {"id": "F1", "agent": "fd-arch", "severity": "P1", "title": "race"},
            {"id": "F2", "agent": "fd-game", "severity": "P3", "title": "fun"},
            {"id": "F3", "agent": "fd-game", "severity": "P2"},
        ],
        **extra,
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_resolve_records_one_event_per_finding_silently(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _findings(Path("FINDINGS.json"))
    assert main(["trust", "resolve", "FINDINGS.json", "--accepted", "F1",
                 "--discarded", "F2,F3", "--at", NOW]) == 0
    assert capsys.readouterr() == ("", "")
    rows = report_json(capsys)
    assert {(r["agent"], r["project"]) for r in rows if r["scope"] == "project"} == {
        ("fd-arch", "my-service"), ("fd-game", "my-service"),
    }
    game = row_of(rows, "fd-game", "my-service")
    assert (game["accepted"], game["discarded"], game["reviews"]) == (0, 2, 1)
    assert game["low_trust"] is True
    assert row_of(rows, "fd-arch", "my-service")["trust"] == 1.0


def test_resolving_the_same_file_again_records_nothing_new(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _findings(Path("FINDINGS.json"))
    for _ in range(2):
        assert main(["trust", "resolve", "FINDINGS.json", "--accepted", "F1"]) == 0
    assert row_of(report_json(capsys), "fd-arch", "my-service")["accepted"] == 1


def test_resolve_takes_project_and_run_from_flags_or_the_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _findings(Path("a.json"), review_run_id="run-1", project="from-file")
    _findings(Path("b.json"), review_run_id="run-2")
    assert main(["trust", "resolve", "a.json", "--accepted", "F1"]) == 0
    assert main(["trust", "resolve", "b.json", "--accepted", "F1", "--project", "from-file"]) == 0
    pair = row_of(report_json(capsys), "fd-arch", "from-file")
    assert (pair["accepted"], pair["reviews"]) == (2, 2)


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--accepted", "F9"], "FINDINGS.json: no finding with id 'F9'"),
     (["--accepted", "F1", "--discarded", "F1"], "both name F1"),
     ([], "nothing to record")],
    ids=["unknown-id", "accepted-and-discarded", "no-ids"],
)
def test_resolve_refuses_bad_input_and_records_nothing(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    _findings(Path("FINDINGS.json"))
    assert main(["trust", "resolve", "FINDINGS.json", *args]) == 2
    assert message in capsys.readouterr().err
    assert not Path(".confgate/trust.db").exists()


def test_resolve_names_a_missing_or_broken_findings_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["trust", "resolve", "nope.json", "--accepted", "F1"]) == 2
    assert "nope.json: no such findings file" in capsys.readouterr().err
    Path("bad.json").write_text("{", encoding="utf-8")
    assert main(["trust", "resolve", "bad.json", "--accepted", "F1"]) == 2
    assert "bad.json: not a UTF-8 JSON findings file" in capsys.readouterr().err


def _seed_trust() -> None:
    """fd-arch: 1 of 2 accepted (0.5); fd-game: all discarded (floor)."""
    assert record("--at", NOW) == 0
    assert record("--at", NOW, event="finding_discarded", finding="F2", run="r2") == 0
    assert record("--at", NOW, event="finding_discarded", agent="fd-game", finding="G1") == 0


def test_triage_ranks_by_base_times_trust_and_prints_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _seed_trust()
    capsys.readouterr()
    assert main(["trust", "triage", "--project", "svc", "--candidates",
                 "fd-game=0.9,fd-arch=0.7,fd-new=0.3", "--json", "--now", NOW]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert json.loads(out) == [
        {"agent": "fd-arch", "base_score": 0.7, "trust": 0.5, "final_score": 0.35},
        {"agent": "fd-new", "base_score": 0.3, "trust": 1.0, "final_score": 0.3},
        {"agent": "fd-game", "base_score": 0.9, "trust": 0.05,
         "final_score": pytest.approx(0.045)},
    ]


def test_triage_debug_prints_each_multiplier(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _seed_trust()
    capsys.readouterr()
    monkeypatch.setenv("CONFGATE_DEBUG", "1")
    argv = ["trust", "triage", "--project", "svc", "--candidates", "fd-arch=0.7,fd-x=0.1"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "fd-arch @ svc: base 0.7 x trust 0.5 = 0.35" in err
    assert "fd-x @ svc: base 0.1 x trust 1.0 = 0.1" in err
    assert out.splitlines()[0].startswith("fd-arch\t0.3500")


def test_triage_of_a_new_project_uses_global_trust(capsys: pytest.CaptureFixture[str]) -> None:
    _seed_trust()
    capsys.readouterr()
    assert main(["trust", "triage", "--project", "elsewhere", "--candidates", "fd-arch=1",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["trust"] == 0.5


def test_triage_without_a_store_warns_and_multiplies_by_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["trust", "triage", "--project", "svc", "--candidates", "a=0.2,b=0.9",
                 "--json"]) == 0
    out, err = capsys.readouterr()
    assert [(r["agent"], r["trust"], r["final_score"]) for r in json.loads(out)] == [
        ("b", 1.0, 0.9), ("a", 1.0, 0.2),
    ]
    assert "warning: no trust store at" in err
    assert "every trust multiplier is 1.0" in err
    assert not Path(".confgate").exists()


def test_triage_with_an_unreadable_store_warns_and_leaves_it_untouched(
    capsys: pytest.CaptureFixture[str],
) -> None:
    db = Path(".confgate/trust.db")
    db.parent.mkdir()
    db.write_bytes(b"garbage, not a database" * 10)
    assert main(["trust", "triage", "--candidates", "a=0.2", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)[0]["trust"] == 1.0
    assert "not an SQLite database" in err
    assert db.read_bytes() == b"garbage, not a database" * 10


@pytest.mark.parametrize(
    "argv",
    [["trust", "triage", "--candidates", "a=high"],
     ["trust", "triage", "--candidates", "a=1", "--now", "soon"],
     ["trust", "record", "--event", "finding_accepted", "--agent", "a", "--project", "p",
      "--finding", "f", "--severity", "P2", "--run", "r", "--at", "tomorrow"],
     ["trust", "record", "--event", "finding_fixed", "--agent", "a", "--project", "p",
      "--finding", "f", "--severity", "P2", "--run", "r"],
     ["trust", "report", "--now", "31/01/2025"]],
    ids=["bad-candidates", "bad-now", "bad-at", "unknown-event", "bad-report-now"],
)
def test_bad_flags_are_a_usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err


def test_the_report_table_shows_project_and_global_rows_and_flags_low_trust(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _seed_trust()
    capsys.readouterr()
    assert main(["trust", "report", "--now", NOW]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["agent", "project", "trust", "reviews", "accepted", "discarded"]
    assert lines[1].split() == ["fd-arch", "svc", "0.500", "2", "1", "1"]
    assert lines[2].split() == ["fd-game", "svc", "0.050", "1", "0", "1", "LOW", "TRUST"]
    assert lines[3].split()[:2] == ["fd-arch", "(global)"]


def test_report_project_filter_and_html_chart(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _seed_trust()
    assert record("--at", NOW, project="other", finding="O1") == 0
    rows = report_json(capsys, "--project", "other", "--html", "trust.html")
    assert [(r["project"], r["scope"]) for r in rows] == [
        ("other", "project"), (None, "global"), (None, "global"),
    ]
    page = Path("trust.html").read_text(encoding="utf-8")
    assert "<svg" in page
    assert "fd-arch @ other" in page


def test_report_without_a_store_is_empty(capsys: pytest.CaptureFixture[str]) -> None:
    assert report_json(capsys) == []
    assert main(["trust", "report"]) == 0
    assert "no trust evidence recorded yet" in capsys.readouterr().out


def test_report_of_a_corrupt_store_is_an_error_naming_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    db = Path(".confgate/trust.db")
    db.parent.mkdir()
    db.write_bytes(b"x" * 100)
    assert main(["trust", "report"]) == 2
    assert ".confgate/trust.db: not an SQLite database" in capsys.readouterr().err


def test_record_into_a_corrupt_store_spools_and_does_not_fail_the_caller(
    capsys: pytest.CaptureFixture[str],
) -> None:
    db = Path(".confgate/trust.db")
    db.parent.mkdir()
    db.write_bytes(b"x" * 100)
    assert record() == 0
    err = capsys.readouterr().err
    assert "not an SQLite database" in err
    assert "trust.db.spool" in err
    assert db.read_bytes() == b"x" * 100
    assert len(list(Path(".confgate/trust.db.spool").glob("*.json"))) == 1


def test_config_file_and_db_flag_choose_the_store_and_the_formula(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Path("conf.yml").write_text(
        "project: configured\ntrust:\n  db: state/t.db\n  mode: bayesian\n", encoding="utf-8"
    )
    assert main(["trust", "record", "-c", "conf.yml", "--event", "finding_accepted", "--agent",
                 "a", "--finding", "f", "--severity", "P2", "--run", "r", "--at", NOW]) == 0
    assert Path("state/t.db").is_file()
    capsys.readouterr()
    assert main(["trust", "report", "--config", "conf.yml", "--json", "--now", NOW]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert (rows[0]["project"], rows[0]["mode"]) == ("configured", "bayesian")
    assert main(["trust", "report", "-c", "conf.yml", "--db", "other.db", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_an_invalid_config_is_a_usage_error_naming_the_key(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Path("confgate.yml").write_text("trust:\n  half_life_days: -1\n", encoding="utf-8")
    assert main(["trust", "report"]) == 2
    assert "trust.half_life_days" in capsys.readouterr().err


def test_report_mentions_events_waiting_in_the_spool(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert record("--at", NOW) == 0
    spool = Path(".confgate/trust.db.spool")
    spool.mkdir()
    (spool / "waiting.json").write_text(
        '{"event": "finding_accepted", "agent": "a", "project": "svc", "finding": "w",'
        ' "severity": "P2", "run": "r9", "at": 1738281600.0}',
        encoding="utf-8",
    )
    capsys.readouterr()
    assert main(["trust", "report"]) == 0
    assert "1 event(s) wait in the spool" in capsys.readouterr().err
    assert record("--at", NOW, finding="F2") == 0  # the next write replays it
    assert row_of(report_json(capsys), "a", "svc")["accepted"] == 1
    assert not list(spool.glob("*.json"))


def _events_on_stderr(err: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in err.splitlines() if line.startswith("{")]


def test_an_event_neither_stored_nor_spooled_exits_1_and_is_printed_for_import(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    Path("blocker").write_text("a file, not a folder", encoding="utf-8")
    monkeypatch.setenv("CONFGATE_SPOOL_DIR", "blocker/spool")
    assert record("--db", "blocker/trust.db", "--at", NOW) == 1
    err = capsys.readouterr().err
    assert "NOT kept" in err
    (event,) = _events_on_stderr(err)
    assert (event["kind"], event["agent"], event["finding"]) == ("event", "fd-arch", "F1")
    Path("lost.jsonl").write_text(json.dumps(event) + "\n", encoding="utf-8")
    assert main(["trust", "import", "lost.jsonl"]) == 0  # CI can retry with what it printed
    assert row_of(report_json(capsys), "fd-arch", "svc")["accepted"] == 1


def test_resolve_that_cannot_keep_its_events_exits_1_with_every_event(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _findings(Path("FINDINGS.json"))
    Path("blocker").write_text("a file, not a folder", encoding="utf-8")
    monkeypatch.setenv("CONFGATE_SPOOL_DIR", "blocker/spool")
    assert main(["trust", "resolve", "FINDINGS.json", "--accepted", "F1", "--discarded",
                 "F2", "--db", "blocker/trust.db"]) == 1
    found = _events_on_stderr(capsys.readouterr().err)
    assert sorted(e["finding"] for e in found) == ["F1", "F2"]


def test_require_stored_exits_1_when_the_event_only_reached_the_spool(
    capsys: pytest.CaptureFixture[str],
) -> None:
    db = Path(".confgate/trust.db")
    db.parent.mkdir()
    db.write_bytes(b"x" * 100)
    assert record("--require-stored") == 1
    err = capsys.readouterr().err
    assert "trust.db.spool" in err  # still kept for the next write
    assert len(_events_on_stderr(err)) == 1
    assert record(finding="F2") == 0  # without the flag, spooling is enough


@pytest.mark.parametrize(
    "location", ["smb://host/share/trust.db", "file:///srv/trust.db", "https://x/t.db"],
    ids=["smb", "file-url", "https"],
)
def test_a_db_with_another_url_scheme_is_an_error_and_makes_no_folder(
    capsys: pytest.CaptureFixture[str], location: str
) -> None:
    assert record("--db", location) == 2
    err = capsys.readouterr().err
    assert f"confgate trust record: {location}: " in err
    assert "postgresql://" in err
    assert list(Path.cwd().iterdir()) == []
    assert main(["trust", "report", "--db", location]) == 2


def test_trust_db_with_another_url_scheme_in_the_config_names_the_key(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Path("confgate.yml").write_text("trust:\n  db: smb://host/share/trust.db\n",
                                    encoding="utf-8")
    assert record() == 2
    err = capsys.readouterr().err
    assert "confgate.yml:2: trust.db: smb://host/share/trust.db: smb:// is not a store" in err
    assert not Path("smb:").exists()


def test_a_password_in_the_url_is_refused_and_never_printed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = "postgresql://ci:hunter2-very-secret@db.example:5432/trust"
    assert record("--db", url) == 2
    Path("confgate.yml").write_text(f"trust:\n  db: {url}\n", encoding="utf-8")
    assert record() == 2
    assert main(["validate"]) == 2
    out, err = capsys.readouterr()
    assert "hunter2" not in out + err
    assert "postgresql://ci:***@db.example:5432/trust: the URL holds a password" in err
    assert "password_env" in err


def test_malformed_spool_files_are_reported_by_every_record_and_report(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert record("--at", NOW) == 0
    spool = Path(".confgate/trust.db.spool")
    spool.mkdir()
    (spool / "torn.json").write_text('{"event": "finding_acc', encoding="utf-8")
    capsys.readouterr()
    for argv in (["trust", "report"], ["trust", "record", "--event", "finding_accepted",
                 "--agent", "a", "--finding", "F9", "--severity", "P1", "--run", "r9"],
                 ["trust", "report", "--json"]):
        assert main(argv) == 0
        err = capsys.readouterr().err
        assert "1 spool file(s) cannot be replayed" in err, argv
        assert "torn." in err
    for path in spool.iterdir():
        path.unlink()  # handled
    assert main(["trust", "report"]) == 0
    assert "spool file" not in capsys.readouterr().err

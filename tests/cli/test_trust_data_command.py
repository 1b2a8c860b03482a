"""``confgate trust retract|export|import|migrate`` through ``cli.main`` on real stores."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from pytest_confgate.cli import main

pytestmark = [pytest.mark.usefixtures("trust_project"), pytest.mark.one_python]

NOW = "2025-01-31T00:00:00Z"


def record(*extra: str, event: str = "finding_accepted", agent: str = "fd-arch",
           finding: str = "F1", severity: str = "P2", run: str = "r1") -> int:
    return main(["trust", "record", "--event", event, "--agent", agent, "--project", "svc",
                 "--finding", finding, "--severity", severity, "--run", run, "--at", NOW,
                 *extra])


def report_json(capsys: pytest.CaptureFixture[str], *extra: str) -> list[dict[str, Any]]:
    capsys.readouterr()
    assert main(["trust", "report", "--json", "--now", NOW, *extra]) == 0
    rows: list[dict[str, Any]] = json.loads(capsys.readouterr().out)
    return rows


def export_lines(capsys: pytest.CaptureFixture[str], *extra: str) -> list[dict[str, Any]]:
    capsys.readouterr()
    assert main(["trust", "export", *extra]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def _seed() -> None:
    assert record(severity="P0") == 0
    assert record(event="finding_discarded", finding="F2", run="r2") == 0
    assert record(agent="fd-game", finding="G1", run="r2") == 0


def test_retract_removes_the_events_effect_and_the_report_shows_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _seed()
    wrong = next(line for line in export_lines(capsys) if line["finding"] == "F2")
    pair = next(r for r in report_json(capsys) if (r["agent"], r["project"]) == ("fd-arch", "svc"))
    assert pair["trust"] == pytest.approx(0.8)
    assert main(["trust", "retract", wrong["event_id"][:10], "--reason",
                 "F2 was fd-game's finding", "--by", "alice"]) == 0
    out = capsys.readouterr().out
    assert f"retracted {wrong['event_id']} (finding_discarded by fd-arch @ svc" in out
    rows = report_json(capsys)
    pair = next(r for r in rows if (r["agent"], r["project"]) == ("fd-arch", "svc"))
    assert (pair["trust"], pair["discarded"], pair["reviews"], pair["retracted"]) == (1.0, 0, 1, 1)
    assert main(["trust", "report", "--now", NOW, "--html", "trust.html"]) == 0
    text = capsys.readouterr().out
    assert "1 retracted event(s), kept in history and not counted:" in text
    assert "by alice: F2 was fd-game's finding" in text
    assert "F2 was fd-game&#x27;s finding" in Path("trust.html").read_text(encoding="utf-8")
    lines = export_lines(capsys)
    assert any(line["kind"] == "event" and line["finding"] == "F2" for line in lines)
    assert lines[-1]["kind"] == "retraction"
    assert lines[-1]["reason"] == "F2 was fd-game's finding"


def test_retracting_twice_keeps_the_first_reason(capsys: pytest.CaptureFixture[str]) -> None:
    _seed()
    event_id = export_lines(capsys)[0]["event_id"]
    assert main(["trust", "retract", event_id, "--reason", "first"]) == 0
    assert main(["trust", "retract", event_id, "--reason", "second"]) == 0
    assert "was already retracted by" in capsys.readouterr().out
    assert [r["reason"] for r in export_lines(capsys) if r["kind"] == "retraction"] == ["first"]


@pytest.mark.parametrize(
    ("event_id", "message"),
    [("abc", "give the event's id"), ("not-hex-at-all", "give the event's id"),
     ("0123456789abcdef", "no event with id '0123456789abcdef'")],
    ids=["too-short", "not-hex", "unknown"],
)
def test_retract_refuses_an_id_it_cannot_find(
    capsys: pytest.CaptureFixture[str], event_id: str, message: str
) -> None:
    _seed()
    capsys.readouterr()
    assert main(["trust", "retract", event_id, "--reason", "why"]) == 2
    assert message in capsys.readouterr().err


def test_retract_needs_a_reason(capsys: pytest.CaptureFixture[str]) -> None:
    _seed()
    assert main(["trust", "retract", "0" * 32]) == 2
    assert main(["trust", "retract", "0" * 32, "--reason", "  "]) == 2


def test_export_to_a_file_and_import_into_a_new_store_is_idempotent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _seed()
    assert main(["trust", "export", "-o", "trust.jsonl"]) == 0
    assert "3 event(s), 0 retraction(s)" in capsys.readouterr().err
    for _ in range(2):
        assert main(["trust", "import", "trust.jsonl", "--db", "copy.db"]) == 0
    err = capsys.readouterr().err
    assert "3 new event(s) of 3 read (0 already stored)" in err
    assert "0 new event(s) of 3 read (3 already stored)" in err
    assert report_json(capsys, "--db", "copy.db") == report_json(capsys)


def test_import_stops_at_a_bad_line_naming_it_and_keeps_what_came_before(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _seed()
    lines = [json.dumps(line) for line in export_lines(capsys)]
    edited = json.loads(lines[2])
    edited["agent"] = "someone-else"  # the id no longer matches the fields
    Path("bad.jsonl").write_text("\n".join([*lines[:2], json.dumps(edited)]) + "\n",
                                 encoding="utf-8")
    assert main(["trust", "import", "bad.jsonl", "--db", "copy.db"]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:3: event_id" in err
    assert "does not match the event's fields" in err
    assert "the 2 event(s) before that line were imported" in err
    assert sum(r["accepted"] + r["discarded"] for r in report_json(capsys, "--db", "copy.db")
               if r["scope"] == "global") == 2


def test_import_of_a_retraction_for_an_unknown_event_says_it_was_not_kept(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = {"kind": "retraction", "event_id": "0" * 32, "reason": "x", "by": "a", "at": 1.0}
    Path("r.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert main(["trust", "import", "r.jsonl"]) == 1
    assert "1 retraction(s) name events that are neither stored nor in r.jsonl" in (
        capsys.readouterr().err)


def test_migrate_creates_a_new_store_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trust", "migrate"]) == 0
    assert "created at schema 2" in capsys.readouterr().out
    assert main(["trust", "migrate"]) == 0
    assert "already at schema 2" in capsys.readouterr().out
    with sqlite3.connect(".confgate/trust.db") as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    conn.close()


def test_migrate_refuses_a_newer_store_and_leaves_it_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Path(".confgate").mkdir()
    with sqlite3.connect(".confgate/trust.db") as conn:
        conn.execute("CREATE TABLE future (x)")
        conn.execute("PRAGMA user_version = 9")
    conn.close()
    before = Path(".confgate/trust.db").read_bytes()
    assert main(["trust", "migrate"]) == 2
    assert "schema version 9, newer than this pytest-confgate" in capsys.readouterr().err
    assert Path(".confgate/trust.db").read_bytes() == before


def test_import_reads_standard_input_with_a_dash(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    _seed()
    lines = "\n".join(json.dumps(line) for line in export_lines(capsys)) + "\n\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    assert main(["trust", "import", "-", "--db", "copy.db"]) == 0
    assert "3 new event(s) of 3 read" in capsys.readouterr().err
    assert report_json(capsys, "--db", "copy.db") == report_json(capsys)

"""The Python API of ``pytest_confgate.trust``: record, trust_score and triage on a real store."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_confgate.config.trust import TrustConfig
from pytest_confgate.trust import (
    SqliteTrustStore,
    TrustEvent,
    default_project,
    record,
    triage,
    trust_score,
)

NOW = 1_750_000_000.0


def _event(
    finding: str, accepted: bool, agent: str = "fd-arch", severity: str = "P2"
) -> TrustEvent:
    kind = "finding_accepted" if accepted else "finding_discarded"
    return TrustEvent(kind, agent, "svc", finding, severity, f"run-{finding}", NOW)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "trust.db"
    outcome = record(
        [_event("1", True, severity="P0"), _event("2", False), _event("3", False, agent="fd-x")],
        config=TrustConfig(),
        db=path,
    )
    assert (outcome.spooled, outcome.stored) == (False, 3)
    return path


def test_trust_score_reads_the_store_and_answers_again_from_the_cache(db: Path) -> None:
    config = TrustConfig()
    assert trust_score("fd-arch", "svc", config=config, db=db, now=NOW) == pytest.approx(0.8)
    assert trust_score("fd-arch", "svc", config=config, db=db, now=NOW + 1) == pytest.approx(0.8)
    assert trust_score("fd-new", "svc", config=config, db=db, now=NOW) == 1.0


def test_new_evidence_reaches_an_open_stores_trust_score(db: Path) -> None:
    config = TrustConfig()
    assert trust_score("fd-x", "svc", config=config, db=db, now=NOW) == 0.05
    record([_event("4", True, agent="fd-x")], config=config, db=db)
    assert trust_score("fd-x", "svc", config=config, db=db, now=NOW) == pytest.approx(0.5)


def test_triage_ranks_every_candidate_with_the_stores_trust(db: Path) -> None:
    rows = triage({"fd-x": 1.0, "fd-arch": 0.5, "fd-new": 0.3}, "svc",
                  config=TrustConfig(), db=db, now=NOW)
    assert [(row.agent, row.final_score) for row in rows] == [
        ("fd-arch", pytest.approx(0.4)), ("fd-new", 0.3), ("fd-x", pytest.approx(0.05)),
    ]


def test_triage_without_a_store_warns_once_and_keeps_the_base_scores(tmp_path: Path) -> None:
    warnings: list[str] = []
    rows = triage({"a": 0.2, "b": 0.9}, "svc", config=TrustConfig(),
                  db=tmp_path / "missing.db", now=NOW, warn=warnings.append)
    assert [(row.agent, row.trust) for row in rows] == [("b", 1.0), ("a", 1.0)]
    assert len(warnings) == 1
    assert "missing.db" in warnings[0]


def test_the_default_project_is_the_config_then_the_repository_then_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert default_project("configured", tmp_path) == "configured"
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/repo")
    assert default_project(None, tmp_path) == "octo/repo"
    monkeypatch.delenv("GITHUB_REPOSITORY")
    assert default_project(None, tmp_path) == tmp_path.name


def test_a_write_with_no_writable_folder_anywhere_reports_it_was_not_kept(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    store = SqliteTrustStore(blocker / "trust.db", TrustConfig(), fallback_spool=blocker / "spool")
    outcome = store.record([_event("1", True)])
    assert outcome.spooled
    assert outcome.spool is None

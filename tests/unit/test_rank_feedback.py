"""Feedback of ``confgate rank``: the weight rule (pure) and the ranking store (SQLite, and
PostgreSQL on a real throwaway server)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_confgate.config import ConfgateConfig
from pytest_confgate.exceptions import StoreError
from pytest_confgate.rank.feedback import FeedbackEvent, adjusted_weights
from pytest_confgate.rank.feedback_store import RankStore, open_rank_store
from pytest_confgate.rank.models import CATEGORIES, Evaluation
from pytest_confgate.rank.ranking import rank_solutions
from pytest_confgate.trust.server import Server

SEED = {"correctness": 0.40, "quality": 0.25, "efficiency": 0.15, "completeness": 0.10,
        "safety": 0.10}


def cats(*values: float) -> dict[str, float]:
    return dict(zip(CATEGORIES, values, strict=True))


def test_no_feedback_keeps_the_configured_weights() -> None:
    assert adjusted_weights(SEED, []) == pytest.approx(SEED)


def test_choosing_another_solution_moves_weight_toward_its_strong_categories() -> None:
    # taken - other = (-0.1, +0.4, 0, 0, -0.3) at rate 0.10: shifts (-0.01, +0.04, 0, 0, -0.03)
    taken, other = cats(0.8, 0.9, 0.5, 0.5, 0.7), cats(0.9, 0.5, 0.5, 0.5, 1.0)
    event = FeedbackEvent("chose_other", taken, other)
    assert adjusted_weights(SEED, [event]) == pytest.approx(
        {"correctness": 0.39, "quality": 0.29, "efficiency": 0.15, "completeness": 0.10,
         "safety": 0.07}, abs=1e-12)


def test_accepting_the_winner_reinforces_at_half_the_rate() -> None:
    event = FeedbackEvent("accepted_winner", cats(1, 1, 1, 1, 1), cats(1, 0.6, 1, 1, 1))
    weights = adjusted_weights(SEED, [event])
    # quality +0.05*0.4 = +0.02, sum 1.02 -> -0.005 spread over the five categories
    assert weights["quality"] == pytest.approx(0.27 - 0.004, abs=1e-12)
    assert sum(weights.values()) == pytest.approx(1.0, abs=1e-12)


def test_rejecting_all_changes_nothing() -> None:
    assert adjusted_weights(SEED, [FeedbackEvent("rejected_all")] * 5) == pytest.approx(SEED)


def test_weights_stop_at_half_and_one_and_a_half_of_the_configured_value() -> None:
    push = FeedbackEvent("chose_other", cats(0, 1, 0, 0, 0), cats(1, 0, 0, 0, 0))
    weights = adjusted_weights(SEED, [push] * 100)
    assert weights["quality"] == pytest.approx(0.375)
    assert weights["correctness"] >= 0.2 - 1e-12
    assert sum(weights.values()) == pytest.approx(1.0, abs=1e-12)


unit = st.floats(min_value=0, max_value=1, allow_nan=False)
events = st.lists(st.builds(
    FeedbackEvent, st.sampled_from(["chose_other", "accepted_winner", "rejected_all"]),
    st.builds(cats, unit, unit, unit, unit, unit), st.builds(cats, unit, unit, unit, unit, unit),
), max_size=30)


@given(events)
def test_adjusted_weights_always_sum_to_one_within_bounds(history: list[FeedbackEvent]) -> None:
    weights = adjusted_weights(SEED, history)
    assert sum(weights.values()) == pytest.approx(1.0, abs=1e-9)
    for name in CATEGORIES:
        assert 0.5 * SEED[name] - 1e-9 <= weights[name] <= 1.5 * SEED[name] + 1e-9


def ranking(*scores: tuple[str, float, tuple[float, ...]]) -> object:
    return rank_solutions([
        Evaluation(solution_id=sid, blocked=False, block_reasons=(), categories=cats(*c),
                   components={}, score=s, confidence=1.0, independent=("cross",))
        for sid, s, c in scores
    ])


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> RankStore:
    if request.param == "sqlite":
        return RankStore(tmp_path / ".confgate" / "rank.db")
    return RankStore(Server(request.getfixturevalue("postgres_url")))


def test_store_keeps_rankings_and_turns_feedback_into_events(store: RankStore) -> None:
    ranked = ranking(("a", 0.95, (1, 1, 1, 1, 1)), ("b", 0.7, (0.5, 0.9, 1, 1, 1)))
    store.save_ranking("r1", "2026-01-01T00:00:00+00:00", ranked, SEED)  # type: ignore[arg-type]
    store.record_feedback("r1", "chose_other", "b", "2026-01-01T00:01:00")
    (event,) = store.feedback_events()
    assert event.choice == "chose_other"
    assert event.taken == cats(0.5, 0.9, 1, 1, 1)
    assert event.other == cats(1, 1, 1, 1, 1)
    store.record_feedback("r1", "rejected_all", None, "2026-01-01T00:02:00")
    assert [e.choice for e in store.feedback_events()] == ["rejected_all"]  # replaced, not added


def test_feedback_for_an_unknown_ranking_or_solution_is_an_error_naming_it(
    store: RankStore,
) -> None:
    with pytest.raises(StoreError, match="no ranking 'nope'"):
        store.record_feedback("nope", "rejected_all", None, "t")
    ranked = ranking(("a", 0.95, (1, 1, 1, 1, 1)))
    store.save_ranking("r1", "t", ranked, SEED)  # type: ignore[arg-type]
    with pytest.raises(StoreError, match="--chose zz: not a solution of ranking r1"):
        store.record_feedback("r1", "chose_other", "zz", "t")


def test_accepting_a_winner_that_does_not_exist_is_refused(store: RankStore) -> None:
    close = ranking(("a", 0.5, (0.5,) * 5), ("b", 0.5, (0.5,) * 5))
    store.save_ranking("r2", "t", close, SEED)  # type: ignore[arg-type]
    with pytest.raises(StoreError, match="has no winner"):
        store.record_feedback("r2", "accepted_winner", None, "t")


def test_a_corrupt_store_is_an_error_and_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "rank.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="cannot be used"):
        RankStore(path).feedback_events()
    assert path.read_bytes().startswith(b"this is not a database")


def test_a_store_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "rank.db"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(StoreError, match="newer pytest-confgate"):
        RankStore(path).feedback_events()


def test_the_ranking_store_follows_trust_db_unless_rank_db_is_given(tmp_path: Path) -> None:
    default = open_rank_store(ConfgateConfig(), tmp_path)
    assert default.path == tmp_path / ".confgate" / "rank.db"
    url = "postgresql://ci@db.example:5432/team"
    shared = open_rank_store(
        ConfgateConfig.model_validate({"trust": {"db": url, "password_env": "TEAM_PW"}}),
        tmp_path,
    )
    assert shared.server == Server(url, "TEAM_PW", 10)
    assert shared.local_dir == tmp_path / ".confgate"  # the baseline cache stays local
    own = open_rank_store(ConfgateConfig.model_validate({"rank": {"db": "state/r.db"}}), tmp_path)
    assert own.path == tmp_path / "state" / "r.db"


def test_a_newer_ranking_schema_on_the_server_is_refused(postgres_url: str) -> None:
    store = RankStore(Server(postgres_url))
    assert store.feedback_events() == []
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("UPDATE confgate_rank_state SET schema_version = 7")
    with pytest.raises(StoreError, match="ranking schema 7"):
        store.feedback_events()

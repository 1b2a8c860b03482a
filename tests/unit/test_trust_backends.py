"""Both stores against the pure formula: the same event streams, the same numbers (issue 20).

Each example records a random stream (duplicates, several writes, retractions) into a fresh
SQLite file and a fresh PostgreSQL schema, then compares every row with ``formula.score_table``
over the events that count (first recording of each id, retracted ones left out).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pgcluster
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_confgate.config.trust import TrustConfig
from pytest_confgate.trust import open_store
from pytest_confgate.trust.events import TrustEvent
from pytest_confgate.trust.formula import TrustTable, buckets_from_outcomes, score_table
from pytest_confgate.trust.store import TrustStore

NOW = 1_750_000_000.0
DAY = 86400.0
_SCHEMAS = itertools.count()

events_strategy = st.lists(
    st.builds(
        TrustEvent,
        event=st.sampled_from(["finding_accepted", "finding_discarded"]),
        agent=st.sampled_from(["a", "b", "c"]),
        project=st.sampled_from(["x", "y"]),
        finding=st.text("abcdef", min_size=1, max_size=3),
        severity=st.sampled_from(["P0", "P1", "P2", "P3"]),
        run=st.sampled_from(["r1", "r2", "r3", "r4"]),
        at=st.floats(NOW - 200 * DAY, NOW + 5 * DAY),
    ),
    max_size=30,
)
configs = st.builds(
    TrustConfig,
    mode=st.sampled_from(["formula", "bayesian"]),
    new_agent=st.sampled_from(["neutral", "global", "prior"]),
    new_agent_prior=st.sampled_from([0.2, 0.5]),
    full_weight_reviews=st.sampled_from([1, 3, 20]),
)


def _expected(events: list[TrustEvent], retracted: set[str], config: TrustConfig) -> TrustTable:
    first: dict[str, TrustEvent] = {}
    for event in events:  # the first recording of an event id is the one kept
        first.setdefault(event.event_id, event)
    counted = [e.outcome() for e in first.values() if e.event_id not in retracted]
    return score_table(*buckets_from_outcomes(counted, NOW, config), config)


def _same(actual: TrustTable, expected: TrustTable) -> None:
    def shape(table: TrustTable) -> list[tuple[object, ...]]:
        return [(r.agent, r.project, r.reviews, r.accepted, r.discarded) for r in table.rows()]

    assert shape(actual) == shape(expected)
    for got, want in zip(actual.rows(), expected.rows(), strict=True):
        assert got.trust == pytest.approx(want.trust, rel=1e-9, abs=1e-12)
    assert actual.new_agent == pytest.approx(expected.new_agent, rel=1e-9)


def _fresh_schema(cluster: pgcluster.Cluster, database: str) -> str:
    schema = f"example_{next(_SCHEMAS)}"
    cluster.execute(f"CREATE SCHEMA {schema}", database)
    return f"{cluster.url(database)}?options=-csearch_path%3D{schema}"


@pytest.fixture(scope="module")
def database(postgres_cluster: pgcluster.Cluster) -> str:
    postgres_cluster.execute("CREATE DATABASE backends")
    return "backends"


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(events=events_strategy, config=configs, data=st.data())
def test_both_stores_give_the_formulas_numbers_for_the_same_events(
    postgres_cluster: pgcluster.Cluster, database: str,
    tmp_path_factory: pytest.TempPathFactory, events: list[TrustEvent], config: TrustConfig,
    data: st.DataObject,
) -> None:
    ids = sorted({event.event_id for event in events})
    retracted = set(data.draw(st.lists(st.sampled_from(ids), max_size=4)) if ids else [])
    split = data.draw(st.integers(0, len(events)))
    expected = _expected(events, retracted, config)
    stores: list[TrustStore] = [
        open_store(config, tmp_path_factory.mktemp("sqlite") / "trust.db"),
        open_store(config, _fresh_schema(postgres_cluster, database)),
    ]
    for store in stores:
        with store:
            for chunk in (events[:split], events[split:]):
                assert not store.record(chunk).spooled
            for event_id in sorted(retracted):
                store.retract(event_id, "test", "hypothesis", NOW)
            _same(store.table(NOW), expected)  # computed
            _same(store.table(NOW), expected)  # from the cache
            for agent, project in itertools.product("abz", "xw"):
                assert store.trust_score(agent, project, NOW) == pytest.approx(
                    expected.trust(agent, project), rel=1e-9, abs=1e-12
                )


def test_a_report_over_the_same_events_is_identical_across_stores(
    postgres_url: str, tmp_path: Path,
) -> None:
    config = TrustConfig()
    events = [TrustEvent("finding_accepted" if i % 3 else "finding_discarded", f"agent-{i % 4}",
                         f"p{i % 3}", f"F{i}", f"P{i % 4}", f"run-{i % 7}", NOW - i * DAY)
              for i in range(200)]
    tables = []
    for location in (str(tmp_path / "trust.db"), postgres_url):
        with open_store(config, location) as store:
            store.record(events)
            tables.append(store.table(NOW))
    _same(tables[1], tables[0])

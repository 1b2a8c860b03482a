"""The trust formula of SPEC 9, pinned with hand-computed cases (seed agent-trust F2)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_confgate.config.trust import TrustConfig
from pytest_confgate.trust.formula import (
    NEUTRAL,
    Outcome,
    TrustTable,
    blend,
    buckets_from_outcomes,
    decay_weight,
    score_table,
)

DAY = 86400.0
NOW = 1_750_000_000.0
DEFAULT = TrustConfig()


def table_of(
    outcomes: list[Outcome], config: TrustConfig = DEFAULT, now: float = NOW
) -> TrustTable:
    return score_table(*buckets_from_outcomes(outcomes, now, config), config)


def event(
    accepted: bool,
    severity: str = "P2",
    *,
    agent: str = "fd-arch",
    project: str = "svc",
    run: str = "r1",
    days_ago: float = 0.0,
) -> Outcome:
    return Outcome(agent, project, run, severity, accepted, NOW - days_ago * DAY)


@pytest.mark.parametrize(
    ("age", "half_life", "expected"),
    [(0.0, 30.0, 1.0), (30.0, 30.0, 0.5), (60.0, 30.0, 0.25), (90.0, 30.0, 0.125),
     (30.0, 10.0, 0.125), (15.0, 30.0, 2 ** -0.5), (-5.0, 30.0, 1.0)],
    ids=["today", "one-half-life", "two-half-lives", "three-half-lives", "short-half-life",
         "half-a-half-life", "future-event-counts-fully-not-more"],
)
def test_decay_weight_halves_every_half_life(age: float, half_life: float, expected: float) -> None:
    assert decay_weight(age, half_life) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        ([event(True, "P0"), event(False, "P2"), event(False, "P3")], 4 / 5.5),
        ([event(True, "P1"), event(False, "P1")], 0.5),
        ([event(True, "P0"), event(False, "P3")], 4 / 4.5),
        ([event(True, "P3"), event(False, "P0")], 0.5 / 4.5),
        ([event(True, "P2"), event(True, "P3"), event(False, "P1")], 1.5 / 3.5),
    ],
    ids=["P0-accepted-P2-P3-discarded", "equal-severities", "P0-against-P3",
         "P3-against-P0", "two-accepted-one-P1-discarded"],
)
def test_severity_weights_count_p0_4_p1_2_p2_1_p3_half(
    outcomes: list[Outcome], expected: float
) -> None:
    assert table_of(outcomes).trust("fd-arch", "svc") == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("days_ago", "expected"),
    [(30.0, 0.5 / 1.5), (60.0, 0.25 / 1.25), (0.0, 0.5)],
    ids=["accepted-30-days-ago-counts-half", "accepted-60-days-ago-counts-a-quarter",
         "same-day-counts-equally"],
)
def test_an_old_accepted_finding_counts_less_than_a_fresh_discarded_one(
    days_ago: float, expected: float
) -> None:
    outcomes = [event(True, days_ago=days_ago), event(False, days_ago=0.0)]
    assert table_of(outcomes).trust("fd-arch", "svc") == pytest.approx(expected, rel=1e-12)


def test_a_configured_half_life_changes_the_decay() -> None:
    config = TrustConfig(half_life_days=10.0)
    outcomes = [event(True, days_ago=30.0), event(False)]
    assert table_of(outcomes, config).trust("fd-arch", "svc") == pytest.approx(0.125 / 1.125)


def test_moving_now_forward_does_not_change_a_formula_score() -> None:
    outcomes = [event(True, "P0", days_ago=45.0), event(False, "P2", days_ago=3.0)]
    early = table_of(outcomes, now=NOW).trust("fd-arch", "svc")
    late = table_of(outcomes, now=NOW + 400 * DAY).trust("fd-arch", "svc")
    assert late == pytest.approx(early, rel=1e-9)


def _runs(project: str, accepted: bool, count: int) -> list[Outcome]:
    return [event(accepted, project=project, run=f"{project}-{i}") for i in range(count)]


@pytest.mark.parametrize(
    ("runs", "expected"),
    [(5, 0.25 * 1.0 + 0.75 * 0.5), (10, 0.5 * 1.0 + 0.5 * 0.5), (20, 1.0), (25, 1.0)],
    ids=["5-runs-weight-a-quarter", "10-runs-weight-a-half", "20-runs-full-weight",
         "25-runs-capped-at-full-weight"],
)
def test_project_and_global_scores_blend_by_distinct_review_runs(
    runs: int, expected: float
) -> None:
    # svc: every finding accepted (1.0); other: every finding discarded; global is 0.5.
    outcomes = _runs("svc", True, runs) + _runs("other", False, runs)
    table = table_of(outcomes)
    assert table.trust("fd-arch", "svc") == pytest.approx(expected, rel=1e-12)
    assert table.pairs[("fd-arch", "svc")].reviews == runs


def test_many_findings_in_one_run_count_as_one_review() -> None:
    outcomes = [event(True, run="only-run") for _ in range(3)] + _runs("other", False, 3)
    outcomes = [Outcome(o.agent, o.project, o.run, o.severity, o.accepted, o.at + i)
                for i, o in enumerate(outcomes)]
    table = table_of(outcomes)
    assert table.pairs[("fd-arch", "svc")].reviews == 1
    # global: 3 accepted of 6; w = 1/20
    assert table.trust("fd-arch", "svc") == pytest.approx(0.05 * 1.0 + 0.95 * 0.5)


def test_the_full_weight_review_count_is_configurable() -> None:
    outcomes = _runs("svc", True, 5) + _runs("other", False, 5)
    table = table_of(outcomes, TrustConfig(full_weight_reviews=5))
    assert table.trust("fd-arch", "svc") == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("floor", "expected"), [(0.05, 0.05), (0.2, 0.2), (0.0, 0.0)],
    ids=["default-floor", "configured-floor", "zero-floor"],
)
def test_an_agent_whose_findings_are_all_discarded_stays_at_the_floor(
    floor: float, expected: float
) -> None:
    outcomes = [event(False, "P0", run=f"r{i}") for i in range(30)]
    assert table_of(outcomes, TrustConfig(floor=floor)).trust("fd-arch", "svc") == expected


def test_an_agent_without_any_evidence_is_neutral() -> None:
    table = table_of([event(True, agent="someone-else")])
    assert table.trust("fd-arch", "svc") == NEUTRAL == 1.0
    assert table_of([]).trust("fd-arch", "svc") == 1.0


def test_a_new_project_falls_back_to_the_agents_global_trust() -> None:
    outcomes = [event(True, "P1", project="a"), event(False, "P2", project="b", run="r2")]
    table = table_of(outcomes)
    assert table.trust("fd-arch", "brand-new") == pytest.approx(2 / 3)
    assert table.agents["fd-arch"].trust == pytest.approx(2 / 3)
    assert table.agents["fd-arch"].reviews == 2


def test_global_rows_count_the_agents_events_and_runs_over_every_project() -> None:
    outcomes = [event(True, project="a", run="r1"), event(False, project="b", run="r1"),
                event(False, project="b", run="r2", severity="P0")]
    row = table_of(outcomes).agents["fd-arch"]
    assert (row.accepted, row.discarded, row.reviews) == (1, 2, 2)


@pytest.mark.parametrize(
    ("project", "global_score", "reviews", "expected"),
    [(None, None, 0, None), (None, 0.4, 0, 0.4), (0.8, None, 3, 0.8), (0.8, 0.4, 4, 0.48)],
    ids=["nothing", "only-global", "only-project", "both-4-of-20-runs"],
)
def test_blend_uses_whatever_scores_exist(
    project: float | None, global_score: float | None, reviews: int, expected: float | None
) -> None:
    assert blend(project, global_score, reviews, 20) == pytest.approx(expected)


def test_bayesian_mode_shrinks_the_project_toward_the_smoothed_global_score() -> None:
    config = TrustConfig(mode="bayesian", prior_strength=5.0)
    outcomes = [event(True, project="svc"), event(False, project="other", run="r2")]
    table = table_of(outcomes, config)
    global_score = (1 + 1) / (2 + 2)  # Beta(1, 1): (A + 1) / (T + 2)
    assert table.agents["fd-arch"].trust == pytest.approx(global_score)
    assert table.trust("fd-arch", "svc") == pytest.approx((1 + 5 * global_score) / (1 + 5))
    assert table.trust("nobody", "svc") == 1.0
    assert table.mode == "bayesian"


PRIOR = TrustConfig(new_agent="prior", new_agent_prior=0.5)


def _established(precision_runs: int = 40) -> list[Outcome]:
    """An established agent: 9 of 10 findings accepted, one finding per review run."""
    return [
        event(i % 10 != 0, agent="fd-precise", run=f"p{i}") for i in range(precision_runs)
    ]


def test_the_seeds_neutral_start_lets_one_lucky_finding_outrank_an_established_agent() -> None:
    outcomes = [*_established(), event(True, agent="fd-new", run="n1")]
    table = table_of(outcomes)
    assert table.trust("fd-precise", "svc") == pytest.approx(0.9)
    assert table.trust("fd-new", "svc") == 1.0  # the trade-off `new_agent` exists for
    assert table.trust("fd-unseen", "svc") == 1.0
    assert table.new_agent == NEUTRAL


def test_a_prior_start_keeps_a_new_agent_below_an_established_precise_one() -> None:
    outcomes = [*_established(), event(True, agent="fd-new", run="n1")]
    table = table_of(outcomes, PRIOR)
    assert table.trust("fd-unseen", "svc") == 0.5
    # global: w = 1/20 of its own 1.0, the rest the prior; the project blends in the same way.
    new_global = 0.05 * 1.0 + 0.95 * 0.5
    assert table.agents["fd-new"].trust == pytest.approx(new_global)
    assert table.trust("fd-new", "svc") == pytest.approx(0.05 * 1.0 + 0.95 * new_global)
    # 40 review runs are past full_weight_reviews: the established agent keeps its own 0.9.
    assert table.trust("fd-precise", "svc") == pytest.approx(0.9)
    assert table.trust("fd-new", "svc") < table.trust("fd-precise", "svc")


def test_a_global_start_is_the_teams_pooled_precision() -> None:
    outcomes = [*_established(10), event(False, agent="fd-weak", run="w1")]
    table = table_of(outcomes, TrustConfig(new_agent="global"))
    pooled = 9 / 11  # every agent's weighted accepted / weighted total
    assert table.trust("fd-unseen", "svc") == pytest.approx(pooled)
    assert table.new_agent == pytest.approx(pooled)
    # fd-weak's own 0.0 counts 1/20; fd-precise (10 runs) is half its own 0.9, half pooled.
    assert table.agents["fd-weak"].trust == pytest.approx(0.95 * pooled)
    assert table.agents["fd-precise"].trust == pytest.approx(0.5 * 0.9 + 0.5 * pooled)


def test_a_global_start_without_any_evidence_is_neutral() -> None:
    assert table_of([], TrustConfig(new_agent="global")).trust("fd-unseen", "svc") == 1.0


def test_a_prior_below_the_floor_is_raised_to_the_floor() -> None:
    config = TrustConfig(new_agent="prior", new_agent_prior=0.0, floor=0.05)
    assert table_of([], config).trust("fd-unseen", "svc") == 0.05


def test_bayesian_mode_centres_its_prior_on_the_new_agent_start() -> None:
    config = TrustConfig(mode="bayesian", new_agent="prior", new_agent_prior=0.2)
    table = table_of([event(True)], config)
    assert table.agents["fd-arch"].trust == pytest.approx((1 + 2 * 0.2) / (1 + 2))
    assert table.trust("fd-unseen", "svc") == 0.2


severities = st.sampled_from(["P0", "P1", "P2", "P3"])
outcome_lists = st.lists(
    st.builds(
        Outcome,
        agent=st.sampled_from(["a", "b"]),
        project=st.sampled_from(["x", "y"]),
        run=st.sampled_from(["r1", "r2", "r3"]),
        severity=severities,
        accepted=st.booleans(),
        at=st.floats(NOW - 400 * DAY, NOW + DAY),
    ),
    max_size=30,
)


@given(
    outcomes=outcome_lists,
    mode=st.sampled_from(["formula", "bayesian"]),
    new_agent=st.sampled_from(["neutral", "global", "prior"]),
    prior=st.floats(0.0, 1.0),
)
def test_trust_always_stays_between_the_floor_and_one(
    outcomes: list[Outcome], mode: str, new_agent: str, prior: float
) -> None:
    config = TrustConfig(mode=mode, new_agent=new_agent, new_agent_prior=prior)  # type: ignore[arg-type]
    table = table_of(outcomes, config)
    for agent in ("a", "b", "c"):
        for project in ("x", "y", "z"):
            assert config.floor <= table.trust(agent, project) <= 1.0


@given(outcomes=outcome_lists, data=st.data())
def test_the_order_events_arrive_in_does_not_change_any_score(
    outcomes: list[Outcome], data: st.DataObject
) -> None:
    shuffled = data.draw(st.permutations(outcomes))
    first, second = table_of(outcomes), table_of(shuffled)
    assert first.pairs.keys() == second.pairs.keys()
    for key, row in first.pairs.items():
        assert second.pairs[key].trust == pytest.approx(row.trust, rel=1e-9, abs=1e-12)

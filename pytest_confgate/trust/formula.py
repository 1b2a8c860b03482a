"""Trust from review outcomes: pure, no clock, files or environment.

``mode: formula`` (the default), per agent and project::

    score   = sum(w_sev * d * accepted) / sum(w_sev * d)      d = 0.5 ** (age_days / half_life)
    global  = the same over every project of the agent
    w       = min(1, project_reviews / full_weight_reviews)  (distinct review runs)
    trust   = max(floor, w * score + (1 - w) * global)       1.0 with no evidence at all

``mode: bayesian`` shrinks the project's precision toward the agent's Beta(1, 1)-smoothed
global precision by ``prior_strength`` weighted findings, with the same decayed weights::

    global  = (A_g + 1) / (T_g + 2)        score = (A_p + m * global) / (T_p + m)

``new_agent`` (issue 15) says where an agent without evidence starts: ``neutral`` 1.0 (the
seed), ``global`` the team's pooled precision (every agent's weighted accepted / weighted
total), ``prior`` a fixed ``new_agent_prior``. With ``global``/``prior`` an agent's own global
score blends in from that start like a project blends into its global score
(``w = min(1, agent_reviews / full_weight_reviews)``; in ``bayesian`` mode the start is the
mean of the Beta prior instead of 0.5), so one lucky finding does not lift a new agent above
an established precise one.

The store sums decay per (agent, project, outcome, severity) in SQL (``Bucket``); small lists
of events go through ``buckets_from_outcomes``, so both paths end in ``score_table``.
Retracted events never reach either path.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pytest_confgate.config.trust import TrustConfig

SEVERITIES = ("P0", "P1", "P2", "P3")
NEUTRAL = 1.0
SECONDS_PER_DAY = 86400.0


def decay_weight(age_days: float, half_life_days: float) -> float:
    """``0.5 ** (age / half_life)``: 30 days old counts half, 60 days a quarter.

    An event dated after ``now`` (clocks of writers disagree) counts fully, never more.
    """
    return float(0.5 ** (max(age_days, 0.0) / half_life_days))


def age_days(at: float, now: float) -> float:
    """Days from ``at`` to ``now`` (both POSIX seconds); the store's SQL mirrors this exactly."""
    return (now - min(at, now)) / SECONDS_PER_DAY


@dataclass(frozen=True)
class Outcome:
    """One recorded finding outcome as the formula sees it (time as POSIX seconds)."""

    agent: str
    project: str
    run: str
    severity: str
    accepted: bool
    at: float


@dataclass(frozen=True)
class Bucket:
    """Events of one (agent, project, outcome, severity): how many, and their summed decay."""

    agent: str
    project: str
    accepted: bool
    severity: str
    count: int
    decay_sum: float


@dataclass(frozen=True)
class TrustRow:
    """One line of the report: a pair's trust (``project`` set) or an agent's global trust."""

    agent: str
    project: str | None
    trust: float
    reviews: int
    accepted: int
    discarded: int


@dataclass(frozen=True)
class TrustTable:
    """Every score at once, so triage reads the store once."""

    mode: str
    pairs: Mapping[tuple[str, str], TrustRow]
    agents: Mapping[str, TrustRow]
    new_agent: float = NEUTRAL
    """The trust of an agent without any evidence (``trust.new_agent``)."""

    def trust(self, agent: str, project: str) -> float:
        """The pair's trust; a new project gets the agent's global trust; a new agent
        ``new_agent`` (1.0 by default)."""
        row = self.pairs.get((agent, project)) or self.agents.get(agent)
        return row.trust if row is not None else self.new_agent

    def rows(self) -> list[TrustRow]:
        """Project rows by project then agent, then the global rows by agent."""
        pairs = sorted(self.pairs.values(), key=lambda r: (r.project or "", r.agent))
        return pairs + sorted(self.agents.values(), key=lambda r: r.agent)


@dataclass
class _Sums:
    weighted_accepted: float = 0.0
    weighted_total: float = 0.0
    accepted: int = 0
    discarded: int = 0

    def add(self, other: _Sums) -> None:
        self.weighted_accepted += other.weighted_accepted
        self.weighted_total += other.weighted_total
        self.accepted += other.accepted
        self.discarded += other.discarded


def buckets_from_outcomes(
    outcomes: Iterable[Outcome], now: float, config: TrustConfig
) -> tuple[list[Bucket], dict[tuple[str, str], int], dict[str, int]]:
    """Buckets plus distinct review runs per pair and per agent, from a list of events."""
    counts: dict[tuple[str, str, bool, str], list[float]] = defaultdict(lambda: [0, 0.0])
    pair_runs: dict[tuple[str, str], set[str]] = defaultdict(set)
    agent_runs: dict[str, set[str]] = defaultdict(set)
    for item in outcomes:
        entry = counts[(item.agent, item.project, item.accepted, item.severity)]
        entry[0] += 1
        entry[1] += decay_weight(age_days(item.at, now), config.half_life_days)
        pair_runs[(item.agent, item.project)].add(item.run)
        agent_runs[item.agent].add(item.run)
    buckets = [
        Bucket(agent, project, accepted, severity, int(count), decay)
        for (agent, project, accepted, severity), (count, decay) in counts.items()
    ]
    return (
        buckets,
        {pair: len(runs) for pair, runs in pair_runs.items()},
        {agent: len(runs) for agent, runs in agent_runs.items()},
    )


def score_table(
    buckets: Iterable[Bucket],
    pair_reviews: Mapping[tuple[str, str], int],
    agent_reviews: Mapping[str, int],
    config: TrustConfig,
) -> TrustTable:
    """Every pair's and every agent's trust from the summed evidence.

    Buckets are added in one fixed order, whatever order a database returned them in.
    """
    weights = config.severity_weights.model_dump()
    pairs: dict[tuple[str, str], _Sums] = defaultdict(_Sums)
    for bucket in sorted(buckets, key=lambda b: (b.agent, b.project, b.accepted, b.severity)):
        sums = pairs[(bucket.agent, bucket.project)]
        weighted = weights[bucket.severity] * bucket.decay_sum
        sums.weighted_total += weighted
        if bucket.accepted:
            sums.weighted_accepted += weighted
            sums.accepted += bucket.count
        else:
            sums.discarded += bucket.count
    agents: dict[str, _Sums] = defaultdict(_Sums)
    pooled = _Sums()
    for (agent, _), sums in pairs.items():
        agents[agent].add(sums)
        pooled.add(sums)
    start = new_agent_start(pooled.weighted_accepted, pooled.weighted_total, config)
    global_scores = {
        agent: _global_score(sums, agent_reviews.get(agent, 0), start, config)
        for agent, sums in agents.items()
    }
    pair_rows = {
        (agent, project): _pair_row(
            agent, project, sums, pair_reviews.get((agent, project), 0),
            global_scores[agent], config,
        )
        for (agent, project), sums in pairs.items()
    }
    agent_rows = {
        agent: TrustRow(
            agent, None, _bounded(global_scores[agent], config),
            agent_reviews.get(agent, 0), sums.accepted, sums.discarded,
        )
        for agent, sums in agents.items()
    }
    return TrustTable(config.mode, pair_rows, agent_rows, _bounded(start, config))


def new_agent_start(
    weighted_accepted: float, weighted_total: float, config: TrustConfig
) -> float | None:
    """Where an agent without evidence starts (``None``: neutral, 1.0 once bounded).

    ``global`` pools every agent's weighted findings (nothing recorded yet: neutral).
    """
    if config.new_agent == "prior":
        return config.new_agent_prior
    if config.new_agent == "global" and weighted_total > 0.0:
        return weighted_accepted / weighted_total
    return None


def _global_score(
    sums: _Sums, reviews: int, start: float | None, config: TrustConfig
) -> float | None:
    if sums.weighted_total <= 0.0:
        return None
    if config.mode == "bayesian":
        centre = 0.5 if start is None else start  # Beta(1, 1) unless a start is configured
        return (sums.weighted_accepted + 2.0 * centre) / (sums.weighted_total + 2.0)
    own = sums.weighted_accepted / sums.weighted_total
    if start is None:
        return own
    return blend(own, start, reviews, config.full_weight_reviews)


def _pair_row(
    agent: str,
    project: str,
    sums: _Sums,
    reviews: int,
    global_score: float | None,
    config: TrustConfig,
) -> TrustRow:
    score = project_trust(
        sums.weighted_accepted, sums.weighted_total, reviews, global_score, config
    )
    return TrustRow(agent, project, score, reviews, sums.accepted, sums.discarded)


def project_trust(
    weighted_accepted: float,
    weighted_total: float,
    reviews: int,
    global_score: float | None,
    config: TrustConfig,
) -> float:
    """One pair's trust from its weighted sums, review count and the agent's global score."""
    if config.mode == "bayesian":
        if global_score is None:
            return _bounded(None, config)
        prior = config.prior_strength
        shrunk = (weighted_accepted + prior * global_score) / (weighted_total + prior)
        return _bounded(shrunk, config)
    project = weighted_accepted / weighted_total if weighted_total > 0.0 else None
    return _bounded(blend(project, global_score, reviews, config.full_weight_reviews), config)


def blend(
    project: float | None, global_score: float | None, reviews: int, full_weight_reviews: int
) -> float | None:
    """``w * project + (1 - w) * global`` with ``w = min(1, reviews / full_weight_reviews)``."""
    if project is None:
        return global_score
    if global_score is None:
        return project
    weight = min(1.0, reviews / full_weight_reviews)
    return weight * project + (1.0 - weight) * global_score


def _bounded(score: float | None, config: TrustConfig) -> float:
    """Neutral without evidence; otherwise within [floor, 1]: trust never excludes an agent.

    Given to 15 significant digits: two databases summing the same decayed weights in another
    order differ in the last bit or two, and the same evidence should read the same everywhere.
    """
    if score is None:
        return NEUTRAL
    return float(f"{max(config.floor, min(1.0, score)):.15g}")

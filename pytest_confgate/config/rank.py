"""The ``rank:`` section: category weights and auto-acceptance."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator, model_validator

from pytest_confgate.config.base import AgentName, ConfigModel, EnvName, Fraction, Text
from pytest_confgate.config.trust import mask_db_password, server_url

CATEGORIES = ("correctness", "quality", "efficiency", "completeness", "safety")
"""The five categories, in the order."""


class CategoryWeights(ConfigModel):
    """How much each category counts in a solution's overall score; the weights sum to 1."""

    correctness: Fraction = 0.40
    quality: Fraction = 0.25
    efficiency: Fraction = 0.15
    completeness: Fraction = 0.10
    safety: Fraction = 0.10

    @model_validator(mode="after")
    def _sum_to_one(self) -> CategoryWeights:
        total = sum(getattr(self, name) for name in CATEGORIES)
        if abs(total - 1.0) > 0.001:
            raise ValueError(
                f"the five category weights must sum to 1.0 (+-0.001), got {total:g}; the "
                "defaults are correctness 0.40, quality 0.25, efficiency 0.15, "
                "completeness 0.10, safety 0.10"
            )
        return self


class CategoryMinimums(ConfigModel):
    """The per-category floors a winner must meet to be accepted automatically."""

    correctness: Fraction = 0.90
    quality: Fraction = 0.70
    efficiency: Fraction = 0.60
    completeness: Fraction = 0.80
    safety: Fraction = 0.95


class AutoAcceptConfig(ConfigModel):
    """``should_auto_accept``'s thresholds; off unless enabled explicitly."""

    enabled: bool = False
    min_score: Fraction = 0.85
    min_confidence: Fraction = 0.80
    category_minimums: CategoryMinimums = Field(default_factory=CategoryMinimums)
    min_score_gap: Fraction = 0.10
    allow_single: bool = False
    """Accept the only unblocked candidate of a ranking (nothing was compared with it)."""


class RankTimeouts(ConfigModel):
    """Seconds each stage-1 check of one candidate may take before it counts as failed."""

    build_s: Annotated[float, Field(gt=0, le=3600)] = 120.0
    tests_s: Annotated[float, Field(gt=0, le=7200)] = 300.0
    type_check_s: Annotated[float, Field(gt=0, le=3600)] = 60.0


class RankConfig(ConfigModel):
    """``confgate rank``: how candidates are checked, weighed and (optionally) accepted."""

    weights: CategoryWeights = Field(default_factory=CategoryWeights)
    auto_accept: AutoAcceptConfig = Field(default_factory=AutoAcceptConfig)
    evaluator_agent: AgentName | None = None
    """Stage 3: the agent that compares candidates pairwise; no LLM assessment without it."""
    type_check: bool = False
    """Run mypy in stage 1 (new errors against the baseline block)."""
    test_command: Annotated[list[Text], Field(min_length=1)] | None = None
    """The command that runs a candidate's tests (default: ``python -m pytest``)."""
    timeouts: RankTimeouts = Field(default_factory=RankTimeouts)
    db: Text | None = None
    """Rankings and feedback: a path (SQLite) or a ``postgresql://`` URL; default ``rank.db``
    beside ``trust.db``, or the same database when ``trust.db`` is a URL."""
    password_env: EnvName | None = None
    """PostgreSQL only: the variable holding the password (default: ``trust.password_env``)."""

    _masked = model_validator(mode="before")(mask_db_password)

    @field_validator("db")
    @classmethod
    def _a_path_or_a_server(cls, value: str | None) -> str | None:
        if value is not None:
            server_url(value)
        return value

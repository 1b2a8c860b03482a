"""The ``trust:`` section (SPEC 9, seed agent-trust): the store and the trust formula's knobs."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from pytest_confgate.config.base import ConfigModel, Fraction, Text

Positive = Annotated[float, Field(gt=0.0, allow_inf_nan=False)]


class SeverityWeights(ConfigModel):
    """How much one finding of each severity counts (seed: P0 4x, P1 2x, P2 1x, P3 0.5x)."""

    P0: Positive = 4.0
    P1: Positive = 2.0
    P2: Positive = 1.0
    P3: Positive = 0.5


class TrustConfig(ConfigModel):
    """Where review outcomes are stored and how they become a per-agent multiplier."""

    db: Text = ".confgate/trust.db"
    """The SQLite store, relative to the working directory."""
    mode: Literal["formula", "bayesian"] = "formula"
    half_life_days: Annotated[float, Field(gt=0.0, le=3650.0, allow_inf_nan=False)] = 30.0
    full_weight_reviews: Annotated[int, Field(ge=1, le=100_000)] = 20
    """Distinct review runs after which the project score alone counts."""
    floor: Fraction = 0.05
    low_trust: Fraction = 0.3
    """Agents below this are flagged in ``confgate trust report``."""
    severity_weights: SeverityWeights = Field(default_factory=SeverityWeights)
    prior_strength: Annotated[float, Field(ge=0.0, le=1_000_000.0, allow_inf_nan=False)] = 5.0
    """``mode: bayesian`` only: weighted findings of global evidence a project score starts at."""
    busy_timeout_ms: Annotated[int, Field(ge=1, le=60_000)] = 2000
    """How long one write waits for another writer's lock before retrying."""
    write_attempts: Annotated[int, Field(ge=1, le=10)] = 3
    """Attempts per write; after the last one the event goes to the spool, never lost."""

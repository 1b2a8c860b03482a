"""``gate:``: the tier, its risk rules, the metrics and the policy that decides."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import Field, field_validator

from pytest_confgate.config.base import AgentName, ConfigModel, Count, Glob, Text
from pytest_confgate.config.metrics import (
    DEFAULT_HARD_LIMITS,
    HARD_CONDITIONS,
    ConfidenceConfig,
    MetricConfig,
    checked_metrics,
    default_metrics,
)
from pytest_confgate.models import RiskTier


class TierPolicy(ConfigModel):
    """What one risk tier asks for; unset fields keep the tier's default."""

    blocking: bool | None = None
    signoffs: Count | None = None
    auto_advance: bool | None = None


TIER_DEFAULTS: dict[str, tuple[bool, int, bool]] = {
    # tier: (evidence blocks, sign-offs needed, may auto-advance)
    "T0": (False, 0, True),
    "T1": (True, 0, True),
    "T2": (True, 1, True),
    "T3": (True, 2, False),
}


class SignoffConfig(ConfigModel):
    """Who may sign off; an empty list accepts any login except the author."""

    approvers: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)


class Waiver(ConfigModel):
    """Excuse one named finding, with a written reason, until a date (then it stops)."""

    rule: Text
    paths: list[Glob] = Field(default_factory=lambda: ["**"])
    reason: Annotated[str, Field(min_length=3)]
    expires: Annotated[dt.date, Field(strict=False)]
    """A YAML date, or the same written as text (``'2025-06-30'``)."""


class RiskRule(ConfigModel):
    """Changed files matching ``paths`` put the change in at least ``tier``."""

    paths: Annotated[list[Glob], Field(min_length=1)]
    tier: RiskTier


class PolicyConfig(ConfigModel):
    """``gate.policy``: tier overrides, sign-off rules and gate-wide hard conditions."""

    tiers: dict[RiskTier, TierPolicy] = Field(default_factory=dict)
    signoff: SignoffConfig = Field(default_factory=SignoffConfig)
    max_failed_tests: Count | None = None
    max_high_severity: Count | None = None
    max_lint_violations: Count | None = None
    waivers: list[Waiver] = Field(default_factory=list)

    def tier(self, tier: str) -> tuple[bool, int, bool]:
        """(blocking, sign-offs, auto-advance) for ``tier``, overrides applied."""
        blocking, signoffs, advance = TIER_DEFAULTS[tier]
        override = self.tiers.get(tier)  # type: ignore[call-overload]
        if override is None:
            return blocking, signoffs, advance
        return (
            blocking if override.blocking is None else override.blocking,
            signoffs if override.signoffs is None else override.signoffs,
            advance if override.auto_advance is None else override.auto_advance,
        )


class GateConfig(ConfigModel):
    """``gate``: what ``pytest --confgate`` evaluates and how strictly."""

    agent: AgentName | None = None
    """Who authored the change: an ``llm_judge`` evaluator must be someone else."""
    risk_tier: RiskTier = "T1"
    risk_rules: list[RiskRule] = Field(default_factory=list)
    protected_paths: list[Glob] = Field(default_factory=list)
    """More paths that, like the gate's machinery, put a change at T2 or higher (issue 14)."""
    metrics: list[MetricConfig] = Field(default_factory=default_metrics)
    confidence: ConfidenceConfig = Field(default_factory=ConfidenceConfig)
    policy: PolicyConfig = Field(default_factory=PolicyConfig)

    @field_validator("metrics")
    @classmethod
    def _check_metrics(cls, metrics: list[MetricConfig]) -> list[MetricConfig]:
        # A field validator (not a model one) so the error names ``gate.metrics`` and its line.
        return checked_metrics(metrics)

    def metric(self, metric_type: str) -> MetricConfig | None:
        """The configured entry for ``metric_type``, if any."""
        return next((m for m in self.metrics if m.type == metric_type), None)

    def hard_limit(self, name: str) -> int | None:
        """The effective hard condition ``name``: the stricter of metric and policy level."""
        metric = self.metric(HARD_CONDITIONS[name])
        values: list[int] = [
            v for v in (getattr(metric, name, None), getattr(self.policy, name)) if v is not None
        ]
        if values:
            return min(values)
        return DEFAULT_HARD_LIMITS.get(name)

    def hard_limits(self) -> dict[str, int | None]:
        """Every hard condition's effective limit (None: the condition is off)."""
        return {name: self.hard_limit(name) for name in HARD_CONDITIONS}

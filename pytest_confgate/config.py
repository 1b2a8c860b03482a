"""The configuration schema (SPEC 3): one pydantic model tree, unknown keys rejected.

Reading files and turning validation errors into ``FILE:LINE: key.path: message`` lines lives
in ``config_loader``; this module only says what a valid configuration is.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pytest_confgate.models import RiskTier, Severity

Fraction = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0)]
Text = Annotated[str, Field(min_length=1)]
Glob = Annotated[str, Field(min_length=1, max_length=500)]
Scope = Literal["all", "changed"]
"""``changed``: only what the change touched since ``base_ref`` counts (SPEC 4, issue 3)."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _MetricConfig(_Model):
    weight: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] = 1.0
    advisory: bool = False
    """Reported but never blocking (``required: [...]`` is the checklist's own option)."""
    min: Fraction | None = None


class PassRateMetricConfig(_MetricConfig):
    """``test_pass_rate``: every test passes (``max_failed_tests``) and enough ran."""

    type: Literal["test_pass_rate"]
    max_failed_tests: Count | None = None
    min_tests: Count = 1


class CoverageMetricConfig(_MetricConfig):
    """``test_coverage``: coverage.py in the pytest process."""

    type: Literal["test_coverage"]
    branch: bool = False
    scope: Scope = "all"
    paths: dict[Glob, Fraction] = Field(default_factory=dict)
    """Per-path floors: ``{"src/core/**": 0.9}``; each failing path is named."""


class _ToolMetricConfig(_MetricConfig):
    command: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)] | None = None
    timeout_s: Annotated[float, Field(gt=0, le=3600)] = 300.0
    scope: Scope = "all"


class LintMetricConfig(_ToolMetricConfig):
    """``lint_score``: ruff with the project's own configuration."""

    type: Literal["lint_score"]
    max_lint_violations: Count | None = None


class SecurityMetricConfig(_ToolMetricConfig):
    """``security_score``: bandit; findings below both floors do not count."""

    type: Literal["security_score"]
    min_severity: Severity = "LOW"
    min_confidence: Severity = "LOW"
    max_high_severity: Count | None = None


class ChecklistMetricConfig(_MetricConfig):
    """``checklist_completion``: Markdown task lists in the PR body or a file."""

    type: Literal["checklist_completion"]
    source: Text = "pr_body"
    """``pr_body`` (the GitHub event file) or a path to a Markdown file."""
    required: list[Text] = Field(default_factory=list)
    """Items that must be checked; matched after NFKC normalization."""


class RequirementMetricConfig(_MetricConfig):
    """``requirement_coverage``: requirements with a passing linked test / all."""

    type: Literal["requirement_coverage"]
    requirements: Text
    """A YAML file (``[{id, title}]``) or Markdown with IDs in headings."""


MetricConfig = Annotated[
    PassRateMetricConfig
    | CoverageMetricConfig
    | LintMetricConfig
    | SecurityMetricConfig
    | ChecklistMetricConfig
    | RequirementMetricConfig,
    Field(discriminator="type"),
]

HARD_CONDITIONS: dict[str, str] = {
    "max_failed_tests": "test_pass_rate",
    "max_high_severity": "security_score",
    "max_lint_violations": "lint_score",
}
"""Which metric each hard condition belongs to (SPEC 6)."""

DEFAULT_HARD_LIMITS: dict[str, int] = {"max_failed_tests": 0, "max_high_severity": 0}
"""Default T1: every test passes, no HIGH-severity finding (SPEC 6)."""


def default_metrics() -> list[MetricConfig]:
    """The gate with no configuration: tests, coverage, lint and security, all required."""
    return [
        PassRateMetricConfig(type="test_pass_rate"),
        CoverageMetricConfig(type="test_coverage"),
        LintMetricConfig(type="lint_score"),
        SecurityMetricConfig(type="security_score"),
    ]


class TierPolicy(_Model):
    """What one risk tier asks for; unset fields keep the tier's default."""

    blocking: bool | None = None
    signoffs: Count | None = None
    auto_advance: bool | None = None


TIER_DEFAULTS: dict[str, tuple[bool, int, bool]] = {
    # tier: (evidence blocks, sign-offs needed, may auto-advance) -- SPEC 6
    "T0": (False, 0, True),
    "T1": (True, 0, True),
    "T2": (True, 1, True),
    "T3": (True, 2, False),
}


class SignoffConfig(_Model):
    """Who may sign off; an empty list accepts any login except the author."""

    approvers: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)


class Waiver(_Model):
    """Excuse one named finding, with a written reason, until a date (then it stops)."""

    rule: Text
    paths: list[Glob] = Field(default_factory=lambda: ["**"])
    reason: Annotated[str, Field(min_length=3)]
    expires: dt.date


class RiskRule(_Model):
    """Changed files matching ``paths`` put the change in at least ``tier``."""

    paths: Annotated[list[Glob], Field(min_length=1)]
    tier: RiskTier


class PolicyConfig(_Model):
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


class GateConfig(_Model):
    """``gate``: what ``pytest --confgate`` evaluates and how strictly."""

    risk_tier: RiskTier = "T1"
    risk_rules: list[RiskRule] = Field(default_factory=list)
    metrics: list[MetricConfig] = Field(default_factory=default_metrics)
    policy: PolicyConfig = Field(default_factory=PolicyConfig)

    @field_validator("metrics")
    @classmethod
    def _check_metrics(cls, metrics: list[MetricConfig]) -> list[MetricConfig]:
        # A field validator (not a model one) so the error names ``gate.metrics`` and its line.
        seen: dict[str, int] = {}
        for index, metric in enumerate(metrics):
            if metric.type in seen:
                raise ValueError(
                    f"metric type {metric.type!r} is listed twice (entries {seen[metric.type]} "
                    f"and {index}); keep one entry"
                )
            seen[metric.type] = index
        if metrics and not any(m.weight > 0 for m in metrics):
            raise ValueError("metric weights are all zero; give at least one a weight > 0")
        return metrics

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


class ConfgateConfig(_Model):
    """The whole file: ``confgate.yml``, ``confgate.yaml`` or ``[tool.confgate]``."""

    version: Literal[1] = 1
    project: Annotated[str, Field(min_length=1)] | None = None
    source: list[Annotated[str, Field(min_length=1)]] | None = None
    base_ref: Text | None = None
    """What ``scope: changed`` and ``risk_rules`` compare against (else ``GITHUB_BASE_REF``)."""
    gate: GateConfig = Field(default_factory=GateConfig)

"""The configuration schema (SPEC 3): one pydantic model tree, unknown keys rejected.

This module is the root of the tree (``ConfgateConfig``, ``gate:`` and its policy) and the
one place to import any configuration model from; each section lives in its own module:
``config_agents`` (``agents:``), ``config_metrics`` (``gate.metrics``, ``gate.confidence``),
``config_tasks`` (``tasks:``), ``config_rank`` (``rank:``), ``config_trust`` (``trust:``), all
on the shared types of ``config_types``. Reading files and turning validation errors into
``FILE:LINE: key.path: message`` lines lives in ``config_loader``.
"""

from __future__ import annotations

import datetime as dt
import difflib
from typing import Annotated, Literal

from pydantic import Field, field_validator

from pytest_confgate.config_agents import (
    AgentConfig,
    AnthropicAgentConfig,
    CommandAgentConfig,
    LlmAgentConfig,
    OpenAIAgentConfig,
)
from pytest_confgate.config_metrics import (
    DEFAULT_HARD_LIMITS,
    DEFAULT_JUDGE_CRITERIA,
    HARD_CONDITIONS,
    ChecklistMetricConfig,
    ConfidenceConfig,
    CoverageMetricConfig,
    HybridWeights,
    LintMetricConfig,
    LlmJudgeMetricConfig,
    LlmSettings,
    MetricConfig,
    PassRateMetricConfig,
    RequirementMetricConfig,
    SecurityMetricConfig,
    checked_metrics,
    default_metrics,
)
from pytest_confgate.config_rank import RankConfig
from pytest_confgate.config_tasks import (
    ConfidenceLoopConfig,
    KeyPath,
    OverlaysConfig,
    PairedWorkflowConfig,
    TaskConfig,
    task_problems,
)
from pytest_confgate.config_trust import TrustConfig
from pytest_confgate.config_types import AgentName, ConfigModel, Count, Glob, Text
from pytest_confgate.models import RiskTier

__all__ = [
    "DEFAULT_HARD_LIMITS",
    "DEFAULT_JUDGE_CRITERIA",
    "HARD_CONDITIONS",
    "JUDGE_NEEDS_EVALUATOR",
    "JUDGE_NOT_AUTHOR",
    "TIER_DEFAULTS",
    "AgentConfig",
    "AnthropicAgentConfig",
    "ChecklistMetricConfig",
    "CommandAgentConfig",
    "ConfgateConfig",
    "ConfidenceConfig",
    "ConfidenceLoopConfig",
    "CoverageMetricConfig",
    "GateConfig",
    "HybridWeights",
    "KeyPath",
    "LintMetricConfig",
    "LlmAgentConfig",
    "LlmJudgeMetricConfig",
    "LlmSettings",
    "MetricConfig",
    "OpenAIAgentConfig",
    "OverlaysConfig",
    "PairedWorkflowConfig",
    "PassRateMetricConfig",
    "PolicyConfig",
    "RankConfig",
    "RequirementMetricConfig",
    "RiskRule",
    "SecurityMetricConfig",
    "SignoffConfig",
    "TaskConfig",
    "TierPolicy",
    "TrustConfig",
    "Waiver",
    "cross_check",
    "default_metrics",
]


class TierPolicy(ConfigModel):
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


class SignoffConfig(ConfigModel):
    """Who may sign off; an empty list accepts any login except the author."""

    approvers: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)


class Waiver(ConfigModel):
    """Excuse one named finding, with a written reason, until a date (then it stops)."""

    rule: Text
    paths: list[Glob] = Field(default_factory=lambda: ["**"])
    reason: Annotated[str, Field(min_length=3)]
    expires: dt.date


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


class ConfgateConfig(ConfigModel):
    """The whole file: ``confgate.yml``, ``confgate.yaml`` or ``[tool.confgate]``."""

    version: Literal[1] = 1
    project: Annotated[str, Field(min_length=1)] | None = None
    source: list[Annotated[str, Field(min_length=1)]] | None = None
    base_ref: Text | None = None
    """What ``scope: changed`` and ``risk_rules`` compare against (else ``GITHUB_BASE_REF``)."""
    agents: dict[AgentName, AgentConfig] = Field(default_factory=dict)
    gate: GateConfig = Field(default_factory=GateConfig)
    tasks: dict[AgentName, TaskConfig] = Field(default_factory=dict)
    rank: RankConfig = Field(default_factory=RankConfig)
    trust: TrustConfig = Field(default_factory=TrustConfig)


JUDGE_NEEDS_EVALUATOR = "llm_judge metric requires evaluator_agent to be set."
JUDGE_NOT_AUTHOR = "llm_judge evaluator_agent must differ from task agent."


def cross_check(config: ConfgateConfig) -> list[tuple[KeyPath, str]]:
    """Rules that span keys (SPEC 3): agents that exist, judges that are not the author.

    Returned as (key path, message) so the loader can name the line; the two ``llm_judge``
    messages are the seeds' exact words.
    """
    problems: list[tuple[KeyPath, str]] = []
    known = sorted(config.agents)

    def agent(path: KeyPath, name: str | None) -> None:
        if name is not None and name not in config.agents:
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            defined = ", ".join(known) if known else "none"
            problems.append(
                (path, f"agent {name!r} is not defined under agents{hint}; defined: {defined}")
            )

    def metrics(path: KeyPath, items: list[MetricConfig], author: str | None) -> None:
        for index, metric in enumerate(items):
            if not isinstance(metric, LlmJudgeMetricConfig):
                continue
            at = (*path, index)
            if metric.evaluator_agent is None:
                problems.append((at, JUDGE_NEEDS_EVALUATOR))
            elif metric.evaluator_agent == author:
                problems.append(((*at, "evaluator_agent"), JUDGE_NOT_AUTHOR))
            else:
                agent((*at, "evaluator_agent"), metric.evaluator_agent)

    def confidence(path: KeyPath, block: ConfidenceConfig, author: str | None) -> None:
        if block.method == "formula":
            agent((*path, "evaluator_agent"), block.evaluator_agent)
        elif block.evaluator_agent is None:
            problems.append(
                ((*path, "evaluator_agent"), f"method {block.method!r} needs evaluator_agent: "
                 "the agent that gives the LLM's confidence (never the author)")
            )
        elif block.evaluator_agent == author:
            problems.append(((*path, "evaluator_agent"), JUDGE_NOT_AUTHOR))
        else:
            agent((*path, "evaluator_agent"), block.evaluator_agent)

    agent(("gate", "agent"), config.gate.agent)
    agent(("rank", "evaluator_agent"), config.rank.evaluator_agent)
    for index, item in enumerate(config.gate.metrics):
        if isinstance(item, RequirementMetricConfig) and item.requirements is None:
            problems.append(
                (("gate", "metrics", index), "requirement_coverage needs `requirements: PATH`, "
                 "a YAML file of {id, title} or Markdown with IDs in its headings")
            )
    metrics(("gate", "metrics"), config.gate.metrics, config.gate.agent)
    confidence(("gate", "confidence"), config.gate.confidence, config.gate.agent)
    for name, task in config.tasks.items():
        at: KeyPath = ("tasks", name)
        agent((*at, "agent"), task.agent)
        loop = task.overlays.confidence_loop
        metrics((*at, "overlays", "confidence_loop", "metrics"), loop.metrics, task.agent)
        confidence((*at, "overlays", "confidence_loop"), loop, task.agent)
        pair = task.overlays.paired_workflow
        agent((*at, "overlays", "paired_workflow", "driver_agent"), pair.driver_agent)
        agent((*at, "overlays", "paired_workflow", "challenger_agent"), pair.challenger_agent)
    problems.extend(task_problems(config.tasks))
    return problems

"""The configuration schema (SPEC 3): one pydantic model tree, unknown keys rejected.

Reading files and turning validation errors into ``FILE:LINE: key.path: message`` lines lives
in ``config_loader``; this module only says what a valid configuration is.
"""

from __future__ import annotations

import datetime as dt
import difflib
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from pytest_confgate.config_rank import RankConfig
from pytest_confgate.config_trust import TrustConfig
from pytest_confgate.config_types import (
    AgentName,
    Condition_,
    ConfigModel,
    Count,
    EnvName,
    Fraction,
    Glob,
    Milliseconds,
    Scope,
    Text,
)
from pytest_confgate.models import RiskTier, Severity


class _AgentConfig(ConfigModel):
    timeout_ms: Milliseconds = 30_000
    """One call's limit; a call past it is a failure of that call, never a long wait."""


class CommandAgentConfig(_AgentConfig):
    """An agent that is a program: the prompt on stdin, the answer on stdout."""

    provider: Literal["command"]
    command: Annotated[list[Text], Field(min_length=1)]
    timeout_ms: Milliseconds = 600_000
    max_output_bytes: Annotated[int, Field(gt=0, le=64 * 1024 * 1024)] = 1024 * 1024


class LlmAgentConfig(_AgentConfig):
    model: Text
    base_url: Text | None = None
    max_tokens: Annotated[int, Field(gt=0, le=200_000)] = 300
    max_retries: Annotated[int, Field(ge=0, le=10)] = 2
    deadline_ms: Milliseconds | None = None
    """All attempts together; default three times ``timeout_ms``."""


class OpenAIAgentConfig(LlmAgentConfig):
    """Any OpenAI-compatible server (OpenAI, Azure with ``api_version``, vLLM, Ollama)."""

    provider: Literal["openai"]
    temperature: Annotated[float, Field(ge=0.0, le=2.0, allow_inf_nan=False)] = 0.1
    api_key_env: EnvName = "OPENAI_API_KEY"
    api_version: Text | None = None
    """Set for Azure OpenAI: ``base_url`` is then the Azure endpoint."""


class AnthropicAgentConfig(LlmAgentConfig):
    """Anthropic's Messages API, or a server speaking it at ``base_url``."""

    provider: Literal["anthropic"]
    temperature: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] | None = None
    """Sent only when set: recent Claude models refuse any value but their default."""
    api_key_env: EnvName = "ANTHROPIC_API_KEY"


AgentConfig = Annotated[
    CommandAgentConfig | OpenAIAgentConfig | AnthropicAgentConfig,
    Field(discriminator="provider"),
]


class _MetricConfig(ConfigModel):
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
    requirements: Text | None = None
    """A YAML file (``[{id, title}]``) or Markdown with IDs in headings."""


DEFAULT_JUDGE_CRITERIA = (
    "The change does what the task asks, completely.",
    "The change is correct: no bugs, unhandled cases or regressions are visible.",
    "The change is tested, and the tests would catch its breakage.",
    "The change is safe and maintainable: no security problem, clear code.",
)


class LlmJudgeMetricConfig(_MetricConfig):
    """An independent evaluator agent scores the change (SPEC 4); never the task's author."""

    type: Literal["llm_judge"]
    evaluator_agent: AgentName | None = None
    """Required (checked with the seed's exact message by ``cross_check``)."""
    criteria: Annotated[list[Text], Field(min_length=1, max_length=50)] = Field(
        default_factory=lambda: list(DEFAULT_JUDGE_CRITERIA)
    )
    repeats: Annotated[int, Field(ge=1, le=9)] = 1
    task: Text | None = None
    """What the change is for; default: the pull request's title and body, else the commits."""
    max_diff_chars: Annotated[int, Field(ge=1000, le=1_000_000)] = 60_000


MetricConfig = Annotated[
    PassRateMetricConfig
    | CoverageMetricConfig
    | LintMetricConfig
    | SecurityMetricConfig
    | ChecklistMetricConfig
    | RequirementMetricConfig
    | LlmJudgeMetricConfig,
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


def _checked_metrics(metrics: list[MetricConfig]) -> list[MetricConfig]:
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


def default_metrics() -> list[MetricConfig]:
    """The gate with no configuration: tests, coverage, lint and security, all required."""
    return [
        PassRateMetricConfig(type="test_pass_rate"),
        CoverageMetricConfig(type="test_coverage"),
        LintMetricConfig(type="lint_score"),
        SecurityMetricConfig(type="security_score"),
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


class HybridWeights(ConfigModel):
    """``method: hybrid`` mixes the formula and the LLM's score; the weights sum to 1."""

    formula_weight: Fraction = 0.6
    llm_weight: Fraction = 0.4

    @model_validator(mode="after")
    def _sum_to_one(self) -> HybridWeights:
        total = self.formula_weight + self.llm_weight
        if abs(total - 1.0) > 0.001:
            raise ValueError(
                f"formula_weight + llm_weight must be 1.0 (+-0.001), got {total:g}; "
                "for example formula_weight: 0.6, llm_weight: 0.4"
            )
        return self


class LlmSettings(ConfigModel):
    """Per-use overrides of the evaluator agent's settings for the ``llm`` confidence call."""

    timeout_ms: Milliseconds | None = 2000
    max_tokens: Annotated[int, Field(gt=0, le=200_000)] | None = None
    temperature: Annotated[float, Field(ge=0.0, le=2.0, allow_inf_nan=False)] | None = None


class ConfidenceConfig(ConfigModel):
    """``gate.confidence`` (SPEC 5): an advisory score, off by default, never a verdict."""

    enabled: bool = False
    method: Literal["formula", "llm", "hybrid"] = "formula"
    mode: Literal["composite", "raw"] = "composite"
    threshold: Fraction = 0.8
    hybrid: HybridWeights = Field(default_factory=HybridWeights)
    evaluator_agent: AgentName | None = None
    """Who gives the ``llm`` score; required for ``llm`` and ``hybrid``, never the author."""
    prompt: Text | None = None
    """A template file with ``{task}``, ``{diff}`` and ``{metrics}``; default: built in."""
    llm_settings: LlmSettings = Field(default_factory=LlmSettings)


class ConfidenceLoopConfig(ConfidenceConfig):
    """``tasks.<name>.overlays.confidence_loop`` (seed 000): iterate until confident."""

    max_iterations: Annotated[int, Field(ge=1, le=100)] = 3
    metrics: list[MetricConfig] = Field(default_factory=default_metrics)
    exit_conditions: list[Condition_] = Field(default_factory=list)

    @field_validator("metrics")
    @classmethod
    def _check_metrics(cls, metrics: list[MetricConfig]) -> list[MetricConfig]:
        return _checked_metrics(metrics)


class PairedWorkflowConfig(ConfigModel):
    """``tasks.<name>.overlays.paired_workflow`` (seed 001): a driver and a challenger."""

    enabled: bool = False
    driver_agent: AgentName | None = None
    challenger_agent: AgentName | None = None
    role_switch: Literal["session", "subtask", "checkpoint"] = "session"
    checkpoints: list[Annotated[int, Field(ge=1)]] = Field(default_factory=list)
    max_iterations: Annotated[int, Field(ge=1, le=100)] = 5
    exit_conditions: list[Condition_] = Field(default_factory=list)

    @model_validator(mode="after")
    def _checkpoints_for_checkpoint(self) -> PairedWorkflowConfig:
        if self.role_switch == "checkpoint" and not self.checkpoints:
            raise ValueError(
                "role_switch: checkpoint needs checkpoints: the iterations before which the "
                "roles swap, e.g. checkpoints: [3]"
            )
        return self


class OverlaysConfig(ConfigModel):
    confidence_loop: ConfidenceLoopConfig = Field(default_factory=ConfidenceLoopConfig)
    paired_workflow: PairedWorkflowConfig = Field(default_factory=PairedWorkflowConfig)


class TaskConfig(ConfigModel):
    """One agent task for ``confgate run`` (SPEC 8)."""

    agent: AgentName | None = None
    prompt: Text | None = None
    artifact: Text | None = None
    subtasks: list[Text] = Field(default_factory=list)
    hil: bool = False
    """Human in the loop: a loop that runs out of iterations escalates (exit status 3)."""
    overlays: OverlaysConfig = Field(default_factory=OverlaysConfig)
    review: bool | None = None
    """A formal review task (seed 001's reviewer independence); default: "review" in its name."""

    @field_validator("subtasks")
    @classmethod
    def _unique_subtasks(cls, subtasks: list[str]) -> list[str]:
        twice = sorted({s for s in subtasks if subtasks.count(s) > 1})
        if twice:
            raise ValueError(f"subtasks listed twice: {', '.join(twice)}; keep one of each")
        return subtasks


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
        return _checked_metrics(metrics)

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
KeyPath = tuple[str | int, ...]


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
    problems.extend(_task_problems(config))
    return problems


def _task_problems(config: ConfgateConfig) -> list[tuple[KeyPath, str]]:
    """SPEC 8's load-time rules for ``tasks``: who runs, who challenges, exit conditions."""
    from pytest_confgate.conditions import compile_condition
    from pytest_confgate.exceptions import ConditionError

    problems: list[tuple[KeyPath, str]] = []
    names = list(config.tasks)
    for position, (name, task) in enumerate(config.tasks.items()):
        at: KeyPath = ("tasks", name)
        loop, pair = task.overlays.confidence_loop, task.overlays.paired_workflow
        blocks = [("confidence_loop", loop.exit_conditions)]
        blocks.append(("paired_workflow", pair.exit_conditions))
        for block, conditions in blocks:
            for index, text in enumerate(conditions):
                try:
                    compile_condition(text)
                except ConditionError as exc:
                    problems.append(((*at, "overlays", block, "exit_conditions", index), str(exc)))
        if not pair.enabled:
            if task.agent is None:
                problems.append(((*at, "agent"), "a task needs an agent: a name under agents"))
            continue
        problems.extend(_pair_problems(config, names[position + 1 :], at, task))
    return problems


def _pair_problems(
    config: ConfgateConfig, later: list[str], at: KeyPath, task: TaskConfig
) -> list[tuple[KeyPath, str]]:
    pair = task.overlays.paired_workflow
    where: KeyPath = (*at, "overlays", "paired_workflow")
    driver = pair.driver_agent or task.agent
    if driver is None:
        return [((*where, "driver_agent"), "the paired workflow needs driver_agent (or the "
                 "task's agent) to be set")]
    if pair.challenger_agent is None:
        return [((*where, "challenger_agent"), "the paired workflow needs challenger_agent: "
                 "the agent that critiques the driver's output")]
    if pair.challenger_agent == driver:
        return [((*where, "challenger_agent"), f"challenger_agent {driver!r} is also the "
                 "driver; a challenger must be a different agent")]
    for name in later:
        other = config.tasks[name]
        review = other.review if other.review is not None else "review" in name.lower()
        if review and other.agent == pair.challenger_agent:
            return [((*where, "challenger_agent"), f"challenger {other.agent!r} is the agent of "
                     f"the later review task {name!r}; the formal reviewer must be independent "
                     "of the pair: choose another challenger or reviewer")]
    return []

"""``gate.metrics`` and ``gate.confidence``: what is measured and the advisory score."""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import Field, PrivateAttr, field_validator, model_validator

from pytest_confgate.config.agents import AgentConfig, LlmAgentConfig
from pytest_confgate.config.base import (
    AgentName,
    ConfigModel,
    Count,
    Fraction,
    Glob,
    Milliseconds,
    Scope,
    Text,
)
from pytest_confgate.models import Severity


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

    @field_validator("paths")
    @classmethod
    def _no_option_names(cls, paths: dict[str, float]) -> dict[str, float]:
        """``paths: {min: 0.9}`` was read as a floor for a file named ``min``: an option
        name there is the metric's own floor written one level too deep."""
        options = sorted(set(paths) & set(cls.model_fields))
        if options:
            name = options[0]
            raise ValueError(
                f"{name!r} is an option of test_coverage, not a path: `paths:` maps globs to "
                f"floors ({{\"src/core/**\": 0.9}}); for the metric's own floor write "
                f"`{name}: {paths[name]}` beside `paths:`, or `{name}/**` for a folder of "
                "that name"
            )
        return paths


class _ToolMetricConfig(_MetricConfig):
    command: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)] | None = None
    timeout_s: Annotated[float, Field(gt=0, le=3600)] = 300.0
    max_output_bytes: Annotated[int, Field(ge=1024, le=4 * 1024**3)] = 64 * 1024**2
    """What the tool may print on stdout (64 MiB, ``processes.DEFAULT_MAX_OUTPUT_BYTES``); more
    kills it and makes the metric an error naming the cap."""
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


NO_REQUIREMENTS = (
    "requirement_coverage needs `requirements: PATH`, a YAML file of {id, title} or Markdown "
    "with IDs in its headings"
)


class RequirementMetricConfig(_MetricConfig):
    """``requirement_coverage``: requirements with a passing linked test / all."""

    type: Literal["requirement_coverage"]
    requirements: Text | None = None
    """A YAML file (``[{id, title}]``) or Markdown with IDs in headings."""


SuppressionDirective = Literal[
    "noqa",
    "nosec",
    "pragma: no cover",
    "pragma: no branch",
    "type: ignore",
    "nosemgrep",
    "pylint: disable",
    "pyright: ignore",
]
SUPPRESSION_DIRECTIVES: tuple[SuppressionDirective, ...] = get_args(SuppressionDirective)
DEFAULT_SUPPRESSIONS: tuple[SuppressionDirective, ...] = SUPPRESSION_DIRECTIVES[:6]
"""Watched unless configured: the six that hide what ruff, bandit, coverage, mypy and semgrep
report (pylint and pyright comments can be added to the list)."""


class IntegrityMetricConfig(_MetricConfig):
    """``test_integrity`` (issue 15): tests deleted, skipped or weakened, suppressions added.

    On by default whenever a base is known (``effective_metrics``); ``enabled: false`` turns
    it off, ``advisory: true`` reports without raising the tier or blocking.
    """

    type: Literal["test_integrity"]
    enabled: bool = True
    max_test_tampering: Count | None = None
    """A hard limit on findings: set, more findings fail the gate instead of raising the tier."""
    raise_tier_to: Literal["T2", "T3"] = "T2"
    """The tier any finding raises the change to when there is no ``max_test_tampering``."""
    exclude: list[Glob] = Field(default_factory=list)
    """Files whose findings do not count (vendored or generated code)."""
    suppressions: list[SuppressionDirective] = Field(
        default_factory=lambda: list(DEFAULT_SUPPRESSIONS)
    )
    """Which added suppression comments count as findings."""
    replay: bool = True
    """After the main run, run the base's tests the change can affect with the base's
    machinery against the head's code (the differential run), and each newly skip- or
    xfail-marked test without its mark."""
    replay_timeout_s: Annotated[float, Field(gt=0, le=3600)] = 600.0
    """How long each of those pytest processes may take; past it the metric is an error."""


DEFAULT_JUDGE_CRITERIA = (
    "The change does what the task asks, completely.",
    "The change is correct: no bugs, unhandled cases or regressions are visible.",
    "The change is tested, and the tests would catch its breakage.",
    "The change is safe and maintainable: no security problem, clear code.",
)


class LlmJudgeMetricConfig(_MetricConfig):
    """An independent evaluator agent scores the change; never the task's author."""

    type: Literal["llm_judge"]
    evaluator_agent: AgentName | None = None
    """Required (checked with the exact message by ``cross_check``)."""
    criteria: Annotated[list[Text], Field(min_length=1, max_length=50)] = Field(
        default_factory=lambda: list(DEFAULT_JUDGE_CRITERIA)
    )
    repeats: Annotated[int, Field(ge=1, le=9)] = 1
    task: Text | None = None
    """What the change is for; default: the pull request's title and body, else the commits."""
    max_diff_chars: Annotated[int, Field(ge=1000, le=1_000_000)] = 60_000
    allow_truncated_diff: bool = False
    """A diff longer than ``max_diff_chars`` is judged from its start only, so the judge is
    then advisory (and the tier rises to T2); true lets such a partial judgement block."""
    ablation: bool = True
    """Ask once more without the comments, strings and names the change added, and once
    without the task its author wrote (issues 27, 34)."""
    ablation_tolerance: Fraction = 0.1
    """How far the score may fall without the change's prose before ``injection_suspected``."""


MetricConfig = Annotated[
    PassRateMetricConfig
    | CoverageMetricConfig
    | LintMetricConfig
    | SecurityMetricConfig
    | ChecklistMetricConfig
    | RequirementMetricConfig
    | LlmJudgeMetricConfig
    | IntegrityMetricConfig,
    Field(discriminator="type"),
]

HARD_CONDITIONS: dict[str, str] = {
    "max_failed_tests": "test_pass_rate",
    "max_high_severity": "security_score",
    "max_lint_violations": "lint_score",
}
"""Which metric each hard condition belongs to."""

DEFAULT_HARD_LIMITS: dict[str, int] = {"max_failed_tests": 0, "max_high_severity": 0}
"""Default T1: every test passes, no HIGH-severity finding."""


def breaks_limit(count: int, limit: int | None) -> bool:
    """Whether ``count`` fails a hard condition whose effective limit is ``limit``: over it
    fails, and a condition without a limit never does. The gate's policy and ``confgate
    rank``'s blocking both decide with this, so the two agree on what blocks."""
    return limit is not None and count > limit


def metric_key(metric: MetricConfig) -> str:
    """What makes an entry unique: its type, and for ``test_coverage`` also its scope.

    A project figure and a patch figure (``scope: all`` and ``scope: changed``) are two
    measurements with their own thresholds, as Codecov's project and patch statuses are.
    """
    if isinstance(metric, CoverageMetricConfig):
        return f"{metric.type}[{metric.scope}]"
    return metric.type


def checked_metrics(metrics: list[MetricConfig]) -> list[MetricConfig]:
    seen: dict[str, int] = {}
    for index, metric in enumerate(metrics):
        key = metric_key(metric)
        if key in seen:
            also = " with the same scope" if key != metric.type else ""
            raise ValueError(
                f"metric type {metric.type!r} is listed twice{also} (entries {seen[key]} "
                f"and {index}); keep one entry"
            )
        seen[key] = index
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


def effective_metrics(metrics: list[MetricConfig], *, base_known: bool) -> list[MetricConfig]:
    """The metrics one run measures: ``test_integrity`` joins whenever a base is known and
    the configuration does not list it; an entry with ``enabled: false`` leaves."""
    listed = next((m for m in metrics if isinstance(m, IntegrityMetricConfig)), None)
    if listed is not None and not listed.enabled:
        return [m for m in metrics if m is not listed]
    if listed is None and base_known:
        return [*metrics, IntegrityMetricConfig(type="test_integrity")]
    return metrics


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
    model: Text | None = None
    """Another model of the evaluator's provider for this call (``llm_settings.model``)."""

    def applied_to(self, agent: AgentConfig) -> AgentConfig:
        """``agent`` with these settings for the confidence call; a program keeps its own."""
        if not isinstance(agent, LlmAgentConfig):
            return agent
        changes = {k: v for k, v in self.model_dump().items() if v is not None}
        return agent.model_copy(update=changes)
    temperature: Annotated[float, Field(ge=0.0, le=2.0, allow_inf_nan=False)] | None = None


class ConfidenceConfig(ConfigModel):
    """``gate.confidence``: an advisory score, off by default, never a verdict."""

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
    _seed_spelling: tuple[str, ...] = PrivateAttr(default=())

    @property
    def seed_spelling(self) -> tuple[str, ...]:
        """Which ``confidence_calculation`` key names this block was written with
        (``config.seed_spelling``)."""
        return self._seed_spelling

    def note_seed_spelling(self, notes: list[str]) -> None:
        """Set once by the loader, right after validation; never part of the data."""
        self._seed_spelling = tuple(notes)

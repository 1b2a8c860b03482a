"""Frozen data that flows through the pipeline: evidence in, report out.

collect -> ``EvalMetric`` and ``TestOutcomes``; policy -> ``Verdict``; report -> ``GateReport``.
Every stage reads these and builds new ones; nothing mutates them (SPEC 4, 6, 10).
"""

from __future__ import annotations

import math
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SCHEMA_VERSION = "1.0"

RiskTier = Literal["T0", "T1", "T2", "T3"]
Severity = Literal["LOW", "MEDIUM", "HIGH"]
SEVERITY_ORDER: dict[str, int] = {"LOW": 1, "MEDIUM": 2, "HIGH": 3}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class MetricStatus(str, Enum):
    """Whether a metric's value can be trusted (SPEC 4)."""

    OK = "ok"
    UNAVAILABLE = "unavailable"
    ERROR = "error"


class Decision(str, Enum):
    """The gate's verdict (SPEC 6)."""

    PASS = "pass"  # noqa: S105  # nosec B105 -- a verdict, not a password
    FAIL = "fail"
    NEEDS_SIGNOFF = "needs_signoff"


class Finding(_Frozen):
    """One lint violation or security finding, located in the repository."""

    tool: str
    rule: str
    file: str
    line: int = Field(ge=0)
    column: int = Field(default=0, ge=0)
    message: str
    severity: str | None = None
    confidence: str | None = None
    url: str | None = None


class EvalMetric(_Frozen):
    """One piece of evidence: a value in [0, 1], or ``None`` when it could not be measured.

    ``EvalMetric(type="lint_score", value=0.8, weight=1.0)``. ``status`` defaults to ``ok``
    when there is a value and ``unavailable`` when there is none; ``reason`` says why a metric
    is not ``ok``. ``threshold`` is the configured floor (``min``) shown beside the value.
    """

    type: str = Field(min_length=1)
    value: float | None = None
    weight: float = Field(default=1.0, ge=0.0)
    status: MetricStatus | None = None
    threshold: float | None = None
    reason: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)

    @field_validator("value", "threshold")
    @classmethod
    def _fraction(cls, value: float | None) -> float | None:
        if value is not None and not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise ValueError(f"must be a finite number in [0, 1], got {value!r}")
        return value

    @field_validator("weight")
    @classmethod
    def _finite_weight(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError(f"must be finite, got {value!r}")
        return value

    @model_validator(mode="after")
    def _default_status(self) -> EvalMetric:
        if self.status is None:
            status = MetricStatus.OK if self.value is not None else MetricStatus.UNAVAILABLE
            object.__setattr__(self, "status", status)
        elif self.status is MetricStatus.OK and self.value is None:
            raise ValueError("a metric with status 'ok' needs a value")
        return self

    @property
    def available(self) -> bool:
        """True when the value is trustworthy evidence."""
        return self.status is MetricStatus.OK and self.value is not None


class TestOutcomes(_Frozen):
    """Counts of the test run, counted the way pytest's own summary line counts them."""

    __test__ = False  # not a test class, whatever pytest thinks of the name

    passed: int = Field(default=0, ge=0)
    failed: int = Field(default=0, ge=0)
    errors: int = Field(default=0, ge=0)
    skipped: int = Field(default=0, ge=0)
    xfailed: int = Field(default=0, ge=0)
    xpassed: int = Field(default=0, ge=0)
    duration_s: float = Field(default=0.0, ge=0.0)

    @property
    def ran(self) -> int:
        """Tests that produced a verdict (skips and expected failures excluded)."""
        return self.passed + self.xpassed + self.failed + self.errors


class Condition(_Frozen):
    """One check the policy made, passed or not, for the report's audit trail."""

    metric: str
    name: str
    passed: bool
    message: str
    value: float | None = None
    threshold: float | None = None
    blocking: bool = True


class Signoffs(_Frozen):
    """Human sign-offs the tier asks for and those that were found."""

    required: int = Field(default=0, ge=0)
    approvers: list[str] = Field(default_factory=list)
    """``policy.signoff.approvers`` of the trusted config, so a later step can recount."""
    approved_by: list[str] = Field(default_factory=list)
    ignored: list[dict[str, str]] = Field(default_factory=list)
    source: str | None = None


class Verdict(_Frozen):
    """What the policy decided and why, most important reason first."""

    decision: Decision
    reasons: list[str]
    conditions: list[Condition]
    auto_advance: bool = False


class ConfidenceResult(_Frozen):
    """The advisory score (SPEC 5): reported beside the verdict, never part of it."""

    enabled: bool = True
    method: Literal["formula", "llm", "hybrid"]
    mode: Literal["composite", "raw"]
    score: float = Field(ge=0.0, le=1.0)
    scores: dict[str, float]
    """Each metric's own value (unavailable counts as 0.0), by metric type."""
    threshold: float = Field(ge=0.0, le=1.0)
    advisory: str | None = None
    """``"confidence threshold met"`` or None; an advice, never a promotion."""
    breakdown: dict[str, Any] = Field(default_factory=dict)


class GateReport(_Frozen):
    """The JSON report (SPEC 10): everything a person or a later step needs to trust a verdict."""

    schema_version: str = SCHEMA_VERSION
    tool_version: str
    project: str
    generated_at: str
    config_file: str | None = None
    risk_tier: RiskTier
    risk_reason: str
    change: dict[str, Any] | None = None
    decision: Decision
    reasons: list[str]
    auto_advance: bool
    metrics: list[EvalMetric]
    conditions: list[Condition]
    waivers: list[dict[str, Any]] = Field(default_factory=list)
    tests: TestOutcomes
    confidence: ConfidenceResult | None = None
    signoffs: Signoffs

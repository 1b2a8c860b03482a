"""Frozen data that flows through the pipeline: evidence in, report out.

collect -> ``ChangeSet``, ``EvalMetric`` and ``TestOutcomes``; policy -> ``Verdict``;
report -> ``GateReport``. Every stage reads these and builds new ones; nothing mutates them
. Pure modules import their data from here and nothing else of the pipeline.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SCHEMA_VERSION = "1.0"

RiskTier = Literal["T0", "T1", "T2", "T3"]
Severity = Literal["LOW", "MEDIUM", "HIGH"]
SEVERITY_ORDER: dict[str, int] = {"LOW": 1, "MEDIUM": 2, "HIGH": 3}
ChangeStatus = Literal["added", "modified", "deleted", "renamed", "copied"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class MetricStatus(str, Enum):
    """Whether a metric's value can be trusted."""

    OK = "ok"
    UNAVAILABLE = "unavailable"
    ERROR = "error"


class Decision(str, Enum):
    """The gate's verdict."""

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
    passed: bool | None = None
    """The policy's verdict on this metric's own conditions: ``None`` when it is advisory or
    has nothing to check (set by ``gate.policy``, never by a collector or a writer)."""
    limit: str | None = None
    """The limits that apply, for people: ``min 80.00%``, ``max 0 violations``, ``max 0 HIGH``."""

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
    metrics: list[EvalMetric] = Field(default_factory=list)
    """The metrics judged, each with its own ``passed`` and ``limit`` (empty after a recount,
    which leaves the metrics as they were)."""


class ConfidenceResult(_Frozen):
    """The advisory score: reported beside the verdict, never part of it."""

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


class Provenance(_Frozen):
    """What a report is bound to, so a later step can refuse a stale or committed one (issue 14).

    Written by the process that ran the change's code, so it proves nothing against in-process
    forgery (SECURITY.md); it does catch a report left in the tree or from another commit.
    """

    head_sha: str | None
    """``git rev-parse HEAD`` when the run started; None outside a git repository."""
    dirty: bool
    """Uncommitted changes (untracked files included) were present when the run started."""
    run_id: str
    """``GITHUB_RUN_ID-GITHUB_RUN_ATTEMPT`` in GitHub Actions, else a random id."""
    started_at: str


class GateReport(_Frozen):
    """The JSON report: everything a person or a later step needs to trust a verdict."""

    schema_version: str = SCHEMA_VERSION
    tool_version: str
    project: str
    generated_at: str
    config_file: str | None = None
    config_passed_over: list[str] = Field(default_factory=list)
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
    provenance: Provenance | None = None


@dataclass(frozen=True)
class FileChange:
    """One changed file; ``added_lines`` are 1-based line numbers of its new version.

    A deleted file keeps its old name in ``path`` and has no added lines; ``old_path`` is set
    for renames and copies only.
    """

    path: str
    old_path: str | None
    status: ChangeStatus
    binary: bool = False
    added_lines: frozenset[int] = frozenset()
    symlink_target: str | None = None
    """The other side of a symlink: for a changed link, the repo file it points to (editing a
    link edits what it loads); for a link whose target changed, that target's path."""


@dataclass(frozen=True)
class ChangeSet:
    """The change under review: ``files`` between ``merge_base`` and the working tree."""

    base_ref: str
    merge_base: str
    files: tuple[FileChange, ...]
    root_prefix: str = ""
    """ROOT relative to the git top-level (``""`` when ROOT is the top-level)."""
    head_tree: str | None = None
    """The git tree of the working tree when the change was read, before any of its code
    ran: what the analyses after the run read as the head, whatever the run did to the files."""

    @cached_property
    def _by_path(self) -> dict[str, FileChange]:
        return {change.path: change for change in self.files}

    def paths(self) -> frozenset[str]:
        """Every path the change touches: new and old names, and symlink targets."""
        names: set[str] = set()
        for change in self.files:
            names.update(p for p in (change.path, change.old_path, change.symlink_target) if p)
        return frozenset(names)

    def get(self, path: str) -> FileChange | None:
        """The change to ``path`` (its new name), if any."""
        return self._by_path.get(path)

    def lines(self, path: str) -> frozenset[int]:
        """Added or changed lines of ``path`` in its new version; empty for deleted files."""
        change = self._by_path.get(path)
        if change is None or change.status == "deleted":
            return frozenset()
        return change.added_lines

    def rooted(self) -> ChangeSet:
        """The same change with paths relative to ROOT; files outside ROOT are dropped.

        Coverage, ruff and bandit name files relative to the pytest rootdir; in a monorepo
        that is a subfolder of the git top-level. A file renamed out of ROOT is a deletion here.
        """
        if not self.root_prefix:
            return self
        files = []
        for change in self.files:
            prefix = self.root_prefix
            path, old = _strip(change.path, prefix), _strip(change.old_path, prefix)
            target = _strip(change.symlink_target, prefix)
            if path is not None:
                # Renamed in from outside ROOT: here it is a new file.
                status: ChangeStatus = "added" if change.old_path and not old else change.status
                files.append(
                    FileChange(path, old, status, change.binary, change.added_lines, target)
                )
            elif old is not None:
                files.append(FileChange(path=old, old_path=None, status="deleted"))
        return ChangeSet(self.base_ref, self.merge_base, tuple(files), head_tree=self.head_tree)


def _strip(path: str | None, prefix: str) -> str | None:
    if path is not None and path.startswith(prefix + "/"):
        return path[len(prefix) + 1 :]
    return None

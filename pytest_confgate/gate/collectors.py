"""Which collector measures which metric: the engine's wiring as two small tables.

``BACKGROUND`` names the metrics whose tools run beside the tests (started when pytest starts,
collected at the end, SPEC 4); ``COLLECTORS`` turns one metric's configuration and the run's
``Evidence`` into an ``EvalMetric``. Adding a built-in metric means one entry here (and its
collector in ``collect/``), not another branch in the engine.

``llm_judge`` is not in the table: it reads every other metric, so the engine asks it last.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pytest_confgate.collect.checklist import collect_checklist
from pytest_confgate.collect.coverage import CoverageSession
from pytest_confgate.collect.lint import collect_lint_score
from pytest_confgate.collect.requirements import (
    Requirement,
    load_requirements,
    requirement_metric,
)
from pytest_confgate.collect.security import collect_security_score
from pytest_confgate.collect.tests import pass_rate_metric
from pytest_confgate.config import (
    ChecklistMetricConfig,
    CoverageMetricConfig,
    LintMetricConfig,
    MetricConfig,
    RequirementMetricConfig,
    SecurityMetricConfig,
)
from pytest_confgate.gate.change import ChangeView, narrow_coverage, narrow_findings
from pytest_confgate.gate.scope import coverage_by_glob, patch_coverage
from pytest_confgate.models import EvalMetric, MetricStatus, TestOutcomes

Links = Mapping[str, Sequence[tuple[str, bool]]]
"""Requirement id -> (test id, passed) of each test linked to it."""


class Pending(Protocol):
    """The background tools' results, waited for when first asked (``gate.background``)."""

    kinds: list[str]

    def result(self, kind: str) -> EvalMetric: ...


@dataclass(frozen=True)
class Evidence:
    """What the run produced, as the collectors read it once the tests are over."""

    root: Path
    environ: Mapping[str, str]
    sources: list[Path]
    change: ChangeView
    tests: TestOutcomes
    links: Links
    coverage: CoverageSession | None
    background: Pending | None
    requirements: Mapping[str, list[Requirement]]


Collector = Callable[[MetricConfig, Evidence], "EvalMetric | None"]
"""One metric from its configuration; ``None`` when this run has nothing to measure it with."""
BackgroundJob = Callable[..., EvalMetric]
"""``job(config, root, sources, cache_dir)`` for the config class its metric type has."""


def collect_metric(config: MetricConfig, evidence: Evidence) -> EvalMetric:
    """The metric ``config`` asks for, with its configured weight and floor."""
    collector = COLLECTORS.get(config.type)
    metric = collector(config, evidence) if collector is not None else None
    if metric is None:
        metric = EvalMetric(
            type=config.type,
            status=MetricStatus.ERROR,
            reason=f"no source code found under {evidence.root}; set `source:` in the config",
        )
    return metric.model_copy(update={"weight": config.weight, "threshold": config.min})


def background_configs(metrics: Sequence[MetricConfig], sources: list[Path]) -> list[MetricConfig]:
    """The metrics whose tools start beside the tests (none without sources)."""
    if not sources:
        return []
    return [config for config in metrics if config.type in BACKGROUND]


def load_requirement_files(
    metrics: Sequence[MetricConfig], root: Path
) -> dict[str, list[Requirement]]:
    """Read requirement files up front, so a broken one stops the run before any test."""
    return {
        config.requirements: load_requirements(root / config.requirements)
        for config in metrics
        if isinstance(config, RequirementMetricConfig) and config.requirements is not None
    }


def _lint_job(
    config: LintMetricConfig, root: Path, sources: list[Path], cache_dir: Path | None
) -> EvalMetric:
    return collect_lint_score(
        root, sources, command=config.command, timeout_s=config.timeout_s, cache_dir=cache_dir
    )


def _security_job(
    config: SecurityMetricConfig, root: Path, sources: list[Path], cache_dir: Path | None
) -> EvalMetric:
    return collect_security_score(
        root,
        sources,
        min_severity=config.min_severity,
        min_confidence=config.min_confidence,
        command=config.command,
        timeout_s=config.timeout_s,
        cache_dir=cache_dir,
    )


def _pass_rate(_config: MetricConfig, evidence: Evidence) -> EvalMetric:
    return pass_rate_metric(evidence.tests)


def _checklist(config: MetricConfig, evidence: Evidence) -> EvalMetric | None:
    if not isinstance(config, ChecklistMetricConfig):
        return None
    return collect_checklist(config, evidence.root, evidence.environ)


def _requirements(config: MetricConfig, evidence: Evidence) -> EvalMetric | None:
    if not isinstance(config, RequirementMetricConfig) or config.requirements is None:
        return None
    requirements = evidence.requirements[config.requirements]
    return requirement_metric(requirements, evidence.links, source=config.requirements)


def _coverage(config: MetricConfig, evidence: Evidence) -> EvalMetric | None:
    session = evidence.coverage
    if session is None:
        return _from_background(config, evidence)
    metric = session.metric()
    if getattr(config, "scope", "all") == "changed":
        metric = narrow_coverage(metric, evidence.change, session.files_by_root())
    else:
        metric = metric.model_copy(update={"details": {**metric.details, "scope": "all"}})
    if isinstance(config, CoverageMetricConfig):
        metric = _path_floors(metric, config, evidence)
    return metric


def _from_background(config: MetricConfig, evidence: Evidence) -> EvalMetric | None:
    pending = evidence.background
    if pending is None or config.type not in pending.kinds:
        return None
    metric = pending.result(config.type)
    if getattr(config, "scope", "all") == "changed":
        metric = narrow_findings(metric, evidence.change, evidence.sources, evidence.root)
    return metric


def _path_floors(
    metric: EvalMetric, config: CoverageMetricConfig, evidence: Evidence
) -> EvalMetric:
    """Per-path coverage for ``paths:`` floors, over the same lines the metric judged."""
    if not config.paths or not metric.available or evidence.coverage is None:
        return metric
    files = evidence.coverage.files_by_root()
    changes = evidence.change.changes
    if config.scope == "changed" and changes is not None:
        patch = patch_coverage(changes, files)
        per_file = {
            f.path: (f.covered_lines + f.covered_branches, f.statements + f.branches)
            for f in patch.files
        }
    else:
        per_file = {
            path: (
                data["summary"].get("covered_lines", 0)
                + data["summary"].get("covered_branches", 0),
                data["summary"].get("num_statements", 0) + data["summary"].get("num_branches", 0),
            )
            for path, data in files.items()
        }
    paths = coverage_by_glob(per_file, config.paths)
    return metric.model_copy(update={"details": {**metric.details, "paths": paths}})


BACKGROUND: dict[str, BackgroundJob] = {
    "lint_score": _lint_job,
    "security_score": _security_job,
}
COLLECTORS: dict[str, Collector] = {
    "test_pass_rate": _pass_rate,
    "test_coverage": _coverage,
    "lint_score": _from_background,
    "security_score": _from_background,
    "checklist_completion": _checklist,
    "requirement_coverage": _requirements,
}

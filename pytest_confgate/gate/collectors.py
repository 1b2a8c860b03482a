"""Which collector measures which metric: the engine's wiring as two small tables.

``BACKGROUND`` names the metrics whose tools run beside the tests (started when pytest starts,
collected at the end); ``COLLECTORS`` turns one metric's configuration and the run's
``Evidence`` into an ``EvalMetric``. Adding a built-in metric means one entry here (and its
collector in ``collect/``), not another branch in the engine.

``llm_judge`` is not in the table: it reads every other metric, so the engine asks it last.
``test_integrity`` (issue 15) reads one ``ChangeAnalysis`` of the change, which lint and
security also read, to count findings hidden by a ``# noqa``/``# nosec`` the change added.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pytest_confgate.collect.tests import pass_rate_metric
from pytest_confgate.config import (
    ChecklistMetricConfig,
    CoverageMetricConfig,
    GateConfig,
    IntegrityMetricConfig,
    LintMetricConfig,
    MetricConfig,
    RequirementMetricConfig,
    SecurityMetricConfig,
)
from pytest_confgate.config.metrics import NO_REQUIREMENTS
from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.models import EvalMetric, MetricStatus, TestOutcomes

if TYPE_CHECKING:
    # Each collector imports its tool's module when it runs: a run imports what it measures
    # (issue 26), and the helper process what it runs.
    from pytest_confgate.collect.coverage.session import CoverageSession
    from pytest_confgate.collect.requirements import Requirement
    from pytest_confgate.collect.runtime_audit import RuntimeFinding
    from pytest_confgate.collect.tamper import ChangeAnalysis
    from pytest_confgate.collect.unsuppressed import Hidden
    from pytest_confgate.gate.change import ChangeView

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
    analysis: ChangeAnalysis | None = None
    audit: Sequence[RuntimeFinding] = ()
    """What the run-time audit saw the project's code do (``collect.runtime_audit``)."""
    by_test: Mapping[str, str] = field(default_factory=dict)
    """Each test id's outcome in the main run (``outcomes.phase_outcome``)."""
    failing_before: Sequence[str] = ()
    """Test ids pytest's cache said failed before this run (``differential.known_failing``)."""


Collector = Callable[[MetricConfig, Evidence], "EvalMetric | None"]
"""One metric from its configuration; ``None`` when this run has nothing to measure it with."""
BackgroundJob = Callable[..., EvalMetric]
"""``job(config, root, sources, cache_dir, analysis)`` for its metric type's config class."""


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


def change_analysis(gate: GateConfig, root: Path, change: ChangeView) -> ChangeAnalysis | None:
    """The tamper analysis of the change, computed on first use; None without a base."""
    if change.base_ref is None:
        return None
    from pytest_confgate.collect.tamper import ChangeAnalysis

    config = gate.metric("test_integrity")
    watch = config.suppressions if isinstance(config, IntegrityMetricConfig) else ()
    return ChangeAnalysis(root, change.changes, change.error, watch=tuple(watch))


def load_requirement_files(
    metrics: Sequence[MetricConfig], root: Path
) -> dict[str, list[Requirement]]:
    """Read requirement files up front, so a broken one stops the run before any test."""
    named = [
        config.requirements
        for config in metrics
        if isinstance(config, RequirementMetricConfig) and config.requirements is not None
    ]
    if not named:
        return {}
    from pytest_confgate.collect.requirements import load_requirements

    return {name: load_requirements(root / name) for name in named}


def _lint_job(
    config: LintMetricConfig,
    root: Path,
    sources: list[Path],
    cache_dir: Path | None,
    analysis: ChangeAnalysis | None = None,
    *,
    cached_only: bool = False,
) -> EvalMetric:
    from pytest_confgate.collect.lint import collect_lint_score

    lint = partial(
        collect_lint_score,
        command=config.command,
        timeout_s=config.timeout_s,
        max_output_bytes=config.max_output_bytes,
        cached_only=cached_only,
    )
    return _revealing(lint, "noqa", root, sources, cache_dir, analysis)


def _security_job(
    config: SecurityMetricConfig,
    root: Path,
    sources: list[Path],
    cache_dir: Path | None,
    analysis: ChangeAnalysis | None = None,
    *,
    cached_only: bool = False,
) -> EvalMetric:
    from pytest_confgate.collect.security import collect_security_score

    scan = partial(
        collect_security_score,
        min_severity=config.min_severity,
        min_confidence=config.min_confidence,
        command=config.command,
        timeout_s=config.timeout_s,
        max_output_bytes=config.max_output_bytes,
        cached_only=cached_only,
    )
    return _revealing(scan, "nosec", root, sources, cache_dir, analysis)


def _revealing(
    measure: Callable[..., EvalMetric],
    directive: str,
    root: Path,
    sources: list[Path],
    cache_dir: Path | None,
    analysis: ChangeAnalysis | None,
) -> EvalMetric:
    """``measure`` the sources; where the change added ``# noqa``/``# nosec`` to measured
    files, measure those files again with ``--ignore-noqa``/``--ignore-nosec`` and count
    what the comments hide (``unsuppressed.reveal``)."""
    metric = measure(root, sources, cache_dir=cache_dir)
    hidden = _hidden(analysis, directive, root, sources)
    if not hidden or not metric.available:
        return metric
    from pytest_confgate.collect.unsuppressed import reveal

    files = [root / name for name in hidden]
    unmasked = measure(root, files, extra_args=(f"--ignore-{directive}",))
    return reveal(metric, unmasked, hidden, f"# {directive}")


def _hidden(
    analysis: ChangeAnalysis | None, directive: str, root: Path, sources: list[Path]
) -> Hidden:
    """Measured files -> lines a ``directive`` the change added covers ({} when none)."""
    if analysis is None:
        return {}
    try:
        ranges = analysis.report().hidden_lines(directive)
    except EvidenceError:
        return {}  # test_integrity reports why the change could not be read
    from pytest_confgate.gate.change import is_source_file  # the helper reads no config file

    return {name: lines for name, lines in ranges.items() if is_source_file(root / name, sources)}


def _integrity_job(
    config: IntegrityMetricConfig,
    _root: Path,
    _sources: list[Path],
    _cache_dir: Path | None,
    analysis: ChangeAnalysis | None = None,
) -> EvalMetric:
    from pytest_confgate.collect.integrity import integrity_metric

    return integrity_metric(config, analysis)


def _integrity(config: MetricConfig, evidence: Evidence) -> EvalMetric | None:
    if not isinstance(config, IntegrityMetricConfig):
        return None
    from pytest_confgate.collect.integrity import integrity_metric, with_audit, with_replay

    pending = evidence.background
    if pending is not None and config.type in pending.kinds:
        metric = pending.result(config.type)  # the helper is done: no tool reads the tree now
    else:
        metric = integrity_metric(config, evidence.analysis)  # no sources: nothing ran beside
    # The base's tests run again with the base's machinery now that the main run is over.
    metric = with_replay(metric, config, evidence.analysis, evidence.root, evidence.environ,
                         evidence.tests, evidence.by_test, evidence.failing_before)
    changes = evidence.change.changes
    return with_audit(metric, config, evidence.audit,
                      changes.paths() if changes is not None else None)


def _pass_rate(_config: MetricConfig, evidence: Evidence) -> EvalMetric:
    return pass_rate_metric(evidence.tests)


def _checklist(config: MetricConfig, evidence: Evidence) -> EvalMetric | None:
    if not isinstance(config, ChecklistMetricConfig):
        return None
    from pytest_confgate.collect.checklist import collect_checklist

    return collect_checklist(config, evidence.root, evidence.environ)


def _requirements(config: MetricConfig, evidence: Evidence) -> EvalMetric | None:
    if not isinstance(config, RequirementMetricConfig):
        return None
    if config.requirements is None:  # only a loop's entry can lack it (config.tasks)
        return EvalMetric(type=config.type, status=MetricStatus.ERROR, reason=NO_REQUIREMENTS)
    from pytest_confgate.collect.requirements import requirement_metric

    requirements = evidence.requirements[config.requirements]
    return requirement_metric(requirements, evidence.links, source=config.requirements)


def _coverage(config: MetricConfig, evidence: Evidence) -> EvalMetric | None:
    session = evidence.coverage
    if session is None:
        return _from_background(config, evidence)
    metric = session.metric()
    if getattr(config, "scope", "all") == "changed":
        from pytest_confgate.gate.change import narrow_coverage

        metric = narrow_coverage(metric, evidence.change, session.files_by_root())
    else:
        metric = metric.model_copy(update={"details": {**metric.details, "scope": "all"}})
    if isinstance(config, CoverageMetricConfig):
        metric = _path_floors(metric, config, evidence)
    return _without_tests(metric, evidence.tests)


def _without_tests(metric: EvalMetric, tests: TestOutcomes) -> EvalMetric:
    """No test ran (xdist aborted the session, every test errored in setup, all skipped):
    the figure measures imports, not tests, so it is no evidence and never ``ok``."""
    if tests.passed + tests.failed + tests.xfailed + tests.xpassed or not metric.available:
        return metric
    why = (
        f"{tests.errors} error(s) stopped the session or every test before it ran (an xdist "
        "abort such as 'Different tests were collected between gw0 and gw1' is one)"
        if tests.errors
        else "every collected test was skipped or none was collected"
    )
    return metric.model_copy(
        update={
            "value": None,
            "status": MetricStatus.UNAVAILABLE,
            "reason": f"no test ran: {why}; coverage.py's figure would measure imports only. "
            "Fix the errors above and run again",
        }
    )


def _from_background(config: MetricConfig, evidence: Evidence) -> EvalMetric | None:
    pending = evidence.background
    if pending is None or config.type not in pending.kinds:
        return None
    metric = pending.result(config.type)
    if getattr(config, "scope", "all") == "changed":
        from pytest_confgate.gate.change import narrow_findings

        metric = narrow_findings(metric, evidence.change, evidence.sources, evidence.root)
    return metric


def _path_floors(
    metric: EvalMetric, config: CoverageMetricConfig, evidence: Evidence
) -> EvalMetric:
    """Per-path coverage for ``paths:`` floors, over the same lines the metric judged."""
    if not config.paths or not metric.available or evidence.coverage is None:
        return metric
    from pytest_confgate.gate.scope import coverage_by_glob, patch_coverage

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


CACHED = {"lint_score": "ruff", "security_score": "bandit"}
"""Background metrics whose tool keeps a per-file cache (``tool_cache``), by the tool's name:
a warm run answers them from it without the helper process (``background._from_cache``)."""
BACKGROUND: dict[str, BackgroundJob] = {
    "lint_score": _lint_job,
    "security_score": _security_job,
    "test_integrity": _integrity_job,
}
COLLECTORS: dict[str, Collector] = {
    "test_pass_rate": _pass_rate,
    "test_coverage": _coverage,
    "lint_score": _from_background,
    "security_score": _from_background,
    "checklist_completion": _checklist,
    "requirement_coverage": _requirements,
    "test_integrity": _integrity,
}

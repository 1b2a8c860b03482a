"""``confgate merge``: the reports of CI shards -> one report, decided once.

Each shard ran ``pytest --confgate`` on part of the suite. Test counts add up and the pass
rate is recomputed from the sums; coverage is re-measured from the shards' coverage.py data
files (a percentage cannot be merged); evidence that does not depend on the tests (lint,
security, checklist, ...) must be the same in every shard, or it is an error. A missing,
broken or repeated shard is refused before anything is written: a smaller denominator
would look like better evidence.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pytest_confgate.collect.signoffs import collect_signoffs
from pytest_confgate.collect.tests import pass_rate_metric
from pytest_confgate.config import CoverageMetricConfig, MetricConfig
from pytest_confgate.config.loader import LoadedConfig
from pytest_confgate.exceptions import ConfigError, EvidenceError, ReportError
from pytest_confgate.gate.confidence import rescored
from pytest_confgate.gate.policy import decide
from pytest_confgate.gate.shard_data import read_coverage_data
from pytest_confgate.models import (
    SCHEMA_VERSION,
    Condition,
    EvalMetric,
    GateReport,
    MetricStatus,
    Provenance,
    RiskTier,
    TestOutcomes,
)

Shard = tuple[str, GateReport]
"""A shard report and the path it was read from (the name every message uses)."""

_TIERS = ("T0", "T1", "T2", "T3")
_COUNTS = ("passed", "failed", "errors", "skipped", "xfailed", "xpassed")
# Details that legitimately differ between two runs over the same files.
_VOLATILE = frozenset({"duration_s", "cache"})
_MAX_REPORT_BYTES = 64 * 1024 * 1024


def run_merge(
    paths: Sequence[str],
    *,
    output: str,
    root: Path,
    environ: Mapping[str, str],
    expect: int | None = None,
    coverage: Sequence[str] = (),
    config: str | None = None,
) -> tuple[GateReport, Path, list[str]]:
    """The whole ``confgate merge``: check every input first, then merge and write once.

    Returns the report, where it was written and notes for the user. Any ``ConfgateError``
    leaves the output untouched (the inputs are only ever read).
    """
    from pytest_confgate.config.loader import load_config
    from pytest_confgate.report.json_report import (
        resolve_report_path,
        working_tree,
        write_json_report,
    )

    try:
        target = resolve_report_path(root, output)
    except ReportError as exc:  # its message names the pytest option; ours is -o
        raise ReportError(str(exc).replace("--confgate-report", "-o", 1)) from exc
    given = {Path(name).resolve() for name in [*paths, *coverage]}
    if target in given:
        raise EvidenceError(
            f"-o {output}: is one of the inputs; write the merged report to a new file"
        )
    shards = load_shards(paths, expect=expect)
    if coverage and len(coverage) != len(shards):
        raise EvidenceError(
            f"--coverage: {len(coverage)} data files for {len(shards)} shards; pass one "
            "per shard (a missing one would shrink the covered lines)"
        )
    parts = read_coverage_data(coverage) if coverage else None
    loaded = load_config(root, config)
    report = merge_reports(shards, loaded, root=root, environ=environ, coverage_parts=parts)
    write_json_report(report, target, within=working_tree(root))
    notes = [f"note: {name}: no test ran in this shard" for name in empty_shards(shards)]
    return report, target, notes


def load_shards(paths: Sequence[str], *, expect: int | None = None) -> list[Shard]:
    """Read every shard report, or raise ``EvidenceError`` listing each bad one.

    Refuses a missing file, invalid JSON, a file that is not a gate report, another
    ``schema_version``, the same shard twice (path or content) and a count other than
    ``expect``: each would silently change the denominators.
    """
    problems: list[str] = []
    shards: list[Shard] = []
    seen_paths: dict[Path, str] = {}
    seen_content: dict[str, str] = {}
    for name in paths:
        resolved = Path(name).resolve()
        if resolved in seen_paths:
            problems.append(
                f"{name}: duplicated (same file as {seen_paths[resolved]}); "
                "give each shard report once"
            )
            continue
        seen_paths[resolved] = name
        raw, problem = _read(name)
        if problem is not None:
            problems.append(problem)
            continue
        digest = hashlib.sha256(raw).hexdigest()
        if digest in seen_content:
            problems.append(
                f"{name}: duplicated (identical content to {seen_content[digest]}); "
                "each shard must come from its own run"
            )
            continue
        seen_content[digest] = name
        report, problem = _parse(name, raw)
        if problem is not None:
            problems.append(problem)
        elif report is not None:
            shards.append((name, report))
    if expect is not None and len(paths) != expect:
        problems.append(
            f"expected {expect} shards, got {len(paths)}: missing one? "
            f"shard names given: {', '.join(paths) or 'none'}"
        )
    if not paths:
        problems.append("no shard report given; pass the JSON report of every shard")
    if problems:
        raise EvidenceError("\n".join(problems))
    return shards


def _read(name: str) -> tuple[bytes, str | None]:
    path = Path(name)
    try:
        if path.stat().st_size > _MAX_REPORT_BYTES:
            return b"", f"{name}: larger than {_MAX_REPORT_BYTES} bytes; not a shard report"
        return path.read_bytes(), None
    except FileNotFoundError:
        return b"", f"{name}: no such file; did the shard's job upload its report?"
    except OSError as exc:
        return b"", f"{name}: cannot be read ({exc.strerror}); check the path"


def _parse(name: str, raw: bytes) -> tuple[GateReport | None, str | None]:
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, f"{name}: not valid JSON ({exc}); the shard's report is damaged, re-run it"
    if not isinstance(data, dict):
        return None, f"{name}: not a gate report (a JSON object is expected); re-run the shard"
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        return None, (
            f"{name}: schema_version {version!r}, this confgate reads {SCHEMA_VERSION!r}; "
            "run every shard with the same pytest-confgate version"
        )
    try:
        return GateReport.model_validate(data), None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        return None, (
            f"{name}: not a gate report ({where}: {first['msg']}); give the file "
            "`pytest --confgate --confgate-report` wrote"
        )


def merge_reports(
    shards: list[Shard],
    loaded: LoadedConfig,
    *,
    root: Path,
    environ: Mapping[str, str],
    coverage_parts: dict[str, bytes] | None = None,
) -> GateReport:
    """Combine the shards and apply the policy once.

    ``tests.duration_s`` is the slowest shard's (shards run side by side, so the longest
    one is the wall time of the suite). ``confidence`` is scored again over the merged
    evidence (``confidence.rescored``), so ``auto_advance`` follows the tier's rules here too.
    """
    gate = loaded.config.gate
    tests = sum_outcomes([report for _, report in shards])
    tier, tier_reason = merged_tier(shards)
    metrics = [
        _merged_metric(config, shards, tests, root, loaded.config.source, coverage_parts)
        for config in gate.metrics
    ]
    configured: set[str] = {config.type for config in gate.metrics}
    extra_types = [t for t in _metric_types(shards) if t not in configured]
    metrics += [agreed_metric(kind, shards) for kind in extra_types]
    extra = _carried_conditions(shards, configured)
    found = collect_signoffs(environ, gate.policy.signoff.approvers)
    confidence = rescored(gate.confidence, metrics, [r.confidence for _, r in shards])
    met = confidence is not None and confidence.advisory is not None
    verdict = decide(gate, tier, metrics, tests, found, confidence_met=met, extra=extra)
    _, needed, _ = gate.policy.tier(tier)
    first = shards[0][1]
    return GateReport(
        tool_version=_tool_version(),
        project=first.project,
        generated_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        config_file=first.config_file,
        risk_tier=tier,
        risk_reason=tier_reason,
        change=first.change,
        waivers=first.waivers,
        decision=verdict.decision,
        reasons=verdict.reasons,
        auto_advance=verdict.auto_advance,
        metrics=verdict.metrics,
        conditions=verdict.conditions,
        tests=tests,
        confidence=confidence,
        signoffs=found.model_copy(update={"required": needed}),
        provenance=merged_provenance(shards),
    )


def merged_provenance(shards: Sequence[Shard]) -> Provenance | None:
    """The shards' common commit and run; None (publish refuses it) unless all carry the same.

    Shards of two different commits are refused outright: one verdict over two commits is
    a verdict on neither.
    """
    found = [(name, report.provenance) for name, report in shards]
    heads = {p.head_sha: name for name, p in found if p is not None and p.head_sha}
    if len(heads) > 1:
        listed = ", ".join(f"{name} {head[:12]}" for head, name in heads.items())
        raise EvidenceError(f"the shards judged different commits ({listed}); merge one commit")
    known = [p for _, p in found if p is not None]
    runs = {p.run_id.rpartition("-")[0] or p.run_id for p in known}
    if len(known) != len(found) or len(runs) != 1 or len(heads) != 1:
        return None
    latest = max(known, key=lambda p: p.run_id)
    return Provenance(
        head_sha=next(iter(heads)),
        dirty=any(p.dirty for p in known),
        run_id=latest.run_id,
        started_at=min(p.started_at for p in known),
    )


def sum_outcomes(reports: Sequence[GateReport]) -> TestOutcomes:
    """Counts add up; the duration is the slowest shard's (they run in parallel)."""
    totals = {key: sum(getattr(r.tests, key) for r in reports) for key in _COUNTS}
    duration = max((r.tests.duration_s for r in reports), default=0.0)
    return TestOutcomes(duration_s=duration, **totals)


def empty_shards(shards: Sequence[Shard]) -> list[str]:
    """Shards in which no test ran: allowed (a shard may hold only skips), but worth a note."""
    return [name for name, report in shards if report.tests.ran == 0]


def merged_tier(shards: Sequence[Shard]) -> tuple[RiskTier, str]:
    """The shards' common tier; if they disagree the highest applies, and the reason says so."""
    tiers = {report.risk_tier for _, report in shards}
    if len(tiers) == 1:
        return shards[0][1].risk_tier, shards[0][1].risk_reason
    highest = max(tiers, key=_TIERS.index)
    listing = ", ".join(f"{name}: {report.risk_tier}" for name, report in shards)
    return highest, f"shards disagree on the risk tier ({listing}); the highest applies"


def agreed_metric(kind: str, shards: Sequence[Shard]) -> EvalMetric:
    """A metric that must not depend on which tests ran: identical in every shard, else error."""
    found = [(name, _find(report, kind)) for name, report in shards]
    missing = [name for name, metric in found if metric is None]
    present = [(name, metric) for name, metric in found if metric is not None]
    if not present:
        return _error(kind, "no shard reported it; run the shards with this metric configured")
    if missing:
        return _error(kind, f"missing from {', '.join(missing)}; every shard must measure it")
    reference = present[0][1]
    differ = [name for name, metric in present if _comparable(metric) != _comparable(reference)]
    if differ:
        return _error(
            kind,
            f"shards disagree ({present[0][0]} vs {', '.join(differ)}); they must check the "
            "same files with the same configuration",
        )
    return reference


def _merged_metric(
    config: MetricConfig,
    shards: Sequence[Shard],
    tests: TestOutcomes,
    root: Path,
    source: list[str] | None,
    coverage_parts: dict[str, bytes] | None,
) -> EvalMetric:
    if config.type == "test_pass_rate":
        metric = pass_rate_metric(tests)
        names = [name for name, _ in shards]
        details: dict[str, Any] = {**metric.details, "shards": names}
        if empty := empty_shards(shards):
            details["empty_shards"] = empty
        metric = metric.model_copy(update={"details": details})
    elif isinstance(config, CoverageMetricConfig):
        metric = merged_coverage(config, shards, root, source, coverage_parts)
    else:
        metric = agreed_metric(config.type, shards)
    return metric.model_copy(update={"weight": config.weight, "threshold": config.min})


def merged_coverage(
    config: CoverageMetricConfig,
    shards: Sequence[Shard],
    root: Path,
    source: list[str] | None,
    parts: dict[str, bytes] | None,
) -> EvalMetric:
    """Re-measure from every shard's coverage.py data; never average percentages."""
    if not parts:
        return _error(
            "test_coverage",
            "coverage cannot be merged from percentages; pass each shard's coverage.py data "
            "file with --coverage (e.g. run the shards with --cov so .coverage is written)",
        )
    if config.scope == "changed":
        return _error(
            "test_coverage",
            "merging changed-code coverage (scope: changed) is not supported yet; "
            "gate coverage in one run or use scope: all",
        )
    from pytest_confgate.collect.coverage.session import CoverageSession
    from pytest_confgate.collect.sources import resolve_sources

    try:
        sources = resolve_sources(root, source)
    except ConfigError as exc:
        return _error("test_coverage", str(exc))
    session = CoverageSession(
        root,
        sources,
        branch=config.branch if "branch" in config.model_fields_set else None,
        own_sources=source is not None,
        omit_tests=source is None,
    )
    session.combine(parts, [])
    metric = session.metric()
    details = {**metric.details, "shards": [name for name, _ in shards], "data": sorted(parts)}
    return metric.model_copy(update={"details": details})


def _carried_conditions(shards: Sequence[Shard], decided: set[str]) -> list[Condition]:
    """Every shard's conditions that the policy does not re-derive (plugins, the change,
    expired waivers), each once: they can only add reasons to fail, never remove one."""
    carried: dict[tuple[str, str, str], Condition] = {}
    for _, report in shards:
        for condition in report.conditions:
            if condition.metric in decided or condition.metric == "signoff":
                continue
            carried.setdefault((condition.metric, condition.name, condition.message), condition)
    return list(carried.values())


def _metric_types(shards: Sequence[Shard]) -> list[str]:
    seen: dict[str, None] = {}
    for _, report in shards:
        for metric in report.metrics:
            seen.setdefault(metric.type, None)
    return list(seen)


def _find(report: GateReport, kind: str) -> EvalMetric | None:
    return next((m for m in report.metrics if m.type == kind), None)


def _comparable(metric: EvalMetric) -> tuple[Any, ...]:
    details = {k: v for k, v in metric.details.items() if k not in _VOLATILE}
    return metric.value, metric.status, metric.reason, json.dumps(details, sort_keys=True)


def _error(kind: str, reason: str) -> EvalMetric:
    return EvalMetric(type=kind, status=MetricStatus.ERROR, reason=f"merge: {reason}")


def _tool_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pytest-confgate")
    except PackageNotFoundError:
        return "0+unknown"

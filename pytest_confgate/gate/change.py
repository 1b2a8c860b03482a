"""The change under review: what it touched, which gate judges it, how metrics narrow to it.

SPEC 4 and 6, issue 3: ``scope: changed`` judges only changed lines; ``risk_rules`` raise the
tier by the paths touched; and a change that edits the gate's own configuration is judged by
the base branch's configuration at tier T2 or higher, so it cannot relax its own gate.

Changes are computed whenever a base can be resolved (``--confgate-base``, ``base_ref``,
``GITHUB_BASE_REF``), not only when the configuration asks for them: otherwise a pull request
could delete ``risk_rules`` and so skip the very check that notices the deletion.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from pytest_confgate.collect.changes import collect_changes, read_at_ref, resolve_base_ref
from pytest_confgate.config import ConfgateConfig
from pytest_confgate.config.loader import YAML_NAMES, LoadedConfig, parse_config_text
from pytest_confgate.exceptions import ConfigError, EvidenceError
from pytest_confgate.gate.scope import (
    config_changed,
    match_risk_rules,
    patch_coverage,
    rate_on_changed_files,
)
from pytest_confgate.gate.tiers import raised, tier_rank
from pytest_confgate.models import SEVERITY_ORDER, ChangeSet, EvalMetric, MetricStatus, RiskTier

NO_BASE = (
    "no base to compare the change against: set `base_ref:` in the configuration, pass "
    "--confgate-base, or run in a pull request (GITHUB_BASE_REF)"
)


@dataclass(frozen=True)
class ChangeView:
    """The change as the gate sees it; ``changes`` paths are relative to the pytest rootdir."""

    base_ref: str | None
    changes: ChangeSet | None
    top_paths: frozenset[str]
    error: str | None

    @property
    def known(self) -> bool:
        return self.changes is not None


def needs_changes(config: ConfgateConfig) -> bool:
    """Whether the configuration cannot be evaluated without knowing the change."""
    scoped = any(getattr(m, "scope", "all") == "changed" for m in config.gate.metrics)
    return scoped or bool(config.gate.risk_rules)


def load_changes(
    root: Path, config: ConfgateConfig, cli_base: str | None, environ: Mapping[str, str]
) -> ChangeView:
    """Run git once, before the tests; failures are kept as a reason, never raised."""
    base = resolve_base_ref(cli_base, config.base_ref, environ, root=root)
    if base is None:
        return ChangeView(None, None, frozenset(), NO_BASE)
    try:
        changes = collect_changes(root, base)
    except EvidenceError as exc:
        return ChangeView(base, None, frozenset(), f"cannot tell what changed: {exc}")
    return ChangeView(base, changes.rooted(), changes.paths(), None)


def trusted_config(
    root: Path, loaded: LoadedConfig, view: ChangeView, explicit: str | None
) -> tuple[LoadedConfig, str | None]:
    """The configuration that may judge this change, and a note when it is the base's."""
    if view.changes is None:
        return loaded, None
    in_use = _relative(root, loaded.path)
    if not config_changed(view.changes, in_use):
        return loaded, None
    base_config, where = _config_at_base(root, view.changes.merge_base, explicit)
    note = (
        f"the change edits the gate's configuration ({in_use or 'confgate.yml'}), so the "
        f"base branch's configuration ({where}) judges it, at tier T2 or higher"
    )
    return LoadedConfig(base_config, loaded.path), note


def _config_at_base(root: Path, ref: str, explicit: str | None) -> tuple[ConfgateConfig, str]:
    names = [explicit] if explicit else [*YAML_NAMES, "pyproject.toml"]
    for name in names:
        text = read_at_ref(root, ref, name)
        if text is None or (name.endswith(".toml") and "confgate" not in text):
            continue
        try:
            return parse_config_text(Path(name), text), f"{name} at {ref[:12]}"
        except ConfigError as exc:
            # The trusted side is broken: its defaults are still trusted, the change is not.
            return ConfgateConfig(), f"defaults; {name} at {ref[:12]} is invalid: {exc}"
    return ConfgateConfig(), f"defaults; no configuration at {ref[:12]}"


def applied_tier(
    config: ConfgateConfig, view: ChangeView, note: str | None
) -> tuple[RiskTier, str]:
    """The tier after ``risk_rules`` and the config-change rule, and why."""
    gate = config.gate
    tier: str = gate.risk_tier
    if "risk_tier" in gate.model_fields_set:
        reason = "set by gate.risk_tier"
    else:
        reason = "the default tier; set gate.risk_tier to change it"
    if gate.risk_rules:
        if view.changes is None:
            highest = max((r.tier for r in gate.risk_rules), key=tier_rank)
            tier = max(tier, highest, key=tier_rank)
            reason = f"risk_rules cannot be matched ({view.error}); the highest rule tier applies"
        else:
            paths = set(view.changes.paths()) | set(view.top_paths)
            tier, reason = match_risk_rules(gate.risk_rules, paths, gate.risk_tier)
    if note is not None:
        return raised(tier, reason, "T2", note)
    return cast(RiskTier, tier), reason


def narrow_coverage(metric: EvalMetric, view: ChangeView, files: Mapping[str, Any]) -> EvalMetric:
    """Patch coverage: covered changed executable lines / changed executable lines."""
    if view.changes is None:
        return _unknown(metric, view)
    if not metric.available:
        return metric
    patch = patch_coverage(view.changes, files)
    details = _scoped_details(metric, view)
    for whole_files in ("excluded_lines", "missing_branches", "num_partial_branches"):
        details.pop(whole_files, None)  # only changed-line figures stay in a patch report
    covered = sum(f.covered_lines for f in patch.files)
    statements = sum(f.statements for f in patch.files)
    details.update(
        covered_lines=covered,
        num_statements=statements,
        missing_lines=statements - covered,
        uncovered_changed_lines=patch.uncovered(),
        missing=patch.uncovered(),
        percent_covered=None if patch.value is None else round(100.0 * patch.value, 6),
    )
    if "num_branches" in details:
        branches = sum(f.branches for f in patch.files)
        taken = sum(f.covered_branches for f in patch.files)
        details.update(
            num_branches=branches, covered_branches=taken, missing_branches=branches - taken
        )
    return _narrowed(metric, patch.value, patch.reason, details)


def narrow_findings(
    metric: EvalMetric, view: ChangeView, sources: list[Path], root: Path
) -> EvalMetric:
    """Only findings on changed lines count, over the changed files the tool checked."""
    if view.changes is None:
        return _unknown(metric, view)
    if not metric.available:
        return metric
    checked = [p for p in view.changes.paths() if is_source_file(root / p, sources)]
    rate = rate_on_changed_files(metric.details.get("items", []), view.changes, checked)
    details = _scoped_details(metric, view)
    kept = list(rate.items)
    details["items"] = kept
    if metric.type == "lint_score":
        details.update(
            violations=len(kept),
            files_checked=rate.files_checked,
            files_with_violations=rate.files_with_findings,
        )
    else:
        by_severity = dict.fromkeys(SEVERITY_ORDER, 0)
        for item in kept:
            by_severity[str(item.get("severity"))] = (
                by_severity.get(str(item.get("severity")), 0) + 1
            )
        details.update(
            findings=len(kept),
            files_scanned=rate.files_checked,
            files_with_findings=rate.files_with_findings,
            by_severity={k: by_severity[k] for k in ("HIGH", "MEDIUM", "LOW")},
        )
    return _narrowed(metric, rate.value, rate.reason, details)


def is_source_file(path: Path, sources: list[Path]) -> bool:
    """A Python file that exists under one of the measured sources."""
    if path.suffix not in (".py", ".pyw") or not path.is_file():
        return False
    resolved = path.resolve()
    return any(resolved == s or resolved.is_relative_to(s) for s in sources)


def _scoped_details(metric: EvalMetric, view: ChangeView) -> dict[str, Any]:
    details = dict(metric.details)
    details.update(scope="changed", base_ref=view.base_ref)
    if view.changes is not None:
        details["merge_base"] = view.changes.merge_base
        details["changed_files"] = len(view.changes.files)
    return details


def _narrowed(
    metric: EvalMetric, value: float | None, reason: str | None, details: dict[str, Any]
) -> EvalMetric:
    if value is None:
        # Nothing the tool could judge changed (docs only, say): there is nothing to fail.
        details["note"] = reason
        value = 1.0
    return metric.model_copy(update={"value": value, "details": details})


def _unknown(metric: EvalMetric, view: ChangeView) -> EvalMetric:
    return metric.model_copy(
        update={
            "value": None,
            "status": MetricStatus.ERROR,
            "reason": f"scope: changed: {view.error}",
            "details": {**metric.details, "scope": "changed", "base_ref": view.base_ref},
        }
    )


def _relative(root: Path, path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()

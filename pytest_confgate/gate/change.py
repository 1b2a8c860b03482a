"""The change under review: what it touched, which gate judges it, how metrics narrow to it.

Issues 3 and 14: ``scope: changed`` judges only changed lines; ``risk_rules``
raise the tier by the paths touched; a change is compared with a base it cannot choose
(``gate.anchor``); on a pull request the base commit's configuration judges it, and a change
that edits the gate's configuration or machinery (``gate.machinery``) is judged at tier T2 or
higher, so it cannot relax its own gate.

Changes are computed whenever a base can be resolved, not only when the configuration asks for
them: otherwise a pull request could delete ``risk_rules`` and so skip the very check that
notices the deletion.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from pytest_confgate.collect.changes import (
    collect_changes,
    commit_of,
    committed_paths,
    is_ancestor,
    read_at_ref,
)
from pytest_confgate.config import ConfgateConfig, RiskRule
from pytest_confgate.config.loader import YAML_NAMES, LoadedConfig, parse_config_text
from pytest_confgate.config.textfile import tomllib
from pytest_confgate.exceptions import ConfigError, EvidenceError
from pytest_confgate.gate.anchor import (
    COMMAND_LINE_BASE,
    EVENT_BASE,
    BaseChoice,
    ConfigChoice,
    Requested,
    choose_base,
    off_the_base_branch,
)
from pytest_confgate.gate.machinery import is_sectioned, machinery_changes
from pytest_confgate.gate.scope import (
    config_changed,
    match_risk_rules,
    patch_coverage,
    rate_on_changed_files,
)
from pytest_confgate.gate.tiers import raised, tier_rank
from pytest_confgate.github.event import is_pull_request_run
from pytest_confgate.models import SEVERITY_ORDER, ChangeSet, EvalMetric, MetricStatus, RiskTier

NO_BASE = (
    "no base to compare the change against: set `base_ref:` in the configuration, pass "
    "--confgate-base, or run in a pull request (GITHUB_BASE_REF)"
)
_MAX_SECTIONED_BYTES = 1024 * 1024
_NO_BASE_CHOICE = BaseChoice(None, None, anchored=False)


@dataclass(frozen=True)
class ChangeView:
    """The change as the gate sees it; ``changes`` paths are relative to the pytest rootdir."""

    base_ref: str | None
    changes: ChangeSet | None
    top_paths: frozenset[str]
    error: str | None
    base: BaseChoice = _NO_BASE_CHOICE
    """Where ``base_ref`` came from and what was not used instead (``gate.anchor``)."""
    base_commit: str | None = None
    history: frozenset[str] = frozenset()
    """Paths a commit of the change touched that the final diff does not show (a file added
    and removed again): risk rules see them too (issue 34)."""

    @property
    def known(self) -> bool:
        return self.changes is not None

    def describe(self) -> dict[str, object]:
        """The base for the report's ``change``: the commit, and why this one."""
        return {"base": self.base_commit, "base_source": self.base.source}


@dataclass(frozen=True)
class Trust:
    """Which configuration judges the change and why; ``edits_config`` raises it to T2."""

    config: str
    source: str
    ignored: tuple[str, ...] = ()
    edits_config: str | None = None


def load_changes(
    root: Path, config: ConfgateConfig, requested: Requested, environ: Mapping[str, str]
) -> ChangeView:
    """Run git once, before the tests; failures are kept as a reason, never raised.

    A base from the real command line must still be on the pull request's base branch: one
    whose merge base with HEAD the event's base commit does not contain (``HEAD`` itself, say)
    is replaced by the event's base, and the report says so.
    """
    choice = choose_base(requested, config.base_ref, environ, root)
    if choice.ref is None:
        return ChangeView(None, None, frozenset(), NO_BASE, choice)
    committed_only = is_pull_request_run(environ) or environ.get("CI", "").lower() == "true"
    view = _diff(root, choice.ref, choice, committed_only)
    event_base = choice.event_base
    if choice.source == COMMAND_LINE_BASE and event_base and view.changes is not None:
        merge_base = view.changes.merge_base
        if is_ancestor(root, merge_base, event_base) is False:
            note = off_the_base_branch(choice.ref, merge_base, event_base)
            moved = replace(
                choice, ref=event_base, source=EVENT_BASE, ignored=(*choice.ignored, note)
            )
            view = _diff(root, event_base, moved, committed_only)
    return view


def _diff(root: Path, ref: str, choice: BaseChoice, committed_only: bool) -> ChangeView:
    """The change against ``ref``; in CI (``committed_only``) what was committed, nothing the
    job's build left in the checkout (issue 16)."""
    commit = commit_of(root, ref)
    try:
        changes = collect_changes(root, ref, committed_only=committed_only)
        committed = committed_paths(root, changes.merge_base)
    except EvidenceError as exc:
        error = f"cannot tell what changed: {exc}"
        return ChangeView(ref, None, frozenset(), error, choice, commit)
    rooted = changes.rooted()
    return ChangeView(ref, rooted, changes.paths(), None, choice, commit,
                      history_only(committed, changes.paths() | rooted.paths(),
                                   changes.root_prefix))


def history_only(committed: frozenset[str], final: frozenset[str], prefix: str
                 ) -> frozenset[str]:
    """The paths of ``committed`` (repo-relative) the final diff does not name, as written and
    relative to the rootdir ``prefix``."""
    names = set(committed)
    if prefix:
        names |= {p[len(prefix) + 1:] for p in committed if p.startswith(prefix + "/")}
    return frozenset(names - final)


def trusted_config(
    root: Path, loaded: LoadedConfig, view: ChangeView, choice: ConfigChoice
) -> tuple[LoadedConfig, Trust]:
    """The configuration that may judge this change, and why.

    Anchored (a pull request, or a base from the command line): always the base commit's.
    Otherwise the working tree's, unless the change edits it: then the base commit's too.
    """
    in_use = _relative(root, loaded.path)
    here = Trust(f"{in_use or 'defaults'} (the working tree)", choice.source, choice.ignored)
    edits = view.changes is not None and config_changed(view.changes, in_use)
    if not (edits or view.base.anchored):
        return loaded, here
    if view.base_commit is None:
        where = f"defaults; the base {view.base_ref} cannot be read ({view.error})"
        source = f"{choice.source}; the base commit's configuration is out of reach"
        return LoadedConfig(ConfgateConfig(), loaded.path), Trust(where, source, choice.ignored)
    commit, explicit, outside = view.base_commit, choice.path, []

    def read(name: str) -> str | None:
        if name != explicit:
            return read_at_ref(root, commit, name)
        try:  # named on the command line relative to the cwd, which read_at_ref cannot know
            return read_at_ref(root, commit, os.path.abspath(name))
        except EvidenceError:
            outside.append(name)  # outside the repository: not part of any change
            return None

    config, where, _ = base_config(read, explicit, commit[:12])
    if outside:
        return loaded, here
    why = "because the change edits it" if edits else f"({view.base.source})"
    note = None
    if edits:
        note = (
            f"the change edits the gate's configuration ({in_use or 'confgate.yml'}), so the "
            f"base branch's configuration ({where}) judges it, at tier T2 or higher"
        )
    source = f"{choice.source}, read from the base commit {why}"
    return LoadedConfig(config, loaded.path), Trust(where, source, choice.ignored, note)


def base_config(
    read: Callable[[str], str | None], explicit: str | None, at: str
) -> tuple[ConfgateConfig, str, str | None]:
    """The configuration a commit would use (``read`` gives a file's text there, or None):
    ``explicit`` if it has it, else its own discovery (order), else the defaults.
    Returns it, where it came from in words, and the file's name (None: defaults).

    Shared by the gate (git) and the publish step (GitHub's API), so both judge alike.
    """
    names = [explicit] if explicit else []
    for name in [*names, *YAML_NAMES, "pyproject.toml"]:
        text = read(name)
        if text is None or (name.endswith("pyproject.toml") and not _has_confgate_table(text)):
            continue
        try:
            return parse_config_text(Path(name), text), f"{name} at {at}", name
        except ConfigError as exc:
            # The trusted side is broken: its defaults are still trusted, the change is not.
            return ConfgateConfig(), f"defaults; {name} at {at} is invalid: {exc}", name
    return ConfgateConfig(), f"defaults; no configuration at {at}", None


def _has_confgate_table(text: str) -> bool:
    if "confgate" not in text:
        return False
    try:
        tool = tomllib.loads(text).get("tool")
    except (tomllib.TOMLDecodeError, ValueError):
        return True  # let the parser say what is wrong with it
    return isinstance(tool, dict) and "confgate" in tool


def machinery_notes(root: Path, view: ChangeView, protected: list[str]) -> list[str]:
    """Each machinery file (and section) the change edits, and protected paths it touches."""
    if view.changes is None:
        return []
    texts: dict[str, tuple[str | None, str | None]] = {}
    base = view.changes.merge_base
    for change in view.changes.files:
        for path in (change.path, change.old_path):
            if path and is_sectioned(path) and path not in texts:
                texts[path] = (_text_at(root, base, path), _text_here(root, path))
    paths = set(view.changes.paths()) | set(view.top_paths)
    return machinery_changes(paths, texts, protected)


def _text_at(root: Path, commit: str, path: str) -> str | None:
    try:
        return read_at_ref(root, commit, path)
    except EvidenceError:
        return "\0"  # unreadable: parses as nothing, so every section counts as changed


def _text_here(root: Path, path: str) -> str | None:
    try:
        with (root / path).open("rb") as handle:
            return handle.read(_MAX_SECTIONED_BYTES).decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        return "\0"


def applied_tier(
    config: ConfgateConfig, view: ChangeView, trust: Trust, machinery: list[str]
) -> tuple[RiskTier, str]:
    """The tier after ``risk_rules``, then the config-change and machinery rules, and why."""
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
            tier, reason = _history_tier(gate.risk_rules, view.history - paths, tier, reason)
    if trust.edits_config is not None:
        tier, reason = raised(tier, reason, "T2", trust.edits_config)
    if machinery:
        tier, reason = raised(
            tier, reason, "T2", f"the change edits the gate's machinery: {'; '.join(machinery)}"
        )
    return cast(RiskTier, tier), reason


def _history_tier(
    rules: list[RiskRule], history: frozenset[str] | set[str], tier: str, reason: str
) -> tuple[str, str]:
    """``tier`` raised by the rules a path only the change's commits touched matches."""
    if not history:
        return tier, reason
    demand, why = match_risk_rules(rules, history, "T0")
    if tier_rank(demand) <= tier_rank(tier) or " matched " not in why:
        return tier, reason
    return raised(tier, reason, demand, f"{why} (a commit of the change touched it; the final "
                  "diff does not show it)")


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

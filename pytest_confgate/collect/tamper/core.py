"""The pure core of the tamper analysis: ``find_tampering`` over base and head texts.

Both front doors (the gate's ``ChangeAnalysis`` and ``rank``'s ``analyse_directories``, in
``reading``) hand it the files that differ as text; it reads no file and runs no process.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pytest_confgate import syntax_tree
from pytest_confgate.collect.tamper.comments import WATCHED, Suppression, added_suppressions
from pytest_confgate.collect.tamper.compare import (
    RULES,
    SUPPRESSION_ADDED,
    TamperFinding,
    compare_outcomes,
    compare_tests,
    reruns,
)
from pytest_confgate.collect.tamper.patterns import PATTERN_RULES, SHELL_ARGV, find_patterns
from pytest_confgate.collect.tamper.settings import (
    CONFIG_NAMES,
    collection_of,
    config_changes,
    read_settings,
)
from pytest_confgate.collect.tamper.shapes import Collection, FileVersions, ModuleShape, Rerun
from pytest_confgate.collect.tamper.suites import read_module, top_functions


@dataclass(frozen=True)
class AddedSuppression:
    """A suppression comment the change added, and the lines it silences."""

    file: str
    suppression: Suppression


@dataclass(frozen=True)
class TamperReport:
    """Everything found, in file and line order."""

    findings: tuple[TamperFinding, ...] = ()
    suppressions: tuple[AddedSuppression, ...] = ()
    """Every suppression the change added, watched or not (the lint and security runs use it)."""
    unreadable: tuple[str, ...] = ()
    """Head files that could not be parsed or were too large to analyse."""
    files: int = 0
    """How many of the files compared differ between base and head."""
    reruns: tuple[Rerun, ...] = ()
    """Tests to run again after the main run (``replay``): edited base tests, new marks."""

    def hidden_lines(self, directive: str) -> dict[str, list[tuple[int, int]]]:
        """File -> line ranges silenced by ``directive`` (``noqa``, ``nosec``) the change added."""
        ranges: dict[str, list[tuple[int, int]]] = {}
        for added in self.suppressions:
            found = added.suppression
            if found.directive == directive:
                ranges.setdefault(added.file, []).append((found.first_line, found.last_line))
        return ranges


def find_tampering(
    files: Sequence[FileVersions],
    *,
    base_outcomes: Mapping[str, str] | None = None,
    head_outcomes: Mapping[str, str] | None = None,
    watch: Iterable[str] = WATCHED,
    own_packages: Iterable[str] = (),
) -> TamperReport:
    """Compare base and head: the pure core both front doors call.

    ``files`` are the files that differ, plus the rootdir's pytest configuration files even
    when unchanged (``PYTEST_FILES``: they say which files are test modules). Outcomes map
    pytest node ids to ``passed``/``failed``/``error``/``skipped``/``xfailed``/``xpassed``;
    both are needed for outcome findings. ``watch`` are the suppression directives reported
    (all of them are always in ``TamperReport.suppressions``). ``own_packages``: the
    project's top-level import names (``patterns.find_patterns``).
    """
    unreadable = [f.path for f in files if f.skipped]
    files = [f for f in files if not f.skipped]
    python = [f for f in files if f.path.endswith(".py")]
    head_collection = collection_of({f.path: f.head for f in files if "/" not in f.path})
    head, broken = _read_side(python, head_collection, head=True)
    unreadable += broken
    python = [f for f in python if f.path not in broken]  # neither side: no test "vanished"
    base_collection = collection_of({f.old_path: f.base for f in files if "/" not in f.old_path})
    base, _ = _read_side(python, base_collection, head=False)
    renamed = {f.base_path: f.path for f in python if f.base_path}
    findings = compare_tests(base, head, renamed)
    suppressions = _suppressions(python, unreadable)
    watched = set(watch)
    findings += [
        _suppression_finding(s) for s in suppressions if s.suppression.directive in watched
    ]
    findings += _config_findings(files)
    findings += [  # a shell in argv form is for the dangerous-operation checks, not tampering
        f for f in find_patterns(python, head_collection, own_packages=own_packages)
        if f.rule != SHELL_ARGV
    ]
    if base_outcomes is not None and head_outcomes is not None:
        known = {t.test_id: t for module in base.values() for t in module.tests.values()}
        reported = {f.test for f in findings if f.test}
        findings += compare_outcomes(base_outcomes, head_outcomes, known, reported)
    order = {rule: index for index, rule in enumerate((*RULES, *PATTERN_RULES))}
    findings.sort(key=lambda f: (f.file, f.line, order.get(f.rule, len(order)), f.message))
    changed = sum(1 for version in files if version.base != version.head)
    return TamperReport(tuple(findings), tuple(suppressions), tuple(sorted(unreadable)), changed,
                        tuple(reruns(base, head, renamed)))


def _read_side(
    files: Sequence[FileVersions], collection: Collection, *, head: bool
) -> tuple[dict[str, ModuleShape], list[str]]:
    """Parse one side of every Python file; helpers are shared across the files of a side."""
    parsed: dict[str, tuple[ast.Module, list[str]]] = {}
    unreadable: list[str] = []
    for version in files:
        text = version.head if head else version.base
        path = version.path if head else version.old_path
        if text is None:
            continue
        try:
            parsed[path] = (syntax_tree.parse(text), text.split("\n"))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            unreadable.append(path)
    helpers = {}
    for tree, _ in parsed.values():
        helpers.update(top_functions(tree))
    shapes = {}
    for path, (tree, lines) in parsed.items():
        try:
            shapes[path] = read_module(path, tree, lines, collection, helpers)
        except RecursionError:  # an expression nested past what the analysis can walk
            unreadable.append(path)
    return shapes, unreadable


def _suppressions(files: Sequence[FileVersions], unreadable: list[str]) -> list[AddedSuppression]:
    found: list[AddedSuppression] = []
    for version in files:
        if version.head is None:
            continue
        added = added_suppressions(version.base, version.head)
        if added is None:
            if version.path not in unreadable:
                unreadable.append(version.path)
            continue
        found += [AddedSuppression(version.path, item) for item in added]
    return found


def _suppression_finding(added: AddedSuppression) -> TamperFinding:
    item = added.suppression
    message = f"adds `{item.label}`: what it silences is no longer reported"
    return TamperFinding(SUPPRESSION_ADDED, added.file, item.line, message, None, item.text)


def _config_findings(files: Sequence[FileVersions]) -> list[TamperFinding]:
    """Entries that hide more, in the effective settings of each folder: an entry moved from
    ``setup.cfg`` to ``.flake8`` or ``pyproject.toml`` hides nothing new."""
    configs = [v for v in files if v.path.rsplit("/", 1)[-1] in CONFIG_NAMES]
    findings: list[TamperFinding] = []
    for version in configs:
        folder = version.path.rpartition("/")[0]
        here = [v for v in configs if v.path.rpartition("/")[0] == folder]
        before, after = _entries(here, head=False), _entries(here, head=True)
        selected = _selected(after) - _selected(before)
        for change in config_changes(version.path, version.base, version.head):
            elsewhere = after if change.removed else before
            if change.entry in elsewhere.get(_plain(change.setting), set()):
                continue  # moved (another file, ``ignore`` -> ``extend-ignore``): not news
            if not change.removed and _newly_checked(change.entry, selected):
                continue  # an ignore of a rule this change starts to check hides nothing
            findings.append(TamperFinding(change.rule, version.path, change.line, change.message,
                                          None, change.text))
    return findings


def _plain(setting: str) -> str:
    """``ruff.lint.extend-ignore`` and ``ruff.ignore`` both as ``ruff.ignore``."""
    tool, _, key = setting.rpartition(".")
    return f"{tool.removesuffix('.lint')}.{key.removeprefix('extend-')}"


def _entries(versions: Sequence[FileVersions], *, head: bool) -> dict[str, set[str]]:
    """Each setting's entries over the files of one folder, by ``_plain`` name."""
    found: dict[str, set[str]] = {}
    for version in versions:
        text = version.head if head else version.base
        for setting, entries in read_settings(version.path.rsplit("/", 1)[-1], text or "").items():
            found.setdefault(_plain(setting), set()).update(entries)
    return found


def _selected(entries: Mapping[str, set[str]]) -> set[str]:
    return {code for key in ("ruff.select", "flake8.select") for code in entries.get(key, ())}


def _newly_checked(entry: str, selected: set[str]) -> bool:
    """``ANN401`` (or ``tests/*: ANN001``) when ``ANN`` was selected by this change."""
    code = entry.rsplit(":", 1)[-1].strip()
    return any(code.startswith(prefix) for prefix in selected if prefix and prefix != "ALL")

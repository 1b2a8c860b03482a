"""Reading candidate trees for stage 2: which files changed, by how many lines, which tests.

IO only at the top (``read_tree``); the comparisons below work on ``{path: text}`` maps, so
"LOC delta" is the line diff ``git diff --stat`` would count (``difflib`` over each file).
"""

from __future__ import annotations

import dataclasses
import difflib
import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from pytest_confgate.rank.candidates import IGNORED_NAMES
from pytest_confgate.rank.code_metrics import measure
from pytest_confgate.rank.dangerous import new_operations
from pytest_confgate.rank.models import ChangeStats, CodeMetrics, Evidence, Issue

MAX_FILE_BYTES = 2_000_000
RANK_STATE = ".confgate-rank"
"""Inside each tree: the gate's report of that tree (the gate writes reports inside the tree)."""
_NOT_SOURCE_DIRS = frozenset({
    "test", "tests", "testing", "doc", "docs", "example", "examples", "benchmarks", "bench",
    "build", "dist", "scripts", "tools", RANK_STATE,
})

Tree = Mapping[str, str]


def read_tree(root: Path) -> dict[str, str]:
    """Every text file under ``root`` (posix relative path -> text), caches and VCS excluded."""
    files: dict[str, str] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_NAMES and d != RANK_STATE)
        for name in names:
            path = Path(folder, name)
            if name.endswith((".pyc", ".pyo")) or path.is_symlink():
                continue
            try:
                if path.stat().st_size > MAX_FILE_BYTES:
                    continue
                text = path.read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue  # binary or unreadable: not code we measure
            files[path.relative_to(root).as_posix()] = text
    return files


def is_test_file(path: str) -> bool:
    """pytest's default discovery names: ``test_*.py`` and ``*_test.py`` (and conftest)."""
    name = PurePosixPath(path).name
    return name.endswith(".py") and (
        name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
    )


def is_source_file(path: str) -> bool:
    """Python code that is neither a test nor in a docs/examples/build folder."""
    parts = PurePosixPath(path).parts
    return (
        path.endswith(".py")
        and not is_test_file(path)
        and not any(part in _NOT_SOURCE_DIRS for part in parts[:-1])
        and parts[-1] not in {"setup.py", "noxfile.py", "conftest.py"}
    )


def change_stats(tree: Tree, baseline: Tree) -> ChangeStats:
    """Lines added and removed against the baseline, and the test files that are new or changed."""
    added = removed = changed = source_changed = 0
    for path in sorted(set(tree) | set(baseline)):
        before, after = baseline.get(path), tree.get(path)
        if before == after:
            continue
        changed += 1
        source_changed += is_source_file(path)
        plus, minus = _line_delta(before or "", after or "")
        added += plus
        removed += minus
    return ChangeStats(
        lines_added=added,
        lines_removed=removed,
        files_changed=changed,
        source_files_changed=source_changed,
        new_test_files=tuple(new_test_files(tree, baseline)),
        edited_test_files=tuple(
            p for p in sorted(baseline) if is_test_file(p) and tree.get(p) != baseline[p]
        ),
    )


def new_test_files(tree: Tree, reference: Tree) -> list[str]:
    """Test files of ``tree`` that ``reference`` does not have at all.

    A candidate's edits to the baseline's test files are never new tests: the baseline's
    versions run on every candidate instead (``regression``), and an edit that rewrites the
    expected behaviour must not count against candidates that kept it.
    """
    return [p for p in sorted(tree) if is_test_file(p) and p not in reference]


def distinct_test_files(tree: Tree, others: list[Tree]) -> list[str]:
    """Without a baseline: the test files not identical in every other candidate."""
    return [
        p for p in sorted(tree)
        if is_test_file(p) and any(other.get(p) != tree[p] for other in others)
    ]


def code_metrics(tree: Tree, baseline: Tree | None) -> CodeMetrics:
    """Stage 2 metrics over the changed source files (all source files without a baseline)."""
    return measure(_measured(tree, baseline))


def dangerous_operations(tree: Tree, baseline: Tree | None) -> tuple[Issue, ...]:
    """Dangerous operations in the changed source files that the baseline's versions lack."""
    return new_operations(tree, baseline, _measured(tree, baseline))


def _measured(tree: Tree, baseline: Tree | None) -> dict[str, str]:
    return {
        path: text for path, text in tree.items()
        if is_source_file(path) and (baseline is None or baseline.get(path) != text)
    }


def unified_diff(tree: Tree, baseline: Tree, limit: int = 40_000) -> str:
    """The candidate's change as a unified diff (for the evaluator agent), cut at ``limit``."""
    chunks: list[str] = []
    for path in sorted(set(tree) | set(baseline)):
        before, after = baseline.get(path), tree.get(path)
        if before == after:
            continue
        chunks.extend(
            difflib.unified_diff(
                (before or "").splitlines(keepends=True),
                (after or "").splitlines(keepends=True),
                fromfile=f"a/{path}" if before is not None else "/dev/null",
                tofile=f"b/{path}" if after is not None else "/dev/null",
            )
        )
    text = "".join(chunks)
    return text if len(text) <= limit else text[:limit] + "\n[... diff truncated ...]\n"


def _line_delta(before: str, after: str) -> tuple[int, int]:
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


def added_test_ids(evidence: Evidence, baseline: Evidence) -> Evidence:
    """``evidence`` with the test ids it added to the baseline's own test files (issue 28)."""
    changes = evidence.changes
    if changes is None or evidence.outcomes is None or baseline.outcomes is None:
        return evidence
    edited = set(changes.edited_test_files)
    added = tuple(sorted(t for t in evidence.outcomes
                         if "::" in t and t.split("::", 1)[0] in edited
                         and t not in baseline.outcomes))
    return dataclasses.replace(evidence, changes=dataclasses.replace(changes,
                                                                     new_test_ids=added))


def new_test_ids(evidence: Evidence) -> set[str]:
    """The ids of its own run that are new tests (in new test files, or added by id)."""
    changes = evidence.changes
    if changes is None:
        return set()
    files = set(changes.new_test_files)
    return {t for t in evidence.outcomes or {}
            if t.split("::", 1)[0] in files or t in changes.new_test_ids}

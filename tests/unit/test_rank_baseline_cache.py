"""The baseline's evidence cache: keyed by every byte and setting, only complete evidence."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pytest_confgate.config.rank import RankTimeouts
from pytest_confgate.rank.baseline_cache import (
    baseline_key,
    load_baseline,
    save_baseline,
    save_tools,
    seed_tools,
)
from pytest_confgate.rank.evaluate import Settings
from pytest_confgate.rank.models import Evidence, Issue, TestCounts

SETTINGS = Settings(test_command=("python", "-m", "pytest"), python="python",
                    type_check=False, timeouts=RankTimeouts())


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "base"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("X = 1\n")
    (root / "data.bin").write_bytes(b"\x00\xff")
    return root


def complete() -> Evidence:
    issue = Issue(rule="F401", path="pkg/mod.py", message="unused", line=1)
    return Evidence(solution_id="baseline", builds=True,
                    tests=TestCounts(passed=3, failed=0, errors=0, duration_s=1.5),
                    coverage=0.75, lint=(issue,), security=(), duration_s=2.0)


def test_the_key_changes_with_any_byte_or_setting_and_ignores_caches(tree: Path) -> None:
    key = baseline_key(tree, SETTINGS)
    assert baseline_key(tree, SETTINGS) == key
    (tree / "__pycache__").mkdir()
    (tree / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"junk")
    assert baseline_key(tree, SETTINGS) == key
    assert baseline_key(tree, dataclasses.replace(SETTINGS, type_check=True)) != key
    (tree / "data.bin").write_bytes(b"\x00\xfe")
    assert baseline_key(tree, SETTINGS) != key


def test_complete_evidence_round_trips(tmp_path: Path) -> None:
    assert save_baseline(tmp_path / "cache", "k", complete())
    assert load_baseline(tmp_path / "cache", "k") == complete()
    assert load_baseline(tmp_path / "cache", "other") is None


@pytest.mark.parametrize(
    "change",
    [{"builds": False}, {"tests": None}, {"lint": None}, {"security": None}],
    ids=["did-not-build", "tests-did-not-run", "lint-did-not-run", "bandit-did-not-run"],
)
def test_incomplete_evidence_is_never_kept(tmp_path: Path, change: dict[str, object]) -> None:
    assert not save_baseline(tmp_path, "k", dataclasses.replace(complete(), **change))
    assert load_baseline(tmp_path, "k") is None


def test_a_damaged_entry_is_a_miss(tmp_path: Path) -> None:
    save_baseline(tmp_path, "k", complete())
    (tmp_path / "k.json").write_text('{"solution_id": "baseline", "builds": "maybe"')
    assert load_baseline(tmp_path, "k") is None


def test_the_baseline_runs_tool_caches_seed_each_candidate_privately(tmp_path: Path) -> None:
    # issue 28: ruff and bandit re-did every unchanged file per candidate
    base = tmp_path / "base"
    (base / ".confgate" / "cache" / "probes" / "ab").mkdir(parents=True)
    (base / ".confgate" / "cache" / "ruff.json").write_text('{"schema": 1}')
    (base / ".confgate" / "cache" / "probes" / "ab" / "x.bin").write_bytes(b"code")
    analyses = Path(".confgate", "cache", "probes", "analysis", "cd")
    (base / analyses).mkdir(parents=True)
    (base / analyses / "y.pickle").write_bytes(b"parser")
    folder = tmp_path / "rank-cache"
    folder.mkdir()
    assert save_tools(folder, "k1", base)
    one, two = tmp_path / "one", tmp_path / "two"
    for tree in (one, two):
        tree.mkdir()
        assert seed_tools(folder, "k1", tree)
    assert (one / ".confgate" / "cache" / "ruff.json").read_text() == '{"schema": 1}'
    (one / ".confgate" / "cache" / "ruff.json").write_text("poisoned")  # its own copy only
    assert (two / ".confgate" / "cache" / "ruff.json").read_text() == '{"schema": 1}'
    assert (folder / "k1.tools" / "ruff.json").read_text() == '{"schema": 1}'
    assert not seed_tools(folder, "other-key", two)
    assert not seed_tools(None, "k1", two)
    assert not save_tools(folder, "k2", tmp_path / "no-cache-here")
    # The probes' code is keyed by its absolute path as well: in no candidate's tree would it
    # ever be found, so it is neither kept nor copied into every candidate.
    assert not (folder / "k1.tools" / "probes" / "ab").exists()
    assert not (one / ".confgate" / "cache" / "probes" / "ab").exists()
    # coverage.py's analyses are keyed by content alone: every candidate starts with them.
    assert (one / analyses / "y.pickle").read_bytes() == b"parser"

"""Pure rules over a change: paths, globs, risk tiers, patch coverage, findings in scope."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_confgate.config import RiskRule
from pytest_confgate.gate.scope import (
    config_changed,
    findings_on_changed_lines,
    glob_match,
    match_risk_rules,
    normalize_path,
    patch_coverage,
    rate_on_changed_files,
)
from pytest_confgate.gate.tiers import TIER_ORDER
from pytest_confgate.models import ChangeSet, FileChange


def _change(path: str, lines: set[int] | None = None, **kwargs: Any) -> FileChange:
    kwargs.setdefault("status", "modified")
    kwargs.setdefault("old_path", None)
    return FileChange(path=path, added_lines=frozenset(lines or ()), **kwargs)


def _changes(*files: FileChange) -> ChangeSet:
    return ChangeSet(base_ref="origin/main", merge_base="0" * 40, files=files)


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("./a/b.py", "a/b.py"),
        ("a//b.py", "a/b.py"),
        ("a\\b\\c.py", "a/b/c.py"),
        ("a/./b/../c.py", "a/c.py"),
        ("../x.py", "../x.py"),
        ("a/../../x", "../x"),
        ("/abs/./x", "/abs/x"),
        ("/../x", "/x"),
        ("a/", "a"),
        (".", ""),
        ("", ""),
        ("dir with space/ä ö.py", "dir with space/ä ö.py"),
    ],
    ids=lambda v: repr(v),
)
def test_normalize_path_gives_one_spelling_per_path(raw: str, normal: str) -> None:
    assert normalize_path(raw) == normal


@given(st.text(alphabet="ab./\\ é", max_size=30))
def test_normalize_path_is_idempotent(raw: str) -> None:
    once = normalize_path(raw)
    assert normalize_path(once) == once
    assert "//" not in once
    assert "\\" not in once


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("src/**", "src/a.py", True),
        ("src/**", "src/a/b/c.py", True),
        ("src/**", "src", False),
        ("src/**", "srcx/a.py", False),
        ("**/x.py", "x.py", True),
        ("**/x.py", "a/b/x.py", True),
        ("**", "anything/at/all.py", True),
        ("*.py", "a.py", True),
        ("*.py", "a/b.py", False),
        ("src/*.py", "src/a/b.py", False),
        ("a/**/b.py", "a/b.py", True),
        ("a/**/b.py", "a/x/y/b.py", True),
        ("a/**/**/b.py", "a/x/b.py", True),
        ("a**b.py", "ab.py", True),
        ("a**b.py", "a/b.py", False),
        ("?.py", "a.py", True),
        ("?.py", "ab.py", False),
        ("a?b", "a/b", False),
        ("[ab].py", "a.py", True),
        ("[!ab].py", "c.py", True),
        ("[!ab].py", "a.py", False),
        ("a[!x]b", "a/b", False),
        ("[a-c]x", "bx", True),
        ("a.b", "axb", False),
        ("a[b", "a[b", True),
        ("[z-a].py", "[z-a].py", True),
        ("./src//**", "src/a.py", True),
        ("/src/**", "src/a.py", True),
        ("migrations/**", "app/migrations/0001.py", False),
        ("src/**", "./src/../src/a.py", True),
        ("src/**", "SRC/a.py", False),
    ],
    ids=lambda v: repr(v),
)
def test_glob_semantics(pattern: str, path: str, expected: bool) -> None:
    assert glob_match(pattern, path) is expected


@given(st.text(max_size=20), st.text(max_size=20))
def test_glob_match_never_crashes_on_any_text(pattern: str, path: str) -> None:
    assert glob_match(pattern, path) in (True, False)


RULES = [
    RiskRule(paths=["docs/**"], tier="T0"),
    RiskRule(paths=["src/**"], tier="T2"),
    RiskRule(paths=["src/auth/**", "migrations/**"], tier="T3"),
]


@pytest.mark.parametrize(
    ("paths", "default", "tier", "reason"),
    [
        (
            ["src/auth/login.py"],
            "T1",
            "T3",
            "src/auth/login.py matched gate.risk_rules[2] (src/auth/**) -> T3",
        ),
        (["src/app.py"], "T1", "T2", "src/app.py matched gate.risk_rules[1] (src/**) -> T2"),
        (
            ["docs/x.md"],
            "T1",
            "T1",
            "docs/x.md matched gate.risk_rules[0] (docs/**) -> T0, below gate.risk_tier T1 -> T1",
        ),
        ([], "T1", "T1", "no changed files -> gate.risk_tier T1"),
        (
            ["README.md", "setup.py"],
            "T1",
            "T1",
            "no risk rule matched the 2 changed file(s) -> gate.risk_tier T1",
        ),
        (
            ["SRC/Auth/login.py"],
            "T1",
            "T3",
            "SRC/Auth/login.py matched gate.risk_rules[2] (src/auth/**, ignoring case) -> T3",
        ),
        (
            ["./src//auth/../auth/x.py"],
            "T0",
            "T3",
            "src/auth/x.py matched gate.risk_rules[2] (src/auth/**) -> T3",
        ),
        (
            ["src/app.py", "migrations/0001.py"],
            "T1",
            "T3",
            "migrations/0001.py matched gate.risk_rules[2] (migrations/**) -> T3",
        ),
        (
            ["src/app.py"],
            "T3",
            "T3",
            "src/app.py matched gate.risk_rules[1] (src/**) -> T2, below gate.risk_tier T3 -> T3",
        ),
    ],
    ids=[
        "auth",
        "src",
        "docs-below-default",
        "nothing",
        "no-match",
        "case",
        "dots",
        "rename",
        "hi",
    ],
)
def test_risk_rules_give_the_highest_matching_tier_and_say_why(
    paths: list[str], default: str, tier: str, reason: str
) -> None:
    assert match_risk_rules(RULES, paths, default) == (tier, reason)


def test_an_ambiguous_case_match_takes_the_higher_tier() -> None:
    rules = [RiskRule(paths=["Src/**"], tier="T1"), RiskRule(paths=["src/**"], tier="T3")]
    tier, reason = match_risk_rules(rules, ["Src/x.py"], "T0")
    assert tier == "T3"
    assert reason == "Src/x.py matched gate.risk_rules[1] (src/**, ignoring case) -> T3"


def test_an_unknown_default_tier_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown risk tier 'T9'"):
        match_risk_rules(RULES, ["a.py"], "T9")


_PATHS = ["src/a.py", "SRC/auth/b.py", "docs/x.md", "migrations/1.py", "README.md", "./src/c.py"]


@given(
    rules=st.lists(st.sampled_from(RULES), max_size=4),
    paths=st.lists(st.sampled_from(_PATHS), max_size=6),
    default=st.sampled_from(TIER_ORDER),
    data=st.data(),
)
def test_risk_tier_is_never_below_the_default_and_ignores_path_order(
    rules: list[RiskRule], paths: list[str], default: str, data: st.DataObject
) -> None:
    tier, reason = match_risk_rules(rules, paths, default)
    assert TIER_ORDER.index(tier) >= TIER_ORDER.index(default)
    assert reason
    shuffled = data.draw(st.permutations(paths))
    assert match_risk_rules(rules, shuffled, default) == (tier, reason)


MOD = {"executed_lines": [1, 2, 3, 5], "missing_lines": [6, 7], "excluded_lines": [9]}


def test_patch_coverage_counts_only_changed_executable_lines() -> None:
    # 4 is a comment or blank (no statement), 9 is excluded: neither counts.
    changes = _changes(_change("pkg/mod.py", {2, 4, 6, 9}))
    result = patch_coverage(changes, {"./pkg/mod.py": MOD})
    assert (result.value, result.covered, result.total) == (0.5, 1, 2)
    assert result.uncovered() == {"pkg/mod.py": [6]}
    assert result.reason is None


def test_patch_coverage_adds_files_together_and_lists_unmeasured_ones() -> None:
    changes = _changes(
        _change("pkg/mod.py", {1, 2, 3}),
        _change("pkg/other.py", {1}, status="added"),
        _change("README.md", {1}),
        _change("gone.py", set(), status="deleted"),
        _change("logo.png", set(), binary=True),
    )
    other = {"executed_lines": [], "missing_lines": [1], "excluded_lines": []}
    result = patch_coverage(changes, {"pkg/mod.py": MOD, "pkg/other.py": other})
    assert (result.covered, result.total) == (3, 4)
    assert result.value == 0.75
    assert [f.path for f in result.files] == ["pkg/mod.py", "pkg/other.py"]
    assert result.not_measured == ("README.md",)


def test_patch_coverage_counts_branches_leaving_changed_lines() -> None:
    data = {
        "executed_lines": [1, 2, 3],
        "missing_lines": [5],
        "excluded_lines": [],
        "executed_branches": [[2, 3], [4, 5]],
        "missing_branches": [[2, 5], [3, -1]],
    }
    result = patch_coverage(_changes(_change("m.py", {2})), {"m.py": data})
    (figures,) = result.files
    assert (figures.statements, figures.covered_lines) == (1, 1)
    assert (figures.branches, figures.covered_branches) == (2, 1)
    assert figures.partial_lines == (2,)
    assert result.value == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        (
            _changes(_change("README.md", {1, 2})),
            "nothing to measure: no changed file is in the coverage data",
        ),
        (
            _changes(_change("pkg/mod.py", {4, 8, 9})),
            "nothing to measure: none of the 3 changed line(s) in measured files is executable",
        ),
        (_changes(), "nothing to measure: no changed file is in the coverage data"),
    ],
    ids=["docs-only", "comments-only", "empty"],
)
def test_patch_coverage_with_no_changed_executable_line_has_nothing_to_measure(
    changes: ChangeSet, reason: str
) -> None:
    result = patch_coverage(changes, {"pkg/mod.py": MOD})
    assert result.value is None
    assert result.reason == reason
    assert result.total == 0


ITEMS = [
    {"file": "a.py", "line": 2, "rule": "F401", "severity": None},
    {"file": "a.py", "line": 5, "rule": "E501", "severity": None},
    {"file": "b.py", "line": 1, "rule": "B101", "severity": "LOW"},
    {"file": "./a.py", "line": 0, "rule": "E902", "severity": None},
    {"file": "gone.py", "line": 1, "rule": "F401", "severity": None},
]
CHANGES = _changes(
    _change("a.py", {2, 3}),
    _change("c.py", {1}, status="added"),
    _change("only_removed.py", set()),
    _change("gone.py", set(), status="deleted"),
)


def test_only_findings_on_changed_lines_are_kept() -> None:
    kept = findings_on_changed_lines(ITEMS, CHANGES)
    assert [(item["file"], item["line"]) for item in kept] == [("a.py", 2), ("./a.py", 0)]


def test_the_changed_file_rate_counts_only_changed_files_the_tool_checked() -> None:
    checked = ["a.py", "b.py", "c.py", "only_removed.py", "unchanged.py"]
    rate = rate_on_changed_files(ITEMS, CHANGES, checked)
    assert (rate.value, rate.files_checked, rate.files_with_findings) == (0.5, 2, 1)
    assert len(rate.items) == 2
    assert rate.reason is None


def test_the_changed_file_rate_has_nothing_to_measure_when_no_changed_file_was_checked() -> None:
    rate = rate_on_changed_files([], CHANGES, ["unchanged.py"])
    assert rate.value is None
    assert rate.reason == "nothing to measure: the tool checked none of the changed files"


@pytest.mark.parametrize(
    ("files", "config_path", "expected"),
    [
        ((_change("pyproject.toml", {3}),), "pyproject.toml", True),
        ((_change("README.md", {1}),), "pyproject.toml", False),
        ((_change("confgate.yml", {1}, status="added"),), "pyproject.toml", True),
        ((_change("conf/old.yml", {1}, status="renamed", old_path="confgate.yml"),), None, True),
        ((_change("confgate.yaml", set(), status="deleted"),), None, True),
        ((_change("ci/gate.yml", {2}),), "./ci/gate.yml", True),
        ((_change("pyproject.toml", {3}),), None, False),
        ((_change("Confgate.YML", {1}),), "confgate.yml", True),
        ((_change("sub/confgate.yml", {1}),), "confgate.yml", False),
    ],
    ids=[
        "pyproject-in-use",
        "unrelated",
        "added-yml",
        "renamed-away",
        "deleted",
        "custom-path",
        "pyproject-not-in-use",
        "case",
        "other-folder",
    ],
)
def test_config_changed_spots_edits_of_the_gates_own_configuration(
    files: tuple[FileChange, ...], config_path: str | None, expected: bool
) -> None:
    assert config_changed(_changes(*files), config_path) is expected

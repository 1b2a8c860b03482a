"""The gate's machinery: which files and sections put a change at T2 (issue 14); pure."""

from __future__ import annotations

import pytest

from pytest_confgate.gate.machinery import changed_sections, is_sectioned, machinery_changes

PYPROJECT = """\
[project]
name = "calc"
dependencies = []

[tool.coverage.run]
branch = true

[tool.ruff]
line-length = 100
"""


@pytest.mark.parametrize(
    ("path", "machinery"),
    [
        ("conftest.py", True),
        ("tests/unit/conftest.py", True),
        ("pytest.ini", True),
        ("pkg/ruff.toml", True),
        (".github/workflows/ci.yml", True),
        (".github/actions/setup/action.yml", True),
        ("src/conftest_helpers.py", False),
        ("docs/workflows/ci.md", False),
        ("pyproject.toml", False),  # only some of its sections are machinery
    ],
)
def test_whole_machinery_files(path: str, machinery: bool) -> None:
    assert (machinery_changes([path], {}) == [path]) is machinery


def test_a_dependency_is_not_machinery_but_coverage_settings_are() -> None:
    deps = PYPROJECT.replace("dependencies = []", 'dependencies = ["attrs"]')
    assert changed_sections("pyproject.toml", PYPROJECT, deps) == []
    omit = PYPROJECT.replace("branch = true", 'branch = true\nomit = ["src/*"]')
    assert changed_sections("pyproject.toml", PYPROJECT, omit) == ["[tool.coverage.run]"]


def test_the_deepest_changed_table_is_named() -> None:
    added = PYPROJECT + '\n[tool.ruff.lint.per-file-ignores]\n"src/*" = ["S"]\n'
    assert changed_sections("pyproject.toml", PYPROJECT, added) == [
        "[tool.ruff.lint.per-file-ignores]"
    ]
    both = added.replace("line-length = 100", "line-length = 120")
    assert changed_sections("pyproject.toml", PYPROJECT, both) == [
        "[tool.ruff.lint.per-file-ignores]", "[tool.ruff]"
    ]


def test_a_pytest_plugin_entry_point_is_machinery() -> None:
    plugin = PYPROJECT + '\n[project.entry-points.pytest11]\ngreen = "calc.green"\n'
    assert changed_sections("pyproject.toml", PYPROJECT, plugin) == [
        "[project.entry-points.pytest11]"
    ]


def test_adding_or_removing_the_file_compares_with_nothing() -> None:
    assert changed_sections("pkg/pyproject.toml", None, PYPROJECT) == [
        "[tool.coverage.run]", "[tool.ruff]"
    ]
    assert changed_sections("setup.cfg", "[coverage:run]\nbranch = 1\n", None) == [
        "[coverage:run]"
    ]


def test_unparsable_text_counts_as_every_section_changed() -> None:
    assert changed_sections("pyproject.toml", PYPROJECT, "[tool.coverage.run\n") == [
        "(cannot be parsed, so every section counts)"
    ]
    assert changed_sections("tox.ini", "[pytest]\n", "no header\n") == [
        "(cannot be parsed, so every section counts)"
    ]


def test_ini_sections_by_file() -> None:
    before = "[metadata]\nname = calc\n[tool:pytest]\naddopts = -q\n[flake8]\nmax = 1\n"
    after = "[metadata]\nname = calc2\n[tool:pytest]\naddopts = -q -p x\n[flake8]\nmax = 2\n"
    assert changed_sections("setup.cfg", before, after) == ["[tool:pytest]"]
    tox = "[tox]\nenvlist = py\n[testenv]\ncommands = pytest\n"
    assert changed_sections("tox.ini", tox, tox.replace("pytest", "true")) == ["[testenv]"]


def test_protected_paths_and_sections_are_named_together() -> None:
    found = machinery_changes(
        ["scripts/release.sh", "tests/conftest.py", "setup.cfg", "README.md"],
        {"setup.cfg": ("[coverage:run]\n", "[coverage:run]\nbranch = 1\n")},
        ["scripts/**"],
    )
    assert found == [
        "scripts/release.sh matched gate.protected_paths (scripts/**)",
        "setup.cfg [coverage:run]",
        "tests/conftest.py",
    ]


def test_sectioned_files_by_name() -> None:
    assert is_sectioned("pkg/pyproject.toml")
    assert is_sectioned("tox.ini")
    assert not is_sectioned("pyproject.toml.bak")

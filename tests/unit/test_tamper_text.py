"""Suppression comments (``tokenize``) and tool configuration, read for the tamper analysis."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_confgate.collect.tamper.comments import WHOLE_FILE, added_suppressions, suppressions
from pytest_confgate.collect.tamper.settings import collection_of, config_changes
from pytest_confgate.config.metrics import DEFAULT_SUPPRESSIONS, SUPPRESSION_DIRECTIVES


@pytest.mark.parametrize(
    ("line", "directive", "codes", "label"),
    [
        ("x = 1  # noqa", "noqa", (), "# noqa"),
        ("x = 1  # NOQA:E501,W291", "noqa", ("E501", "W291"), "# noqa: E501,W291"),
        ("x = 1  # noqa: S101 -- asserts are the API here", "noqa", ("S101",), "# noqa: S101"),
        ("x = eval(s)  # nosec B307", "nosec", ("B307",), "# nosec: B307"),
        ("x = 1  #nosec", "nosec", (), "# nosec"),
        ("def f():  # pragma: no cover", "pragma: no cover", (), "# pragma: no cover"),
        ("if x:  # pragma no branch", "pragma: no branch", (), "# pragma: no branch"),
        ("x = 1  # type: ignore[attr-defined]", "type: ignore", ("attr-defined",),
         "# type: ignore[attr-defined]"),
        ("x = 1  # nosemgrep: python.eval", "nosemgrep", ("python.eval",),
         "# nosemgrep: python.eval"),
        ("x = 1  # pylint: disable=eval-used", "pylint: disable", ("eval-used",),
         "# pylint: disable=eval-used"),
        ("x = 1  # pyright: ignore[reportGeneralTypeIssues]", "pyright: ignore",
         ("reportGeneralTypeIssues",), "# pyright: ignore[reportGeneralTypeIssues]"),
    ],
)
def test_each_directive_is_read_from_real_comments(
    line: str, directive: str, codes: tuple[str, ...], label: str
) -> None:
    [found] = suppressions(line + "\n") or []
    assert (found.directive, found.codes, found.label) == (directive, codes, label)
    assert found.code == line.split("#")[0].strip()


def test_one_comment_can_hold_a_directive_for_each_tool() -> None:
    found = suppressions('PASS = "pass"  # noqa: S105  # nosec B105 -- a verdict\n') or []
    assert [(s.directive, s.codes) for s in found] == [("noqa", ("S105",)), ("nosec", ("B105",))]


def test_strings_and_prose_are_not_directives() -> None:
    assert suppressions('text = "# noqa"\n# we never use noqa here\n# pragma once\n') == []


def test_a_file_level_noqa_covers_the_whole_file_and_mypy_ignore_errors_is_type_ignore() -> None:
    found = suppressions("# ruff: noqa\n# mypy: ignore-errors\nx = 1\n") or []
    assert [(s.directive, s.first_line, s.last_line) for s in found] == [
        ("noqa", 1, WHOLE_FILE), ("type: ignore", 1, WHOLE_FILE),
    ]


def test_added_means_not_on_the_same_code_before_and_not_moved_with_an_edit() -> None:
    base = "import os  # noqa: F401\nx = 1\n"
    assert added_suppressions(base, base) == []
    assert added_suppressions(base, "import os  # noqa: F401,E402\nx = 1\n") != []
    edited = added_suppressions(base, "import os.path  # noqa: F401\nx = 1  # noqa\n") or []
    assert [(s.line, s.label) for s in edited] == [(2, "# noqa")]
    assert [s.line for s in added_suppressions(None, base) or []] == [1]
    assert added_suppressions(base, "def broken(:\n  # noqa\n") is None


@given(st.text(max_size=300))
def test_any_text_reads_as_directives_or_as_unreadable_never_a_crash(text: str) -> None:
    found = suppressions(text)
    assert found is None or all(s.directive in SUPPRESSION_DIRECTIVES for s in found)


def test_the_default_watch_list_is_the_issues_six() -> None:
    assert DEFAULT_SUPPRESSIONS == (
        "noqa", "nosec", "pragma: no cover", "pragma: no branch", "type: ignore", "nosemgrep",
    )


def _changes(name: str, base: str | None, head: str) -> list[tuple[str, str]]:
    return [(c.setting, c.entry) for c in config_changes(name, base, head)]


def test_ini_files_are_read_the_way_each_tool_reads_them() -> None:
    base = "[flake8]\nper-file-ignores =\n    a.py: E1\n[tool:pytest]\npython_files = test_*.py\n"
    head = (
        "[flake8]\nper-file-ignores =\n    a.py: E1,E2\nextend-exclude = vendor,build\n"
        "[tool:pytest]\npython_files = test_core.py\naddopts = -q -k 'not slow' --ignore=tests/x\n"
        "[coverage:report]\nexclude_also =\n    if DEBUG, VERBOSE:\n"
    )
    assert _changes("setup.cfg", base, head) == [
        ("coverage.report.exclude-also", "if DEBUG, VERBOSE:"),
        ("flake8.extend-exclude", "vendor"),
        ("flake8.extend-exclude", "build"),
        ("flake8.per-file-ignores", "a.py: E2"),
        ("pytest.addopts", "-k not slow"),
        ("pytest.addopts", "--ignore tests/x"),
        ("pytest.python-files", "test_*.py"),
    ]


def test_widening_or_unrelated_edits_are_not_reported() -> None:
    base = (
        '[tool.ruff.lint]\nignore = ["E501", "S101"]\n[tool.pytest.ini_options]\naddopts = "-q"\n'
    )
    head = (
        '[tool.ruff.lint]\nignore = ["E501"]\nselect = ["E"]\n[tool.pytest.ini_options]\n'
        'addopts = "-q -x --strict-markers"\ntestpaths = []\n[project]\nname = "renamed"\n'
    )
    assert _changes("pyproject.toml", base, head) == []
    # A base no tool could read hid nothing: all the head hides is new.
    assert _changes("pyproject.toml", "not toml [", head) == [("ruff.lint.ignore", "E501")]
    assert _changes("tox.ini", "[broken", "[pytest]\naddopts = -m smoke\n") == [
        ("pytest.addopts", "-m smoke")
    ]


def test_pytest_settings_count_only_in_the_rootdir_but_tool_settings_count_anywhere() -> None:
    head = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n[tool.coverage.run]\nomit = ["x"]\n'
    assert _changes("examples/demo/pyproject.toml", None, head) == [("coverage.run.omit", "x")]
    assert _changes("pyproject.toml", "", head) == [
        ("coverage.run.omit", "x"), ("pytest.testpaths", "tests"),
    ]


def test_mypy_overrides_that_ignore_errors_are_reported() -> None:
    head = '[[tool.mypy.overrides]]\nmodule = "pkg.legacy"\nignore_errors = true\n'
    assert _changes("pyproject.toml", "", head) == [("mypy.overrides", "pkg.legacy: ignore_errors")]


def test_collection_settings_come_from_the_file_pytest_would_read() -> None:
    pyproject = '[tool.pytest.ini_options]\npython_files = ["check_*.py"]\ntestpaths = ["t"]\n'
    found = collection_of({"pyproject.toml": pyproject, "setup.cfg": "[metadata]\nname = x\n"})
    assert (found.files, found.testpaths) == (("check_*.py",), ("t",))
    assert found.collects_file("t/check_a.py")
    assert not found.collects_file("src/check_a.py")
    first = collection_of({"pytest.ini": "[pytest]\n", "pyproject.toml": pyproject})
    assert first.files == ("test_*.py", "*_test.py")  # pytest.ini wins, even when empty
    assert not first.collects_file("build/test_x.py")
    assert not first.collects_file(".hidden/test_x.py")

"""The replay (issue 27): which tests run again, and what their runs mean.

The plan (``find_tampering(...).reruns``) and the text helpers are pure; ``replay`` runs a real
pytest process on a small real project in ``tmp_path``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_confgate.collect.tamper import FileVersions, find_tampering
from pytest_confgate.collect.tamper.replay import checks_of, failure_line, replay, unmarked

CALC = "def add(a, b):\n    return a + b\n"
BASE = '''\
import pytest
from calc import add


def test_add():
    assert add(1, 2) == 3


@pytest.mark.parametrize(("a", "b", "total"), [(1, 2, 3), (2, 2, 4)])
def test_sum(a, b, total):
    assert add(a, b) == total


def test_zero():
    assert add(0, 0) == 0
'''
PATH = "tests/test_calc.py"


def plan(head: str) -> list[tuple[str, str, str | None]]:
    report = find_tampering([FileVersions(PATH, BASE, head)])
    return [(r.kind, r.test, r.head_test) for r in report.reruns]


def test_edited_and_removed_tests_replay_their_base_version() -> None:
    head = BASE.replace("== 3\n", "== 4\n", 1).replace(
        "\n\ndef test_zero():\n    assert add(0, 0) == 0\n", "")
    assert plan(head) == [
        ("base", f"{PATH}::test_add", f"{PATH}::test_add"),
        ("base", f"{PATH}::test_zero", None),
    ]


def test_an_expected_value_edited_in_a_parametrised_case_replays() -> None:
    head = BASE.replace("(2, 2, 4)]", "(2, 2, 5)]")
    assert plan(head) == [("base", f"{PATH}::test_sum", f"{PATH}::test_sum")]


def test_new_skip_and_xfail_marks_run_unmarked_but_skipif_does_not() -> None:
    head = BASE + (
        "\n\n@pytest.mark.xfail\ndef test_new():\n    assert add(2, 2) == 5\n"
        "\n\n@pytest.mark.skipif(True, reason='windows')\ndef test_win():\n    assert 1\n"
    )
    head = head.replace("def test_zero", "@pytest.mark.skip\ndef test_zero")
    found = plan(head)
    assert ("unmarked", f"{PATH}::test_new", None) in found
    assert ("unmarked", f"{PATH}::test_zero", None) in found
    assert all(test != f"{PATH}::test_win" for _, test, _ in found)


def test_unchanged_tests_and_untouched_modules_do_not_replay() -> None:
    assert plan(BASE + "\n\nX = 1\n") == []
    assert plan(BASE.replace("def test_add():\n", "def test_add():\n    # why\n")) == []


def test_unmarked_blanks_only_the_marks_and_keeps_line_numbers() -> None:
    text = "import pytest\n\n\n@pytest.mark.xfail(\n    reason='x')\n@pytest.mark.slow\n" \
           "@pytest.mark.skipif(True, reason='y')\ndef test_a():\n    assert 0\n"
    stripped = unmarked(text, ["test_a"])
    assert stripped.split("\n")[3:8] == ["", "", "@pytest.mark.slow",
                                         "@pytest.mark.skipif(True, reason='y')", "def test_a():"]


def test_checks_and_failures_are_shown_on_one_line() -> None:
    assert checks_of(BASE, "test_add") == "assert add(1, 2) == 3"
    assert checks_of(BASE, "missing") is None
    failure = ("def test_add():\n>       assert add(1, 2) == 3\nE       assert 4 == 3\n"
               "E        +  where")
    assert failure_line(failure) == "assert 4 == 3 | +  where"
    assert failure_line("ImportError: cannot import name 'x'\n") == (
        "ImportError: cannot import name 'x'")


def _project(tmp_path: Path, tests: str) -> None:
    (tmp_path / "calc.py").write_text(CALC.replace("a + b", "a + b + 1"), encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text(
        "import pytest\n\n\n@pytest.fixture\ndef one():\n    return 1\n", encoding="utf-8")
    (tmp_path / "tests" / "test_calc.py").write_text(tests, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n', encoding="utf-8")


@pytest.fixture
def edited(tmp_path: Path) -> tuple[Path, str, str]:
    base = ("from calc import add\n\n\ndef test_add(one):\n    assert add(one, 2) == 3\n\n\n"
            "def test_still():\n    assert add(1, 1) == 3\n\n\n"
            "def test_gone():\n    assert add(0, 0) == 0\n")
    head = base.replace("add(one, 2) == 3", "add(one, 2) == 4").replace(
        "add(1, 1) == 3", "add(1, 1) == 9").split("\n\n\ndef test_gone")[0] + "\n"
    _project(tmp_path, head)
    return tmp_path, base, head


def test_a_base_version_that_fails_on_the_head_is_a_behaviour_change(
    edited: tuple[Path, str, str]
) -> None:
    root, base, head = edited
    versions = [FileVersions(PATH, base, head)]
    report = find_tampering(versions)
    result = replay(root, report.reruns, {PATH: versions[0]}, timeout_s=300, environ={})
    assert result.error is None
    found = {(f.rule, f.test, f.line) for f in result.findings}
    # test_add: the base fails and the edit passes. test_still: the edit fails too (a failing
    # test, not a new answer). test_gone: removed, and its base version fails on the head.
    assert found == {
        ("behaviour_change", f"{PATH}::test_add", 4),
        ("behaviour_change", f"{PATH}::test_gone", 12),
    }
    add = next(f for f in result.findings if f.test == f"{PATH}::test_add")
    assert (add.base, add.head) == ("assert add(one, 2) == 3", "assert add(one, 2) == 4")
    assert "assert 4 == 3" in add.message
    assert "the change edited it" in add.message
    assert result.tests == 5  # three base versions and the two edited head versions
    assert sorted(p.name for p in (root / "tests").iterdir()) == ["conftest.py", "test_calc.py"]


def test_a_base_version_that_no_longer_imports_is_a_behaviour_change(tmp_path: Path) -> None:
    base = "from calc import add, sub\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    head = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 4\n"
    _project(tmp_path, head)
    versions = [FileVersions(PATH, base, head)]
    report = find_tampering(versions)
    result = replay(tmp_path, report.reruns, {PATH: versions[0]}, timeout_s=300, environ={})
    [finding] = result.findings
    assert finding.rule == "behaviour_change"
    assert "sub" in finding.message


def test_a_new_xfail_that_hides_a_failure_and_one_that_does_not(tmp_path: Path) -> None:
    head = ("import pytest\nfrom calc import add\n\n\n@pytest.mark.xfail\ndef test_hides():\n"
            "    assert add(1, 2) == 3\n\n\n@pytest.mark.xfail(reason='flaky')\n"
            "def test_fine():\n    assert add(1, 2) == 4\n")
    _project(tmp_path, head)
    versions = [FileVersions(PATH, None, head)]
    report = find_tampering(versions)
    result = replay(tmp_path, report.reruns, {PATH: versions[0]}, timeout_s=300, environ={})
    assert [(f.rule, f.test, f.line) for f in result.findings] == [
        ("mark_hides_failure", f"{PATH}::test_hides", 6)]


def test_a_replay_that_cannot_run_says_why(tmp_path: Path) -> None:
    versions = [FileVersions("gone/test_x.py", "def test_x():\n    assert 1\n",
                             "def test_x():\n    assert 2\n")]
    report = find_tampering(versions)
    result = replay(tmp_path, report.reruns, {"gone/test_x.py": versions[0]}, timeout_s=300,
                    environ={})
    assert result.error is not None
    assert "gone/test_x.py" in result.error

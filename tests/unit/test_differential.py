"""Which files are the tests' machinery and which base tests a change can affect (issue 34)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_confgate.collect.tamper.differential import (
    _findings,
    _named_by_tests,
    is_machinery,
    known_failing,
    selected_modules,
)
from pytest_confgate.collect.tamper.shapes import FileVersions
from pytest_confgate.collect.tamper.syntax import literal_data
from pytest_confgate.models import ChangeSet, FileChange, TestOutcomes


@pytest.mark.parametrize(
    ("path", "machinery"),
    [
        ("tests/test_calc.py", True), ("tests/golden/add.txt", True),
        ("tests/helpers.py", True), ("pkg/conftest.py", True), ("pkg/test_x.py", True),
        ("pyproject.toml", True), ("pytest.ini", True), ("sub/pyproject.toml", False),
        ("calc/__init__.py", False), ("calc/testing_utils.py", False), ("docs/tests.md", False),
    ],
)
def test_what_is_machinery(path: str, machinery: bool) -> None:
    assert is_machinery(path) is machinery


def _base(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    found = {}
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        found[name] = path
    return found


BASE = {
    "tests/test_calc.py": "from calc import add\n",
    "tests/test_scale.py": "from calc.scale import scale\n",
    "tests/test_golden.py": "open('golden/out.txt')\n",
    "tests/test_other.py": "import json\n",
    "tests/expected.py": "X = 1\n",
    "tests/test_helper.py": "from expected import X\n",
}


@pytest.mark.parametrize(
    ("changed", "chosen"),
    [
        (["calc/scale.py"], ["tests/test_scale.py"]),
        (["calc/__init__.py"], ["tests/test_calc.py", "tests/test_scale.py"]),
        (["tests/golden/out.txt"], ["tests/test_golden.py"]),
        (["tests/expected.py"], ["tests/test_helper.py"]),
        (["tests/test_other.py"], ["tests/test_other.py"]),
        (["tests/conftest.py"], sorted(p for p in BASE if "/test_" in p)),
        (["README.md"], []),
    ],
)
def test_the_base_tests_a_change_can_affect(tmp_path: Path, changed: list[str],
                                            chosen: list[str]) -> None:
    changes = ChangeSet("main", "0" * 40, tuple(FileChange(p, None, "modified") for p in changed))
    assert selected_modules(_base(tmp_path, BASE), changes, {}) == chosen


def test_pytest_settings_select_every_base_test_and_other_sections_none(tmp_path: Path) -> None:
    changes = ChangeSet("main", "0" * 40, (FileChange("pyproject.toml", None, "modified"),))
    deps = FileVersions("pyproject.toml", '[project]\nname = "a"\n', '[project]\nname = "b"\n')
    assert selected_modules(_base(tmp_path, BASE), changes, {"pyproject.toml": deps}) == []
    narrowed = FileVersions("pyproject.toml", "[tool.pytest.ini_options]\naddopts = ''\n",
                            "[tool.pytest.ini_options]\naddopts = '-k add'\n")
    chosen = selected_modules(_base(tmp_path, BASE), changes, {"pyproject.toml": narrowed})
    assert chosen == sorted(p for p in BASE if "/test_" in p)


def test_a_test_that_failed_before_is_run_again_whatever_the_change_touched(
    tmp_path: Path,
) -> None:
    cache = tmp_path / ".pytest_cache" / "v" / "cache"
    cache.mkdir(parents=True)
    (cache / "lastfailed").write_text('{"tests/test_other.py::test_x": true}', encoding="utf-8")
    failing = known_failing(tmp_path)
    assert failing == ["tests/test_other.py::test_x"]
    changes = ChangeSet("main", "0" * 40, (FileChange("calc/scale.py", None, "modified"),))
    base = _base(tmp_path / "base", BASE)
    assert selected_modules(base, changes, {}, failing) == [
        "tests/test_other.py", "tests/test_scale.py"]
    assert known_failing(tmp_path / "nowhere") == []


def _outcome(outcome: str) -> dict[str, str]:
    return {"outcome": outcome, "failure": "E   assert 3 == 4"}


def test_outcomes_are_compared_test_by_test_even_when_the_main_run_fails() -> None:
    """Before, a main run with any failure silenced the comparison; now each test id whose
    outcome differs between the head's machinery and the base's is named."""
    results = {"t.py::a": _outcome("failed"), "t.py::b": _outcome("failed"),
               "t.py::c": _outcome("passed"), "t.py::d": _outcome("error"),
               "t.py::e": _outcome("passed")}
    by_test = {"t.py::a": "passed", "t.py::b": "failed", "t.py::c": "failed",
               "t.py::e": "skipped", "t.py::broken": "failed"}
    head = TestOutcomes(passed=1, failed=3, skipped=1)
    found = _findings(results, head, by_test, {})
    assert [f.test for f in found] == ["t.py::a", "t.py::c", "t.py::d"]
    messages = [f.message for f in found]
    assert messages[0].startswith("t.py::a: passed with the change's tests and settings and "
                                  "failed with the base's")
    assert "failed with the change's tests and settings and passed with the base's" in (
        messages[1])
    assert "not run (absent or deselected) with the change's tests" in messages[2]


@pytest.mark.parametrize(
    ("text", "data"),
    [
        ('"""Cases."""\n\nCASES = [(1, 2, 3), (-1, 1, 0)]\nLIMIT: float = 2.5\n', True),
        ("from __future__ import annotations\n\nTABLE = A = {'a': (1, None, b'x')}\n", True),
        ("def add(a, b):\n    return a + b\n", False),
        ("CASES = [(1, 2, 3)]\nCASES.append((2, 2, 4))\n", False),
        ("import os\n\nX = 1\n", False),
        ("X = compute()\n", False),
        ("calc.X = 1\n", False),
        ('"""Only a docstring."""\n', False),
        ("X = [\n", False),
    ],
    ids=["table", "future-and-chained", "function", "call", "import", "computed",
         "attribute", "docstring-only", "unparsable"],
)
def test_what_is_a_module_of_literal_data(text: str, data: bool) -> None:
    assert literal_data(text) is data


def test_a_changed_data_module_a_base_test_imports_is_taken_at_the_base(tmp_path: Path) -> None:
    """By what the module is and who imports it: a literal table under any name, imported by
    a base test, is the tests' expectation; code, or a table no test imports, is the head's."""
    base = _base(tmp_path, {
        "calc/cases.py": "CASES = [(1, 2, 3)]\n",
        "calc/_expected.py": "def expected():\n    return 3\n",
        "calc/limits.py": "LIMIT = 10\n",
        "tests/test_add.py": "from calc import cases\nfrom calc._expected import expected\n",
    })
    changes = ChangeSet("main", "0" * 40, tuple(
        FileChange(p, None, "modified")
        for p in ("calc/cases.py", "calc/_expected.py", "calc/limits.py")))
    assert _named_by_tests(base, changes) == {"calc/cases.py"}


@pytest.mark.parametrize("init", [
    "from ._cases import CASES\n", "from calc._cases import CASES\n", "from . import _cases\n",
])
def test_a_data_module_the_tests_reach_through_their_package_is_taken_at_the_base(
    tmp_path: Path, init: str
) -> None:
    """``from calc import CASES``, with ``calc/__init__.py`` handing it on from ``_cases``:
    the table was the head's, so the change's weakened cases judged its own code."""
    base = _base(tmp_path, {
        "calc/__init__.py": init,
        "calc/_cases.py": "CASES = [(1, 2, 3)]\n",
        "calc/_other.py": "OTHER = 1\n",
        "tests/test_add.py": "from calc import CASES\n",
    })
    changes = ChangeSet("main", "0" * 40, tuple(
        FileChange(p, None, "modified") for p in ("calc/_cases.py", "calc/_other.py")))
    assert _named_by_tests(base, changes) == {"calc/_cases.py"}

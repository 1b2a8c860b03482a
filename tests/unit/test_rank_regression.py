"""The regression suite: the baseline's test files, unmodified, on a candidate (real pytest)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from pytest_confgate.config.rank import RankTimeouts
from pytest_confgate.rank.evaluate import Processes, Settings, run_pytest
from pytest_confgate.rank.inert import inert
from pytest_confgate.rank.models import Regression
from pytest_confgate.rank.outcomes_plugin import LAST
from pytest_confgate.rank.regression import rerun_plan, run_regression, run_unmarked
from pytest_confgate.rank.trees import read_tree

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

SETTINGS = Settings(test_command=(sys.executable, "-m", "pytest"), python=sys.executable,
                    type_check=False, timeouts=RankTimeouts(tests_s=120))
CODE = "def fmt(seconds):\n    return f'{seconds // 86400}d'\n"
TESTS = ("from durations import fmt\n\n\ndef test_week():\n    assert fmt(604800) == '7d'\n\n\n"
         "def test_day():\n    assert fmt(86400) == '1d'\n")

BROKEN = "def fmt(seconds):\n    return ''\n"
PATCHER = ("import durations\n\n\ndef _right(seconds):\n    return f'{seconds // 86400}d'\n"
           "\n\ndurations.fmt.__code__ = _right.__code__\n")
"""Imported beside the baseline's tests, swaps ``BROKEN``'s code for a right one."""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def regression(tmp_path: Path, candidate: dict[str, str],
               own: dict[str, str] | None = None) -> Regression:
    base = write(tmp_path / "base", {"durations.py": CODE, "tests/test_fmt.py": TESTS})
    head = write(tmp_path / "head", candidate)
    return run_regression(head, base, (read_tree(base), read_tree(head)), own,
                          tmp_path / "work", SETTINGS, Processes())


def test_the_baseline_tests_run_as_the_baseline_has_them(tmp_path: Path) -> None:
    # The candidate changed the shared behaviour and rewrote the test to match.
    weeks = "def fmt(seconds):\n    return '1w' if seconds == 604800 else f'{seconds // 86400}d'\n"
    rewritten = TESTS.replace("'7d'", "'1w'")
    result = regression(tmp_path, {"durations.py": weeks, "tests/test_fmt.py": rewritten})
    assert result.outcomes == {"tests/test_fmt.py::test_week": "failed",
                               "tests/test_fmt.py::test_day": "passed"}
    expected = {"tests/test_fmt.py::test_week": "passed", "tests/test_fmt.py::test_day": "passed"}
    assert result.failures(expected) == [("tests/test_fmt.py::test_week", "failed")]


def test_a_deleted_test_file_comes_back_and_a_new_conftest_cannot_skip_it(
    tmp_path: Path
) -> None:
    skipper = ("import pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
               "    for item in items:\n        item.add_marker(pytest.mark.skip)\n")
    result = regression(tmp_path, {"durations.py": CODE, "tests/conftest.py": skipper})
    assert result.outcomes == {"tests/test_fmt.py::test_week": "passed",
                               "tests/test_fmt.py::test_day": "passed"}


def test_a_new_test_package_init_cannot_patch_the_code_under_test(tmp_path: Path) -> None:
    # ``tests/__init__.py`` runs when pytest imports tests/test_fmt.py as ``tests.test_fmt``.
    result = regression(tmp_path, {"durations.py": BROKEN, "tests/__init__.py": PATCHER})
    assert result.outcomes == {"tests/test_fmt.py::test_week": "failed",
                               "tests/test_fmt.py::test_day": "failed"}


def test_a_module_that_no_longer_imports_leaves_its_tests_missing(tmp_path: Path) -> None:
    result = regression(tmp_path, {"durations.py": "def format_duration(s):\n    return ''\n"})
    assert result.outcomes == {"tests/test_fmt.py": "error"}
    expected = {"tests/test_fmt.py::test_week": "passed"}
    assert result.failures(expected) == [("tests/test_fmt.py::test_week", "missing")]


def test_outcomes_cover_skips_xfails_deselection_and_errors(tmp_path: Path) -> None:
    tree = write(tmp_path / "t", {"tests/test_all.py": (
        "import pytest\n\n\n@pytest.fixture\ndef broken():\n    raise RuntimeError\n\n\n"
        "def test_ok():\n    pass\n\n\ndef test_fails():\n    assert 0\n\n\n"
        "def test_error(broken):\n    pass\n\n\n@pytest.mark.skip\ndef test_skip():\n    pass\n\n\n"
        "@pytest.mark.xfail\ndef test_xfail():\n    assert 0\n\n\n"
        "@pytest.mark.xfail\ndef test_xpass():\n    pass\n\n\ndef test_gone():\n    pass\n")})
    run = run_pytest(["-q", "-p", "no:cacheprovider", "--deselect", "tests/test_all.py::test_gone",
                      "tests/test_all.py"], tree, tmp_path / "state", SETTINGS, Processes())
    assert run.problem is None
    assert run.outcomes == {
        f"tests/test_all.py::test_{name}": outcome for name, outcome in [
            ("ok", "passed"), ("fails", "failed"), ("error", "error"), ("skip", "skipped"),
            ("xfail", "xfailed"), ("xpass", "xpassed"), ("gone", "deselected")]
    }


def test_a_run_that_cannot_start_is_a_problem_not_an_empty_pass(tmp_path: Path) -> None:
    broken = Settings(test_command=(sys.executable, "-m", "pytest", "--no-such-option"),
                      python=sys.executable, type_check=False,
                      timeouts=RankTimeouts(tests_s=120))
    tree = write(tmp_path / "t", {"tests/test_a.py": "def test_a():\n    pass\n"})
    run = run_pytest(["tests/test_a.py"], tree, tmp_path / "state", broken, Processes())
    assert run.outcomes is None
    assert run.problem is not None
    assert "pytest exited 4" in run.problem


OWN = {"tests/test_fmt.py::test_week": "passed", "tests/test_fmt.py::test_day": "passed"}


def test_modules_the_candidate_left_alone_are_not_run_again(tmp_path: Path) -> None:
    # Only its source changed: its own run is what the baseline's untouched file gives, and
    # the broken code shows there.
    result = regression(tmp_path, {"durations.py": CODE, "tests/test_fmt.py": TESTS},
                        own={**OWN, "tests/test_fmt.py::test_day": "failed"})
    assert result.outcomes == {**OWN, "tests/test_fmt.py::test_day": "failed"}
    assert not (tmp_path / "work").exists()  # nothing ran


def test_a_new_test_module_cannot_patch_the_code_the_baseline_tests_judge(
    tmp_path: Path
) -> None:
    # In the candidate's own run its new module is imported beside the baseline's and swaps
    # the broken function's code for a right one: every test passes there.
    patcher = PATCHER + "\n\ndef test_new():\n    pass\n"
    head = write(tmp_path / "head", {"durations.py": BROKEN, "tests/test_fmt.py": TESTS,
                                     "tests/test_zz_new.py": patcher})
    own = run_pytest(["-q", "-p", "no:cacheprovider"], head, tmp_path / "own", SETTINGS,
                     Processes()).outcomes
    assert own == {**OWN, "tests/test_zz_new.py::test_new": "passed"}
    result = regression(tmp_path, {"durations.py": BROKEN, "tests/test_fmt.py": TESTS,
                                   "tests/test_zz_new.py": patcher}, own=own)
    assert sorted(result.failures(OWN)) == [("tests/test_fmt.py::test_day", "failed"),
                                            ("tests/test_fmt.py::test_week", "failed")]


@pytest.mark.parametrize(
    ("changes", "plan"),
    [({"tests/test_new.py": "x"}, None),
     ({"tests/test_fmt.py": "edited"}, ["tests/test_fmt.py"]),
     ({"tests/test_fmt.py": None}, ["tests/test_fmt.py"]),
     ({"tests/conftest.py": "new"}, None),
     ({"tests/data/expected.json": "{}"}, None),
     ({"tests/helpers.py": "edited"}, None),
     ({"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-k not week'\n"}, None),
     ({"durations.py": "edited"}, [])],
    ids=["new-test-file", "edited-module", "deleted-module", "new-conftest", "new-data-file",
         "edited-helper",
         "pytest-config", "source-only"],
)
def test_the_rerun_plan(changes: dict[str, str | None], plan: list[str] | None) -> None:
    baseline = {"durations.py": CODE, "tests/test_fmt.py": TESTS, "tests/test_other.py": "o",
                "tests/helpers.py": "h", "pyproject.toml": "[project]\n"}
    candidate = {**baseline, **changes}
    head = {path: text for path, text in candidate.items() if text is not None}
    assert rerun_plan(baseline, head) == plan


DOCTESTED = ('def fmt(seconds):\n    """Days.\n\n    >>> fmt(86400)\n    \'1d\'\n    """\n'
             "    return f'{seconds // 86400}d'\n")
DOCTEST_SETTINGS = '[tool.pytest.ini_options]\naddopts = "--doctest-modules"\n'


def test_the_rerun_collects_the_doctests_the_baseline_collects(tmp_path: Path) -> None:
    # issue 28: a candidate that added a test file runs every baseline test again; the
    # baseline's doctests came back "missing" because only test files were named
    base = write(tmp_path / "base", {"durations.py": DOCTESTED, "tests/test_fmt.py": TESTS,
                                     "pyproject.toml": DOCTEST_SETTINGS})
    files = {"durations.py": DOCTESTED, "tests/test_fmt.py": TESTS,
             "tests/test_more.py": "import os\n\nHERE = os.getcwd()\n\n\ndef test_more():\n"
                                   "    pass\n"}  # runs code when imported: a full rerun
    for name, settings in (("keeps", DOCTEST_SETTINGS), ("drops", "[project]\nname = 'd'\n")):
        head = write(tmp_path / name, {**files, "pyproject.toml": settings})
        result = run_regression(head, base, (read_tree(base), read_tree(head)), {},
                                tmp_path / f"work-{name}", SETTINGS, Processes())
        assert result.outcomes == {"durations.py::durations.fmt": "passed",
                                   "tests/test_fmt.py::test_week": "passed",
                                   "tests/test_fmt.py::test_day": "passed"}, name


def test_new_tests_run_without_their_xfail_or_skip_mark(tmp_path: Path) -> None:
    tests = ("import pytest\n\n\n@pytest.mark.xfail(strict=False)\ndef test_hidden():\n"
             "    assert 1 == 2\n\n\n@pytest.mark.skip\ndef test_fine():\n    pass\n\n\n"
             "pytestmark = pytest.mark.skipif(True, reason='never')\n")
    root = write(tmp_path / "tree", {"tests/test_x.py": tests})
    found = run_unmarked(["tests/test_x.py::test_hidden", "tests/test_x.py::test_fine"], root,
                         tmp_path / "state", SETTINGS, Processes())
    assert found == {"tests/test_x.py::test_hidden": "failed",
                     "tests/test_x.py::test_fine": "passed"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("import pytest\nfrom durations import fmt\n\n\ndef test_a():\n    assert fmt(1)\n", True),
        ('"""Doc."""\nCASES = [(1, "0d"), (86400, "1d")]\n\n\n'
         '@pytest.mark.parametrize(("s", "t"), CASES)\ndef test_b(s, t):\n    pass\n', True),
        ("import pytest\n\n\n@pytest.fixture(autouse=True)\ndef f():\n    yield\n\n\n"
         "class TestX:\n    n = 1\n\n    def test_y(self):\n        pass\n", True),
        ("pytestmark = pytest.mark.slow\n", True),
        (PATCHER, False),
        ("import durations\ndurations.fmt = len\n", False),
        ("def test_a(x=print('hi')):\n    pass\n", False),
        ("@patch_everything\ndef test_a():\n    pass\n", False),
        ("if True:\n    import os\n", False),
        ("pytest_plugins = ['evil']\n", False),
        ("def pytest_collection_modifyitems(items):\n    pass\n", False),
        ("class T(Base, metaclass=Evil):\n    pass\n", False),
        ("this is not python (", False),
    ],
    ids=["plain", "parametrize-literals", "fixture-and-class", "pytestmark", "patcher",
         "attribute-assignment", "call-in-default", "unknown-decorator", "if", "plugins",
         "hook", "metaclass", "unparsable"],
)
def test_a_test_module_is_inert_when_importing_it_runs_nothing(text: str, expected: bool) -> None:
    assert inert(text) is expected


def test_inert_new_test_modules_do_not_rerun_the_whole_suite() -> None:
    base = {"durations.py": CODE, "tests/test_fmt.py": TESTS}
    plain = "from durations import fmt\n\n\ndef test_new():\n    assert fmt(0) == '0d'\n"
    assert rerun_plan(base, {**base, "tests/test_new.py": plain}) == []
    assert rerun_plan(base, {**base, "tests/test_new.py": PATCHER}) is None
    assert rerun_plan(base, {**base, "tests/conftest.py": ""}) is None


def test_the_new_modules_tests_run_after_the_baseline_tests(tmp_path: Path) -> None:
    # a new test that fixes the broken code at run time used to run first (test_aaa sorts
    # before test_fmt) and make the baseline tests pass; moved last, it cannot
    fixer = ("import durations\n\n\ndef _right(seconds):\n    return f'{seconds // 86400}d'\n"
             "\n\ndef test_fix():\n    durations.fmt.__code__ = _right.__code__\n")
    root = write(tmp_path / "tree", {"durations.py": BROKEN, "tests/test_fmt.py": TESTS,
                                     "tests/test_aaa.py": fixer})
    assert inert(fixer)
    fooled = run_pytest(["-p", "no:cacheprovider"], root, tmp_path / "a", SETTINGS, Processes())
    assert fooled.outcomes is not None
    assert fooled.outcomes["tests/test_fmt.py::test_week"] == "passed"
    run = run_pytest(["-p", "no:cacheprovider"], root, tmp_path / "b", SETTINGS, Processes(),
                     {LAST: json.dumps(["tests/test_aaa.py"])})
    assert run.outcomes is not None
    assert run.outcomes["tests/test_fmt.py::test_week"] == "failed"


def test_each_tree_runs_its_own_bytecode_even_for_a_file_of_the_same_size_and_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 28: bytecode is written (pytest's rewritten plugin modules are no longer rewritten
    # in every process), also when the caller asks for none; Python checks a module's bytecode
    # by the source's size and time only, so one tree's must never serve another's file.
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    test = "from calc import VALUE\n\n\ndef test_value():\n    assert VALUE == 1\n"
    trees = [write(tmp_path / name, {"calc.py": f"VALUE = {value}\n", "tests/test_v.py": test})
             for name, value in (("one", 1), ("two", 2))]
    for tree in trees:
        os.utime(tree / "calc.py", (1_700_000_000, 1_700_000_000))
    outcomes = [run_pytest(["-q", "-p", "no:cacheprovider"], tree, tmp_path / f"s-{tree.name}",
                           SETTINGS, Processes()).outcomes for tree in trees]
    assert outcomes == [{"tests/test_v.py::test_value": "passed"},
                        {"tests/test_v.py::test_value": "failed"}]
    assert list((trees[0] / "__pycache__").glob("calc.*.pyc"))  # written, in its own tree
    assert list((trees[0] / "tests" / "__pycache__").glob("test_v.*-pytest-*.pyc"))
    # A copy of a tree (the regression rerun's, a cross-test's) leaves its bytecode behind:
    # planted beside the other tree's file of the same size and time, it would pass here.
    shutil.copytree(trees[0] / "__pycache__", trees[1] / "__pycache__", dirs_exist_ok=True)
    rerun = run_regression(trees[1], trees[0], (read_tree(trees[0]), read_tree(trees[1])), None,
                           tmp_path / "work", SETTINGS, Processes())
    assert rerun.outcomes == {"tests/test_v.py::test_value": "failed"}

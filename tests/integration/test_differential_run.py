"""Issue 34 item 3 end to end: the base's tests, run with the base's machinery against the
head's code, in a pytest process that carries no mark of the gate.

Each test builds the base on ``main`` (``repo``: package ``calc`` with ``add`` and ``scale``,
two passing tests), makes a change that breaks ``add`` and hides it from the tests in one more
way, and runs ``pytest --confgate --confgate-base main`` through pytester. Before, each of
these passed at T1: the replay announced itself (an environment variable, its own names on
the command line), and expectations kept in a golden file or a helper were never run again.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import edit_file, metric, read_report, write_file

GOOD = "def add(a, b):\n    return a + b\n"


def _gate(repo: pytest.Pytester) -> dict[str, Any]:
    repo.runpytest("--confgate", "--confgate-base", "main")
    return read_report(repo)


def _commit_base(repo: pytest.Pytester) -> None:
    """The base tests ``add`` only through the new module (``test_calc`` keeps ``scale``)."""
    from conftest import git

    edit_file(repo, "tests/test_calc.py", "def test_add():\n    assert add(1, 2) == 3\n", "")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "more base")
    git(repo.path, "branch", "-f", "main")


def _changed_outcome(report: dict[str, Any], test: str) -> dict[str, Any]:
    integrity = metric(report, "test_integrity")
    items = [i for i in integrity["details"]["items"] if i["rule"] == "behaviour_change"]
    assert [i["test"] for i in items] == [test], integrity["details"]
    assert integrity["value"] == 0.0
    assert report["risk_tier"] in ("T2", "T3") or report["decision"] == "fail"
    return dict(items[0])


def test_code_that_reads_the_replays_environment_variable(repo: pytest.Pytester) -> None:
    edit_file(repo, "calc/__init__.py", GOOD,
          "import os\n\n\ndef add(a, b):\n"
          "    return a + b + (0 if os.environ.get('CONFGATE_' + 'REPLAY') else 1)\n")
    edit_file(repo, "tests/test_calc.py", "assert add(1, 2) == 3", "assert add(1, 2) == 4")
    item = _changed_outcome(_gate(repo), "tests/test_calc.py::test_add")
    assert "passed with the change's tests" in item["message"]
    assert "failed with the base's" in item["message"]


def test_code_that_looks_for_the_replay_on_the_command_line(repo: pytest.Pytester) -> None:
    edit_file(repo, "calc/__init__.py", GOOD,
          "import sys\n\n\ndef add(a, b):\n"
          "    told = any(arg.startswith('--confgate-' + 'replay') for arg in sys.argv)\n"
          "    return a + b + (0 if told else 1)\n")
    edit_file(repo, "tests/test_calc.py", "assert add(1, 2) == 3", "assert add(1, 2) == 4")
    _changed_outcome(_gate(repo), "tests/test_calc.py::test_add")


def test_a_test_module_that_swaps_the_code_back_when_it_sees_the_replay(
    repo: pytest.Pytester,
) -> None:
    edit_file(repo, "calc/__init__.py", GOOD, "def add(a, b):\n    return a + b + 1\n")
    edit_file(repo, "tests/test_calc.py", "assert add(1, 2) == 3", "assert add(1, 2) == 4")
    write_file(repo, "tests/test_zz_setup.py",
           "import sys\n\nimport calc\n\n\ndef _honest(a, b):\n    return a + b\n\n\n"
           "if any('replay' in arg for arg in sys.argv):\n"
           "    calc.add.__code__ = _honest.__code__\n\n\ndef test_nothing():\n    pass\n")
    _changed_outcome(_gate(repo), "tests/test_calc.py::test_add")


def test_an_expectation_moved_into_a_golden_file(repo: pytest.Pytester) -> None:
    write_file(repo, "tests/golden/add.txt", "3\n")
    write_file(repo, "tests/test_golden.py",
           "from pathlib import Path\n\nfrom calc import add\n\n\ndef test_add_golden():\n"
           "    expected = int((Path(__file__).parent / 'golden' / 'add.txt').read_text())\n"
           "    assert add(1, 2) == expected\n")
    _commit_base(repo)
    edit_file(repo, "calc/__init__.py", GOOD, "def add(a, b):\n    return a + b + 1\n")
    write_file(repo, "tests/golden/add.txt", "4\n")
    report = _gate(repo)
    integrity = metric(report, "test_integrity")
    tests = {i["test"] for i in integrity["details"]["items"] if i["rule"] == "behaviour_change"}
    assert "tests/test_golden.py::test_add_golden" in tests, integrity["details"]


def test_an_expectation_moved_into_a_helper_the_tests_import(repo: pytest.Pytester) -> None:
    write_file(repo, "tests/expected.py", "ADD_1_2 = 3\n")
    write_file(repo, "tests/test_helper.py",
           "from calc import add\n\nfrom expected import ADD_1_2\n\n\n"
           "def test_add_helper():\n    assert add(1, 2) == ADD_1_2\n")
    _commit_base(repo)
    edit_file(repo, "calc/__init__.py", GOOD, "def add(a, b):\n    return a + b + 1\n")
    write_file(repo, "tests/expected.py", "ADD_1_2 = 4\n")
    report = _gate(repo)
    integrity = metric(report, "test_integrity")
    tests = {i["test"] for i in integrity["details"]["items"] if i["rule"] == "behaviour_change"}
    assert "tests/test_helper.py::test_add_helper" in tests, integrity["details"]


def test_a_machinery_edit_that_changes_no_outcome_says_so(repo: pytest.Pytester) -> None:
    write_file(repo, "tests/conftest.py", "import pytest\n\n\n@pytest.fixture\ndef two():\n"
           "    return 2\n")
    report = _gate(repo)
    integrity = metric(report, "test_integrity")
    differential = integrity["details"]["differential"]
    assert differential["outcomes_changed"] == 0
    assert differential["note"] == "no outcome changed"
    assert differential["tests"] >= 2
    assert report["risk_tier"] == "T2"  # the machinery edit: the policy's choice stays


def test_a_conftest_that_patches_the_code_under_test(repo: pytest.Pytester) -> None:
    """The head's conftest is machinery: the base's tests run without it."""
    edit_file(repo, "calc/__init__.py", GOOD, "def add(a, b):\n    return a + b + 1\n")
    write_file(repo, "tests/conftest.py",
           "import pytest\n\nimport calc\n\n\n@pytest.fixture(autouse=True)\n"
           "def _steady(monkeypatch):\n"
           "    monkeypatch.setattr(calc, 'add', lambda a, b: a + b)\n")
    edit_file(repo, "tests/test_calc.py", "    assert add(1, 2) == 3",
          "    import calc\n\n    assert calc.add(1, 2) == 3")
    _changed_outcome(_gate(repo), "tests/test_calc.py::test_add")


PROBE = """\
import json, os, sys
from pathlib import Path

import pytest


def test_probe(request):
    seen = {
        "argv": sys.argv[1:],
        "env": sorted(os.environ),
        "modules": sorted(m for m in sys.modules if "confgate" in m or "replay" in m),
        "plugins": sorted(n for n, _ in request.config.pluginmanager.list_name_plugin()
                          if "confgate" in n or "replay" in n),
        "cwd_name": Path.cwd().name,
        "tmp": str(request.config._tmp_path_factory.getbasetemp().parent.parent),
    }
    with open(%(out)r, "a", encoding="utf-8") as log:
        log.write(json.dumps(seen) + "\\n")
"""


def test_the_run_carries_no_mark_of_the_gate(repo: pytest.Pytester, tmp_path_factory: Any
                                             ) -> None:
    """What the base's tests can see of the differential run: the same as an ordinary
    ``python -m pytest`` of those modules."""
    out = tmp_path_factory.mktemp("probe") / "seen.jsonl"
    write_file(repo, "tests/test_probe.py", "from calc import add\n\n" + PROBE % {"out": str(out)})
    _commit_base(repo)
    edit_file(repo, "calc/__init__.py", GOOD, "def add(a, b):\n    return a + b  # same\n")
    _gate(repo)
    seen = [__import__("json").loads(line) for line in out.read_text().splitlines()]
    differential = seen[-1]  # the main run first, then the differential run
    assert len(seen) == 2
    assert differential["argv"] == ["tests/test_calc.py", "tests/test_probe.py"]
    assert not [k for k in differential["env"] if "CONFGATE" in k or "REPLAY" in k]
    assert differential["plugins"] == ["confgate"]  # the entry point, as in any run
    # what any pytest run imports with pytest-confgate installed (and its editable finder)
    assert {m for m in differential["modules"] if not m.startswith("__editable__")} == {
        "pytest_confgate", "pytest_confgate.plugin", "pytest_confgate.outcomes"}
    assert differential["cwd_name"] == repo.path.name
    # pytest's own temporary folder, where the environment puts it for any run
    assert "confgate" not in differential["tmp"]
    assert "replay" not in differential["tmp"]


def test_a_changed_expectation_is_named_even_when_the_main_run_already_fails(
    repo: pytest.Pytester,
) -> None:
    """Before, any failing test in the main run silenced the differential run; now it
    compares test by test, so the weakened ``test_add`` is named beside the failing one."""
    edit_file(repo, "calc/__init__.py", GOOD, "def add(a, b):\n    return a + b + 1\n")
    edit_file(repo, "tests/test_calc.py", "assert add(1, 2) == 3", "assert add(1, 2) == 4")
    write_file(repo, "tests/test_broken.py", "def test_broken():\n    assert 1 == 2\n")
    report = _gate(repo)
    assert report["tests"]["failed"] == 1
    item = _changed_outcome(report, "tests/test_calc.py::test_add")
    assert item["message"].startswith("tests/test_calc.py::test_add: passed with the change's")


CORE = ("def double(x):\n    return 2 * x\n\n\ndef triple(x):\n    return 3 * x\n\n\n"
        "def half(x):\n    return x / 2\n")
CORE_TEST = "from calc.core import double\n\n\ndef test_double():\n    assert double(2) == 4\n"


def _commit_core(repo: pytest.Pytester, files: dict[str, str] | None = None) -> None:
    """The base gets a module ``calc/core.py`` and a test that imports it by that name."""
    from conftest import git

    for path, text in (files or {"calc/core.py": CORE, "tests/test_core.py": CORE_TEST}).items():
        write_file(repo, path, text)
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "core")
    git(repo.path, "branch", "-f", "main")


def _rename_core(repo: pytest.Pytester, body: str = CORE, expected: str = "4",
                 new: str = "calc/arith.py") -> None:
    from conftest import git

    if "/" in new.removeprefix("calc/"):
        write_file(repo, new.rpartition("/")[0] + "/__init__.py", "")
    git(repo.path, "mv", "calc/core.py", new)
    write_file(repo, new, body)
    module = new.removesuffix(".py").replace("/", ".")
    write_file(repo, "tests/test_core.py", CORE_TEST.replace("calc.core", module)
               .replace("== 4", f"== {expected}"))


def _no_changed_outcome(report: dict[str, Any], tests: int = 1) -> None:
    integrity = metric(report, "test_integrity")
    assert not [i for i in integrity["details"]["items"] if i["rule"] == "behaviour_change"], (
        integrity["details"])
    assert integrity["details"]["differential"]["note"] == "no outcome changed"
    assert integrity["details"]["differential"]["tests"] == tests


def test_a_renamed_module_is_no_changed_expectation(repo: pytest.Pytester) -> None:
    """Before, the base's test could not import the module by its old name in the copy: a
    ``behaviour_change`` (and T2, sign-off) for every pull request that renames a module."""
    _commit_core(repo)
    _rename_core(repo)
    _no_changed_outcome(_gate(repo))


def test_a_module_moved_down_a_package_keeps_its_relative_imports(repo: pytest.Pytester
                                                                    ) -> None:
    """The old name hands over the module itself: it runs under its new name, so its
    relative imports resolve as in the main run."""
    util = "def twice(x):\n    return 2 * x\n"
    _commit_core(repo, {"calc/util.py": util, "calc/core.py": "from .util import twice\n\n\n"
                        + CORE.replace("return 2 * x", "return twice(x)"),
                        "tests/test_core.py": CORE_TEST})
    moved = (repo.path / "calc" / "core.py").read_text(encoding="utf-8")
    _rename_core(repo, moved.replace("from .util", "from ..util"), new="calc/sub/core.py")
    _no_changed_outcome(_gate(repo))


def test_a_renamed_package_keeps_one_class_for_both_names(repo: pytest.Pytester) -> None:
    """Every module of a renamed package: the base's test that imports two of them by their
    old names gets the head's modules, so a class is the same class through both."""
    from conftest import git

    _commit_core(repo, {
        "shapes/__init__.py": "",
        "shapes/core.py": "class Thing:\n    def __init__(self, n):\n        self.n = n\n",
        "shapes/api.py": "from shapes.core import Thing\n\n\ndef make(n):\n"
                         "    return Thing(n)\n\n\ndef name():\n    return 'api'\n",
        "tests/test_shapes.py": "from shapes.api import make\nfrom shapes.core import Thing\n\n\n"
                                "def test_make():\n    assert isinstance(make(2), Thing)\n"})
    git(repo.path, "mv", "shapes", "figures")
    edit_file(repo, "figures/api.py", "from shapes.core", "from figures.core")
    edit_file(repo, "tests/test_shapes.py", "from shapes.api import make\nfrom shapes.core",
              "from figures.api import make\nfrom figures.core")
    _no_changed_outcome(_gate(repo))


@pytest.mark.parametrize(("body", "expected"), [
    (CORE.replace("return 2 * x", "return 2 * x + 1"), "5"),
    (CORE.replace("return 2 * x", "return 2 * x + 1"), "double(2)"),
    # the code tells the main run by its own module name: under the old name it answered right
    (CORE.replace("return 2 * x", "return 2 * x + (__name__ == 'calc.arith')"), "5"),
])
def test_a_rename_does_not_hide_a_changed_expectation(repo: pytest.Pytester, body: str,
                                                      expected: str) -> None:
    """The base's test imports the head's code by the old name: a rename cannot carry an
    edited expectation past the differential run (spelled as a number, as the code's own
    answer, or with code that asks which name it was imported by)."""
    _commit_core(repo)
    _rename_core(repo, body, expected)
    item = _changed_outcome(_gate(repo), "tests/test_core.py::test_double")
    assert "failed with the base's" in item["message"]
    assert "assert 5 == 4" in item["message"]

"""Issue 34, tried again as a hostile contributor: changes that only want green, each hiding
a failing test in a way no spelling list reads and the differential run cannot see (the
trick lives in the code under test, which both runs share, or in a test the base lacks).

Each builds on ``repo`` (package ``calc``, ``add`` and ``scale``, two passing tests, on
``main``), breaks something, hides it, and runs ``pytest --confgate --confgate-base main``
in-process. On the old code each of these passed at T1 with no finding; the whole battery,
with what each spelling produced, is in ``docs/security.md`` ("Tried as a hostile
contributor"). Every name the tricks use is built at run time.
"""

from __future__ import annotations

import builtins
import sys
from typing import Any

import pytest
from conftest import edit_file, git, metric, read_report, write_file

from pytest_confgate.collect.runtime_snapshot import replaced, snapshot_modules

GOOD = "def add(a, b):\n    return a + b\n"
BROKEN = "def add(a, b):\n    return a + b + 1\n"
MUL = "\n\ndef mul(a, b):\n    return a * b + 1\n"
FIND_CONFIG = """\
import inspect as _i


def _config():
    frame = _i.currentframe()  # no audit event names the project: inspect asks for it
    while frame is not None:
        for value in list(frame.f_locals.values()):
            manager = getattr(value, "plugin" + "manager", None)
            if manager is not None and hasattr(manager, "register"):
                return value
        frame = frame.f_back
    return None
"""
FLIP = """\


class _Steady:
    pass


def _flip(self, item, call):
    report = yield
    if report.failed:
        report.outcome = "pass" + "ed"
        report.longrepr = None
    return report


setattr(_Steady, "pytest_runtest_" + "makereport",
        getattr(__import__("py" + "test"), "hook" + "impl")(wrapper=True)(_flip))
_c = _config()
if _c is not None:
    getattr(_c, "plugin" + "manager").register(_Steady())
"""


def _base(repo: pytest.Pytester) -> None:
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "more base")
    git(repo.path, "branch", "-f", "main")


def _gate(repo: pytest.Pytester) -> dict[str, Any]:
    repo.runpytest("--confgate", "--confgate-base", "main")
    return read_report(repo)


def _named(report: dict[str, Any], rule: str) -> list[dict[str, Any]]:
    """The ``test_integrity`` items of ``rule``; the gate cannot pass at T1 with any."""
    integrity = metric(report, "test_integrity")
    items = [i for i in integrity["details"]["items"] if i["rule"] == rule]
    if items:
        assert integrity["value"] == 0.0
        assert report["risk_tier"] in ("T2", "T3") or report["decision"] == "fail"
    return items


def test_a_plugin_the_code_under_test_registers_while_it_is_imported(
    repo: pytest.Pytester,
) -> None:
    """``calc`` finds pytest's config through ``inspect`` frames and registers a hook that
    turns failed reports into passes: both runs import it, so no outcome differs."""
    edit_file(repo, "calc/__init__.py", GOOD, BROKEN)
    write_file(repo, "calc/_rt.py", FIND_CONFIG + FLIP)
    edit_file(repo, "calc/__init__.py", '"""A tiny module under test."""\n',
          '"""A tiny module under test."""\n\nfrom calc import _rt\n')
    report = _gate(repo)
    assert report["tests"]["failed"] == 0  # the flip itself worked
    [item] = _named(report, "runtime_plugin")
    assert item["file"] == "calc/_rt.py"
    assert "pytest_runtest_makereport" in item["message"]


def test_a_plugin_compiled_under_the_name_of_pytests_own_file(repo: pytest.Pytester) -> None:
    """The flipping plugin's code claims to be ``_pytest/runner.py``: every check that asks
    where a function comes from would take it for pytest's."""
    edit_file(repo, "calc/__init__.py", GOOD, BROKEN)
    write_file(repo, "calc/_rt.py", FIND_CONFIG + (
        "\n\n_SRC = (\n"
        "    'import pytest\\n'\n"
        "    'class Steady:\\n'\n"
        "    '    @pytest.hookimpl(wrapper=True)\\n'\n"
        "    '    def pytest_runtest_makereport(self, item, call):\\n'\n"
        "    '        report = yield\\n'\n"
        "    '        if report.failed:\\n'\n"
        "    '            report.outcome = \"passed\"\\n'\n"
        "    '            report.longrepr = None\\n'\n"
        "    '        return report\\n'\n)\n"
        "_ns = {'__name__': '_py' + 'test.runner'}\n"
        "_where = getattr(__import__('_py' + 'test.runner').runner, '__fi' + 'le__')\n"
        "exec(compile(_SRC, _where, 'exec'), _ns)\n"
        "_c = _config()\n"
        "if _c is not None:\n"
        "    getattr(_c, 'plugin' + 'manager').register(_ns['Steady']())\n"))
    edit_file(repo, "calc/__init__.py", '"""A tiny module under test."""\n',
          '"""A tiny module under test."""\n\nfrom calc import _rt\n')
    report = _gate(repo)
    assert report["tests"]["failed"] == 0  # the flip itself worked
    [item] = _named(report, "runtime_code_forged")
    assert item["file"] == "calc/_rt.py"
    assert "_pytest/runner.py" in item["message"]


def test_a_plugin_in_a_site_packages_folder_the_change_commits(repo: pytest.Pytester) -> None:
    """``site-packages`` is where installed libraries live, not the project's own hand; a
    folder of that name the change adds and puts on ``sys.path`` is still the change's."""
    edit_file(repo, "calc/__init__.py", GOOD, BROKEN)
    write_file(repo, "calc/site-packages/calc_qa.py", FIND_CONFIG + FLIP)
    edit_file(repo, "calc/__init__.py", '"""A tiny module under test."""\n',
          '"""A tiny module under test."""\n\nimport os\nimport sys\n\n'
          'sys.path.insert(0, os.path.join(os.path.dirname(__file__), "site-" + "packages"))\n'
          '__import__("calc_" + "qa")\n')
    report = _gate(repo)
    assert report["tests"]["failed"] == 0
    [item] = _named(report, "runtime_plugin")
    assert item["file"] == "calc/site-packages/calc_qa.py"


def test_a_failed_report_put_in_the_passed_category_counts_as_failed(
    repo: pytest.Pytester,
) -> None:
    """A new test module lists a plugin of the package in ``pytest_plugins``; its
    ``pytest_report_teststatus`` calls the new failing test passed."""
    edit_file(repo, "calc/__init__.py", "\n\ndef scale", MUL + "\n\ndef scale")
    write_file(repo, "calc/_qa.py",
           "def _status(report, config):\n"
           "    if report.when == 'call' and report.failed:\n"
           "        return 'pass' + 'ed', '.', 'PASSED'\n"
           "    return None\n\n\n"
           "globals()['pytest_report_' + 'teststatus'] = _status\n")
    write_file(repo, "tests/test_mul.py", "pytest_plugins = ['calc.' + '_qa']\n\n"
           "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n")
    report = _gate(repo)
    assert report["tests"]["failed"] == 1
    assert report["decision"] == "fail"
    assert [i["file"] for i in _named(report, "runtime_outcome_relabelled")] == ["calc/_qa.py"]
    assert [i["file"] for i in _named(report, "runtime_plugin")] == ["calc/_qa.py"]


def test_an_xfail_mark_added_while_the_new_test_runs(repo: pytest.Pytester) -> None:
    edit_file(repo, "calc/__init__.py", "\n\ndef scale", MUL + "\n\ndef scale")
    write_file(repo, "tests/test_mul.py",
           "import pytest\n\nfrom calc import mul\n\n\n@pytest.fixture(autouse=True)\n"
           "def _lenient(request):\n"
           "    request.node.add_marker(getattr(pytest.mark, 'xf' + 'ail')(strict=False))\n"
           "\n\ndef test_mul():\n    assert mul(2, 3) == 6\n")
    report = _gate(repo)
    assert report["tests"]["xfailed"] == 1
    [item] = _named(report, "runtime_mark_added")
    assert item["file"] == "tests/test_mul.py"
    assert "xfail" in item["message"]


def test_a_new_test_that_skips_itself_by_a_name_built_at_run_time(
    repo: pytest.Pytester,
) -> None:
    edit_file(repo, "calc/__init__.py", "\n\ndef scale", MUL + "\n\ndef scale")
    write_file(repo, "tests/test_mul.py",
           "import pytest\n\nfrom calc import mul\n\n\ndef test_mul():\n"
           "    if mul(2, 3) != 6:\n"
           "        getattr(pytest, 'sk' + 'ip')('flaky on this platform')\n")
    report = _gate(repo)
    assert report["tests"]["skipped"] == 1
    [item] = _named(report, "runtime_skipped_itself")
    assert item["file"] == "tests/test_mul.py"


def test_test_methods_swapped_by_a_base_class_of_the_code_under_test(
    repo: pytest.Pytester,
) -> None:
    """The base's test class derives from a helper class the package ships; the change gives
    that class an ``__init_subclass__`` that replaces every test method with a no-op."""
    write_file(repo, "calc/testing.py", "class CalcCase:\n    pass\n")
    write_file(repo, "tests/test_cls.py", "from calc import add\nfrom calc.testing import CalcCase"
           "\n\n\nclass TestAdd(CalcCase):\n    def test_add(self):\n"
           "        assert add(1, 2) == 3\n")
    edit_file(repo, "tests/test_calc.py", "def test_add():\n    assert add(1, 2) == 3\n", "")
    _base(repo)
    edit_file(repo, "calc/__init__.py", GOOD, BROKEN)
    write_file(repo, "calc/testing.py",
           "class CalcCase:\n    def __init_subclass__(cls, **kwargs):\n"
           "        super().__init_subclass__(**kwargs)\n"
           "        for name in list(vars(cls)):\n"
           "            if name.startswith('te' + 'st'):\n"
           "                setattr(cls, name, lambda self: None)\n")
    report = _gate(repo)
    assert report["tests"]["failed"] == 0
    [item] = _named(report, "runtime_test_replaced")
    assert item["file"] == "calc/testing.py"
    assert "tests/test_cls.py::TestAdd::test_add" in item["message"]


def test_an_assertion_that_fails_in_a_thread(repo: pytest.Pytester) -> None:
    """The thread ends after its test: pytest warns, and the test passed."""
    edit_file(repo, "calc/__init__.py", "\n\ndef scale", MUL + "\n\ndef scale")
    write_file(repo, "tests/test_zz_mul.py",
           "import threading\n\nfrom calc import mul\n\n\ndef test_mul():\n"
           "    def check():\n        assert mul(2, 3) == 6\n"
           "    threading.Thread(target=check).start()\n\n\n"
           "def test_zz_last():  # the thread ends after its test, before the session\n"
           "    for thread in threading.enumerate():\n"
           "        if thread is not threading.current_thread() and not thread.daemon:\n"
           "            thread.join()\n")
    report = _gate(repo)
    assert report["tests"]["failed"] == 0
    [item] = _named(report, "runtime_lost_failure")
    assert item["file"] == "tests/test_zz_mul.py"


def test_a_test_module_skipped_because_the_change_removed_a_module(
    repo: pytest.Pytester,
) -> None:
    write_file(repo, "calc/fast.py", "def double(x):\n    return 2 * x\n")
    write_file(repo, "tests/test_fast.py",
               "import pytest\n\nfast = pytest.importorskip('calc.fast')"
               "\n\n\ndef test_double():\n    assert fast.double(2) == 4\n")
    _base(repo)
    (repo.path / "calc" / "fast.py").unlink()
    report = _gate(repo)
    [item] = _named(report, "runtime_import_skip")
    assert item["file"] == "calc/fast.py"


def test_an_expectation_weakened_in_a_data_module_of_the_package(repo: pytest.Pytester) -> None:
    """The base's test takes its cases from ``calc/_expected.py``, a module of nothing but
    literals; the change breaks ``add`` and edits the table to match. The differential run
    takes that module at the base, like a test helper: the base's cases fail on the head's
    code."""
    write_file(repo, "calc/_expected.py", '"""Cases."""\n\nCASES = [(1, 2, 3), (2, 2, 4)]\n')
    write_file(repo, "tests/test_cases.py",
               "import pytest\n\nfrom calc import add\nfrom calc._expected import CASES\n\n\n"
               "@pytest.mark.parametrize(('a', 'b', 'total'), CASES)\n"
               "def test_add_cases(a, b, total):\n    assert add(a, b) == total\n")
    edit_file(repo, "tests/test_calc.py", "def test_add():\n    assert add(1, 2) == 3\n", "")
    _base(repo)
    edit_file(repo, "calc/__init__.py", GOOD, BROKEN)
    write_file(repo, "calc/_expected.py", '"""Cases."""\n\nCASES = [(1, 2, 4), (2, 2, 5)]\n')
    report = _gate(repo)
    assert report["tests"]["failed"] == 0  # the weakened table passes in the main run
    changed = {i["test"] for i in _named(report, "behaviour_change")}
    assert "tests/test_cases.py::test_add_cases" in changed, changed


def test_what_honest_projects_do_is_no_finding(repo: pytest.Pytester) -> None:
    """A plugin module the change leaves alone, tests inherited from a mixin, a decorator
    that wraps the test, a skip mark present at collection, the gate's own branch probes
    (builtins of their own, replaced as they fire): none is a run-time finding."""
    write_file(repo, "confgate.yml", "version: 1\ngate:\n  metrics:\n    - {type: test_pass_rate}\n"
           "    - {type: test_coverage, branch: true}\n")
    write_file(repo, "conftest.py", "pytest_plugins = ['tests.fixtures']\n")
    write_file(repo, "tests/__init__.py", "")
    write_file(repo, "tests/fixtures.py",
           "import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n\n\n"
           "def pytest_report_header(config):\n    return 'calc'\n")
    write_file(repo, "calc/testing.py", "class AddContract:\n    def test_add_zero(self):\n"
           "        from calc import add\n\n        assert add(0, 0) == 0\n")
    write_file(repo, "tests/helpers.py", "import functools\n\n\ndef logged(test):\n"
           "    @functools.wraps(test)\n    def run(*args, **kwargs):\n"
           "        return test(*args, **kwargs)\n    return run\n")
    write_file(repo, "tests/test_more.py",
           "import sys\n\nimport pytest\n\nfrom calc.testing import AddContract\n"
           "from tests.helpers import logged\n\n\nclass TestAdd(AddContract):\n"
           "    @logged\n    def test_two(self, two):\n        assert two == 2\n\n"
           "    @pytest.mark.skipif(sys.platform == 'nowhere', reason='never')\n"
           "    def test_skipif(self):\n        pass\n")
    _base(repo)
    edit_file(repo, "calc/__init__.py", GOOD, "def add(a, b):\n    return b + a\n")
    edit_file(repo, "tests/helpers.py", "return test(*args, **kwargs)",
              "return test(*args, **kwargs)  # the change edits the decorator too")
    report = _gate(repo)
    assert report["tests"]["passed"] == 5, report["tests"]
    runtime = [i for i in metric(report, "test_integrity")["details"].get("items", [])
               if i["rule"].startswith("runtime_")]
    assert runtime == []


def test_a_builtin_exception_replaced_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """``AssertionError`` swapped for a subclass of pytest's skip exception turns every
    failed ``assert`` into a skip; the builtins are snapshotted like pytest's own modules."""
    before = snapshot_modules(sys.modules)

    class Quiet(ZeroDivisionError):
        pass

    monkeypatch.setattr(builtins, "ZeroDivisionError", Quiet)
    found = replaced(before, sys.modules)
    monkeypatch.undo()
    assert found == ["builtins.ZeroDivisionError"]
    assert replaced(before, sys.modules) == []


def test_through_the_actions_gate_and_publish(
    repo: pytest.Pytester, tmp_path: Any, github_server: Any
) -> None:
    """The first of these through the Action's two jobs, as a pull request: the supervisor
    keeps the finding, and publish never says pass."""
    from fakes.github_server import FakeGitHubServer
    from test_action import Runner, assert_never_published_as_pass, serve_pull_request, upload

    from pytest_confgate.report.writers import load_report

    assert isinstance(github_server, FakeGitHubServer)
    edit_file(repo, "calc/__init__.py", GOOD, BROKEN)
    write_file(repo, "calc/_rt.py", FIND_CONFIG + FLIP)
    edit_file(repo, "calc/__init__.py", '"""A tiny module under test."""\n',
          '"""A tiny module under test."""\n\nfrom calc import _rt\n')
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "a broken add and a plugin that hides it")
    serve_pull_request(github_server, repo.path)
    runner = Runner(repo.path, tmp_path, github_server)
    gate = runner.run({"mode": "gate", "pytest-args": "-q -p no:cacheprovider"})
    published = runner.run({"mode": "publish", "gate-result": "success"},
                           workspace=upload(repo.path, tmp_path))

    assert_never_published_as_pass(published, github_server)
    assert any(". sign-offs: 1 needed for tier T2, got 0" in line for line in gate.log), (
        "\n".join(gate.log))
    final = load_report(tmp_path / "publish-workspace" / "confgate-report.json")
    integrity = next(m for m in final.metrics if m.type == "test_integrity")
    assert [i["file"] for i in integrity.details["items"] if i["rule"] == "runtime_plugin"] == [
        "calc/_rt.py"]

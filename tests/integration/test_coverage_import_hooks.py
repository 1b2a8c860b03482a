"""A module another import hook loads counts as under ``coverage run -m pytest``.

On Python 3.11 the gate's line and branch probes reach a module only through its own finder; a
loader placed ahead of it (typeguard's ``--typeguard-packages``, ``beartype.claw``, a project's
own) runs the module unseen. The gate must measure it (coverage.py's tracer, named), never report
"no data" or a smaller figure.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import pytest
from conftest import metric, read_report
from coverage_oracle import SLOW, coverage_py_totals, totals

APP = '''\
"""Loaded by the project's own import hook."""
LIMIT = 3


def clamp(x):
    if x > LIMIT:
        return LIMIT
    return x
'''

LIB = '''\
def double(x):
    if x:
        return 2 * x
    return 0
'''

LATE = '''\
def late(x):
    return x + 1
'''

HOOK = '''\
import importlib.abc
import importlib.machinery
import importlib.util
import sys


class Loader(importlib.abc.SourceLoader):
    """Reads and compiles the source itself: not the standard file loader."""

    def __init__(self, path):
        self.path = path

    def get_filename(self, fullname):
        return self.path

    def get_data(self, path):
        with open(path, "rb") as handle:
            return handle.read()


class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname.partition(".")[0] != "app":
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not str(spec.origin).endswith(".py"):
            return spec
        return importlib.util.spec_from_file_location(
            fullname, spec.origin, loader=Loader(spec.origin),
            submodule_search_locations=spec.submodule_search_locations,
        )


sys.meta_path.insert(0, Finder())
'''

TESTS_LIB = '''\
from lib import double


def test_double():
    assert double(2) == 4
'''

TESTS_APP = '''\
from app import clamp


def test_clamp():
    assert clamp(5) == 3


def test_late_import():
    from late import late

    assert late(1) == 2
'''


def _project(pytester: pytest.Pytester, coverage_run: str, *, hook: bool = True) -> None:
    pytester.mkpydir("app").joinpath("__init__.py").write_text(APP, encoding="utf-8")
    pytester.mkpydir("lib").joinpath("__init__.py").write_text(LIB, encoding="utf-8")
    pytester.path.joinpath("late.py").write_text(LATE, encoding="utf-8")
    if hook:
        pytester.path.joinpath("conftest.py").write_text(HOOK, encoding="utf-8")
    tests = pytester.path / "tests"
    tests.mkdir()
    tests.joinpath("test_a_lib.py").write_text(TESTS_LIB, encoding="utf-8")
    tests.joinpath("test_b_app.py").write_text(TESTS_APP, encoding="utf-8")
    pytester.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n'
        f'[tool.coverage.run]\nsource = ["app", "lib", "late"]\n{coverage_run}',
        encoding="utf-8",
    )


def _coverage_py_totals(pytester: pytest.Pytester, *args: str) -> dict[str, int]:
    data_file = pytester.path / ".coverage-reference"
    return coverage_py_totals(pytester.path, "-q", *args, data_file=data_file)


def _gate(pytester: pytest.Pytester, *args: str) -> dict[str, Any]:
    result = pytester.runpytest_subprocess("--confgate", "-p", "no:xdist", *args, timeout=SLOW)
    assert result.ret == 0, result.stdout.str()
    details: dict[str, Any] = metric(read_report(pytester), "test_coverage")["details"]
    return details


@pytest.mark.parametrize("branch", ["false", "true"])
def test_a_module_another_import_hook_loads_is_measured_as_coverage_py_measures_it(
    pytester: pytest.Pytester, branch: str
) -> None:
    _project(pytester, f"branch = {branch}\n")
    expected = _coverage_py_totals(pytester)
    details = _gate(pytester)
    assert totals(details) == expected
    if sys.version_info < (3, 12):
        assert details["engine_by_file"]["app/__init__.py"] == "coverage.py"
        assert details["engine_by_file"]["late.py"] == "coverage.py"
        assert any("app/__init__.py (Loader)" in w for w in details["warnings"])


def test_the_only_module_loaded_by_another_hook_is_never_no_data(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester, "")
    pytester.path.joinpath("tests", "test_a_lib.py").unlink()
    pytester.path.joinpath("tests", "test_b_app.py").write_text(
        TESTS_APP.partition("\n\n\ndef test_late")[0] + "\n", encoding="utf-8"
    )
    for name in ("lib/__init__.py", "lib", "late.py"):
        path = pytester.path / name
        path.unlink() if path.is_file() else path.rmdir()
    pytester.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n', encoding="utf-8"
    )
    result = pytester.runpytest_subprocess("--confgate", "-p", "no:xdist", timeout=SLOW)
    assert result.ret == 0, result.stdout.str()
    found = metric(read_report(pytester), "test_coverage")
    assert found["status"] == "ok", found.get("reason")
    assert found["details"]["covered_lines"] == 4
    assert found["details"]["source"] == ["app"]


@pytest.mark.skipif(
    importlib.util.find_spec("typeguard") is None, reason="typeguard is not installed"
)
def test_typeguards_import_hook_is_measured_as_coverage_py_measures_it(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester, "", hook=False)
    expected = _coverage_py_totals(pytester, "--typeguard-packages=app")
    details = _gate(pytester, "--typeguard-packages=app")
    assert totals(details) == expected


@pytest.mark.skipif(
    importlib.util.find_spec("beartype") is None, reason="beartype is not installed"
)
def test_beartype_claws_loader_is_measured_as_coverage_py_measures_it(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester, "", hook=False)
    pytester.path.joinpath("conftest.py").write_text(
        'from beartype.claw import beartype_package\n\nbeartype_package("app")\n',
        encoding="utf-8",
    )
    expected = _coverage_py_totals(pytester)
    details = _gate(pytester)
    assert totals(details) == expected


LAZY_FINDER = '''\
import importlib.abc
import importlib.machinery
import importlib.util
import sys


class LazyFinder(importlib.abc.MetaPathFinder):
    """lazy_loader's way (scientific Python packages): each submodule loads on first use."""

    def find_spec(self, name, path, target=None):
        if not name.startswith("lazypkg."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        spec.loader = importlib.util.LazyLoader(spec.loader)
        return spec


sys.meta_path.insert(0, LazyFinder())
'''


@pytest.mark.parametrize("branch", [False, True], ids=["lines", "branches"])
def test_modules_a_lazy_loader_loads_are_measured_and_nothing_crashes(
    pytester: pytest.Pytester, branch: bool
) -> None:
    """``importlib.util.LazyLoader`` loads a module when it is first asked for an attribute,
    and it sets the module's ``__class__`` to do so. The gate's audit hook asked the module
    being changed for its class (``isinstance``), so it loaded inside that assignment, and
    CPython freed ``_LazyModule`` once more on each: from the third module the process died
    in the garbage collector (exit -11), with only ``test_pass_rate`` measured too. A module
    imported but never used stays unloaded, as under ``coverage run``."""
    package = pytester.mkpydir("lazypkg")
    for number in range(6):
        package.joinpath(f"m{number}.py").write_text(
            f"def f(x):\n    if x:\n        return {number}\n    return -1\n", encoding="utf-8")
    package.joinpath("untouched.py").write_text("LOADED = True\n", encoding="utf-8")
    pytester.makeconftest(LAZY_FINDER)
    pytester.makepyfile(test_lazy="import importlib\n\n\ndef test_lazy():\n"
                                  "    for n in range(6):\n"
                                  "        module = importlib.import_module(f'lazypkg.m{n}')\n"
                                  "        assert module.f(1) == n\n"
                                  "    importlib.import_module('lazypkg.untouched')\n")
    pytester.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n[tool.coverage.run]\n'
        f'source = ["lazypkg"]\nbranch = {str(branch).lower()}\n', encoding="utf-8")
    result = pytester.runpytest_subprocess("--confgate", "-p", "no:cacheprovider", timeout=SLOW)
    output = result.stdout.str() + result.stderr.str()
    assert "Fatal Python error" not in output, output[-3000:]
    assert result.ret == 0, output[-3000:]
    row = metric(read_report(pytester), "test_coverage")
    assert totals(row["details"]) == coverage_py_totals(pytester.path, "-q", "-p",
                                                        "no:cacheprovider")


RUN_AGAIN = {
    "run_module": "runpy.run_module('calc.tool', run_name='__main__')",
    "run_path": "runpy.run_path(str(pathlib.Path(calc.tool.__file__)))",
    "exec": "exec(compile(pathlib.Path(calc.tool.__file__).read_text(), calc.tool.__file__, "
            "'exec'), {'__name__': 'again'})",
}


@pytest.mark.parametrize("branch", [False, True], ids=["lines", "branches"])
@pytest.mark.parametrize("how", sorted(RUN_AGAIN))
def test_a_measured_module_run_again_after_its_import_counts_both_runs(
    pytester: pytest.Pytester, how: str, branch: bool
) -> None:
    """A test that runs an imported module again (``runpy``, as a CLI's ``__main__`` is
    tested, or ``exec``): its second run has code the probes never compiled, so coverage.py
    traces it, but the tracer left out every file the probes had measured, this one too, and
    its lines were lost (3/4 against coverage.py's 4/4, with a pass)."""
    pytester.mkpydir("calc")
    pytester.path.joinpath("calc", "tool.py").write_text(
        "def used(x):\n    if x:\n        return 1\n    return 2\n\n\n"
        "if __name__ != 'calc.tool':\n    AGAIN = used(0)\n", encoding="utf-8")
    pytester.makepyfile(test_again="import pathlib\nimport runpy\n\nimport calc.tool\n\n\n"
                                   "def test_again():\n    assert calc.tool.used(1) == 1\n"
                                   f"    {RUN_AGAIN[how]}\n")
    pytester.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n[tool.coverage.run]\n'
        f'source = ["calc"]\nbranch = {str(branch).lower()}\n', encoding="utf-8")
    result = pytester.runpytest_subprocess("--confgate", "-p", "no:cacheprovider", timeout=SLOW)
    assert result.ret == 0, result.stdout.str()[-3000:]
    row = metric(read_report(pytester), "test_coverage")
    expected = coverage_py_totals(pytester.path, "-q", "-p", "no:cacheprovider")
    assert totals(row["details"]) == expected
    assert expected["covered_lines"] == expected["num_statements"]  # both runs counted


def test_a_module_imported_under_a_profiler_is_traced_not_an_error(
    pytester: pytest.Pytester,
) -> None:
    """3.11's probes leave a module imported while a profiler runs unprobed (the profiler would
    see each probe): the row was an error ("line probes could not measure"), though
    coverage.py traced that very module for the run. Now its figures are coverage.py's."""
    pytester.mkpydir("calc")
    pytester.path.joinpath("calc", "profiled.py").write_text(
        "def f(x):\n    if x:\n        return 1\n    return 2\n", encoding="utf-8")
    pytester.makepyfile(test_profiled="import importlib\nimport sys\n\n\ndef test_profiled():\n"
                                      "    sys.setprofile(lambda *args: None)\n    try:\n"
                                      "        module = importlib.import_module('calc.profiled')\n"
                                      "    finally:\n        sys.setprofile(None)\n"
                                      "    assert module.f(1) == 1\n")
    pytester.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n[tool.coverage.run]\n'
        'source = ["calc"]\n', encoding="utf-8")
    result = pytester.runpytest_subprocess("--confgate", "-p", "no:cacheprovider", timeout=SLOW)
    row = metric(read_report(pytester), "test_coverage")
    assert row["status"] == "ok", (row, result.stdout.str()[-2000:])
    assert totals(row["details"]) == coverage_py_totals(pytester.path, "-q", "-p",
                                                        "no:cacheprovider")
    assert result.ret == 0


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.11's probes switch to the tracer")
def test_confgate_gate_keeps_what_its_test_process_was_warned_of(
    pytester: pytest.Pytester,
) -> None:
    """The report says which files coverage.py traced and why; under ``confgate gate`` (and
    from xdist workers) the test process's warnings were dropped on the way."""
    import subprocess

    pytester.mkpydir("calc")
    pytester.path.joinpath("calc", "tool.py").write_text("def used():\n    return 1\n",
                                                          encoding="utf-8")
    pytester.makepyfile(test_again="import runpy\n\nimport calc.tool\n\n\ndef test_again():\n"
                                   "    assert calc.tool.used() == 1\n"
                                   "    runpy.run_module('calc.tool', run_name='__main__')\n")
    pytester.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n[tool.coverage.run]\n'
        'source = ["calc"]\n', encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest_confgate.cli", "gate", "--", "-p",
                           "no:cacheprovider"], cwd=pytester.path, capture_output=True,
                          text=True, timeout=SLOW, check=False)
    assert done.returncode == 0, done.stdout[-3000:]
    details = metric(read_report(pytester), "test_coverage")["details"]
    assert any("traced with coverage.py: calc/tool.py" in w for w in details["warnings"]), details

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

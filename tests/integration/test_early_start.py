"""``python -m pytest_confgate`` measures from the process start, as ``coverage run -m pytest``.

A package that pytest imports before the gate starts (a ``-p`` plugin, pluggy, a plugin's own
imports) runs its import-time lines before ``pytest --confgate`` can see them. The module entry
starts coverage before importing pytest; plain ``pytest --confgate`` names the modules instead,
and says what to run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import metric, read_report
from coverage_oracle import SLOW, coverage_py_totals, totals

APP = '''\
"""A package a pytest plugin imports."""
NAME = "app"


def greet(who):
    if not who:
        return "hello"
    return f"hello {who}"
'''

PLUGIN = '''\
"""A pytest plugin of the project, loaded by `-p app.plugin` before any conftest."""
from app import greet

MARK = greet("plugin")


def pytest_report_header(config):
    return MARK
'''

TESTS = '''\
from app import greet


def test_greet():
    assert greet("x") == "hello x"
'''


@pytest.fixture
def plugin_project(pytester: pytest.Pytester) -> pytest.Pytester:
    app = pytester.mkpydir("app")
    app.joinpath("__init__.py").write_text(APP, encoding="utf-8")
    app.joinpath("plugin.py").write_text(PLUGIN, encoding="utf-8")
    pytester.path.joinpath("tests").mkdir()
    pytester.path.joinpath("tests", "test_app.py").write_text(TESTS, encoding="utf-8")
    pytester.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\naddopts = "-p app.plugin"\n\n'
        '[tool.coverage.run]\nsource = ["app"]\n',
        encoding="utf-8",
    )
    return pytester


def _branch(pytester: pytest.Pytester) -> None:
    path = pytester.path / "pyproject.toml"
    path.write_text(path.read_text(encoding="utf-8") + "branch = true\n", encoding="utf-8")


def _coverage_py_totals(pytester: pytest.Pytester) -> dict[str, int]:
    # No -q: the same pytest arguments as the gate's own runs below.
    return coverage_py_totals(pytester.path, data_file=pytester.path / ".coverage-reference")


def _module_entry(pytester: pytest.Pytester, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_confgate", "-p", "no:xdist", *args],
        cwd=pytester.path, capture_output=True, text=True, timeout=SLOW, check=False,
    )


def _details(pytester: pytest.Pytester) -> dict[str, Any]:
    found: dict[str, Any] = metric(read_report(pytester), "test_coverage")["details"]
    return found


def _module_entry_counts_as_coverage_run(pytester: pytest.Pytester
                                         ) -> subprocess.CompletedProcess[str]:
    """``python -m pytest_confgate`` on the project: coverage.py's totals, nothing early."""
    expected = _coverage_py_totals(pytester)
    done = _module_entry(pytester)
    assert done.returncode == 0, done.stdout + done.stderr
    details = _details(pytester)
    assert totals(details) == expected
    assert "imported_before_start" not in details
    return done


@pytest.mark.parametrize("branch", [False, True], ids=["lines", "branches"])
def test_the_module_entry_counts_what_pytest_imported_first_as_coverage_run_does(
    plugin_project: pytest.Pytester, branch: bool
) -> None:
    if branch:
        _branch(plugin_project)
    done = _module_entry_counts_as_coverage_run(plugin_project)
    assert "confgate: PASS" in done.stdout


def test_the_module_entry_takes_pytests_arguments_and_exit_code(
    plugin_project: pytest.Pytester,
) -> None:
    plugin_project.path.joinpath("tests", "test_fails.py").write_text(
        "def test_fails():\n    assert False\n", encoding="utf-8"
    )
    done = _module_entry(plugin_project, "tests/test_app.py", "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    done = _module_entry(plugin_project, "--confgate", "tests")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 1 passed" in done.stdout


def test_a_source_named_as_a_package_keeps_what_ran_before_pytest_started(
    plugin_project: pytest.Pytester,
) -> None:
    """typeguard's layout: `source = ["typeguard"]` with the package under `src/`. coverage.py
    matches such a source by module name, so the early part is matched by module too."""
    src = plugin_project.path / "src"
    src.mkdir()
    (plugin_project.path / "app").rename(src / "app")
    pyproject = plugin_project.path / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8").replace('"."', '"src"'),
                         encoding="utf-8")
    expected = _coverage_py_totals(plugin_project)
    done = _module_entry(plugin_project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert totals(_details(plugin_project)) == expected


def test_branches_the_gate_forces_keep_what_ran_before_pytest_started(
    plugin_project: pytest.Pytester,
) -> None:
    """`{type: test_coverage, branch: true}` where coverage.py's settings measure lines: the
    early part records arcs anyway, so it is kept (it was left out, with a warning)."""
    pyproject = plugin_project.path / "pyproject.toml"
    lines_only = pyproject.read_text(encoding="utf-8")
    _branch(plugin_project)
    expected = _coverage_py_totals(plugin_project)
    pyproject.write_text(lines_only, encoding="utf-8")
    plugin_project.path.joinpath("confgate.yml").write_text(
        "gate:\n  metrics: [{type: test_pass_rate}, {type: test_coverage, branch: true}]\n",
        encoding="utf-8")
    done = _module_entry(plugin_project)
    assert done.returncode == 0, done.stdout + done.stderr
    details = _details(plugin_project)
    assert totals(details) == expected
    assert not details.get("warnings"), details.get("warnings")


@pytest.mark.parametrize("branch", [False, True], ids=["lines", "branches"])
def test_plain_pytest_starts_again_measured_and_counts_as_coverage_run_does(
    plugin_project: pytest.Pytester, branch: bool
) -> None:
    """``pytest --confgate`` from the command line: the plugin finds `app` imported before it
    started and replaces the process with the module entry, before any conftest or test."""
    if branch:
        _branch(plugin_project)
    expected = _coverage_py_totals(plugin_project)
    result = plugin_project.runpytest_subprocess("--confgate", "-p", "no:xdist", timeout=SLOW)
    assert result.ret == 0, result.stdout.str()
    details = _details(plugin_project)
    assert totals(details) == expected
    assert "imported_before_start" not in details
    output = result.stdout.str()
    assert output.count("hello plugin") == 1  # the header of one session, not two
    assert "confgate: PASS" in output


def test_plain_pytest_names_the_modules_imported_before_it_started(
    plugin_project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the restart turned off, the modules are named and the module entry suggested."""
    monkeypatch.setenv("CONFGATE_RESTART", "0")
    result = plugin_project.runpytest_subprocess("--confgate", "-p", "no:xdist", timeout=SLOW)
    assert result.ret == 0, result.stdout.str()
    details = _details(plugin_project)
    assert details["imported_before_start"] == ["app/__init__.py", "app/plugin.py"]
    assert details["run_instead"].startswith("python -m pytest_confgate")
    result.stdout.fnmatch_lines([
        "imported before coverage started (import-time lines not counted): app/__init__.py, "
        "app/plugin.py; run `python -m pytest_confgate *` to count them",
    ])


@pytest.mark.parametrize("branch", [False, True], ids=["lines", "branches"])
def test_confgate_gate_counts_what_pytest_imported_first_as_coverage_run_does(
    plugin_project: pytest.Pytester, branch: bool
) -> None:
    """The supervisor owns its test process's start too: it measures from there."""
    if branch:
        _branch(plugin_project)
    expected = _coverage_py_totals(plugin_project)
    done = subprocess.run(
        [sys.executable, "-m", "pytest_confgate.cli", "gate", "--", "-p", "no:xdist"],
        cwd=plugin_project.path, capture_output=True, text=True, timeout=SLOW, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    details = _details(plugin_project)
    assert totals(details) == expected
    assert "imported_before_start" not in details


WATCHES_THE_START = """\
import json
import os
import sys

from pytest_confgate.collect.coverage import early_start

early_start.begin()
import pytest  # noqa: E402, F401 - installed code: nothing to measure yet
before = early_start.started()
import app  # noqa: E402, F401 - the project's own code: measured from its first line
after = early_start.started()
data = early_start.handover()
lines = sorted(data.lines(app.__file__) or []) if data is not None else []
print(json.dumps([before, after, lines]))
"""


def test_the_early_measurement_starts_at_the_first_module_it_could_measure(
    pytester: pytest.Pytester,
) -> None:
    """Tracing pytest's own start-up measured nothing and cost ``confgate gate`` several
    percent: coverage.py's tracer starts as the project's first module is imported, and its
    import-time lines are recorded all the same."""
    pytester.mkpydir("app").joinpath("__init__.py").write_text(APP, encoding="utf-8")
    pytester.path.joinpath("watch.py").write_text(WATCHES_THE_START, encoding="utf-8")
    done = subprocess.run([sys.executable, "watch.py"], cwd=pytester.path, capture_output=True,
                          text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    before, after, lines = json.loads(done.stdout.splitlines()[-1])
    assert (before, after) == (False, True)
    assert {2, 5} <= set(lines)  # NAME = ..., def greet: the import-time lines


AHEAD_OF_IT = """\
import importlib.machinery
import json
import os
import sys

from pytest_confgate.collect.coverage import early_start

early_start.begin()


class Ahead:
    \"\"\"Put first, as pytest's assertion rewriter is for its plugins and conftests.\"\"\"

    def find_spec(self, name, path=None, target=None):
        if name == "app":
            return importlib.machinery.PathFinder.find_spec(name, path, target)
        return None


sys.meta_path.insert(0, Ahead())
import app  # noqa: E402, F401 - found by the hook ahead of the gate's finder
data = early_start.handover()
lines = sorted(data.lines(app.__file__) or []) if data is not None else []
print(json.dumps(lines))
"""


def test_the_early_measurement_starts_for_a_module_another_finder_found_first(
    pytester: pytest.Pytester,
) -> None:
    """pytest puts its assertion rewriter first on ``sys.meta_path`` and it finds the modules
    of the pytest11 plugins (pytest-mock, typeguard): the gate's finder never saw them, so
    nothing measured their import-time lines (pytest-mock 230/358 lines against 341/358)."""
    pytester.mkpydir("app").joinpath("__init__.py").write_text(APP, encoding="utf-8")
    pytester.path.joinpath("ahead.py").write_text(AHEAD_OF_IT, encoding="utf-8")
    done = subprocess.run([sys.executable, "ahead.py"], cwd=pytester.path, capture_output=True,
                          text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert {2, 5} <= set(json.loads(done.stdout.splitlines()[-1]))


def test_the_module_entry_counts_a_plugin_module_pytest_rewrites(
    plugin_project: pytest.Pytester,
) -> None:
    """A plugin module loaded with ``-p`` is imported through pytest's assertion rewriter,
    which is ahead of the gate's finder: it counts all the same."""
    plugin_project.path.joinpath("app", "plugin.py").rename(plugin_project.path / "app_plugin.py")
    pyproject = plugin_project.path / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8").replace("app.plugin", "app_plugin")
        .replace('source = ["app"]', 'source = ["app", "app_plugin"]'),
        encoding="utf-8",
    )
    _module_entry_counts_as_coverage_run(plugin_project)


def test_confgate_gate_measures_a_project_the_gate_itself_imports(
    pytester: pytest.Pytester,
) -> None:
    """``confgate gate``'s test process imported the gate's engine (pydantic, and with it
    annotated_types, typing_extensions...) before measuring, to overlap the two start-ups: a
    project that is one of those packages lost every line run before: 6 of 130 against
    coverage.py's 108. Such a project is measured from the start."""
    import shutil

    import annotated_types

    from pytest_confgate.gate.child import WARMED

    assert "annotated_types" in WARMED
    shutil.copytree(Path(annotated_types.__file__).parent, pytester.path / "annotated_types",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    pytester.path.joinpath("tests").mkdir()
    pytester.path.joinpath("tests", "test_types.py").write_text(
        "import annotated_types\n\n\ndef test_gt():\n"
        "    assert annotated_types.Gt(3).gt == 3\n", encoding="utf-8")
    pytester.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n'
        '[tool.coverage.run]\nsource = ["annotated_types"]\n', encoding="utf-8")
    expected = _coverage_py_totals(pytester)
    done = subprocess.run(
        [sys.executable, "-m", "pytest_confgate.cli", "gate", "--", "-p", "no:xdist"],
        cwd=pytester.path, capture_output=True, text=True, timeout=SLOW, check=False,
    )
    details = _details(pytester)
    assert totals(details) == expected, done.stdout[-3000:]
    assert expected["covered_lines"] > expected["num_statements"] // 2


def test_the_packages_the_gate_imports_first_are_the_ones_it_names() -> None:
    """``WARMED`` lists what importing the engine brings in from outside the standard library
    and this package: a new dependency of the engine must be named there."""
    from pytest_confgate.gate.child import WARMED

    code = ("import sys, sysconfig; before = set(sys.modules)\n"
            "import pytest_confgate.gate.engine\n"
            "std = sysconfig.get_paths()['stdlib']\n"
            "print(' '.join(sorted({n.partition('.')[0] for n, m in list(sys.modules.items())\n"
            "    if n not in before and isinstance(getattr(m, '__file__', None), str)\n"
            "    and not m.__file__.startswith(std)\n"
            "    and not n.startswith('pytest_confgate')})))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=SLOW)
    assert set(done.stdout.split()) <= WARMED, done.stdout


WHAT_PYTEST_SEES = '''\
import os
import sys
from pathlib import Path

import __main__


def test_started_as():
    spec = getattr(__main__, "__spec__", None)
    Path(os.environ["SEEN"]).write_text(repr((
        sys.argv[0], getattr(spec, "name", None), getattr(__main__, "__file__", None),
        "CONFGATE_RESTARTED_AS" in os.environ)), encoding="utf-8")
'''


@pytest.mark.parametrize("how", ["python -m pytest", "the pytest script"])
def test_a_restarted_run_shows_the_tests_the_entry_bare_pytest_shows(
    plugin_project: pytest.Pytester, how: str
) -> None:
    """The restart ran pytest under ``python -m pytest_confgate``: the tests saw its
    ``sys.argv[0]`` and ``__main__``, where bare pytest's are pytest's (click names the program
    in a usage text from them, so a CLI's usage test failed only under the gate)."""
    plugin_project.path.joinpath("tests", "test_entry.py").write_text(WHAT_PYTEST_SEES,
                                                                      encoding="utf-8")
    script = Path(sys.executable).with_name("pytest")
    entry = ([sys.executable, "-m", "pytest"] if how == "python -m pytest"
             else [sys.executable, str(script)])
    seen = {}
    for gated in (False, True):
        out = plugin_project.path / f"seen-{gated}.txt"
        environment = {**os.environ, "SEEN": str(out)}
        flags = ["--confgate"] if gated else ["-p", "no:confgate"]
        done = subprocess.run([*entry, "-p", "no:xdist", "-p", "no:cacheprovider", *flags],
                              cwd=plugin_project.path, capture_output=True, text=True,
                              timeout=SLOW, check=False, env=environment)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr
        seen[gated] = out.read_text(encoding="utf-8")
    assert seen[True] == seen[False]
    assert "imported_before_start" not in _details(plugin_project)  # it did start again


@pytest.mark.parametrize("how", ["module entry", "restart"])
def test_what_pytest_imported_first_counts_under_relative_files(
    plugin_project: pytest.Pytester, how: str
) -> None:
    """anyio is a pytest plugin with ``relative_files = true``: the measurement from the
    process start recorded relative names, the gate asked for absolute ones and kept none of
    it: 2 of 9 lines where ``coverage run`` counts 9, with nothing named."""
    # A src layout: `source = ["app"]` names a package, matched by module name, not a folder.
    plugin_project.path.joinpath("src").mkdir()
    plugin_project.path.joinpath("app").rename(plugin_project.path / "src" / "app")
    pyproject = plugin_project.path / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8").replace('pythonpath = ["."]',
                                                         'pythonpath = ["src"]')
    pyproject.write_text(text + "relative_files = true\n", encoding="utf-8")
    expected = _coverage_py_totals(plugin_project)
    if how == "module entry":
        done = _module_entry(plugin_project)
        assert done.returncode == 0, done.stdout + done.stderr
    else:
        result = plugin_project.runpytest_subprocess("--confgate", "-p", "no:xdist",
                                                     timeout=SLOW)
        assert result.ret == 0, result.stdout.str()
    details = _details(plugin_project)
    assert totals(details) == expected
    assert "imported_before_start" not in details

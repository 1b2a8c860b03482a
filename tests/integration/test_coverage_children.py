"""Code run in child processes counts as under ``coverage run -m pytest`` + ``coverage combine``.

Each project here sets coverage.py's own child-process settings (``patch``, ``concurrency``,
``parallel``); the gate's figures must equal coverage.py's totals on the same project.
"""

from __future__ import annotations

import shutil
import textwrap
from typing import Any

import pytest
from conftest import metric, read_report
from coverage_oracle import SLOW, coverage_py_totals, totals

CLI = '''\
"""The command line, run by the tests as `python -m app`."""
import os
import sys

from app.core import shout


def main(argv):
    if not argv:
        print("usage: app WORD")
        return 2
    print(shout(argv[0]))
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    if os.environ.get("APP_EXEC"):
        os.execv(sys.executable, [sys.executable, "-m", "app.after"])
    os._exit(code)
'''

CORE = '''\
def shout(word):
    if word.endswith("!"):
        return word.upper()
    return word.upper() + "!"


def square(x):
    return x * x
'''

AFTER = '''\
"""Run after an exec: counts only when coverage.py's execv patch saved and restarted."""
import os
import sys

print("after")
sys.stdout.flush()
os._exit(0)
'''

TESTS = '''\
import multiprocessing
import os
import subprocess
import sys

from app.core import square


def test_cli_in_a_child_process():
    env = dict(os.environ, APP_EXEC="1")
    done = subprocess.run([sys.executable, "-m", "app", "hey"], capture_output=True,
                          text=True, env=env, check=False)
    assert "HEY!" in done.stdout


def test_a_spawn_pool():
    pool = multiprocessing.get_context("spawn").Pool(1)
    try:
        assert pool.map(square, [1, 2]) == [1, 4]
    finally:
        pool.close()
        pool.join()
'''


def _project(pytester: pytest.Pytester, coverage_run: str) -> pytest.Pytester:
    app = pytester.mkpydir("app")
    app.joinpath("__main__.py").write_text(CLI, encoding="utf-8")
    app.joinpath("core.py").write_text(CORE, encoding="utf-8")
    app.joinpath("after.py").write_text(AFTER, encoding="utf-8")
    pytester.path.joinpath("tests").mkdir()
    pytester.path.joinpath("tests", "test_app.py").write_text(TESTS, encoding="utf-8")
    pytester.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n'
        f"[tool.coverage.run]\nsource = [\"app\"]\n{textwrap.dedent(coverage_run)}",
        encoding="utf-8",
    )
    return pytester


def _coverage_py_totals(pytester: pytest.Pytester) -> dict[str, int]:
    """coverage.py's totals, its data kept outside the project (the gate must leave none there)."""
    folder = pytester.path.parent / f"{pytester.path.name}-reference"
    folder.mkdir()
    # COVERAGE_FILE, not --data-file: multiprocessing children read only the environment.
    found = coverage_py_totals(pytester.path, "-q", data_file=folder / ".coverage",
                               environment=True)
    shutil.rmtree(folder)
    return found


def _gate(pytester: pytest.Pytester) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = pytester.runpytest_subprocess("--confgate", "-p", "no:xdist", timeout=SLOW)
    return result, metric(read_report(pytester), "test_coverage")["details"]


SETTINGS = {
    "subprocess+multiprocessing": 'patch = ["subprocess"]\nconcurrency = ["multiprocessing"]\n',
    "all-patches": 'patch = ["subprocess", "_exit", "execv"]\n'
    'concurrency = ["multiprocessing"]\n',
    "branch": 'branch = true\npatch = ["subprocess", "_exit", "execv"]\n'
    'concurrency = ["multiprocessing"]\n',
    # coverage.py's tracer measures the pytest process (dynamic contexts); before, its own
    # start pointed the children at the project's data file: left there, never combined
    "tracer": 'patch = ["subprocess", "_exit", "execv"]\ndynamic_context = "test_function"\n',
    "tracer+context": 'patch = ["subprocess"]\ncontext = "unit"\n\n'
    '[tool.coverage.report]\ncontexts = ["unit"]\n',
}


@pytest.mark.parametrize("settings", sorted(SETTINGS))
def test_code_run_in_child_processes_counts_as_coverage_py_counts_it(
    pytester: pytest.Pytester, settings: str
) -> None:
    project = _project(pytester, SETTINGS[settings])
    expected = _coverage_py_totals(project)
    before = sorted(p.name for p in project.path.glob(".coverage*"))
    result, details = _gate(project)
    assert result.ret == 0, result.stdout.str()
    assert totals(details) == expected
    assert details["child_processes"]["engine"] == "coverage.py (child processes)"
    assert details["child_processes"]["data_files"] >= 1
    assert sorted(p.name for p in project.path.glob(".coverage*")) == before


FORK_TESTS = """\
import os

from app.core import shout, square


def test_a_forked_child_that_ends_with_os_exit():
    pid = os.fork()
    if pid == 0:
        shout("child!")
        os._exit(0)
    os.waitpid(pid, 0)
    assert square(3) == 9
"""


@pytest.mark.parametrize("parallel", ["true", "false"])
def test_a_forked_child_ending_with_os_exit_counts_as_the_exit_patch_counts_it(
    pytester: pytest.Pytester, parallel: str
) -> None:
    """coverage.py keeps the child's part only with parallel data files (else overwritten)."""
    project = _project(pytester, f'parallel = {parallel}\npatch = ["_exit"]\n')
    project.path.joinpath("tests", "test_app.py").write_text(FORK_TESTS, encoding="utf-8")
    expected = _coverage_py_totals(project)
    result, details = _gate(project)
    assert result.ret == 0, result.stdout.str()
    assert totals(details) == expected
    assert details["child_processes"]["data_files"] == (1 if parallel == "true" else 0)


def test_parallel_leaves_no_data_file_and_never_reads_the_users_own(
    pytester: pytest.Pytester,
) -> None:
    project = _project(pytester, 'parallel = true\npatch = ["subprocess"]\n')
    from coverage import CoverageData

    # The user's own data file from some earlier run: every line of core.py "ran".
    stray = CoverageData(basename=str(project.path / ".coverage.user.1.2"))
    stray.add_lines({str(project.path / "app" / "core.py"): list(range(1, 9))})
    stray.write()
    expected = _coverage_py_totals(project)
    result, details = _gate(project)
    assert result.ret == 0, result.stdout.str()
    assert totals(details) == expected
    assert sorted(p.name for p in project.path.glob(".coverage*")) == [".coverage.user.1.2"]


ELSEWHERE = '''\
import os
import pathlib
import subprocess
import sys

from app.core import square

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_code_run_in_another_folder():
    assert square(3) == 9
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", "from app.core import shout; print(shout('a'))"],
                          capture_output=True, text=True, env=env, cwd=ROOT / "tests",
                          check=False)
    assert "A!" in done.stdout
'''


@pytest.mark.parametrize("branch", [False, True], ids=["lines", "branches"])
def test_a_child_started_in_another_folder_under_relative_files_counts_once(
    pytester: pytest.Pytester, branch: bool
) -> None:
    """``relative_files = true``: a child started in another folder records absolute names,
    which ``coverage combine`` makes relative to the project; the gate added them as they
    were, so each file the child ran counted twice (33/43 lines against coverage.py's 20/26,
    and a project at 72.5% failed a 72% floor)."""
    project = _project(pytester, f'relative_files = true\npatch = ["subprocess"]\n'
                                 f"branch = {str(branch).lower()}\n")
    project.path.joinpath("tests", "test_app.py").write_text(ELSEWHERE, encoding="utf-8")
    expected = _coverage_py_totals(project)
    result, details = _gate(project)
    assert result.ret == 0, result.stdout.str()
    assert totals(details) == expected
    assert details["child_processes"]["data_files"] >= 1, (details, expected)


# What a child killed while it started leaves beside the others' data: an empty file.
LEFT_EMPTY = '''\
import os


def test_a_child_left_an_empty_data_file():
    open(os.environ["COVERAGE_FILE"] + ".host.pid1.Xempty", "w").close()
'''


@pytest.mark.parametrize("branch", [False, True], ids=["lines", "branches"])
def test_a_childs_unusable_data_file_is_left_out_as_coverage_combine_leaves_it(
    pytester: pytest.Pytester, branch: bool
) -> None:
    """With branches, opening the empty file to read made it data of no kind, which clashed
    with the run's branch data: every child's lines were lost (4/6 against 6/6), and the
    reason was overwritten by a later combine, so the row said ok and the gate passed."""
    project = _project(pytester, f'branch = {str(branch).lower()}\npatch = ["subprocess"]\n'
                                 'concurrency = ["multiprocessing"]\n')
    project.path.joinpath("tests", "test_empty.py").write_text(LEFT_EMPTY, encoding="utf-8")
    expected = _coverage_py_totals(project)
    result, details = _gate(project)
    assert result.ret == 0, result.stdout.str()
    assert totals(details) == expected
    assert details["child_processes"]["data_files"] >= 1
    assert any("isn't a coverage data file" in w for w in details.get("warnings", [])), details


SPAWN = '''\
import os
import subprocess
import sys


def spawn(env=False):
    pid = os.fork()
    if pid == 0:
        args = [sys.executable, "-m", "app.tool"]
        if env:
            os.execve(sys.executable, args, dict(os.environ))
        os.execv(sys.executable, args)
    _, status = os.waitpid(pid, 0)
    return status


def run():
    return subprocess.run([sys.executable, "-m", "app.tool"], check=True).returncode
'''

TOOL = '''\
def main():
    total = 0
    for i in range(3):
        total += i
    return total


if __name__ == "__main__":
    main()
'''

EXEC_TESTS = '''\
from app.spawn import run, spawn


def test_execv():
    assert spawn() == 0


def test_execve():
    assert spawn(env=True) == 0


def test_run():
    assert run() == 0
'''


@pytest.mark.parametrize("settings", [
    'patch = ["execv"]\n',
    'patch = ["execv"]\nparallel = true\n',
    'patch = ["execv", "subprocess"]\n',
])
def test_an_exec_from_a_forked_child_counts_as_the_execv_patch_counts_it(
    pytester: pytest.Pytester, settings: str
) -> None:
    """coverage.py's ``execv`` patch saves the process's data before the exec and hands its
    configuration to an ``execve`` (its environment argument), nothing more: without
    ``subprocess`` a child started otherwise is not measured, and without parallel data files
    what the exec'd program measured is lost. Before, ``execv`` alone measured every child
    (15/20 lines where coverage.py counts 7/20, and a ``fail_under = 50`` passed)."""
    project = _project(pytester, settings)
    project.path.joinpath("app", "spawn.py").write_text(SPAWN, encoding="utf-8")
    project.path.joinpath("app", "tool.py").write_text(TOOL, encoding="utf-8")
    project.path.joinpath("tests", "test_app.py").write_text(EXEC_TESTS, encoding="utf-8")
    expected = _coverage_py_totals(project)
    result, details = _gate(project)
    assert result.ret == 0, result.stdout.str()
    assert totals(details) == expected


FORKED = '''\
import os


def work():
    return 5


def run():
    pid = os.fork()
    if pid == 0:
        work()
        os._exit(0)
    return os.waitpid(pid, 0)[1]
'''


@pytest.mark.parametrize("engine", ["probes", "tracer"])
def test_a_forked_child_under_the_fork_patch_counts_the_same_whatever_the_engine(
    pytester: pytest.Pytester, engine: str
) -> None:
    """``patch = ["fork"]``: coverage.py restarts measuring in the child, so the lines left in
    the frame running at the fork go unmeasured there (documented); the gate measures the child
    on with either engine. Before, coverage.py's tracer (a coverage plugin, dynamic contexts)
    was stopped by that patch in the child and saved nothing of it, not even ``work()``."""
    contexts = 'dynamic_context = "test_function"\n' if engine == "tracer" else ""
    project = _project(pytester, f'patch = ["_exit", "fork"]\nparallel = true\n{contexts}')
    project.path.joinpath("app", "forked.py").write_text(FORKED, encoding="utf-8")
    project.path.joinpath("tests", "test_app.py").write_text(
        "from app.forked import run\n\n\ndef test_run():\n    assert run() == 0\n",
        encoding="utf-8")
    result, details = _gate(project)
    assert result.ret == 0, result.stdout.str()
    forked = {k: v for k, v in details.get("missing", {}).items() if k.endswith("forked.py")}
    assert forked == {}, details.get("missing")


@pytest.mark.parametrize("how", ["xdist", "confgate gate"])
def test_the_children_are_named_where_another_process_measured_them(
    pytester: pytest.Pytester, how: str
) -> None:
    """``details.child_processes`` says which engine measured the children: it was missing
    where the children were combined in an xdist worker or in confgate gate's test process."""
    import subprocess
    import sys

    project = _project(pytester, 'patch = ["subprocess"]\n')
    expected = _coverage_py_totals(project)
    if how == "xdist":
        result = project.runpytest_subprocess("--confgate", "-n", "2", timeout=SLOW)
        assert result.ret == 0, result.stdout.str()
    else:
        done = subprocess.run([sys.executable, "-m", "pytest_confgate.cli", "gate", "--",
                               "-p", "no:cacheprovider"], cwd=project.path, capture_output=True,
                              text=True, timeout=SLOW, check=False)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    details = metric(read_report(project), "test_coverage")["details"]
    assert totals(details) == expected
    assert details["child_processes"]["engine"] == "coverage.py (child processes)"
    assert details["child_processes"]["settings"] == ["patch=subprocess"]
    assert details["child_processes"]["data_files"] >= 1

"""Project code run after the tests counts as under ``coverage run`` (issue 35).

coverage.py measures until the process ends; the gate stopped in its ``pytest_sessionfinish``,
so code a conftest or plugin runs from ``pytest_terminal_summary``, ``pytest_unconfigure`` or a
``config.add_cleanup`` callback (pytest-mock's ``unwrap_assert_methods``) was missing from its
figures. The oracle is coverage.py itself (``coverage run -m pytest`` + ``coverage json``).
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from conftest import git, metric, read_report, write_config
from coverage_oracle import SLOW, coverage_py_totals, totals

APP = '''\
def work():
    return 1


def summary():
    return 2


def flush():
    return 3


def cleanup():
    return 4
'''

CONFTEST = '''\
import app


def pytest_configure(config):
    config.add_cleanup(app.cleanup)


def pytest_terminal_summary(terminalreporter):
    app.summary()


def pytest_unconfigure(config):
    app.flush()
'''

TEST = "import app\n\n\ndef test_work():\n    assert app.work() == 1\n"


@pytest.fixture
def late(pytester: pytest.Pytester) -> pytest.Pytester:
    """``app`` of 8 statements: 5 run by the tests' import and test, 3 only after the tests."""
    pytester.path.joinpath("app.py").write_text(APP, encoding="utf-8")
    pytester.path.joinpath("tests").mkdir()
    pytester.path.joinpath("tests", "conftest.py").write_text(CONFTEST, encoding="utf-8")
    pytester.path.joinpath("tests", "test_app.py").write_text(TEST, encoding="utf-8")
    pytester.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n'
        '[tool.coverage.run]\nsource = ["app"]\n\n[tool.coverage.report]\nfail_under = 100\n',
        encoding="utf-8",
    )
    return pytester


def _row(pytester: pytest.Pytester) -> dict[str, Any]:
    row = metric(read_report(pytester), "test_coverage")
    assert row["status"] == "ok", row
    return row


def test_code_run_after_the_tests_is_measured_as_coverage_py_does(
    late: pytest.Pytester,
) -> None:
    """Before: 5/8 lines, a FAIL under ``fail_under = 100``; coverage.py: 8/8."""
    result = late.runpytest_subprocess("--confgate", "-p", "no:cacheprovider", timeout=SLOW)
    row = _row(late)
    expected = coverage_py_totals(late.path, "-q", "-p", "no:cacheprovider")
    assert expected["covered_lines"] == expected["num_statements"] == 8
    assert totals(row["details"]) == expected, row["details"]
    assert read_report(late)["decision"] == "pass"
    assert result.ret == 0, result.stdout.str()[-3000:]
    out = result.stdout.str()
    # The verdict printed is the report's, made after the late code ran.
    assert "confgate: PASS" in out, out[-3000:]
    assert out.rindex("confgate: PASS") > out.rindex(" passed in ")


def test_the_supervised_child_measures_until_its_end(late: pytest.Pytester) -> None:
    """``confgate gate``: the supervisor's figures come from the child's data, handed over at
    the child's very end."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest_confgate.cli", "gate", "--", "-p", "no:cacheprovider"],
        cwd=late.path, capture_output=True, text=True, check=False, timeout=SLOW,
    )
    row = _row(late)
    assert totals(row["details"]) == coverage_py_totals(
        late.path, "-q", "-p", "no:cacheprovider"
    ), (row["details"], done.stdout[-3000:])
    assert read_report(late)["decision"] == "pass", done.stdout[-3000:]


FAILING_LATE = '''\
import app


def _cleanup():
    app.cleanup()
    raise RuntimeError("the project's own cleanup failed")


def pytest_configure(config):
    config.add_cleanup(_cleanup)


def pytest_terminal_summary(terminalreporter):
    app.summary()


def pytest_unconfigure(config):
    app.flush()
    raise RuntimeError("the project's own unconfigure failed")
'''


def test_a_failing_unconfigure_or_cleanup_of_the_project_still_gets_its_verdict(
    late: pytest.Pytester,
) -> None:
    """The gate's cleanup runs after the project's, even when those raise; their error still
    ends pytest's run (in process: an internal error)."""
    late.path.joinpath("tests", "conftest.py").write_text(FAILING_LATE, encoding="utf-8")
    result = late.runpytest("--confgate", "-p", "no:cacheprovider")
    row = _row(late)
    assert (row["details"]["covered_lines"], row["details"]["num_statements"]) == (8, 8)
    assert read_report(late)["decision"] == "pass"
    out = result.stdout.str()
    assert out.rindex("confgate: PASS") > out.rindex(" passed in "), out[-3000:]
    assert result.ret != 0


def test_without_pytest_s_terminal_the_exit_status_still_says_it(
    late: pytest.Pytester,
) -> None:
    """``-p no:terminal``: no summary hook runs (1 line short of ``fail_under = 100``), no
    block is printed, and the exit status and the report carry the verdict."""
    result = late.runpytest("--confgate", "-p", "no:cacheprovider", "-p", "no:terminal")
    assert read_report(late)["decision"] == "fail"
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "confgate" not in result.stdout.str()


PATCHES_LATE = '''\
import importlib


def pytest_unconfigure(config):
    engine = importlib.import_module("pytest_confgate.gate." + "engine")
    real = engine.GateRun.finish

    def finish(self, *args, **kwargs):
        return real(self, *args, **kwargs)

    setattr(engine.GateRun, "fin" + "ish", finish)
'''


def test_the_gate_replaced_after_the_tests_is_found(
    repo: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gate decides after the project's late code ran: the run-time audit listens until
    then, and a function of the gate replaced there is a finding."""
    from pytest_confgate.gate.engine import GateRun

    monkeypatch.setattr(GateRun, "finish", GateRun.finish)  # put back after this process's run
    write_config(repo, "gate:\n  metrics:\n    - {type: test_pass_rate}\n")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "base")
    git(repo.path, "branch", "-f", "main")
    repo.path.joinpath("tests", "conftest.py").write_text(PATCHES_LATE, encoding="utf-8")
    repo.runpytest("--confgate", "--confgate-base", "main", "-p", "no:cacheprovider")
    items = metric(read_report(repo), "test_integrity")["details"]["items"]
    assert [(i["rule"], i["message"]) for i in items] == [
        ("runtime_gate_patched", "pytest_confgate.gate.engine.GateRun.finish: changed during "
         "the session")
    ]

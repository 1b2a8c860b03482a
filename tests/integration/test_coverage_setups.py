"""Coverage right in every pytest-cov and xdist setup (issue 19, Build item 0).

Each run is a real ``pytest`` subprocess, so pytest-cov and the gate start in the order a user
gets, and each figure is checked against coverage.py's own: pytest-cov's JSON report of the
same run, or ``coverage run -m pytest`` + ``coverage json`` on the same project.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import metric, read_report, write_config

LINES_ENGINE = "sys.monitoring" if sys.version_info >= (3, 12) else "line probes"
BRANCH_ENGINE = "sys.monitoring" if sys.version_info >= (3, 12) else "branch probes"
SLOW = 300  # seconds: a loaded 2-core machine starts xdist workers slowly


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("--confgate", *args, timeout=SLOW)


def _calc_totals(report: dict[str, Any]) -> dict[str, int]:
    """coverage.py JSON figures summed over the ``calc`` package's files only."""
    totals = {"covered_lines": 0, "num_statements": 0, "num_branches": 0, "covered_branches": 0}
    for name, data in report["files"].items():
        if Path(name).as_posix().startswith("calc/"):
            for key in totals:
                totals[key] += data["summary"].get(key, 0)
    return totals


def _gate_totals(pytester: pytest.Pytester) -> dict[str, int]:
    details = metric(read_report(pytester), "test_coverage")["details"]
    keys = ("covered_lines", "num_statements", "num_branches", "covered_branches")
    return {key: details.get(key, 0) for key in keys}


def _coverage_run(pytester: pytest.Pytester, *options: str) -> dict[str, Any]:
    """``coverage run [options] -m pytest`` + ``coverage json``: coverage.py's own figures."""
    data = pytester.path / ".coverage-reference"
    out = pytester.path / "reference.json"
    base = [sys.executable, "-m", "coverage"]
    subprocess.run(
        [*base, "run", f"--data-file={data}", *options, "-m", "pytest", "-q", "-p", "no:confgate"],
        cwd=pytester.path, check=True, capture_output=True, timeout=SLOW,
    )
    subprocess.run(
        [*base, "json", f"--data-file={data}", "-o", str(out)],
        cwd=pytester.path, check=True, capture_output=True, timeout=SLOW,
    )
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    data.unlink()
    out.unlink()
    return report


def _more_tests(pytester: pytest.Pytester) -> None:
    for index in range(3):
        pytester.path.joinpath("tests", f"test_more_{index}.py").write_text(
            f"from calc import add\n\n\ndef test_add_{index}():\n    assert add({index}, 1)\n",
            encoding="utf-8",
        )


COV_FORMS = {
    "bare": ["--cov"],
    "name": ["--cov=calc"],
    "path": ["--cov=PATH"],
}


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
@pytest.mark.parametrize("form", sorted(COV_FORMS))
def test_every_cov_form_gives_the_gate_status_and_pytest_covs_figures(
    project: pytest.Pytester, form: str, workers: list[str]
) -> None:
    _more_tests(project)
    cov = [a.replace("PATH", str(project.path / "calc")) for a in COV_FORMS[form]]
    result = _run(project, *cov, "--cov-report=json:pytest-cov.json", *workers)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    theirs = json.loads((project.path / "pytest-cov.json").read_text(encoding="utf-8"))
    assert _gate_totals(project) == _calc_totals(theirs)
    details = metric(read_report(project), "test_coverage")["details"]
    assert details["measured_by"] == "pytest-cov"
    assert details["covered_lines"] == 7


def test_cov_branch_and_cov_append_keep_pytest_covs_figures(project: pytest.Pytester) -> None:
    _more_tests(project)
    args = ["--cov=calc", "--cov-branch"]
    result = _run(project, *args, "--cov-report=json:first.json", "tests/test_more_0.py")
    assert result.ret == 0, result.stdout.str()[-3000:]
    first = _gate_totals(project)
    assert first == _calc_totals(json.loads((project.path / "first.json").read_text()))
    assert (first["covered_lines"], first["num_branches"], first["covered_branches"]) == (4, 2, 0)

    result = _run(
        project, *args, "--cov-append", "--cov-report=json:second.json", "tests/test_calc.py"
    )
    assert result.ret == 0, result.stdout.str()[-3000:]
    appended = _gate_totals(project)
    assert appended == _calc_totals(json.loads((project.path / "second.json").read_text()))
    assert (appended["covered_lines"], appended["covered_branches"]) == (7, 2)


def test_a_corrupt_coverage_file_that_cov_append_adds_to_is_a_named_evidence_error(
    project: pytest.Pytester,
) -> None:
    """It was pytest-cov's INTERNALERROR traceback (exit 3) and a report saying "No data"."""
    project.path.joinpath(".coverage").write_bytes(b"not a coverage database\n")

    result = _run(project, "--cov=calc", "--cov-append")

    assert result.ret == 1, result.stdout.str()[-3000:]
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    coverage = metric(read_report(project), "test_coverage")
    assert coverage["status"] == "error"
    assert coverage["reason"].startswith("pytest-cov could not read its coverage data: ")
    assert ".coverage" in coverage["reason"]
    assert "run without --cov-append" in coverage["reason"]


def test_a_full_run_uses_line_probes_with_coverage_runs_figures(project: pytest.Pytester) -> None:
    project.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n'
        '[tool.coverage.run]\nsource = ["calc"]\n',
        encoding="utf-8",
    )
    assert _run(project).ret == 0
    details = metric(read_report(project), "test_coverage")["details"]
    assert details["engine"] == LINES_ENGINE
    assert "num_branches" not in details
    reference = _coverage_run(project)["totals"]
    assert (details["covered_lines"], details["num_statements"]) == (
        reference["covered_lines"], reference["num_statements"],
    )


def test_xdist_workers_use_line_probes_and_the_report_says_so(project: pytest.Pytester) -> None:
    _more_tests(project)
    assert _run(project, "-p", "no:xdist").ret == 0
    serial = _gate_totals(project)
    result = _run(project, "-n", "2")
    assert result.ret == 0, result.stdout.str()[-3000:]
    details = metric(read_report(project), "test_coverage")["details"]
    assert details["workers"] == ["gw0", "gw1"]
    assert details["engine"] == LINES_ENGINE
    assert _gate_totals(project) == serial


def test_the_projects_branch_setting_is_honoured(project: pytest.Pytester) -> None:
    project.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n'
        '[tool.coverage.run]\nbranch = true\nsource = ["calc"]\n',
        encoding="utf-8",
    )
    result = _run(project)
    assert result.ret == 0
    details = metric(read_report(project), "test_coverage")["details"]
    reference = _coverage_run(project)["totals"]
    keys = ("covered_lines", "num_statements", "num_branches", "covered_branches")
    assert {k: details[k] for k in keys} == {k: reference[k] for k in keys}
    assert details["num_branches"] == 2
    assert details["engine"] == BRANCH_ENGINE
    # Lines and branches apart, so the fraction shown is never mistaken for the percentage.
    result.stdout.fnmatch_lines(["*test_coverage*(coverage: 7/7 lines, 2/2 branches)*"])

    write_config(project, "gate:\n  metrics: [{type: test_coverage, branch: false}]\n")
    assert _run(project).ret == 0
    details = metric(read_report(project), "test_coverage")["details"]
    assert "num_branches" not in details  # the gate's own setting wins over the project's


def test_the_projects_omit_and_exclusions_are_honoured(project: pytest.Pytester) -> None:
    project.path.joinpath("calc", "vendored.py").write_text(
        "def unused():\n    return 1\n", encoding="utf-8"
    )
    project.path.joinpath("calc", "__init__.py").write_text(
        project.path.joinpath("calc", "__init__.py").read_text(encoding="utf-8")
        + "\n\ndef debug_only():  # skip coverage\n    return 'debug'\n",
        encoding="utf-8",
    )
    project.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n'
        '[tool.coverage.run]\nomit = ["*/vendored.py"]\n\n'
        '[tool.coverage.report]\nexclude_also = ["skip coverage"]\n',
        encoding="utf-8",
    )
    assert _run(project).ret == 0
    details = metric(read_report(project), "test_coverage")["details"]
    reference = _calc_totals(_coverage_run(project, "--source=calc"))
    assert details["covered_lines"] == reference["covered_lines"] == 7
    assert details["num_statements"] == reference["num_statements"] == 7
    assert "calc/vendored.py" not in details["missing"]


def test_tests_inside_the_package_are_not_measured_linted_or_scanned(
    project: pytest.Pytester,
) -> None:
    inner = project.path / "calc" / "tests"
    inner.mkdir()
    inner.joinpath("__init__.py").write_text("", encoding="utf-8")
    inner.joinpath("test_inner.py").write_text(
        "import os\nfrom calc import add\n\n\ndef test_inner():\n    assert add(2, 2) == 4\n",
        encoding="utf-8",
    )  # an unused import: ruff would count it if the test were linted
    project.path.joinpath("calc", "conftest.py").write_text("X = 1\n", encoding="utf-8")
    assert _run(project).ret == 0
    report = read_report(project)
    coverage = metric(report, "test_coverage")["details"]
    assert coverage["files_measured"] == 1
    assert coverage["num_statements"] == 7
    lint = metric(report, "lint_score")["details"]
    assert lint["violations"] == 0
    assert lint["files_checked"] == 1
    assert metric(report, "security_score")["details"]["files_scanned"] == 1


def test_the_gate_runs_no_thread_in_the_pytest_process(project: pytest.Pytester) -> None:
    """Threads that import while pytest imports conftests break under coverage.py (#2247)."""
    project.path.joinpath("tests", "test_threads.py").write_text(
        "import threading\n\n\ndef test_only_the_main_thread():\n"
        "    assert [t.name for t in threading.enumerate()] == ['MainThread']\n",
        encoding="utf-8",
    )
    result = _run(project, "--cov=calc")
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert metric(read_report(project), "lint_score")["status"] == "ok"


def test_modules_pytest_rewrites_are_probed_and_keep_their_rewritten_asserts(
    project: pytest.Pytester,
) -> None:
    """A plugin package's modules (or `register_assert_rewrite` ones) belong to pytest's hook."""
    project.path.joinpath("calc", "checks.py").write_text(
        "def check_positive(x):\n    assert x > 0\n    return x\n", encoding="utf-8"
    )
    project.path.joinpath("conftest.py").write_text(
        "import pytest\n\npytest.register_assert_rewrite('calc.checks')\n", encoding="utf-8"
    )
    project.path.joinpath("tests", "test_checks.py").write_text(
        "import pytest\nfrom calc.checks import check_positive\n\n\n"
        "def test_positive():\n    assert check_positive(2) == 2\n\n\n"
        "def test_rewritten_message():\n"
        "    with pytest.raises(AssertionError, match='assert -5 > 0'):\n"
        "        check_positive(-5)\n",
        encoding="utf-8",
    )
    result = _run(project)
    assert result.ret == 0, result.stdout.str()[-3000:]
    details = metric(read_report(project), "test_coverage")["details"]
    assert details["engine"] == LINES_ENGINE
    reference = _calc_totals(_coverage_run(project, "--source=calc"))
    assert (details["covered_lines"], details["num_statements"]) == (
        reference["covered_lines"], reference["num_statements"],
    )



@pytest.mark.skipif(sys.version_info >= (3, 12), reason="sys.monitoring compiles nothing")
def test_a_run_with_the_assertion_pass_hook_never_reads_code_rewritten_without_it(
    project: pytest.Pytester,
) -> None:
    """The probes keep the code they compiled, asserts rewritten, between runs: a run that
    turns pytest's ``enable_assertion_pass_hook`` on read the code of the run before, where
    the hook was off, and ``pytest_assertion_pass`` was never called."""
    project.path.joinpath("calc", "checks.py").write_text(
        "def check_positive(x):\n    assert x > 0\n    return x\n", encoding="utf-8"
    )
    project.path.joinpath("conftest.py").write_text(
        "import pytest\n\npytest.register_assert_rewrite('calc.checks')\n\n\n"
        "def pytest_assertion_pass(item, lineno, orig, expl):\n"
        "    with open('passed.txt', 'a') as out:\n"
        "        out.write(f'{lineno} {orig}\\n')\n",
        encoding="utf-8",
    )
    project.path.joinpath("tests", "test_checks.py").write_text(
        "import pytest\nfrom calc.checks import check_positive\n\n\n"
        "def test_positive():\n    assert check_positive(2) == 2\n"
        "    pytest.register_assert_rewrite('calc.checks')  # warns if pytest did not rewrite it\n",
        encoding="utf-8",
    )
    warned = ("-W", "error::pytest.PytestAssertRewriteWarning")
    assert _run(project, *warned).ret == 0
    assert not project.path.joinpath("passed.txt").exists()  # the hook is off
    for _warm in range(2):  # compiled anew, then read from the cache
        result = _run(project, "-o", "enable_assertion_pass_hook=true", *warned)
        assert result.ret == 0, result.stdout.str()[-3000:]
        passed = project.path.joinpath("passed.txt").read_text(encoding="utf-8")
        assert "2 x > 0" in passed  # calc/checks.py, compiled with probes and the hook
        project.path.joinpath("passed.txt").unlink()

def test_an_error_names_what_coverage_py_measured_when_its_configuration_chose(
    project: pytest.Pytester,
) -> None:
    """Issue 30: coverage.py's `source` held `tests`, and a file there coverage.py cannot read
    failed the row; it named the gate's own detection (`calc`) instead of what was measured."""
    project.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n'
        '[tool.coverage.run]\nsource = ["calc", "tests"]\n',
        encoding="utf-8",
    )
    # Latin-1 with no coding line, imported by no test: coverage.py cannot report on it.
    project.path.joinpath("tests", "latin.py").write_bytes(b'# Caf\xe9\nNAME = "caf\xe9"\n')
    write_config(project, "gate:\n  metrics: [{type: test_pass_rate}, {type: test_coverage}]\n")

    result = project.runpytest("--confgate", "-p", "no:xdist")

    coverage = metric(read_report(project), "test_coverage")
    assert coverage["status"] == "error"
    assert "tests/latin.py" in coverage["reason"]
    assert coverage["details"]["source"] == ["calc", "tests"]
    assert coverage["details"]["selected_by"] == "coverage.py configuration"
    result.stdout.fnmatch_lines(
        ["measured sources: calc, tests (chosen by coverage.py configuration)"]
    )


# What pytest-cov is told under ``confgate gate``, in the three places pytest reads words from.
# ``other.toml`` turns branches on and narrows the selection as only ``--cov-config`` names it.
UNDER_THE_SUPERVISOR = {
    "--cov-branch on the command line": ([], ["--cov=calc", "--cov-branch"], ""),
    "--cov-branch in addopts": ([], [], "--cov=calc --cov-branch"),
    "--cov-branch in PYTEST_ADDOPTS": (["--cov-branch"], ["--cov=calc"], ""),
    "--cov-config naming branch and source": (
        [], ["--cov", "--cov-config=other.toml"], ""),
    "--cov narrower than the gate's sources": ([], ["--cov=calc/inner", "--cov-branch"], ""),
}


@pytest.mark.parametrize("setup", sorted(UNDER_THE_SUPERVISOR))
def test_confgate_gate_reads_pytest_covs_branch_config_and_sources_as_pytest_cov_does(
    project: pytest.Pytester, setup: str
) -> None:
    """``confgate gate -- --cov=calc --cov-branch`` reported 75% of lines, no branches, where
    pytest-cov (and ``pytest --confgate``) gave 67% with branches: the supervisor analysed
    the test process's arcs with the configuration files' settings, never pytest-cov's
    options."""
    environ_words, args, addopts = UNDER_THE_SUPERVISOR[setup]
    inner = project.path / "calc" / "inner"
    inner.mkdir()
    inner.joinpath("__init__.py").write_text(
        "def sign(x):\n    if x < 0:\n        return -1\n    return 1\n", encoding="utf-8")
    project.path.joinpath("calc", "unrun.py").write_text(
        "def unrun(x):\n    if x:\n        return 1\n    return 2\n", encoding="utf-8")
    project.path.joinpath("tests", "test_inner.py").write_text(
        "from calc.inner import sign\n\n\ndef test_sign():\n    assert sign(3) == 1\n",
        encoding="utf-8")
    project.path.joinpath("other.toml").write_text(
        '[tool.coverage.run]\nbranch = true\nsource = ["calc"]\nomit = ["*/unrun.py"]\n',
        encoding="utf-8")
    project.path.joinpath("pyproject.toml").write_text(
        f'[tool.pytest.ini_options]\npythonpath = ["."]\naddopts = "{addopts}"\n',
        encoding="utf-8")
    environ = {**os.environ, "PYTEST_ADDOPTS": " ".join(environ_words)}
    reference = ["--cov-report=json:pytest-cov.json", "-p", "no:cacheprovider"]

    bare = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:confgate", *args,
                           *reference], cwd=project.path, env=environ, capture_output=True,
                          text=True, timeout=SLOW, check=False)
    assert bare.returncode == 0, bare.stdout[-3000:]
    theirs = json.loads((project.path / "pytest-cov.json").read_text(encoding="utf-8"))
    done = subprocess.run([sys.executable, "-m", "pytest_confgate.cli", "gate", "--", *args,
                           *reference], cwd=project.path, env=environ, capture_output=True,
                          text=True, timeout=SLOW, check=False)

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert theirs["totals"]["num_branches"] > 0
    gate = _gate_totals(project)
    assert gate == {key: theirs["totals"][key] for key in gate}, (setup, theirs["files"].keys())
    details = metric(read_report(project), "test_coverage")["details"]
    assert details["branch"] is True
    assert details["engine"] == "coverage.py (pytest-cov)"
    named = "config" not in setup
    assert (details["selected_by"] == "pytest-cov (--cov)") is named, details["selected_by"]


def _only_add(project: pytest.Pytester) -> None:
    """One test, of ``add`` only: ``calc`` at 57% of its lines and none of its branches."""
    project.path.joinpath("tests", "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        encoding="utf-8")


def _confgate_gate(project: pytest.Pytester, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_confgate.cli", "gate", "--", *args,
                           "-p", "no:cacheprovider"], cwd=project.path, capture_output=True,
                          text=True, timeout=SLOW, check=False)


# The change's conftest turns pytest-cov's arcs into lines before they are handed over.
ARCS_TO_LINES = """\
import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    ctl = session.config.pluginmanager.getplugin("_cov").cov_controller
    ctl.cov.stop()
    data = ctl.cov.get_data()
    lines = {name: data.lines(name) for name in data.measured_files()}
    data.erase()
    data._has_arcs = data._has_lines = False
    data.add_lines(lines)
"""


def test_lines_handed_over_where_branches_are_measured_fail_closed(
    project: pytest.Pytester,
) -> None:
    """With pytest-cov's branches read from the words, a conftest that hands lines over
    (coverage.py then reports no branches) would have turned 67% into 75%, a PASS."""
    project.path.joinpath("tests", "conftest.py").write_text(ARCS_TO_LINES, encoding="utf-8")
    _only_add(project)

    done = _confgate_gate(project, "--cov=calc", "--cov-branch")

    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    coverage = metric(read_report(project), "test_coverage")
    assert coverage["status"] == "error"
    assert coverage["reason"].startswith(
        "branch coverage is measured, but the test process handed over lines only")


def test_pytest_cov_failing_the_session_below_its_floor_is_not_called_a_hidden_failure(
    project: pytest.Pytester,
) -> None:
    """pytest-cov exits 1 below ``--cov-fail-under`` with no test failed; ``confgate gate``
    said "pytest counted a failed test, but the channel reported none failed (a report
    dropped or relabelled...)": the coverage row is the reason, and it is the one given."""
    _only_add(project)

    done = _confgate_gate(project, "--cov=calc", "--cov-fail-under=99")

    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    report = read_report(project)
    reasons = [c["message"] for c in report["conditions"] if not c["passed"]]
    assert reasons, report["conditions"]
    assert not any("channel reported none failed" in r for r in reasons), reasons
    assert any(r.startswith("test_coverage: ") and "below the minimum 99.00%" in r
               for r in reasons), reasons
    assert report["decision"] == "fail"


def test_a_bare_cov_under_confgate_gate_reports_what_pytest_confgate_reports(
    project: pytest.Pytester,
) -> None:
    """A bare ``--cov`` with no ``source`` anywhere measures every file run; the supervisor
    reported all of it (the tests, and the gate's own package: 1089/4635 lines) where
    ``pytest --confgate --cov`` keeps to the gate's sources, as its row's ``source`` says."""
    _more_tests(project)
    in_process = _run(project, "--cov", "-p", "no:cacheprovider")
    assert in_process.ret == 0, in_process.stdout.str()[-3000:]
    expected = _gate_totals(project)

    done = _confgate_gate(project, "--cov")

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert _gate_totals(project) == expected
    details = metric(read_report(project), "test_coverage")["details"]
    assert details["source"] == ["calc"]
    assert list(details.get("missing", {})) == [], details.get("missing")
    assert details["files_measured"] == 1


def test_a_project_of_no_statement_keeps_its_branch_counts_under_confgate_gate(
    pytester: pytest.Pytester,
) -> None:
    """Branches measured and nothing to measure: the row says 0/0 branches as under ``pytest
    --confgate``; the test process's data (files touched, nothing run) was no kind of data
    once combined, so on 3.11 the row had no branch counts at all."""
    pytester.mkpydir("app")
    pytester.path.joinpath("tests").mkdir()
    pytester.path.joinpath("tests", "test_app.py").write_text(
        "import app\n\n\ndef test_app():\n    assert app\n", encoding="utf-8")
    pytester.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n'
        '[tool.coverage.run]\nbranch = true\nsource = ["app"]\n', encoding="utf-8")
    done = _confgate_gate(pytester)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    row = metric(read_report(pytester), "test_coverage")
    assert "no statement to measure" in row["reason"]
    assert (row["details"]["covered_branches"], row["details"]["num_branches"]) == (0, 0)


def test_an_empty_cov_under_confgate_gate_fails_closed_and_names_the_test_process(
    project: pytest.Pytester,
) -> None:
    """``--cov=`` measures nothing: no figure, and the reason speaks of the one process that
    ran the tests (it spoke of "xdist workers" in a run with no xdist)."""
    done = _confgate_gate(project, "--cov=")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    row = metric(read_report(project), "test_coverage")
    assert row["status"] == "error"
    assert row["reason"].startswith("the test process measured no code in"), row["reason"]


@pytest.mark.parametrize("how", ["pytest --confgate", "confgate gate"])
def test_no_cov_turns_pytest_covs_floor_off_as_it_turns_pytest_cov_off(
    project: pytest.Pytester, how: str
) -> None:
    """``--no-cov`` over ``addopts = --cov=calc --cov-fail-under=95``: bare pytest passes,
    the gate failed the run on the floor of a pytest-cov that did not measure."""
    _only_add(project)
    project.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n'
        'addopts = "--cov=calc --cov-fail-under=95"\n', encoding="utf-8")
    if how == "confgate gate":
        done = _confgate_gate(project, "--no-cov")
        code, output = done.returncode, done.stdout + done.stderr
    else:
        result = _run(project, "--no-cov", "-p", "no:cacheprovider")
        code, output = result.ret, result.stdout.str()
    assert code == 0, output[-3000:]
    coverage = metric(read_report(project), "test_coverage")
    assert coverage["details"]["covered_lines"] == 4, coverage["details"]
    assert coverage["details"].get("fail_under") in (None, 0, 0.0), coverage["details"]
    assert read_report(project)["decision"] == "pass"

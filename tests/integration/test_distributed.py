"""The gate under pytest-xdist and beside pytest-cov: one report, the serial run's figures."""

from __future__ import annotations

import pytest
from conftest import metric, read_report, write_config

COMPARED = ("covered_lines", "num_statements", "num_branches", "covered_branches", "missing")


def _figures(pytester: pytest.Pytester) -> tuple[dict[str, object], dict[str, object]]:
    report = read_report(pytester)
    details = metric(report, "test_coverage")["details"]
    tests = {k: v for k, v in report["tests"].items() if k != "duration_s"}
    return {k: details.get(k) for k in COMPARED}, tests


def _more_tests(pytester: pytest.Pytester) -> None:
    for index in range(4):
        pytester.path.joinpath("tests", f"test_more_{index}.py").write_text(
            "from calc import scale\n\n\n"
            f"def test_scale_{index}():\n    assert scale({index}) == {index * 10}\n",
            encoding="utf-8",
        )


def test_xdist_gives_one_report_with_the_serial_runs_figures(project: pytest.Pytester) -> None:
    _more_tests(project)
    write_config(project, "gate:\n  metrics: [{type: test_pass_rate}, {type: test_coverage, "
                 "branch: true}]\n")
    assert project.runpytest("--confgate", "-p", "no:xdist").ret == 0
    serial = _figures(project)
    (project.path / "confgate-report.json").unlink()

    result = project.runpytest("--confgate", "-n", "2", "-p", "xdist")
    assert result.ret == 0
    assert _figures(project) == serial
    details = metric(read_report(project), "test_coverage")["details"]
    assert details["workers"] == ["gw0", "gw1"]
    result.stdout.fnmatch_lines(["confgate: PASS"])


def test_a_crashed_worker_fails_coverage_closed_and_is_named(project: pytest.Pytester) -> None:
    _more_tests(project)
    project.path.joinpath("tests", "test_crash.py").write_text(
        "import os\n\n\ndef test_kills_its_worker():\n    os._exit(3)\n", encoding="utf-8"
    )
    result = project.runpytest("--confgate", "-n", "2", "-p", "xdist")
    assert result.ret == 1
    coverage = metric(read_report(project), "test_coverage")
    assert coverage["status"] == "error"
    assert "is missing (the worker crashed or stopped early)" in coverage["reason"]
    assert "gw" in coverage["reason"]


def test_an_xdist_abort_before_any_test_is_not_ok_coverage(project: pytest.Pytester) -> None:
    """Issue 30: the workers collected different tests, none ran, and coverage said ok."""
    project.path.joinpath("tests", "test_calc.py").write_text(
        "import os\n\nimport pytest\n\nfrom calc import add\n\n\n"
        "@pytest.mark.parametrize('who', [os.environ.get('PYTEST_XDIST_WORKER', 'main')])\n"
        "def test_add(who):\n    assert add(1, 2) == 3\n",
        encoding="utf-8",
    )
    write_config(project, "gate:\n  metrics: [{type: test_pass_rate}, {type: test_coverage}]\n")

    result = project.runpytest("--confgate", "-n", "2", "-p", "xdist")

    assert "Different tests were collected between gw0 and gw1" in result.stdout.str()
    assert result.ret != 0
    report = read_report(project)
    assert report["tests"]["passed"] + report["tests"]["failed"] == 0
    coverage = metric(report, "test_coverage")
    assert (coverage["status"], coverage["value"], coverage["passed"]) == (
        "unavailable", None, False
    )
    assert coverage["reason"].startswith("no test ran: 1 error(s) stopped the session")
    assert "test_coverage: evidence unavailable: no test ran" in report["reasons"][1]
    result.stdout.fnmatch_lines(["test_coverage * FAIL *(unavailable: no test ran*"])


def test_pytest_cov_measurement_is_reused_instead_of_tracing_twice(
    project: pytest.Pytester,
) -> None:
    assert project.runpytest("--confgate", "-p", "no:xdist").ret == 0
    serial = _figures(project)
    result = project.runpytest("--confgate", "--cov=calc", "-p", "pytest_cov", "-p", "no:xdist")
    assert result.ret == 0
    assert _figures(project) == serial
    details = metric(read_report(project), "test_coverage")["details"]
    assert details["measured_by"] == "pytest-cov"
    result.stdout.fnmatch_lines(["*TOTAL*100%*"])


def test_branch_coverage_asked_of_a_line_only_pytest_cov_run_fails_closed(
    project: pytest.Pytester,
) -> None:
    write_config(project, "gate:\n  metrics: [{type: test_coverage, branch: true}]\n")
    result = project.runpytest("--confgate", "--cov=calc", "-p", "pytest_cov", "-p", "no:xdist")
    assert result.ret == 1
    reason = metric(read_report(project), "test_coverage")["reason"]
    assert reason.startswith("branch coverage is configured but pytest-cov measured lines only")

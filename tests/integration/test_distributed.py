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

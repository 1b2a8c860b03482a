"""The terminal summary: one row per metric with the policy's verdict, the lines to cover."""

from __future__ import annotations

from fakes.reports import gate_report

from pytest_confgate.models import Decision, EvalMetric, MetricStatus
from pytest_confgate.report.terminal import summary_lines


def _coverage(files: int) -> EvalMetric:
    missing = {f"src/m{i:02}.py": list(range(1, i + 2)) for i in range(files)}
    return EvalMetric(type="test_coverage", value=0.5, threshold=0.8, passed=False,
                      limit="min 80.00%", details={"missing": missing, "covered_lines": 5,
                                                   "num_statements": 10})


def test_rows_show_the_limit_and_the_verdict_and_the_state_only_when_not_ok() -> None:
    lint = EvalMetric(type="lint_score", value=0.8, passed=False, limit="max 0 violations",
                      details={"violations": 1, "files_checked": 5})
    judge = EvalMetric(type="llm_judge", status=MetricStatus.UNAVAILABLE, reason="no key",
                       limit="min 70.00%")
    lines = summary_lines(gate_report(metrics=[lint, judge], decision=Decision.FAIL))
    assert lines[0].split() == ["metric", "value", "limit", "verdict"]
    # the value in the limit's unit: a count beside a count, not a share of files
    assert lines[1].split() == ["lint_score", "1", "violation", "max", "0", "violations", "FAIL",
                                "(1", "violation", "in", "5", "files)"]
    assert " ok" not in lines[1]
    assert lines[2].endswith("advisory  (unavailable: no key)")


def test_the_worst_ten_files_by_default_and_every_file_with_verbose() -> None:
    report = gate_report(metrics=[_coverage(12)], decision=Decision.FAIL)
    lines = summary_lines(report)
    start = lines.index("missing lines:")
    assert lines[start + 1].split() == ["src/m11.py", "1-12"]
    assert lines[start + 10].split() == ["src/m02.py", "1-3"]
    assert lines[start + 11] == "  ... and 2 more files (-v shows all)"
    verbose = summary_lines(report, verbosity=1)
    assert verbose[verbose.index("missing lines:") + 12].split() == ["src/m00.py", "1"]


def test_quiet_keeps_the_failing_rows_and_the_verdict() -> None:
    ok = EvalMetric(type="test_pass_rate", value=1.0, passed=True, limit="max 0 failed")
    report = gate_report(metrics=[ok, _coverage(3)], decision=Decision.FAIL,
                         reasons=["test_coverage: 50.00% is below the minimum 80.00%"])
    lines = summary_lines(report, "r.json", verbosity=-1)
    assert [line.split()[0] for line in lines] == ["metric", "test_coverage", "confgate:", "-"]


def test_the_terminal_names_the_sources_coverage_measured() -> None:
    coverage = EvalMetric(type="test_coverage", value=1.0, details={
        "source": ["src/app"], "selected_by": "coverage.py configuration"})
    lines = summary_lines(gate_report(metrics=[coverage]))
    assert "measured sources: src/app (chosen by coverage.py configuration)" in lines

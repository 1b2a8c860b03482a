"""The terminal summary: one row per metric with the policy's verdict, the lines to cover, and
(issue 37) the verdict block as the reviewer's first screen: what blocks, in the unit of its
limit, with its fix before any waiver, then patch coverage."""

from __future__ import annotations

from pathlib import Path

from fakes.reports import gate_report

from pytest_confgate.models import Decision, EvalMetric, MetricStatus
from pytest_confgate.report.terminal import summary_lines, verdict_line
from pytest_confgate.report.writers import load_report

# the sample project's failing pull request (see tests/unit/test_report_first_screen.py)
SAMPLE = Path(__file__).parent.parent / "data" / "reports" / "sample-pr-failing.json"


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
    assert [line.split()[0] for line in lines] == ["metric", "test_coverage", "confgate:", "1."]
    # no condition to read a figure from: the policy's own words, numbered like a blocker
    assert lines[3] == "  1. test_coverage: 50.00% is below the minimum 80.00%"


def test_the_terminal_names_the_sources_coverage_measured() -> None:
    coverage = EvalMetric(type="test_coverage", value=1.0, details={
        "source": ["src/app"], "selected_by": "coverage.py configuration"})
    lines = summary_lines(gate_report(metrics=[coverage]))
    assert "measured sources: src/app (chosen by coverage.py configuration)" in lines


def test_the_verdict_block_is_the_first_screen_each_blocker_in_its_unit_with_its_fix() -> None:
    """Under ``confgate: FAIL``: each blocker with its figure and its fix, the waiver after the
    fix (never first for a HIGH finding), no waiver for tampering, then patch coverage."""
    lines = summary_lines(load_report(SAMPLE), "confgate-report.json")
    block = lines[lines.index("confgate: FAIL") + 1:]
    starts = [
        "  1. security_score: 1 HIGH finding, max 0",
        "     fix: fix B602 at src/inventory/report.py:21 (s",
        "     last resort, only if it is a false positive: w",
        "  2. test_integrity: 1 sign of tampering, which rai",
        "     fix: undo skip_added at tests/test_stock.py:15 ",
        "  3. sign-offs: 1 needed for tier T2, got 0",
        "     fix: an approving review of the head commit by",
        "patch coverage: 5 changed lines no test ran; not r",
        "report: confgate-report.json",
    ]
    assert len(block) == len(starts), block
    assert all(line.startswith(start) for line, start in zip(block, starts, strict=True)), block
    assert block[1].endswith("shell=True identified, security issue)")
    assert "waive" not in " ".join(block[:2] + block[3:])
    assert block[7] == ("patch coverage: 5 changed lines no test ran; "
                        "not run: src/inventory/report.py 20-24")
    assert not any("HIGH-severity" in line or "(max_" in line for line in block)


def test_the_last_line_names_the_first_blocker_in_its_unit() -> None:
    assert verdict_line(load_report(SAMPLE)) == (
        "confgate: FAIL: the tests passed but the gate did not: "
        "security_score: 1 HIGH finding, max 0 (and 2 more above)")
    reason = "changelog: no entry for this change (T1)"  # a rule with no condition of its own
    report = gate_report(decision=Decision.FAIL, reasons=[reason])
    said = verdict_line(report)
    assert said == f"confgate: FAIL: the tests passed but the gate did not: {reason}"
    assert summary_lines(report)[-1] == f"  1. {reason}"

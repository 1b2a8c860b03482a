"""The Markdown summary (SPEC 10): verdict first, inert untrusted text, under GitHub's 1 MiB."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pytest_confgate.models import (
    ConfidenceResult,
    Decision,
    EvalMetric,
    Finding,
    GateReport,
    MetricStatus,
    Signoffs,
    TestOutcomes,
)
from pytest_confgate.report.markdown import MARKER, escape_markdown, render_comment, render_markdown

HOSTILE = "a | b\n::error::pwned\r\n`rm -rf` <script>alert(1)</script> [x](javascript:1) @team"


def _finding(index: int = 0, message: str = HOSTILE, **extra: Any) -> dict[str, Any]:
    base = {"tool": "ruff", "rule": "F401", "file": f"pkg/mod{index}.py", "line": index + 1,
            "column": 1, "message": message}
    return Finding(**{**base, **extra}).model_dump()


def _report(
    decision: Decision = Decision.FAIL, items: list[dict[str, Any]] | None = None, **extra: Any
) -> GateReport:
    fields: dict[str, Any] = {
        "tool_version": "0.1.0",
        "project": "demo",
        "generated_at": "2026-11-22T00:00:00+00:00",
        "risk_tier": "T2",
        "risk_reason": "touches auth/",
        "decision": decision,
        "reasons": ["lint_score 69.96% is below 70.00%", HOSTILE],
        "auto_advance": False,
        "metrics": [
            EvalMetric(type="lint_score", value=0.6996, threshold=0.7, passed=False,
                       limit="min 70.00%",
                       details={"items": items if items is not None else [_finding()]}),
            EvalMetric(type="test_coverage", value=0.95, threshold=0.8, passed=True,
                       limit="min 80.00%"),
            EvalMetric(type="security_score", status=MetricStatus.ERROR, passed=False,
                       reason="bandit crashed\ntraceback"),
        ],
        "conditions": [],
        "tests": TestOutcomes(passed=3, failed=1),
        "signoffs": Signoffs(required=2, approved_by=["alice"]),
        "waivers": [{"rule": "B602", "paths": ["a|b.py"], "reason": "legacy <b>", "status":
                     "active", "expires": "2027-01-01", "excused": 1}],
    }
    fields.update(extra)
    return GateReport(**fields)


def test_the_marker_and_the_verdict_come_first() -> None:
    lines = render_markdown(_report()).splitlines()
    assert lines[0] == MARKER
    assert lines[1] == "## ❌ confgate: FAIL (tier T2)"


@pytest.mark.parametrize(
    ("decision", "heading"),
    [
        (Decision.PASS, "## ✅ confgate: PASS"),
        (Decision.NEEDS_SIGNOFF, "## ✋ confgate: NEEDS SIGN-OFF"),
    ],
)
def test_each_decision_has_its_own_heading(decision: Decision, heading: str) -> None:
    assert render_markdown(_report(decision)).splitlines()[1].startswith(heading)


def test_a_failing_value_is_never_shown_equal_to_its_threshold() -> None:
    text = render_markdown(_report())
    assert "| lint_score | 69.96% | min 70.00% | ❌ FAIL | 0 violations in 0 files |" in text
    assert "| test_coverage | 95.00% | min 80.00% | ✅ PASS | coverage: 0/0 lines |" in text
    assert "| security_score | - | - | ❌ FAIL | error: bandit crashed |" in text


def test_untrusted_text_cannot_break_out() -> None:
    text = render_markdown(_report())
    assert "<script>" not in text
    assert "&lt;script&gt;" in text
    assert not any(line.startswith("::") for line in text.splitlines())
    assert re.search(r"(?<!\\)`", text) is None  # no backtick opens a code span
    assert "\\`rm -rf\\`" in text
    assert "@team" not in text  # no mention pings anyone
    assert "\\[x\\]" in text
    finding_rows = [line for line in text.splitlines() if line.startswith("| pkg/mod0.py:1 |")]
    assert len(finding_rows) == 1
    # every unescaped pipe is a column border: 4 columns -> 5 borders
    assert finding_rows[0].replace("\\|", "").count("|") == 5


def test_escape_markdown_makes_one_inert_line() -> None:
    assert escape_markdown("a|b\nc") == "a\\|b c"
    assert escape_markdown("<img src=x>") == "&lt;img src=x&gt;"
    assert escape_markdown("x" * 500, limit=10) == "x" * 9 + "…"


def test_reasons_signoffs_confidence_findings_and_waivers_are_reported() -> None:
    confidence = ConfidenceResult(method="formula", mode="composite", score=0.81, scores={},
                                  threshold=0.8, advisory="confidence threshold met")
    text = render_markdown(_report(confidence=confidence))
    assert "### What blocks (2)" in text
    assert "1. lint_score 69.96% is below 70.00%." in text
    assert "1/2 approved (alice)" in text
    assert "**Missing 1 sign-off(s)** for tier T2." in text
    assert "### Confidence (advisory only)" in text
    assert "81.00% against 80.00%" in text
    assert "decision above is the policy's" in text
    assert "### Top findings (1 of 1)" in text
    assert "| pkg/mod0.py:1 | ruff | F401 |" in text
    assert "### Waivers" in text
    assert "a\\|b.py" in text


def test_a_pass_without_findings_is_short() -> None:
    report = _report(Decision.PASS, items=[], reasons=[], signoffs=Signoffs(), waivers=[])
    text = render_markdown(report)
    assert "Top findings" not in text
    assert "Reasons" not in text
    assert "Truncated" not in text


def test_only_the_top_findings_are_listed() -> None:
    report = _report(items=[_finding(i, "unused import", file=f"pkg/m{i:03}.py")
                            for i in range(120)])
    text = render_markdown(report, max_findings=10)
    assert "### Top findings (10 of 120)" in text
    assert "pkg/m009.py" in text
    assert "pkg/m010.py" not in text


def test_a_huge_report_stays_under_the_step_summary_limit_and_points_to_the_full_one() -> None:
    row = _finding(0, HOSTILE * 3)
    items = [{**row, "file": f"pkg/mod{i}.py", "line": i + 1} for i in range(100_000)]
    report = _report(items=items)
    text = render_markdown(
        report, report_link="https://example.invalid/run/1", max_findings=100_000
    )
    assert len(text.encode("utf-8")) <= 1_000_000
    last = text.rstrip("\n").splitlines()[-1]
    assert last.startswith("**Truncated** to stay under 1000000 bytes")
    assert "https://example.invalid/run/1" in last


def test_a_custom_limit_is_kept_and_a_tiny_one_refused() -> None:
    items = [_finding(i) for i in range(1000)]
    text = render_markdown(_report(items=items), limit_bytes=4096, max_findings=1000)
    assert len(text.encode("utf-8")) <= 4096
    assert "the full report is the JSON report." in text
    with pytest.raises(ValueError, match="at least 1024"):
        render_markdown(_report(), limit_bytes=100)


def test_missing_changed_lines_are_listed_per_file_as_ranges_worst_first() -> None:
    """diff-cover prints `storage.py Missing lines 22-26`; the gate printed only a fraction."""
    patch = EvalMetric(type="test_coverage", value=0.3, passed=False, limit="min 80.00%",
                       details={"scope": "changed", "missing": {},
                                "uncovered_changed_lines": {"src/a.py": [3],
                                                            "src/storage.py": [22, 23, 24, 25,
                                                                               26, 40]}})
    text = render_markdown(_report(metrics=[patch]))
    assert "### Missing changed lines (2 of 2 files)" in text
    rows = [line for line in text.splitlines() if line.startswith("| src/")]
    assert rows == ["| src/storage.py | 22-26, 40 |", "| src/a.py | 3 |"]
    assert "| test_coverage (changed lines) | 30.00% | min 80.00% | ❌ FAIL |" in text
    assert "changed-line coverage: 0/0 lines |" in text


def test_a_whole_project_figure_lists_its_missing_lines() -> None:
    project = EvalMetric(type="test_coverage", value=0.9, passed=True, limit="min 80.00%",
                         details={"missing": {"src/x.py": [1, 2, 5], "bad": "not a list"}})
    text = render_markdown(_report(metrics=[project]))
    assert "| src/x.py | 1-2, 5 |" in text
    assert "Missing lines" in text


def test_sign_offs_name_the_reviews_that_did_not_count_and_why() -> None:
    """The summary said `0/1 approved (none)` when alice's approval was stale."""
    signoffs = Signoffs(required=1, ignored=[
        {"login": "alice", "reason": "stale: approved commit 1234567, head is abcdef0"},
        {"login": "bob", "reason": "self-approval by the author"},
    ], source="GitHub reviews of #7 could not be read: HTTP 500")
    text = render_markdown(_report(signoffs=signoffs))
    assert "Not counted: alice: stale: approved commit 1234567, head is abcdef0." in text
    assert "Not counted: bob: self-approval by the author." in text
    assert "Failed: GitHub reviews of \\#7 could not be read: HTTP 500." in text


def test_findings_list_security_high_first_then_by_file() -> None:
    items = [_finding(0, "style", file="a.py"),
             _finding(1, "eval", tool="bandit", rule="B307", file="z.py", severity="HIGH"),
             _finding(2, "assert", tool="bandit", rule="B101", file="b.py", severity="LOW")]
    text = render_markdown(_report(items=items), max_findings=2)
    rows = [line for line in text.splitlines() if line.startswith("| ") and ".py:" in line]
    assert [row.split(" | ")[0] for row in rows] == ["| z.py:2", "| b.py:3"]


def test_where_sign_offs_are_counted_the_rule_for_giving_one_is_stated() -> None:
    """The report counted sign-offs but never said one must be an approving review of the
    head commit by someone who is not the author."""
    from fakes.reports import gate_report

    from pytest_confgate.models import Decision, Signoffs
    from pytest_confgate.report.html import render_html
    from pytest_confgate.report.terminal import summary_lines

    report = gate_report(decision=Decision.NEEDS_SIGNOFF, risk_tier="T2",
                         signoffs=Signoffs(required=1, approved_by=[], source="reviews"))
    rule = "an approving review of its head commit by someone who is not its author"
    assert rule in render_comment(report)
    assert rule in render_html(report)
    assert any(rule in line for line in summary_lines(report))


def test_what_blocks_comes_right_after_the_verdict() -> None:
    """The reasons were the 8th block of the comment, below the fold."""
    from fakes.reports import gate_report

    report = gate_report(decision=Decision.FAIL,
                         reasons=["security_score: 1 HIGH-severity finding (max_high_severity: 0)"])
    text = render_comment(report)
    heading = text.index("## ❌ confgate: FAIL")
    assert heading < text.index("### What blocks (1)") < text.index("### Evidence")
    from pytest_confgate.report.html import render_html

    page = render_html(report)
    assert page.index("<h2>What blocks (1)</h2>") < page.index("<h2>Evidence</h2>")


def test_modules_imported_before_coverage_started_are_named_with_what_to_run() -> None:
    early = EvalMetric(
        type="test_coverage", value=0.5, limit="-",
        details={"imported_before_start": [f"pkg/m{i}.py" for i in range(7)],
                 "run_instead": "python -m pytest_confgate [the same pytest arguments]"},
    )
    text = render_markdown(_report(metrics=[early]))
    assert (
        "Coverage: imported before coverage started (import-time lines not counted): "
        "pkg/m0.py, pkg/m1.py, pkg/m2.py, pkg/m3.py, pkg/m4.py and 2 more; run "
    ) in text
    assert "python -m pytest_confgate" in text
    assert "imported before coverage started" not in render_markdown(_report())

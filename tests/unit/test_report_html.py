"""The HTML report (SPEC 10): one self-contained file, escaped text, one chart bar per metric."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from fakes.reports import gate_report

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
from pytest_confgate.report.html import render_html

HOSTILE = 'x | y\n::error::pwned `z` <script>alert(1)</script><img src="https://evil.invalid/a">'
VOID = {"meta", "img", "br", "hr", "link", "input", "rect", "line", "wbr"}


class _Tree(HTMLParser):
    """Records tags, attributes and text; checks that every opened tag is closed."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.unbalanced: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack.pop() != tag:
            self.unbalanced.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _report() -> GateReport:
    finding = Finding(tool="bandit", rule="B602", file="pkg/<a>.py", line=4, message=HOSTILE,
                      severity="HIGH", confidence="HIGH")
    return gate_report(
        project="demo <b>",
        risk_tier="T2",
        risk_reason="touches auth/",
        decision=Decision.NEEDS_SIGNOFF,
        reasons=["needs 1 more sign-off", HOSTILE],
        metrics=[
            EvalMetric(type="test_coverage", value=0.6996, threshold=0.7, passed=False,
                       limit="min 70.00%"),
            EvalMetric(type="lint_score", value=1.0, threshold=0.9, passed=True,
                       limit="min 90.00%, max 0 violations"),
            EvalMetric(type="security_score", value=0.5, threshold=1.0, passed=False,
                       limit="min 100.00%, max 0 HIGH",
                       details={"items": [finding.model_dump()]}),
            EvalMetric(type="llm_judge", status=MetricStatus.UNAVAILABLE, reason="no agent"),
        ],
        tests=TestOutcomes(passed=3),
        confidence=ConfidenceResult(method="formula", mode="composite", score=0.6, scores={},
                                    threshold=0.8),
        signoffs=Signoffs(required=1),
    )


def _parse(page: str) -> _Tree:
    tree = _Tree()
    tree.feed(page)
    tree.close()
    return tree


def test_the_page_is_well_formed_with_the_verdict_first() -> None:
    page = render_html(_report())
    tree = _parse(page)
    assert tree.unbalanced == []
    assert tree.stack == []
    assert page.startswith("<!DOCTYPE html>")
    h1 = "".join(tree.text).split("confgate: NEEDS SIGN-OFF (tier T2)")
    assert len(h1) == 2


def test_the_page_loads_nothing_from_anywhere() -> None:
    page = render_html(_report())
    tree = _parse(page)
    assert not [tag for tag, _ in tree.tags if tag in {"script", "link", "img", "iframe"}]
    for _, attrs in tree.tags:
        for name in ("src", "href", "xlink:href", "action"):
            assert attrs.get(name) is None, (name, attrs)
    assert "@import" not in page
    assert re.search(r"url\s*\(", page) is None
    assert "http://" not in page
    assert "https://" not in page.replace("https://evil.invalid", "")  # escaped hostile text only


def test_untrusted_text_is_escaped() -> None:
    page = render_html(_report())
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    assert "&lt;img src=&quot;https://evil.invalid/a&quot;&gt;" in page
    assert "pkg/&lt;a&gt;.py:4" in page
    assert "demo &lt;b&gt;" in page


def test_the_chart_has_one_bar_and_one_label_per_metric() -> None:
    tree = _parse(render_html(_report()))
    svgs = [attrs for tag, attrs in tree.tags if tag == "svg"]
    assert len(svgs) == 1
    assert svgs[0]["role"] == "img"
    bars = [attrs for tag, attrs in tree.tags if tag == "rect" and "bar" in (attrs["class"] or "")]
    assert len(bars) == 4
    assert [b["width"] for b in bars] == ["279.84", "400.0", "200.0", "0.0"]
    assert [b["class"] for b in bars] == ["bar bar-bad", "bar bar-ok", "bar bar-bad", "bar bar-na"]
    ticks = [attrs for tag, attrs in tree.tags if tag == "line"]
    assert len(ticks) == 3  # llm_judge has no threshold
    text = "".join(tree.text)
    assert "test_coverage: 69.96%, limit min 70.00%: FAIL" in text  # the <title> of the bar
    assert "Each metric's value (bar) against its limit (tick)" in text


def test_evidence_reasons_confidence_and_findings_are_shown() -> None:
    text = "".join(_parse(render_html(_report())).text)
    for expected in ("69.96%", "min 70.00%", "FAIL", "PASS", "max 0 HIGH", "max 0 violations",
                     "advisoryunavailable: no agent", "What blocks (2)",
                     "needs 1 more sign-off", "Confidence (advisory only)", "60.00% against 80.00%",
                     "Findings (1 of 1)", "B602"):
        assert expected in text


def _write(tmp_path: Path, report: GateReport) -> Path:
    page = tmp_path / "report.html"
    page.write_text(render_html(report), encoding="utf-8")
    return page


@pytest.mark.skipif(
    shutil.which("chromium") is None,
    reason="no `chromium` on PATH: the headless browser rendering check needs Debian's chromium",
)
def test_a_real_browser_renders_the_page(tmp_path: Path) -> None:
    """The failing page (tmp_path/failing.png) and a passing one (passing.png), to look at."""
    for name, report in (("failing", _report()), ("passing", _passing_report())):
        page = _write(tmp_path, report)
        data = screenshot(page, tmp_path / f"{name}.png")
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
        assert len(data) > 5_000


def screenshot(page: Path, shot: Path) -> bytes:
    """``page`` as headless Chromium draws it, 1200 px wide."""
    argv: list[Any] = [shutil.which("chromium"), "--headless", "--no-sandbox", "--disable-gpu",
                       "--hide-scrollbars", f"--screenshot={shot}", "--window-size=1200,1100",
                       page.as_uri()]
    subprocess.run(argv, check=True, timeout=180, capture_output=True)
    return shot.read_bytes()


def _passing_report() -> GateReport:
    return gate_report(
        metrics=[
            EvalMetric(type="test_pass_rate", value=1.0, passed=True, limit="max 0 failed",
                       details={"passed": 12, "failed": 0, "errors": 0, "skipped": 1}),
            EvalMetric(type="test_coverage", value=0.91, threshold=0.8, passed=True,
                       limit="min 80.00%", details={"scope": "all", "covered_lines": 91,
                                                    "num_statements": 100,
                                                    "missing": {"src/app/store.py": [22, 23,
                                                                                      24, 40]}}),
            EvalMetric(type="test_coverage", value=1.0, threshold=0.9, passed=True,
                       limit="min 90.00%", details={"scope": "changed", "covered_lines": 4,
                                                    "num_statements": 4}),
            EvalMetric(type="lint_score", value=1.0, passed=True, limit="max 0 violations",
                       details={"violations": 0, "files_checked": 9}),
            EvalMetric(type="security_score", value=1.0, passed=True, limit="max 0 HIGH",
                       details={"findings": 0, "files_scanned": 9}),
        ],
        tests=TestOutcomes(passed=12, skipped=1),
    )

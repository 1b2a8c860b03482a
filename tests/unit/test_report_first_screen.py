"""The reviewer's first screen (issue 37): the decision, then each failed condition with its
figure in the unit of its limit and the fix before any waiver, then patch coverage and the
change against the base, then the evidence; ``test_integrity`` with a verdict of its own; the
HTML chart in each metric's own unit; and, in a real browser, all of it within 1280x800.

The failing pull request is the sample project's (``examples/sample-project``) with a
``shell=True``, an unused import, a new function no test runs and a skip mark added to a test:
its report, as ``pytest --confgate --confgate-base=main`` wrote it, is
``tests/data/reports/sample-pr-failing.json`` (see ``tests/data/README.md``).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fakes.reports import gate_report
from markdown_it import MarkdownIt

from pytest_confgate.models import Condition, Decision, EvalMetric, GateReport
from pytest_confgate.report.compare import SLOT
from pytest_confgate.report.first_screen import blockers, patch_coverage
from pytest_confgate.report.html import COMPARISON_SLOT, evidence_chart, render_html
from pytest_confgate.report.markdown import render_comment
from pytest_confgate.report.rows import metric_display
from pytest_confgate.report.writers import load_report

SAMPLE = Path(__file__).parent.parent / "data" / "reports" / "sample-pr-failing.json"


@pytest.fixture(scope="module")
def failing() -> GateReport:
    return load_report(SAMPLE)


def test_each_failed_condition_has_its_figure_in_the_unit_of_its_limit(failing: GateReport) -> None:
    found = blockers(failing)
    assert [(b.what, b.figure) for b in found] == [
        ("security_score", "1 HIGH finding, max 0"),
        ("test_integrity", "1 sign of tampering, which raises the tier to T2"),
        ("sign-offs", "1 needed for tier T2, got 0"),
    ]
    security, integrity, signoff = found
    assert security.fix.startswith("fix B602 at src/inventory/report.py:21 (subprocess call")
    assert security.last_resort.startswith("only if it is a false positive: waive it")
    assert "waive" not in security.fix
    assert integrity.fix.startswith("undo skip_added at tests/test_stock.py:15")
    assert integrity.last_resort == ""  # no waiver is ever offered for tampering
    assert "not its author" in signoff.fix


def test_the_comment_reads_decision_blockers_patch_then_evidence(failing: GateReport) -> None:
    text = render_comment(failing)
    order = ["## ❌ confgate: FAIL (tier T2)", "### What blocks (3)",
             "1. **security_score: 1 HIGH finding, max 0.** Fix B602 at",
             "   - Last resort, only if it is a false positive",
             "2. **test_integrity: 1 sign of tampering",
             "3. **sign-offs: 1 needed for tier T2, got 0.**",
             "### Patch coverage", "**5 changed lines no test ran**: src/inventory/report.py 20-24",
             "Risk tier T2:", "### ⚠️ Tampering", "### Evidence", "### Top findings"]
    places = [text.index(part) for part in order]
    assert places == sorted(places)
    assert "### Reasons" not in text


def test_the_html_page_has_the_same_order(failing: GateReport) -> None:
    page = render_html(failing)
    order = ["confgate: FAIL (tier T2)", "<h2>What blocks (3)</h2>",
             "<strong>security_score: 1 HIGH finding, max 0.</strong> Fix B602", "Last resort",
             "<h2>Patch coverage</h2>", "<h2>Evidence</h2>", "<svg"]
    places = [page.index(part) for part in order]
    assert places == sorted(places)


def test_test_integrity_has_a_verdict_in_its_own_unit(failing: GateReport) -> None:
    """It raised the tier with ``-`` as its verdict and ``0.00%`` as its value."""
    integrity = next(m for m in failing.metrics if m.type == "test_integrity")
    shown = metric_display(integrity)
    assert (shown.value, shown.threshold, shown.verdict) == (
        "1 sign of tampering", "max 0, else tier T2", "tier T2")
    assert shown.note == ("1 sign in 2 changed files; base's tests on the head: no outcome "
                          "changed; tier raised to at least T2")

    clean = integrity.model_copy(update={"details": {
        **integrity.details, "findings": 0, "items": []}})
    shown = metric_display(clean)
    assert (shown.value, shown.verdict) == ("0 signs of tampering", "PASS")
    assert shown.note == ("0 signs in 2 changed files; base's tests on the head: no outcome "
                          "changed; tier not raised")


def test_a_measured_patch_figure_comes_first_with_the_lines_to_cover() -> None:
    patch = EvalMetric(type="test_coverage", value=0.5, threshold=0.8, passed=False,
                       limit="min 80.00%", details={
                           "scope": "changed", "covered_lines": 2, "num_statements": 4,
                           "missing": {"app/core.py": [3, 4]}})
    report = gate_report(metrics=[patch], decision=Decision.FAIL,
                         reasons=["test_coverage (changed lines): 50.00% is below the minimum "
                                  "80.00%"],
                         conditions=[Condition(
                             metric="test_coverage", name="min", passed=False, value=0.5,
                             threshold=0.8, message="test_coverage (changed lines): 50.00% "
                             "is below the minimum 80.00%")])
    found = patch_coverage(report)
    assert found is not None
    assert found.figure == "50.00% (2/4 changed lines run), min 80.00%"
    assert found.files == [("app/core.py", "3-4")]
    [blocker] = blockers(report)
    assert (blocker.what, blocker.figure) == ("test_coverage (changed lines)",
                                              "50.00%, min 80.00%")
    assert blocker.fix == "add tests that run the changed lines: app/core.py 3-4"


def test_a_reason_no_condition_explains_is_shown_in_its_own_words_in_its_place() -> None:
    report = gate_report(decision=Decision.FAIL,
                         reasons=["the report was rewritten after the gate wrote it",
                                  "advisory: llm_judge: 0.40 is below the minimum 0.70"])
    [blocker] = blockers(report)
    assert blocker.fix == "the report was rewritten after the gate wrote it"
    text = render_comment(report)
    assert "1. the report was rewritten after the gate wrote it." in text
    assert text.index("### What blocks (1)") < text.index("Does not block:")


def test_the_chart_draws_a_count_against_its_max_and_no_bar_for_a_tier(
    failing: GateReport,
) -> None:
    """Lint and security were drawn as shares of files against a count's limit."""
    chart = evidence_chart(failing)
    rows = re.findall(r'<g class="metric"><title>([^<]*)</title>(.*?)</g>', chart)
    drawn = {title.split(":")[0]: body for title, body in rows}
    assert 'width="400.0"' in drawn["security_score"]  # 1 HIGH fills the bar...
    assert 'x1="250.0"' in drawn["security_score"]  # ...against its max of 0
    assert 'width="160.0"' in drawn["lint_score"]  # 2 of a max of 5
    assert 'x1="650.0"' in drawn["lint_score"]
    assert "<rect" not in drawn["test_integrity"]
    assert "66.67%" not in chart  # the share of files is no figure of a count's limit
    assert "lint_score: 2 violations, limit max 5 violations: PASS" in chart
    assert ">2 violations (max 5 violations) PASS</text>" in chart


def test_the_html_comparison_lands_after_patch_coverage(failing: GateReport) -> None:
    from pytest_confgate.report.compare import with_comparison

    assert SLOT == COMPARISON_SLOT
    page = with_comparison(render_html(failing), "html", failing, failing, "main's report")
    assert page.index("Patch coverage") < page.index("Compared with the base") < page.index(
        "<h2>Evidence</h2>")


_GITHUB_LIKE = """
body{margin:0;padding:24px;font:14px/1.5 -apple-system,"Segoe UI",system-ui,sans-serif;
color:#1f2328}
.markdown-body{width:728px;margin:0 auto;border:1px solid #d0d7de;border-radius:6px;
padding:16px;overflow-wrap:break-word}
.markdown-body table{display:block;width:max-content;max-width:100%;overflow:auto;
border-collapse:collapse}
.markdown-body td,.markdown-body th{border:1px solid #d0d7de;padding:6px 13px}
.markdown-body h2{font-size:1.5em}.markdown-body h3{font-size:1.25em}
"""
"""A PR comment's column as GitHub lays it out at 1280 px (its markdown-body rules for
wrapping and for tables, which scroll inside the comment rather than widen it)."""

_MEASURE = """<script>
function next(text) {
  const h = [...document.querySelectorAll("h1,h2,h3")].find(e => e.textContent.includes(text));
  return h ? h.nextElementSibling : null;
}
const box = e => e ? {text: e.textContent, bottom: e.getBoundingClientRect().bottom} : null;
const decision = [...document.querySelectorAll("h1,h2")].find(
  e => e.textContent.includes("confgate:"));
const blocks = next("What blocks");
const broken = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  if (node.parentElement.closest("script,style,svg,pre,code")) continue;
  const re = /[^\\s\\/_.:-]+[\\/_.:-]*/g;
  let m;
  while ((m = re.exec(node.data)) !== null) {
    const range = document.createRange();
    range.setStart(node, m.index);
    range.setEnd(node, m.index + m[0].length);
    const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
    if (tops.size > 1) broken.push(m[0]);
  }
}
const scrolling = [...document.querySelectorAll("table,pre,p,li,div")]
  .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.slice(0, 80));
const out = document.createElement("pre");
out.id = "measured";
out.textContent = JSON.stringify({
  width: document.documentElement.scrollWidth, broken, scrolling,
  decision: box(decision),
  blockers: blocks ? [...blocks.children].map(box) : [],
  patch: box(next("Patch coverage")),
});
document.body.appendChild(out);
</script>"""

_CHROMIUM = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--no-first-run", "--window-size=1280,800"]


def _comment_page(report: GateReport) -> str:
    """The comment as GitHub renders its Markdown (CommonMark, tables, its HTML kept)."""
    body = MarkdownIt("commonmark", {"html": True}).enable("table").render(
        render_comment(report))
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><style>{_GITHUB_LIKE}'
            f'</style></head><body><div class="markdown-body">{body}</div></body></html>')


def _measure(page: str, tmp_path: Path, name: str) -> dict[str, Any]:
    """``page`` in headless Chromium at 1280x800: the boxes of what must be on the first
    screen, words cut in two, anything wider than its box. ``tmp_path/NAME.png`` is the
    screenshot to look at; the measuring copy adds a script the real page never has."""
    chromium = [shutil.which("chromium") or "chromium", *_CHROMIUM]
    real = tmp_path / f"{name}.html"
    real.write_text(page, encoding="utf-8")
    measured = tmp_path / f"{name}-measure.html"
    measured.write_text(page.replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
    done = subprocess.run([*chromium, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                           measured.as_uri()], check=True, timeout=180, capture_output=True,
                          text=True)
    found = re.search(r'<pre id="measured">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stdout[-2000:]
    subprocess.run([*chromium, f"--user-data-dir={tmp_path / 'profile'}",
                    f"--screenshot={tmp_path / f'{name}.png'}", real.as_uri()], check=True,
                   timeout=180, capture_output=True)
    result: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return result


@pytest.mark.skipif(
    shutil.which("chromium") is None,
    reason="no `chromium` on PATH: the headless browser rendering check needs Debian's chromium",
)
@pytest.mark.parametrize("form", ["comment", "html"])
def test_everything_a_reviewer_needs_is_within_the_first_800_pixels(
    failing: GateReport, tmp_path: Path, form: str
) -> None:
    page = _comment_page(failing) if form == "comment" else render_html(failing)
    seen = _measure(page, tmp_path, form)
    assert seen["broken"] == []
    assert seen["scrolling"] == []
    assert seen["width"] <= 1280
    assert "confgate: FAIL (tier T2)" in seen["decision"]["text"]
    texts = [b["text"] for b in seen["blockers"]]
    assert len(texts) == 3
    assert "security_score: 1 HIGH finding, max 0. Fix B602 at src/inventory/report.py:21" in (
        texts[0])
    assert texts[0].index("Fix B602") < texts[0].index("Last resort")
    assert "test_integrity: 1 sign of tampering" in texts[1]
    assert "Undo skip_added at tests/test_stock.py:15" in texts[1]
    assert "sign-offs: 1 needed for tier T2, got 0." in texts[2]
    assert "5 changed lines no test ran: src/inventory/report.py 20-24" in seen["patch"]["text"]
    bottoms = [seen["decision"]["bottom"], *(b["bottom"] for b in seen["blockers"]),
               seen["patch"]["bottom"]]
    assert max(bottoms) <= 800, bottoms


def test_long_test_ids_get_break_points_and_no_emphasis_or_entity_is_split() -> None:
    """A long test id in a narrow cell widened the comment's table past the page."""
    from pytest_confgate.report.escape import escape_markdown, with_break_points

    text = "added: tests/test_stock.py::test_take_of_an_unknown_item_takes_nothing x __init__.py"
    shown = with_break_points(escape_markdown(text), markdown=True)
    assert shown == ("added: tests/<wbr>test\\_<wbr>stock.<wbr>py::<wbr>test\\_<wbr>take\\_<wbr>"
                     "of\\_<wbr>an\\_<wbr>unknown\\_<wbr>item\\_<wbr>takes\\_<wbr>nothing x "
                     "\\_\\_init\\_\\_.py")
    rendered = MarkdownIt("commonmark", {"html": True}).render(shown)
    assert "<em>" not in rendered
    assert "test_<wbr>take_<wbr>of" in rendered
    assert with_break_points("skip('&lt;b&gt;later&lt;/b&gt;')xxxxxxxxxx") == (
        "skip('&lt;b&gt;later&lt;/b&gt;')xxxxxxxxxx")


def _decided(gate: dict[str, Any], metrics: list[EvalMetric], tests: Any) -> GateReport:
    """A report whose verdict the real policy gave (conditions, reasons, judged metrics)."""
    from pytest_confgate.config import GateConfig
    from pytest_confgate.gate.policy import decide
    from pytest_confgate.models import Signoffs

    verdict = decide(GateConfig.model_validate(gate), "T1", metrics, tests, Signoffs())
    return gate_report(decision=verdict.decision, reasons=verdict.reasons,
                       conditions=verdict.conditions, metrics=verdict.metrics, tests=tests)


def test_every_kind_of_failed_condition_reads_figure_then_fix_then_waiver() -> None:
    from pytest_confgate.models import TestOutcomes

    lint_items = [{"tool": "ruff", "rule": "F401", "file": "app/core.py", "line": n,
                   "message": "`os` imported but unused"} for n in (3, 9, 12)]
    metrics = [
        EvalMetric(type="test_pass_rate", value=0.5),
        EvalMetric(type="test_coverage", value=0.7273, details={
            "scope": "all", "missing": {"app/core.py": [5, 6, 7], "app/io.py": [2]}}),
        EvalMetric(type="lint_score", value=0.5, details={"violations": 3, "items": lint_items}),
    ]
    gate = {"risk_tier": "T1", "metrics": [
        {"type": "test_pass_rate"}, {"type": "test_coverage", "min": 0.8},
        {"type": "lint_score", "max_lint_violations": 2}]}
    report = _decided(gate, metrics, TestOutcomes(passed=3, failed=1, errors=1))
    found = {b.what: b for b in blockers(report)}
    assert found["test_pass_rate"].figure == "1 test failed and 1 error, max 0"
    assert found["test_coverage"].figure == "72.73%, min 80.00%"
    assert found["test_coverage"].fix == (
        "add tests that run the missing lines: app/core.py 5-7; app/io.py 2")
    assert found["lint_score"].figure == "3 violations, max 2"
    assert found["lint_score"].fix.startswith("fix at least 1, first F401 at app/core.py:3")
    assert found["lint_score"].last_resort.startswith("only if it must stay: waive it")
    text = render_comment(report)
    assert text.index("1 test failed and 1 error, max 0") < text.index("72.73%, min 80.00%")
    assert text.index("Fix at least 1") < text.index("Last resort, only if it must stay")


def test_the_base_comparison_counts_what_the_limit_counts() -> None:
    """``lint_score 50.00% ... -16.67 pts`` beside ``max 5 violations`` explained nothing."""
    from pytest_confgate.report.compare import comparison_lines

    def report(violations: int, high: int, signs: int) -> GateReport:
        return gate_report(metrics=[
            EvalMetric(type="lint_score", value=0.5, passed=True, limit="max 5 violations",
                       details={"violations": violations}),
            EvalMetric(type="security_score", value=0.5, passed=True, limit="max 0 HIGH",
                       details={"by_severity": {"HIGH": high}}),
            EvalMetric(type="test_integrity", value=0.0, details={"findings": signs}),
            EvalMetric(type="test_coverage", value=0.8, threshold=0.8, passed=True,
                       limit="min 80.00%"),
        ])

    lines = comparison_lines(report(3, 1, 2), report(1, 0, 0), "main")
    assert lines[1:] == ["  lint_score: 3 violations (base 1, +2)",
                         "  security_score: 1 HIGH finding (base 0, +1)",
                         "  test_integrity: 2 signs of tampering (base 0, +2)",
                         "  test_coverage: 80.00% (base 80.00%, unchanged)"]


def test_a_patch_and_a_project_floor_each_name_their_own_lines() -> None:
    from pytest_confgate.models import TestOutcomes

    metrics = [
        EvalMetric(type="test_pass_rate", value=1.0),
        EvalMetric(type="test_coverage", value=0.7, details={
            "scope": "all", "missing": {"app/old.py": [40, 41, 42]}}),
        EvalMetric(type="test_coverage", value=0.5, details={
            "scope": "changed", "covered_lines": 1, "num_statements": 2,
            "missing": {"app/new.py": [7]}}),
    ]
    gate = {"risk_tier": "T1", "metrics": [
        {"type": "test_pass_rate"}, {"type": "test_coverage", "min": 0.8},
        {"type": "test_coverage", "scope": "changed", "min": 0.9}]}
    report = _decided(gate, metrics, TestOutcomes(passed=3))
    found = {b.what: b for b in blockers(report)}
    assert found["test_coverage"].fix == "add tests that run the missing lines: app/old.py 40-42"
    patch = found["test_coverage (changed lines)"]
    assert (patch.figure, patch.fix) == (
        "50.00%, min 90.00%", "add tests that run the changed lines: app/new.py 7")


def test_a_hostile_finding_stays_inert_on_the_first_screen(failing: GateReport) -> None:
    hostile = "x | y\n::error::pwned <script>alert(1)</script> @octocat [a](https://evil.invalid)"
    security = next(m for m in failing.metrics if m.type == "security_score")
    items = [{**security.details["items"][0], "message": hostile, "file": "a<b>.py"}]
    metrics = [m.model_copy(update={"details": {**m.details, "items": items}})
               if m is security else m for m in failing.metrics]
    report = failing.model_copy(update={"metrics": metrics})
    text = render_comment(report)
    block = text.split("### What blocks")[1].split("### Patch coverage")[0]
    assert "<script>" not in block
    assert "&lt;script&gt;" in block
    assert " [a](https" not in block
    assert "\\[a\\](https" in block
    assert "@\u2060octocat" in block
    assert "\n::error::" not in text
    page = render_html(report)
    assert "<script>" not in page
    assert "a&lt;b&gt;.py" in page

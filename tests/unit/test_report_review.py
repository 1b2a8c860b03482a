"""What a reviewer sees (issue 29): tamper findings first, the judged commits and approvers,
uncovered changed lines annotated, SARIF severities and fingerprints, bandit's columns as SARIF
gives them, the checklist's missing items, and the findings in the terminal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
from fakes.reports import HEAD_SHA, gate_report

from pytest_confgate.github.annotations import annotation_commands, uncovered_changed_lines
from pytest_confgate.models import Decision, EvalMetric, Finding, GateReport, Signoffs
from pytest_confgate.report.html import render_html
from pytest_confgate.report.markdown import render_markdown
from pytest_confgate.report.sarif import render_sarif
from pytest_confgate.report.terminal import summary_lines

SCHEMA = Path(__file__).parent.parent / "data" / "sarif-schema-2.1.0.json"
BASE = "b" * 40
SKIPPED = {"rule": "skip-added", "file": "tests/test_calc.py", "line": 7,
           "message": "a skip mark was added to test_divide", "test": "tests/test_calc.py::x",
           "base": "def test_divide():", "head": "@pytest.mark.skip('<b>later</b>')"}


def _finding(tool: str, rule: str, line: int, column: int, **extra: Any) -> dict[str, Any]:
    return Finding(tool=tool, rule=rule, file="calc/core.py", line=line, column=column,
                   message=extra.pop("message", "m"), **extra).model_dump()


def reviewed(**fields: Any) -> GateReport:
    integrity = EvalMetric(type="test_integrity", value=0.0, details={
        "findings": 1, "items": [SKIPPED]}, passed=None)
    lint = EvalMetric(type="lint_score", value=0.5, passed=False, details={
        "items": [_finding("ruff", "F401", 3, 8, message="`os` imported but unused")]})
    security = EvalMetric(type="security_score", value=0.9, passed=True, details={
        "items": [_finding("bandit", "B307", 5, 4, severity="MEDIUM")]})
    patch = EvalMetric(type="test_coverage", value=0.5, details={
        "scope": "changed", "missing": {"calc/core.py": [3, 4, 5, 9]}})
    checklist = EvalMetric(type="checklist_completion", value=0.5, passed=False, details={
        "required_missing": ["Tests added", "Docs updated"]})
    values: dict[str, Any] = {
        "decision": Decision.FAIL,
        "metrics": [integrity, lint, security, patch, checklist],
        "change": {"base_ref": "main", "merge_base": BASE, "files": ["calc/core.py"],
                   "lines": {"calc/core.py": [[1, 10]]}},
        "signoffs": Signoffs(required=1, approvers=["alice", "bob"]),
    }
    values.update(fields)
    return gate_report(**values)


def test_the_comment_puts_tampering_first_with_both_sides_and_names_the_commits() -> None:
    text = render_markdown(reviewed())
    lines = text.splitlines()
    assert lines[3] == (f"Judged head {HEAD_SHA[:12]} against base {BASE[:12]}; may approve: "
                        "alice, bob.")
    tamper = text.index("### ⚠️ Tampering and behaviour changes (1)")
    assert tamper < text.index("### Evidence")
    row = next(line for line in lines if line.startswith("| tests/test_calc.py:7 |"))
    assert "<code>def test_divide():</code>" in row
    assert "&lt;b&gt;later&lt;/b&gt;" in row
    assert "<b>" not in row
    assert "required, not checked: Tests added, Docs updated" in text


def test_the_html_page_shows_the_same_sections() -> None:
    page = render_html(reviewed())
    assert page.index("Tampering and behaviour changes (1)") < page.index("<h2>Evidence")
    assert "<pre>def test_divide():</pre>" in page
    assert "&lt;b&gt;later&lt;/b&gt;" in page
    assert f"<code>{HEAD_SHA[:12]}</code> against base <code>{BASE[:12]}</code>" in page
    assert "may approve: alice, bob" in page


def test_annotations_for_tampering_findings_and_uncovered_changed_ranges() -> None:
    commands = annotation_commands(reviewed()).commands
    assert commands == [
        "::error file=tests/test_calc.py,line=7,title=confgate tamper skip-added::"
        "a skip mark was added to test_divide",
        # bandit's col_offset 4 (0-based) is column 5, as SARIF's startColumn says
        "::warning file=calc/core.py,line=5,col=5,title=bandit B307::m",
        "::warning file=calc/core.py,line=3,col=8,title=ruff F401::`os` imported but unused",
        "::notice file=calc/core.py,line=3,endLine=5,title=uncovered changed lines::"
        "lines 3-5 changed and no test ran them",
        "::notice file=calc/core.py,line=9,title=uncovered changed lines::"
        "line 9 changed and no test ran it",
    ]


def test_project_coverage_gaps_count_only_within_the_changed_lines() -> None:
    project = EvalMetric(type="test_coverage", value=0.5, details={
        "missing": {"calc/core.py": [2, 30], "other.py": [1]}})
    report = gate_report(metrics=[project], change={
        "files": ["calc/core.py"], "lines": {"calc/core.py": [[1, 5]]}})
    assert uncovered_changed_lines(report) == {"calc/core.py": [2]}
    assert uncovered_changed_lines(report.model_copy(update={"change": None})) == {}


def test_sarif_has_a_tamper_run_severities_and_fingerprints_that_survive_moving_code() -> None:
    log = render_sarif(reviewed())
    jsonschema.Draft4Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(log)
    tools = [run["tool"]["driver"]["name"] for run in log["runs"]]
    assert tools == ["confgate", "ruff", "bandit"]
    tamper, _, bandit = log["runs"]
    [result] = tamper["results"]
    assert (result["ruleId"], result["level"]) == ("skip-added", "error")
    [rule] = bandit["tool"]["driver"]["rules"]
    assert rule["properties"] == {"security-severity": "5.5", "tags": ["security"]}
    [found] = bandit["results"]
    assert found["level"] == "warning"
    assert found["locations"][0]["physicalLocation"]["region"]["startColumn"] == 5

    moved = reviewed()
    security = moved.metrics[2].model_copy(update={"details": {
        "items": [_finding("bandit", "B307", 25, 4, severity="MEDIUM")]}})
    metrics = [*moved.metrics[:2], security, *moved.metrics[3:]]
    again = render_sarif(moved.model_copy(update={"metrics": metrics}))["runs"][2]["results"][0]
    assert again["locations"][0]["physicalLocation"]["region"]["startLine"] == 25
    assert again["partialFingerprints"] == found["partialFingerprints"]
    assert list(found["partialFingerprints"]) == ["confgateFinding/v1"]


def test_the_terminal_lists_blocking_findings_by_default_and_all_with_verbose() -> None:
    report = reviewed()
    default = "\n".join(summary_lines(report))
    assert "tampering and behaviour changes (1):" in default
    assert "  tests/test_calc.py:7  skip-added  a skip mark was added to test_divide" in default
    assert "blocking findings (1):" in default
    assert "calc/core.py:3  ruff F401  `os` imported but unused" in default
    assert "B307" not in default  # security passed: its finding does not block
    verbose = "\n".join(summary_lines(report, verbosity=1))
    assert "findings (2):" in verbose
    assert "calc/core.py:5  bandit B307 MEDIUM  m" in verbose
    quiet = summary_lines(report, verbosity=-1)
    assert "  tests/test_calc.py:7  skip-added  a skip mark was added to test_divide" in quiet


def test_a_dunder_file_name_is_not_read_as_bold_text() -> None:
    """``calc/__init__.py`` showed as calc/**init**.py in the comment; ``test_pass_rate``
    (underscores between letters) cannot open emphasis and stays readable."""
    from pytest_confgate.report.markdown import escape_markdown

    shown = escape_markdown("calc/__init__.py: test_pass_rate _x_")
    assert shown == "calc/\\_\\_init\\_\\_.py: test_pass_rate \\_x\\_"


def test_file_names_link_to_the_pull_requests_diff(tmp_path: Path) -> None:
    import hashlib

    from pytest_confgate.github.publish import diff_links

    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7, "head": {"sha": HEAD_SHA},
                                                  "user": {"login": "carol"}}}))
    environ = {"GITHUB_EVENT_PATH": str(event), "GITHUB_REPOSITORY": "o/r"}
    link = diff_links(environ)
    assert link is not None
    anchor = hashlib.sha256(b"calc/core.py").hexdigest()
    assert link("calc/core.py", 3) == f"https://github.com/o/r/pull/7/files#diff-{anchor}R3"
    text = render_markdown(reviewed(), diff_link=link)
    assert f"| [calc/core.py:5](https://github.com/o/r/pull/7/files#diff-{anchor}R5) |" in text
    assert f"| [calc/core.py](https://github.com/o/r/pull/7/files#diff-{anchor}) |" in text
    hostile = render_markdown(reviewed(), diff_link=lambda f, n: "javascript:alert(1)")
    assert "javascript" not in hostile
    assert diff_links({**environ, "GITHUB_REPOSITORY": "o/r)[x](https://evil"}) is None


def test_a_finding_the_gate_and_the_publish_step_both_made_is_shown_once() -> None:
    from pytest_confgate.report.rows import tamper_rows

    report = reviewed()
    static = EvalMetric(type="tamper_patterns", value=0.0, details={"items": [
        SKIPPED, {**SKIPPED, "rule": "gate_escape", "line": 9}]})
    both = report.model_copy(update={"metrics": [*report.metrics, static]})
    assert [(r.rule, r.line, r.source) for r in tamper_rows(both)] == [
        ("skip-added", 7, "test_integrity"), ("gate_escape", 9, "tamper_patterns")]


def test_the_html_page_links_file_names_to_the_pull_requests_diff(tmp_path: Path) -> None:
    """The HTML report had no links; publish renders it with the pull request's diff."""
    import hashlib

    from pytest_confgate.github.publish import diff_links, render_artifacts
    from pytest_confgate.report.html import render_html

    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7, "head": {"sha": HEAD_SHA},
                                                  "user": {"login": "carol"}}}))
    link = diff_links({"GITHUB_EVENT_PATH": str(event), "GITHUB_REPOSITORY": "o/r"})
    assert link is not None
    anchor = hashlib.sha256(b"calc/core.py").hexdigest()
    page_url = f"https://github.com/o/r/pull/7/files#diff-{anchor}"
    render_artifacts(reviewed(), tmp_path, None, link)
    page = (tmp_path / "confgate-report.html").read_text(encoding="utf-8")
    assert f'<a href="{page_url}R5">calc/core.py:5</a>' in page
    assert f'<a href="{page_url}">calc/core.py</a>' in page
    hostile = render_html(reviewed(), diff_link=lambda f, n: "javascript:alert(1)")
    assert "javascript" not in hostile
    assert "<a " not in render_html(reviewed())

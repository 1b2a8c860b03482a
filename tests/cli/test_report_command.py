"""``confgate report`` through ``main(argv)``: re-render a saved report (SPEC 10, 12)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes.reports import gate_report

from pytest_confgate.cli import REPORT_FORMATS, ExitCode, main
from pytest_confgate.models import Decision, EvalMetric, Finding, GateReport
from pytest_confgate.report.json_report import write_json_report
from pytest_confgate.report.writers import FORMATS


def _report() -> GateReport:
    finding = Finding(tool="bandit", rule="B602", file="pkg/a.py", line=4, column=0,
                      message="subprocess call with shell=True", severity="HIGH",
                      confidence="HIGH")
    return gate_report(
        decision=Decision.FAIL,
        reasons=["security_score 50.00% is below 100.00%"],
        metrics=[EvalMetric(type="security_score", value=0.5, threshold=1.0,
                            details={"tool": "bandit", "items": [finding.model_dump()]})],
    )


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    path = tmp_path / "confgate-report.json"
    write_json_report(_report(), path)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_cli_offers_every_writer() -> None:
    assert set(REPORT_FORMATS) == set(FORMATS)


def test_markdown_goes_to_stdout(capsys: pytest.CaptureFixture[str], saved: Path) -> None:
    code, out, err = run(capsys, "report", "--format", "md", str(saved))
    assert (code, err) == (ExitCode.OK, "")
    assert out.splitlines()[:2] == ["<!-- confgate-report -->", "## ❌ confgate: FAIL (tier T1)"]


def test_sarif_is_written_atomically_to_a_file(
    capsys: pytest.CaptureFixture[str], saved: Path, tmp_path: Path
) -> None:
    target = tmp_path / "out" / "confgate.sarif"
    code, out, err = run(capsys, "report", "--format", "sarif", str(saved), "-o", str(target))
    assert (code, out, err) == (ExitCode.OK, "", "")
    log = json.loads(target.read_text(encoding="utf-8"))
    assert log["runs"][0]["results"][0]["ruleId"] == "B602"
    assert sorted(p.name for p in target.parent.iterdir()) == ["confgate.sarif"]


def test_html_and_json_render_too(capsys: pytest.CaptureFixture[str], saved: Path) -> None:
    code, out, _ = run(capsys, "report", "--format", "html", str(saved))
    assert code == ExitCode.OK
    assert out.startswith("<!DOCTYPE html>")
    code, out, _ = run(capsys, "report", "--format", "json", str(saved))
    assert code == ExitCode.OK
    assert GateReport.model_validate_json(out) == _report()


def test_a_missing_file_is_one_clear_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "nope.json"
    code, out, err = run(capsys, "report", "--format", "md", str(missing))
    assert (code, out) == (ExitCode.USAGE_ERROR, "")
    assert err.splitlines() == [
        f"confgate report: {missing}: no such file; give the JSON report `pytest --confgate` wrote"
    ]


def test_invalid_json_names_the_file_and_the_place(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"decision": ', encoding="utf-8")
    code, _, err = run(capsys, "report", "--format", "md", str(bad))
    assert code == ExitCode.USAGE_ERROR
    assert len(err.splitlines()) == 1
    assert f"{bad}: not valid JSON (line 1, column 14" in err


def test_json_that_is_not_a_gate_report_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    other = tmp_path / "package.json"
    other.write_text('{"name": "left-pad"}', encoding="utf-8")
    code, _, err = run(capsys, "report", "--format", "sarif", str(other))
    assert code == ExitCode.USAGE_ERROR
    assert len(err.splitlines()) == 1
    assert f"{other}: not a confgate gate report (" in err
    assert "give the JSON report `pytest --confgate` wrote" in err


def test_an_unknown_format_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], saved: Path
) -> None:
    code, out, err = run(capsys, "report", "--format", "pdf", str(saved))
    assert (code, out) == (ExitCode.USAGE_ERROR, "")
    assert "invalid choice: 'pdf'" in err


def test_an_unwritable_output_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], saved: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    code, _, err = run(capsys, "report", "--format", "md", str(saved), "-o", str(blocker / "x.md"))
    assert code == ExitCode.USAGE_ERROR
    assert "the report cannot be written" in err


def _coverages(project: float, patch: float | None) -> list[EvalMetric]:
    metrics = [EvalMetric(type="test_coverage", value=project, details={"scope": "all"})]
    if patch is not None:
        metrics.append(EvalMetric(type="test_coverage", value=patch,
                                  details={"scope": "changed"}))
    return metrics


def test_compare_shows_each_metrics_change_against_the_base_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Codecov shows `+1.20%` against the base; the gate showed nothing to compare with."""
    head, base = tmp_path / "head.json", tmp_path / "base.json"
    write_json_report(gate_report(metrics=_coverages(0.7273, 0.25)), head)
    write_json_report(gate_report(metrics=_coverages(0.8, None)), base)
    code, out, _ = run(capsys, "report", "--format", "md", str(head), "--compare", str(base))
    assert code == ExitCode.OK
    assert "### Change against the base" in out
    assert "- test_coverage: 72.73% (base 80.00%, -7.27 pts)" in out
    assert "- test_coverage (changed lines): 25.00% (not in the base report)" in out
    code, out, _ = run(capsys, "report", "--format", "html", str(head), "--compare", str(base))
    assert "<li>test_coverage: 72.73% (base 80.00%, -7.27 pts)</li>" in out
    code, _, err = run(capsys, "report", "--format", "sarif", str(head), "--compare", str(base))
    assert code == ExitCode.USAGE_ERROR
    assert "--compare is shown in md and html" in err
    code, _, err = run(capsys, "report", "--format", "md", str(head), "--compare",
                       str(tmp_path / "missing.json"))
    assert (code, "missing.json: no such file" in err) == (ExitCode.USAGE_ERROR, True)


def test_sarif_that_leaves_results_out_says_how_many(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    item = _report().metrics[0].details["items"][0]
    metrics = [
        EvalMetric(type="security_score", value=0.5,
                   details={"tool": f"scanner-{n}", "items": [item, item, item]})
        for n in range(21)  # GitHub takes 20 runs per upload
    ]
    path = tmp_path / "many.json"
    write_json_report(gate_report(metrics=metrics), path)

    code, out, err = run(capsys, "report", "--format", "sarif", str(path))

    assert code == ExitCode.OK
    assert len(json.loads(out)["runs"]) == 20
    assert err.startswith("confgate report: SARIF: 3 result(s) and 1 run(s) left out: GitHub ")


def test_a_changed_lines_figure_is_never_compared_with_the_bases_project_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under `scope: changed` lint's changed-lines share met the base's project share."""
    head, base = tmp_path / "head.json", tmp_path / "base.json"
    changed = EvalMetric(type="lint_score", value=0.3333, details={"scope": "changed"})
    write_json_report(gate_report(metrics=[changed]), head)
    write_json_report(gate_report(metrics=[EvalMetric(type="lint_score", value=1.0)]), base)
    code, out, _ = run(capsys, "report", "--format", "md", str(head), "--compare", str(base))
    assert code == ExitCode.OK
    assert " pts" not in out
    assert "33.33% (not in the base report)" in out

"""SARIF 2.1.0 (SPEC 10): valid against the OASIS schema, tools' own rule ids, relative paths."""

from __future__ import annotations

import gzip
import json
import secrets
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from fakes.reports import gate_report

from pytest_confgate.models import Decision, EvalMetric, Finding, GateReport
from pytest_confgate.report.sarif import render_sarif, sarif_text
from pytest_confgate.report.writers import render

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

SCHEMA_PATH = Path(__file__).parent.parent / "data" / "sarif-schema-2.1.0.json"
HOSTILE = "a | b\n::error::pwned `x` <script>alert(1)</script>"


def _item(tool: str, rule: str, file: str, line: int = 3, column: int = 5, **extra: Any) -> Any:
    return Finding(tool=tool, rule=rule, file=file, line=line, column=column,
                   message=extra.pop("message", HOSTILE), **extra).model_dump()


def _report(lint: list[Any], security: list[Any]) -> GateReport:
    return gate_report(
        decision=Decision.FAIL,
        metrics=[
            EvalMetric(type="test_coverage", value=0.9),
            EvalMetric(type="lint_score", value=0.5,
                       details={"tool": "ruff", "version": "0.6.9", "items": lint}),
            EvalMetric(type="security_score", value=0.5,
                       details={"tool": "bandit", "version": "1.7.10", "items": security}),
        ],
    )


def _sample() -> GateReport:
    lint = [
        _item("ruff", "F401", "pkg/a.py", url="https://docs.astral.sh/ruff/rules/unused-import"),
        _item("ruff", "syntax-error", "pkg\\win.py", line=0, column=0),
        _item("ruff", "F401", "./pkg/b c.py",
              url="https://docs.astral.sh/ruff/rules/unused-import"),
    ]
    security = [
        _item("bandit", "B602", "pkg/a.py", line=7, column=0, severity="HIGH", confidence="HIGH"),
        _item("bandit", "B101", "pkg/t.py", severity="LOW", confidence="HIGH"),
        _item("bandit", "B301", "pkg/p.py", severity="MEDIUM", confidence="HIGH"),
    ]
    return _report(lint, security)


@pytest.fixture(scope="module")
def sarif_schema() -> Any:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def test_the_log_is_valid_sarif_2_1_0(sarif_schema: Any, tmp_path: Path) -> None:
    log = render_sarif(_sample(), repo_root=tmp_path)
    jsonschema.Draft4Validator(sarif_schema).validate(log)
    assert log["version"] == "2.1.0"
    assert json.loads(json.dumps(log)) == log  # plain JSON data
    log["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):  # the schema really checks
        jsonschema.Draft4Validator(sarif_schema).validate(log)


def test_one_run_per_tool_with_its_own_rule_ids() -> None:
    runs = render_sarif(_sample())["runs"]
    assert [run["tool"]["driver"]["name"] for run in runs] == ["ruff", "bandit"]
    assert [run["tool"]["driver"]["version"] for run in runs] == ["0.6.9", "1.7.10"]
    ruff, bandit = runs
    assert [rule["id"] for rule in ruff["tool"]["driver"]["rules"]] == ["F401", "syntax-error"]
    # most severe first, then by file (issue 16): the cap drops the least severe
    assert [r["ruleId"] for r in ruff["results"]] == ["F401", "F401", "syntax-error"]
    assert [r["ruleIndex"] for r in ruff["results"]] == [0, 0, 1]
    assert ruff["tool"]["driver"]["rules"][0]["helpUri"].endswith("/unused-import")
    assert [r["ruleId"] for r in bandit["results"]] == ["B602", "B301", "B101"]


def test_levels_follow_severity() -> None:
    ruff, bandit = render_sarif(_sample())["runs"]
    assert [r["level"] for r in ruff["results"]] == ["warning", "warning", "error"]
    assert [r["level"] for r in bandit["results"]] == ["error", "warning", "note"]


def test_locations_are_relative_with_forward_slashes_and_one_based(tmp_path: Path) -> None:
    ruff, bandit = render_sarif(_sample(), repo_root=tmp_path)["runs"]
    locations = [r["locations"][0]["physicalLocation"] for r in ruff["results"]]
    assert [loc["artifactLocation"]["uri"] for loc in locations] == [
        "pkg/b%20c.py", "pkg/a.py", "pkg/win.py",
    ]
    assert {loc["artifactLocation"]["uriBaseId"] for loc in locations} == {"%SRCROOT%"}
    assert locations[0]["region"] == {"startLine": 3, "startColumn": 5}
    assert locations[2]["region"] == {"startLine": 1}  # a file-level finding
    bandit_region = bandit["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert bandit_region == {"startLine": 7, "startColumn": 1}  # bandit counts from 0
    assert ruff["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"


def test_an_absolute_path_inside_the_repo_becomes_relative(tmp_path: Path) -> None:
    inside = str(tmp_path / "src" / "m.py")
    report = _report([_item("ruff", "E501", inside)], [])
    run = render_sarif(report, repo_root=tmp_path)["runs"][0]
    artifact = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": "src/m.py", "uriBaseId": "%SRCROOT%"}


def test_messages_keep_the_text_as_data() -> None:
    result = render_sarif(_sample())["runs"][0]["results"][0]
    assert result["message"]["text"] == HOSTILE


def test_results_are_capped_per_run_and_the_cut_is_noted(sarif_schema: Any) -> None:
    row = _item("ruff", "F401", "pkg/a.py", message="unused")
    lint = [{**row, "line": i + 1} for i in range(30)]
    log = render_sarif(_report(lint, []), max_results=25)
    ruff, bandit = log["runs"]
    assert len(ruff["results"]) == 25
    assert ruff["properties"] == {"truncated": True, "totalResults": 30, "reportedResults": 25}
    assert bandit["properties"]["truncated"] is False
    jsonschema.Draft4Validator(sarif_schema).validate(log)


def test_the_default_cap_is_githubs_25000() -> None:
    row = _item("ruff", "F401", "pkg/a.py", message="unused")
    lint = [{**row, "line": i + 1} for i in range(25_010)]
    ruff = render_sarif(_report(lint, []))["runs"][0]
    assert len(ruff["results"]) == 25_000
    assert ruff["properties"]["totalResults"] == 25_010


def _noisy(count: int, message_chars: int) -> GateReport:
    """Findings with long messages that gzip cannot shrink much (hex of random bytes)."""
    severities = ["LOW", "MEDIUM", "HIGH"]
    security = [
        _item("bandit", f"B{i % 90 + 100}", f"pkg/m{i % 500}.py", line=i % 400 + 1,
              severity=severities[i % 3], message=secrets.token_hex(message_chars // 2))
        for i in range(count)
    ]
    return _report([], security)


def _gzipped(log: dict[str, Any]) -> int:
    return len(gzip.compress(sarif_text(log).encode("utf-8"), compresslevel=6))


def test_25000_long_findings_fit_githubs_10_mb_gzipped_limit_keeping_the_most_severe(
    sarif_schema: Any,
) -> None:
    # The case from the issue: uncapped, this is over 12 MB gzipped and GitHub refuses it.
    log = render_sarif(_noisy(25_000, 1_000))

    assert _gzipped(log) <= 10 * 1024 * 1024
    _, bandit = log["runs"]
    kept = len(bandit["results"])
    assert 0 < kept < 25_000
    assert bandit["properties"] == {
        "truncated": True, "totalResults": 25_000, "reportedResults": kept
    }
    assert log["properties"]["droppedResults"] == 25_000 - kept
    assert log["properties"]["droppedRuns"] == 0
    assert "10 MB gzipped" in log["properties"]["reason"]
    levels = [result["level"] for result in bandit["results"]]
    assert levels.count("error") == 8_333  # every HIGH finding is kept
    assert "note" not in levels or levels.count("warning") == 8_333
    jsonschema.Draft4Validator(sarif_schema).validate(
        {**log, "runs": [{**run, "results": run["results"][:50]} for run in log["runs"]]}
    )


def test_the_size_cap_keeps_more_severe_results_before_any_less_severe_one() -> None:
    report = _noisy(600, 400)
    full = render_sarif(report, max_gzipped_bytes=1 << 40)

    log = render_sarif(report, max_gzipped_bytes=_gzipped(full) // 2)

    assert _gzipped(log) <= _gzipped(full) // 2
    rank = {"error": 0, "warning": 1, "note": 2}
    kept = [r["message"]["text"] for r in log["runs"][1]["results"]]
    every = full["runs"][1]["results"]
    dropped = [r for r in every if r["message"]["text"] not in kept]
    assert dropped
    assert kept
    kept_levels = [r["level"] for r in log["runs"][1]["results"]]
    assert max(rank[level] for level in kept_levels) <= min(rank[r["level"]] for r in dropped)
    assert kept == [r["message"]["text"] for r in every if r["message"]["text"] in kept]
    assert log["properties"]["droppedResults"] == len(dropped)


def test_at_most_20_runs_are_written_and_the_most_severe_are_kept(sarif_schema: Any) -> None:
    def metric(n: int, severity: str) -> EvalMetric:
        item = _item("bandit", "B602", f"pkg/{n}.py", severity=severity)
        return EvalMetric(type="security_score", value=0.5,
                          details={"tool": f"scanner-{n}", "items": [item, item]})

    metrics = [metric(n, "HIGH" if n % 2 else "LOW") for n in range(24)]
    log = render_sarif(gate_report(metrics=metrics))

    assert len(log["runs"]) == 20
    names = [run["tool"]["driver"]["name"] for run in log["runs"]]
    assert all(f"scanner-{n}" in names for n in range(1, 24, 2))  # every HIGH run is kept
    assert log["properties"]["droppedRuns"] == 4
    assert log["properties"]["droppedResults"] == 8
    jsonschema.Draft4Validator(sarif_schema).validate(log)


def test_a_log_within_every_limit_says_nothing_was_dropped() -> None:
    assert "properties" not in render_sarif(_sample())


def test_the_written_sarif_is_the_measured_text() -> None:
    report = _sample()
    assert render(report, "sarif") == sarif_text(render_sarif(report))

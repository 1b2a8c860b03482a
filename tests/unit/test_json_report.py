"""The JSON report: atomic writes, only inside the working tree, schema shipped and in sync."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
from fakes.reports import gate_report

from pytest_confgate.exceptions import ReportError
from pytest_confgate.models import EvalMetric, GateReport
from pytest_confgate.report.json_report import (
    generate_report_schema,
    report_schema,
    resolve_report_path,
    write_json_report,
)


def _report() -> GateReport:
    return gate_report(
        metrics=[EvalMetric(type="lint_score", value=0.5, details={"violations": 3})],
    )


def test_the_shipped_schema_matches_the_models() -> None:
    assert report_schema() == generate_report_schema(), (
        "regenerate pytest_confgate/report/schema.json: "
        "python -c 'from pytest_confgate.report.json_report import generate_report_schema as g;"
        "import json;print(json.dumps(g(), indent=2))' > pytest_confgate/report/schema.json"
    )


def test_a_written_report_validates_against_the_schema(tmp_path: Path) -> None:
    path = tmp_path / "out" / "report.json"
    write_json_report(_report(), path)
    data = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(data, report_schema())
    assert data["schema_version"] == "1.0"
    assert data["metrics"][0]["status"] == "ok"


def test_writing_is_atomic_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text("old", encoding="utf-8")
    write_json_report(_report(), path)
    assert json.loads(path.read_text(encoding="utf-8"))["project"] == "demo"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_an_unwritable_place_is_a_report_error_naming_the_path(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(ReportError, match="cannot be written"):
        write_json_report(_report(), blocker / "report.json")


def test_the_default_report_lives_in_the_rootdir(tmp_path: Path) -> None:
    assert resolve_report_path(tmp_path, None) == tmp_path.resolve() / "confgate-report.json"


@pytest.mark.parametrize(
    "requested", ["../escape.json", "/etc/confgate.json", "link/report.json"],
    ids=["dot-dot", "absolute", "symlink-out"],
)
def test_a_report_path_outside_the_working_tree_is_refused(tmp_path: Path, requested: str) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".git").mkdir()
    os.symlink(tmp_path, root / "link")
    with pytest.raises(ReportError, match="outside the working tree"):
        resolve_report_path(root, requested, cwd=root)


def test_a_report_path_anywhere_in_the_git_work_tree_is_allowed(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    sub = tmp_path / "pkg"
    sub.mkdir()
    path = resolve_report_path(sub, "../reports/gate.json", cwd=sub)
    assert path == tmp_path.resolve() / "reports" / "gate.json"

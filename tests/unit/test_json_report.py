"""The JSON report: atomic writes, only inside the working tree, schema shipped and in sync."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
from fakes.reports import gate_report

from pytest_confgate.exceptions import ReportError
from pytest_confgate.models import EvalMetric, Finding, GateReport
from pytest_confgate.report.json_report import (
    generate_report_schema,
    printable_report,
    report_schema,
    resolve_report_path,
    write_json_report,
    write_text_atomic,
)
from pytest_confgate.report.writers import FORMATS, load_report, render


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


def test_a_folder_swapped_for_a_symlink_cannot_send_the_report_outside_the_tree(
    tmp_path: Path,
) -> None:
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    (tree / "reports").mkdir(parents=True)
    outside.mkdir()
    path = resolve_report_path(tree, "reports/r.json", cwd=tree)
    (tree / "reports").rmdir()  # what a test can do while the suite runs
    (tree / "reports").symlink_to(outside, target_is_directory=True)

    with pytest.raises(ReportError, match="is not a folder"):
        write_json_report(_report(), path, within=tree)

    assert list(outside.iterdir()) == []


def test_a_deeper_folder_swapped_for_a_symlink_is_refused_too(tmp_path: Path) -> None:
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    (tree / "a" / "b").mkdir(parents=True)
    (outside / "b").mkdir(parents=True)
    path = tree / "a" / "b" / "r.json"
    (tree / "a" / "b").rmdir()
    (tree / "a").rmdir()
    (tree / "a").symlink_to(outside, target_is_directory=True)

    with pytest.raises(ReportError, match="a symlink or a file is in its place"):
        write_json_report(_report(), path, within=tree)

    assert list((outside / "b").iterdir()) == []


def test_missing_folders_below_the_tree_are_created(tmp_path: Path) -> None:
    write_json_report(_report(), tmp_path / "x" / "y" / "r.json", within=tmp_path)

    assert json.loads((tmp_path / "x" / "y" / "r.json").read_text())["project"] == "demo"


def test_a_symlink_at_the_report_itself_is_replaced_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep", encoding="utf-8")
    (tmp_path / "tree").mkdir()
    path = tmp_path / "tree" / "r.json"
    path.symlink_to(victim)

    write_json_report(_report(), path, within=tmp_path / "tree")

    assert victim.read_text(encoding="utf-8") == "keep"
    assert not path.is_symlink()


def test_temporary_files_a_killed_run_left_behind_are_removed(tmp_path: Path) -> None:
    stale = tmp_path / ".confgate-report.json.k3j2x9.tmp"
    stale.write_bytes(b"{" * 1000)
    os.utime(stale, (1_000_000, 1_000_000))  # from long before this run
    other = tmp_path / ".other.json.abc.tmp"
    other.write_text("not ours", encoding="utf-8")
    os.utime(other, (1_000_000, 1_000_000))

    write_json_report(_report(), tmp_path / "confgate-report.json", within=tmp_path)

    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [".other.json.abc.tmp", "confgate-report.json"]


def test_a_temporary_file_of_a_run_still_writing_is_left_alone(tmp_path: Path) -> None:
    fresh = tmp_path / ".confgate-report.json.live.tmp"
    fresh.write_text("being written", encoding="utf-8")

    write_json_report(_report(), tmp_path / "confgate-report.json", within=tmp_path)

    assert fresh.read_text(encoding="utf-8") == "being written"


def test_text_that_cannot_be_encoded_is_written_escaped(tmp_path: Path) -> None:
    write_text_atomic("file pkg/bad\udcffname.py\n", tmp_path / "r.md")

    assert (tmp_path / "r.md").read_text(encoding="utf-8") == "file pkg/bad\\udcffname.py\n"


BAD_NAME = os.fsdecode(b"pkg/bad\xffname.py")  # as os.listdir and git -z hand it over


def _report_naming_an_undecodable_file() -> GateReport:
    finding = Finding(tool="ruff", rule="F401", file=BAD_NAME, line=1, message="unused")
    return gate_report(
        metrics=[
            EvalMetric(
                type="lint_score",
                value=0.5,
                reason=f"1 violation in {BAD_NAME}",
                details={"items": [finding.model_dump()], "by_file": {BAD_NAME: 1}},
            )
        ],
    )


def test_a_report_naming_an_undecodable_file_is_spelled_for_people() -> None:
    clean = printable_report(_report_naming_an_undecodable_file())

    lint = clean.metrics[0]
    assert lint.reason == "1 violation in pkg/bad\\xffname.py"
    assert lint.details["by_file"] == {"pkg/bad\\xffname.py": 1}
    assert lint.details["items"][0]["file"] == "pkg/bad\\xffname.py"


def test_a_clean_report_is_returned_as_it_is() -> None:
    report = _report()

    assert printable_report(report) is report


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_format_writes_a_report_naming_an_undecodable_file(
    tmp_path: Path, fmt: str
) -> None:
    path = tmp_path / f"r.{fmt}"

    write_text_atomic(render(printable_report(_report_naming_an_undecodable_file()), fmt), path)

    text = path.read_text(encoding="utf-8")  # strict: every byte is valid UTF-8
    assert "xffname.py" in text


def test_the_json_report_of_an_undecodable_name_loads_back(tmp_path: Path) -> None:
    path = tmp_path / "r.json"

    write_json_report(_report_naming_an_undecodable_file(), path, within=tmp_path)

    assert load_report(path).metrics[0].details["by_file"] == {"pkg/bad\\xffname.py": 1}

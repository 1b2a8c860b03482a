"""``confgate merge`` over real shard reports: two ``pytest --confgate`` runs vs one (SPEC 4, 10).

The shards are real runs through ``pytester`` on halves of a small project; the merged
figures must equal those of one run over the whole suite.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Imported once, before pytester's module snapshot: coverage's C tracer cannot load twice.
import coverage
import pytest
from fakes.reports import gate_report

import pytest_confgate.gate.engine  # noqa: F401
from pytest_confgate.cli import ExitCode, main
from pytest_confgate.models import TestOutcomes

CALC = '''\
"""A tiny module under test."""


def add(a, b):
    return a + b


def scale(x):
    if x < 0:
        return 0
    return x * 10
'''
CONFIG = """\
gate:
  metrics:
    - type: test_pass_rate
    - {type: test_coverage, min: 0.9}
    - type: lint_score
"""
COVERAGE_KEYS = ("covered_lines", "num_statements", "missing")


@pytest.fixture
def halves(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project whose tests split into two shards that together cover ``calc`` fully."""
    pytester.mkpydir("calc").joinpath("__init__.py").write_text(CALC, encoding="utf-8")
    tests = pytester.path / "tests"
    tests.mkdir()
    (tests / "test_add.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n", encoding="utf-8"
    )
    (tests / "test_scale.py").write_text(
        "from calc import scale\n\n\ndef test_scale():\n    assert scale(2) == 20\n"
        "    assert scale(-1) == 0\n",
        encoding="utf-8",
    )
    pytester.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n', encoding="utf-8"
    )
    pytester.path.joinpath("confgate.yml").write_text(CONFIG, encoding="utf-8")
    return pytester


def _shard(pytester: pytest.Pytester, name: str, test_file: str) -> None:
    """One CI shard: the gate plus pytest-cov, whose ``.coverage`` file the merge needs."""
    pytester.runpytest(
        f"tests/{test_file}",
        "--confgate",
        f"--confgate-report={name}.json",
        "--cov=calc",
        "-p",
        "pytest_cov",
        "-p",
        "no:xdist",
    )
    (pytester.path / ".coverage").rename(pytester.path / f"{name}.coverage")


def _probed_shard(pytester: pytest.Pytester, name: str, test_file: str) -> None:
    """One CI shard measured by the gate itself (line probes), its data saved for the merge."""
    pytester.runpytest(
        f"tests/{test_file}",
        "--confgate",
        f"--confgate-report={name}.json",
        f"--confgate-coverage-data={name}.coverage",
        "-p",
        "no:xdist",
    )


def _read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _metric(report: dict[str, Any], kind: str) -> dict[str, Any]:
    found: dict[str, Any] = next(m for m in report["metrics"] if m["type"] == kind)
    return found


def test_merged_shards_equal_one_run_over_the_whole_suite(
    halves: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    assert halves.runpytest("--confgate", "--confgate-report=whole.json").ret == 0
    whole = _read(halves.path / "whole.json")
    _shard(halves, "shard1", "test_add.py")
    _shard(halves, "shard2", "test_scale.py")
    shard1 = _metric(_read(halves.path / "shard1.json"), "test_coverage")
    assert shard1["value"] < 0.9  # alone, a shard would fail the floor
    capsys.readouterr()

    shards = ["shard1.json", "shard2.json", "--expect", "2", "-o", "merged.json"]
    code = main(["merge", *shards, "--coverage", "shard1.coverage", "shard2.coverage"])

    out = capsys.readouterr().out
    assert code == ExitCode.OK, out
    merged = _read(halves.path / "merged.json")
    counts = {k: v for k, v in merged["tests"].items() if k != "duration_s"}
    assert counts == {k: v for k, v in whole["tests"].items() if k != "duration_s"}
    assert _metric(merged, "test_pass_rate")["value"] == _metric(whole, "test_pass_rate")["value"]
    cov, whole_cov = _metric(merged, "test_coverage"), _metric(whole, "test_coverage")
    assert cov["value"] == whole_cov["value"] == 1.0
    assert {k: cov["details"][k] for k in COVERAGE_KEYS} == {
        k: whole_cov["details"][k] for k in COVERAGE_KEYS
    }
    assert _metric(merged, "lint_score")["value"] == _metric(whole, "lint_score")["value"]
    assert merged["decision"] == whole["decision"] == "pass"
    assert "confgate: PASS" in out


def test_shards_measured_by_line_probes_merge_to_the_whole_runs_figures(
    halves: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """The scale-out workflow: no pytest-cov, each shard writes the data its probes recorded."""
    assert halves.runpytest("--confgate", "--confgate-report=whole.json").ret == 0
    whole = _metric(_read(halves.path / "whole.json"), "test_coverage")
    # Probes compiled in on 3.11; sys.monitoring records the same lines from 3.12.
    assert whole["details"]["engine"] == ("sys.monitoring" if sys.version_info >= (3, 12)
                                          else "line probes")
    _probed_shard(halves, "shard1", "test_add.py")
    _probed_shard(halves, "shard2", "test_scale.py")
    assert _metric(_read(halves.path / "shard1.json"), "test_coverage")["value"] < 0.9
    capsys.readouterr()

    code = main(["merge", "shard1.json", "shard2.json", "--expect", "2", "-o", "merged.json",
                 "--coverage", "shard1.coverage", "shard2.coverage"])

    assert code == ExitCode.OK, capsys.readouterr().out
    cov = _metric(_read(halves.path / "merged.json"), "test_coverage")
    assert {k: cov["details"][k] for k in COVERAGE_KEYS} == {
        k: whole["details"][k] for k in COVERAGE_KEYS
    }
    assert cov["value"] == 1.0


def test_shards_without_coverage_data_fail_closed_instead_of_averaging(
    halves: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _shard(halves, "shard1", "test_add.py")
    _shard(halves, "shard2", "test_scale.py")
    before = (halves.path / "shard1.json").read_bytes()

    code = main(["merge", "shard1.json", "shard2.json", "-o", "merged.json"])

    assert code == ExitCode.GATE_FAILED
    cov = _metric(_read(halves.path / "merged.json"), "test_coverage")
    assert cov["status"] == "error"
    assert "pass each shard's coverage.py data file with --coverage" in cov["reason"]
    assert (halves.path / "shard1.json").read_bytes() == before
    assert "confgate: FAIL" in capsys.readouterr().out


def test_a_missing_shard_is_refused_and_nothing_is_written(
    halves: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _shard(halves, "shard1", "test_add.py")

    code = main(["merge", "shard1.json", "--expect", "2", "-o", "merged.json"])

    assert code == ExitCode.USAGE_ERROR
    err = capsys.readouterr().err
    assert "expected 2 shards, got 1: missing one? shard names given: shard1.json" in err
    assert not (halves.path / "merged.json").exists()


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _foreign_sqlite(path: Path) -> None:
    path.unlink()
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
        db.commit()


def _no_measured_file(path: Path) -> None:
    path.unlink()
    coverage.CoverageData(basename=str(path)).add_lines({})


BAD_SHARD_DATA = {
    "empty": (_empty, "not coverage.py data: the file is empty (0 bytes)"),
    "foreign-sqlite": (_foreign_sqlite, "not coverage.py data ("),
    "no-measured-file": (_no_measured_file, "holds no measured file"),
}


@pytest.mark.parametrize(("spoil", "message"), BAD_SHARD_DATA.values(), ids=BAD_SHARD_DATA.keys())
def test_a_bad_coverage_shard_is_refused_by_name_and_nothing_is_written(
    halves: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
    spoil: Callable[[Path], None],
    message: str,
) -> None:
    _shard(halves, "shard1", "test_add.py")
    _shard(halves, "shard2", "test_scale.py")
    spoil(halves.path / "shard2.coverage")
    before = (halves.path / "shard2.coverage").read_bytes()
    capsys.readouterr()

    code = main(["merge", "shard1.json", "shard2.json", "-o", "merged.json",
                 "--coverage", "shard1.coverage", "shard2.coverage"])

    assert code == ExitCode.USAGE_ERROR
    assert f"--coverage shard2.coverage: {message}" in capsys.readouterr().err
    assert not (halves.path / "merged.json").exists()
    assert (halves.path / "shard2.coverage").read_bytes() == before


def _hand_built(passed: int) -> str:
    return gate_report(
        tool_version="0",
        generated_at="2026-01-01T00:00:00+00:00",
        risk_reason="gate.risk_tier",
        tests=TestOutcomes(passed=passed),
    ).model_dump_json()


BAD_INPUTS = {
    "missing": (["a.json", "gone.json"], "gone.json: no such file"),
    "invalid-json": (["a.json", "broken.json"], "broken.json: not valid JSON"),
    "not-a-report": (["a.json", "other.json"], "other.json: not a gate report"),
    "schema-version": (["a.json", "old.json"], "old.json: schema_version '0.1'"),
    "same-path": (["a.json", "b.json", "a.json"], "a.json: duplicated (same file as a.json)"),
    "same-content": (["a.json", "a_copy.json"], "a_copy.json: duplicated (identical content"),
    "expect": (
        ["a.json", "b.json", "--expect", "3"],
        "expected 3 shards, got 2: missing one? shard names given: a.json, b.json",
    ),
    "output-is-a-shard": (["a.json", "b.json", "-o", "b.json"], "-o b.json: is one of the inputs"),
    "output-outside": (["a.json", "b.json", "-o", "../out.json"], "-o ../out.json: "),
    "coverage-count": (
        ["a.json", "b.json", "--coverage", "broken.json"],
        "--coverage: 1 data files for 2 shards",
    ),
    "coverage-missing": (
        ["a.json", "b.json", "--coverage", "none.coverage", "old.json"],
        "--coverage none.coverage: no such file",
    ),
    "coverage-garbage": (
        ["a.json", "b.json", "--coverage", "broken.json", "other.json"],
        "--coverage broken.json: not coverage.py data",
    ),
}


@pytest.mark.parametrize(("argv", "message"), BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_exits_2_names_the_shard_and_writes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    files = {
        "a.json": _hand_built(1),
        "a_copy.json": _hand_built(1),
        "b.json": _hand_built(2),
        "broken.json": '{"schema_version": "1.0", ',
        "other.json": '{"schema_version": "1.0", "hello": "world"}',
        "old.json": '{"schema_version": "0.1"}',
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    output = [] if "-o" in argv else ["-o", "merged.json"]

    code = main(["merge", *argv, *output])

    assert code == ExitCode.USAGE_ERROR
    assert message in capsys.readouterr().err
    assert not (tmp_path / "merged.json").exists()
    assert not (tmp_path.parent / "out.json").exists()
    assert {n: (tmp_path / n).read_text(encoding="utf-8") for n in files} == files

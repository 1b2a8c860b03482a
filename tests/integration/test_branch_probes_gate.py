"""Branch coverage by branch probes in a real ``pytest --confgate`` run (issue 26, item 3).

coverage.py is the oracle: ``coverage run --branch -m pytest`` + ``coverage json`` on the same
project, compared with the gate's report and, arc by arc, with ``coverage json`` over the data
the gate wrote (``--confgate-coverage-data``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import metric, read_report, write_config

from pytest_confgate.collect.coverage.probe_engine import BRANCH_PROBES_PYTHONS

IN_RANGE = BRANCH_PROBES_PYTHONS[0] <= sys.version_info[:2] < BRANCH_PROBES_PYTHONS[1]
SLOW = 300
KEYS = ("covered_lines", "num_statements", "covered_branches", "num_branches",
        "missing_branches")

SHAPES = '''\
"""Branches of every kind; the tests leave some of each unrun."""
import contextlib


def classify(x):
    if x is None:
        return "none"
    elif x < 0:
        return "negative"
    for digit in str(x):
        if digit == "7":
            break
    else:
        digit = None
    while x > 100:
        x //= 10
    try:
        value = 10 // x
    except ZeroDivisionError:
        value = 0
    finally:
        if digit:
            value += 1
        value += 0
    with contextlib.suppress(KeyError):
        if value > 5:
            value = 5
    return value


def kind(item):
    match item:
        case int():
            return "int"
        case [first, *_] if first:
            return "list"
        case {"k": v}:
            return v
    return "other"


def last(items):
    for item in items:
        if item:
            pass


async def agen(n):
    for i in range(n):
        if i % 2:
            yield i


def short(x): return x
'''

ODD = """\
def odd(x):
    if x: return 1
    return 2
"""

TESTS = '''\
import asyncio

from calc.odd import odd
from calc.shapes import agen, classify, kind, last, short


def test_odd():
    assert odd(0) == 2


def test_classify():
    assert classify(None) == "none"
    assert [classify(x) for x in (5, 1734, 0)] == [2, 1, 0]


def test_kind():
    assert kind(1) == "int"
    assert kind({"k": 2}) == 2
    assert kind("x") == "other"


def test_last_raises_from_its_loop():
    try:
        last(None)
    except TypeError:
        pass


def test_async():
    async def collect():
        return [i async for i in agen(3)]
    assert asyncio.run(collect()) == [1]
'''


def _reference(pytester: pytest.Pytester) -> dict[str, Any]:
    data = pytester.path / ".coverage-reference"
    out = pytester.path / "reference.json"
    base = [sys.executable, "-m", "coverage"]
    subprocess.run(
        [*base, "run", "--branch", f"--data-file={data}", "-m", "pytest", "-q", "-p",
         "no:confgate"],
        cwd=pytester.path, check=True, capture_output=True, timeout=SLOW,
    )
    return _json(pytester, data, out)


def _json(pytester: pytest.Pytester, data: Path, out: Path) -> dict[str, Any]:
    subprocess.run(
        [sys.executable, "-m", "coverage", "json", f"--data-file={data}", "-o", str(out)],
        cwd=pytester.path, check=True, capture_output=True, timeout=SLOW,
    )
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    data.unlink()
    out.unlink()
    return report


def _files(report: dict[str, Any]) -> dict[str, Any]:
    keys = ("executed_lines", "missing_lines", "executed_branches", "missing_branches",
            "summary")
    return {name: {k: data[k] for k in keys} for name, data in report["files"].items()}


@pytest.fixture
def shapes(project: pytest.Pytester) -> pytest.Pytester:
    project.path.joinpath("calc", "shapes.py").write_text(SHAPES, encoding="utf-8")
    project.path.joinpath("calc", "odd.py").write_text(ODD, encoding="utf-8")
    project.path.joinpath("tests", "test_shapes.py").write_text(TESTS, encoding="utf-8")
    return project


@pytest.mark.parametrize("where", ["project", "gate"])
def test_branch_coverage_is_measured_by_probes_with_coverage_pys_figures(
    shapes: pytest.Pytester, where: str
) -> None:
    branch = "branch = true\n" if where == "project" else ""
    shapes.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n'
        f'[tool.coverage.run]\n{branch}source = ["calc"]\n',
        encoding="utf-8",
    )
    if where == "gate":
        write_config(shapes, "gate:\n  metrics: [{type: test_coverage, branch: true}]\n")
    result = shapes.runpytest_subprocess("--confgate", "--confgate-coverage-data=gate.cov",
                                         timeout=SLOW)
    assert result.ret == 0, result.stdout.str()[-3000:]
    details = metric(read_report(shapes), "test_coverage")["details"]
    reference = _reference(shapes)
    assert {k: details[k] for k in KEYS} == {k: reference["totals"][k] for k in KEYS}
    assert reference["totals"]["missing_branches"] > 0  # a real comparison
    gate = _json(shapes, shapes.path / "gate.cov", shapes.path / "gate.json")
    assert _files(gate) == _files(reference)  # every file, line and arc
    if IN_RANGE:
        # A body on its branch line cannot be probed: that file alone is traced.
        assert details["engine"] == "branch probes and coverage.py"
        assert details["engine_by_file"] == {
            "calc/__init__.py": "branch probes",
            "calc/odd.py": "coverage.py",
            "calc/shapes.py": "branch probes",
        }


def test_xdist_workers_measure_branches_with_probes_too(shapes: pytest.Pytester) -> None:
    shapes.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n'
        '[tool.coverage.run]\nbranch = true\nsource = ["calc"]\n',
        encoding="utf-8",
    )
    result = shapes.runpytest_subprocess("--confgate", "-n", "2", timeout=SLOW)
    assert result.ret == 0, result.stdout.str()[-3000:]
    details = metric(read_report(shapes), "test_coverage")["details"]
    assert details["workers"] == ["gw0", "gw1"]
    reference = _reference(shapes)
    assert {k: details[k] for k in KEYS} == {k: reference["totals"][k] for k in KEYS}
    if IN_RANGE:
        assert details["engine"] == "branch probes and coverage.py"

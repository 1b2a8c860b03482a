"""The corpus's figure comparison (``benchmarks/_corpus_figures.py``): a difference is never lost.

The instrument that checks the gate's figures against coverage.py's must itself list every
file that differs, under absolute or relative names, and count a passed gate below
coverage.py's ``fail_under`` as a difference.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
ROOT = Path("/project")


@pytest.fixture
def figures(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("_corpus_figures")


def _file(statements: int, missing: list[int], branches: int = 0, taken: int = 0) -> dict[str, Any]:
    summary = {"num_statements": statements, "covered_lines": statements - len(missing),
               "num_branches": branches, "covered_branches": taken}
    return {"summary": summary, "missing_lines": missing}


def _report(files: dict[str, dict[str, Any]], *, branch: bool = False) -> dict[str, Any]:
    totals = {key: sum(f["summary"][key] for f in files.values())
              for key in ("num_statements", "covered_lines", "num_branches", "covered_branches")}
    return {"meta": {"branch_coverage": branch}, "totals": totals, "files": files}


def _gate(report: dict[str, Any], decision: str = "pass") -> dict[str, Any]:
    missing = {name.removeprefix("/project/"): data["missing_lines"]
               for name, data in report["files"].items() if data["missing_lines"]}
    details = {**report["totals"], "missing": missing}
    metric = {"type": "test_coverage", "status": "ok", "details": details}
    return {"decision": decision, "metrics": [metric]}


def test_the_same_figures_under_absolute_and_relative_names_are_equal(
    figures: ModuleType,
) -> None:
    reference = _report({"pkg/a.py": _file(10, [3], 4, 3)}, branch=True)
    gate_data = _report({"/project/pkg/a.py": _file(10, [3], 4, 3)}, branch=True)

    compared = figures.compare(_gate(gate_data), gate_data, reference, ROOT)

    assert compared["equal"], compared
    assert compared["files"] == []


def test_every_file_that_differs_is_listed(figures: ModuleType) -> None:
    reference = _report({"pkg/a.py": _file(10, [3]), "pkg/b.py": _file(5, [])})
    gate_data = _report({"/project/pkg/a.py": _file(10, [1, 2, 3])})

    compared = figures.compare(_gate(gate_data), gate_data, reference, ROOT)

    assert not compared["equal"]
    assert compared["totals"]["covered_lines"] == [7, 14]
    assert compared["files"] == [
        "pkg/a.py: gate lines 7/10 vs coverage.py lines 9/10; missing only under the gate "
        "[1, 2], only under coverage.py []",
        "pkg/b.py: measured by coverage.py only (lines 5/5)",
    ]


def test_a_passed_gate_below_coverage_py_s_fail_under_is_a_difference(
    figures: ModuleType,
) -> None:
    reference = {**_report({"pkg/a.py": _file(10, [3])}), "below_fail_under": True}
    gate_data = _report({"/project/pkg/a.py": _file(10, [3])})

    assert not figures.compare(_gate(gate_data), gate_data, reference, ROOT)["equal"]
    assert figures.compare(_gate(gate_data, "fail"), gate_data, reference, ROOT)["equal"]

"""Issue 2 acceptance: on a real third-party suite, confgate's figures are the tools' own.

Opt in with ``pytest -m slow``: it downloads a pinned sdist from the package index, builds a
venv with it, its test dependencies and this repo, then runs the suite four times (gate and
``coverage run``, branch off and on). The venv is cached under
``~/.cache/pytest-confgate-bench`` (or
``$CONFGATE_BENCH_CACHE``), so only the first run pays for the install.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

pytestmark = pytest.mark.slow


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The comparison script, imported the way it imports its helper (by its folder).

    Minutes of network and CPU: deselected by default (``-m "not slow"`` in addopts).
    """
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("compare_real_project")


def test_gate_figures_equal_coverage_ruff_and_bandit_on_more_itertools(
    bench: ModuleType,
) -> None:
    helpers = importlib.import_module("_realproject")
    cache = Path(os.environ.get("CONFGATE_BENCH_CACHE", helpers.DEFAULT_CACHE))
    with helpers.exclusive(cache):
        workspace = helpers.prepare(helpers.PROJECTS["more-itertools"], cache)
        result = bench.compare(workspace)

    assert result.rows, "the comparison compared nothing"
    assert not result.mismatches, "\n" + bench.format_table(result.mismatches)

"""A pytest plugin ``confgate rank`` loads into the runs it starts: each test's outcome by id.

Loaded with ``-p pytest_confgate.rank.outcomes_plugin``; it writes ``{node id: outcome}`` as
JSON to the file named by ``CONFGATE_RANK_OUTCOMES`` when the session ends. Outcomes are
``passed``, ``failed``, ``error`` (setup or teardown failed, or the module did not collect),
``skipped``, ``xfailed``, ``xpassed`` and ``deselected``. The regression suite, the tamper
analysis and cross-testing compare runs by these ids, never by counts (a deleted test and a
new one leave a count unchanged).

Hooks take pytest's report objects as plain arguments: this module does not import pytest
(``plugin.py`` is the only one that does) and imports nothing else of ours.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

ENV = "CONFGATE_RANK_OUTCOMES"
"""The variable naming the JSON file the outcomes are written to."""
_OUTCOMES: dict[str, str] = {}


def pytest_sessionstart(session: Any) -> None:
    """A fresh record per session (one process can run pytest more than once)."""
    _OUTCOMES.clear()


def pytest_collectreport(report: Any) -> None:
    """A module that does not import leaves its tests uncollected: say so under its id."""
    if report.failed:
        _OUTCOMES[report.nodeid] = "error"


def pytest_deselected(items: Any) -> None:
    """Tests an option or a hook deselected never run; record why they are missing."""
    for item in items:
        _OUTCOMES.setdefault(item.nodeid, "deselected")


def pytest_runtest_logreport(report: Any) -> None:
    """The test's outcome, worst phase first: a failing setup or teardown is an error."""
    expected_failure = hasattr(report, "wasxfail")
    if report.when == "call":
        if report.passed:
            outcome = "xpassed" if expected_failure else "passed"
        elif report.skipped:
            outcome = "xfailed" if expected_failure else "skipped"
        else:
            outcome = "failed"
        if _OUTCOMES.get(report.nodeid) != "error":
            _OUTCOMES[report.nodeid] = outcome
    elif report.failed:
        _OUTCOMES[report.nodeid] = "error"
    elif report.skipped and report.when == "setup":
        _OUTCOMES[report.nodeid] = "xfailed" if expected_failure else "skipped"


def pytest_sessionfinish(session: Any) -> None:
    """Write the record; without the variable (loaded by hand) nothing is written."""
    target = os.environ.get(ENV)
    if not target:
        return
    path = Path(target)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(_OUTCOMES, sort_keys=True), encoding="utf-8")
    partial.replace(path)

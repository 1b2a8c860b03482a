"""A pytest plugin the replay (``replay``) loads into the process it starts: each test's
outcome and failure text by node id.

Loaded with ``-p pytest_confgate.collect.tamper.replay_plugin``; with
``--confgate-replay-out=PATH`` it writes ``{node id: {"outcome": ..., "failure": ...}}`` as JSON
when the session ends. Outcomes are ``passed``, ``failed``, ``error`` (setup or teardown
failed, or the module did not import), ``skipped``, ``xfailed`` and ``xpassed``.

Hooks take pytest's objects as plain arguments: like ``rank/outcomes_plugin`` this module does
not import pytest (``plugin.py`` is the only one that does) and imports nothing else of ours.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OPTION = "--confgate-replay-out"
_RESULTS: dict[str, dict[str, str]] = {}
_FAILURE_CHARS = 4000


def pytest_addoption(parser: Any) -> None:
    parser.addoption(OPTION, default=None, help="(internal) where the replay writes outcomes")


def pytest_sessionstart(session: Any) -> None:
    _RESULTS.clear()


def _record(nodeid: str, outcome: str, report: Any) -> None:
    text = str(getattr(report, "longreprtext", "") or "")
    _RESULTS[nodeid] = {"outcome": outcome, "failure": text[-_FAILURE_CHARS:]}


def pytest_collectreport(report: Any) -> None:
    """A module that does not import: its tests are errors, with the import's failure."""
    if report.failed:
        _record(report.nodeid, "error", report)


def pytest_runtest_logreport(report: Any) -> None:
    expected_failure = hasattr(report, "wasxfail")
    if report.when == "call":
        if report.passed:
            outcome = "xpassed" if expected_failure else "passed"
        elif report.skipped:
            outcome = "xfailed" if expected_failure else "skipped"
        else:
            outcome = "failed"
        if _RESULTS.get(report.nodeid, {}).get("outcome") != "error":
            _record(report.nodeid, outcome, report)
    elif report.failed:
        _record(report.nodeid, "error", report)
    elif report.skipped and report.when == "setup":
        _record(report.nodeid, "xfailed" if expected_failure else "skipped", report)


def pytest_sessionfinish(session: Any) -> None:
    target = session.config.getoption(OPTION)
    if not target:
        return
    path = Path(target)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(_RESULTS, sort_keys=True), encoding="utf-8")
    partial.replace(path)

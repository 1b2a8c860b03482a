"""A pytest plugin the replay (``replay``) loads into the process it starts: each test's
outcome and failure text by node id.

Loaded with ``-p pytest_confgate.collect.tamper.replay_plugin``; with
``--confgate-replay-select=PATH`` (a JSON list of node ids) it keeps only those tests (and their
parametrised cases) of the modules it is given, so a module that does not import is an error
of its own and not a stop for the run; with ``--confgate-replay-out=PATH`` it writes
``{node id: {"outcome": ..., "failure": ...}}`` as JSON when the session ends. Outcomes
are ``passed``, ``failed``, ``error`` (setup or teardown failed, or the module did not
import), ``skipped``, ``xfailed`` and ``xpassed``.

Hooks take pytest's objects as plain arguments: like ``rank/outcomes_plugin`` this module does
not import pytest (``plugin.py`` is the only one that does); outcomes are named by the leaf
``outcomes``, as there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_confgate.outcomes import phase_outcome

OPTION = "--confgate-replay-out"
SELECT = "--confgate-replay-select"
_RESULTS: dict[str, dict[str, str]] = {}
_FAILURE_CHARS = 4000


def pytest_addoption(parser: Any) -> None:
    parser.addoption(OPTION, default=None, help="(internal) where the replay writes outcomes")
    parser.addoption(SELECT, default=None, help="(internal) the node ids the replay runs")


def pytest_collection_modifyitems(session: Any, config: Any, items: list[Any]) -> None:
    chosen = config.getoption(SELECT)
    if not chosen:
        return
    wanted = set(json.loads(Path(chosen).read_text(encoding="utf-8")))
    kept = [item for item in items
            if item.nodeid in wanted or item.nodeid.split("[", 1)[0] in wanted]
    dropped = [item for item in items if item not in kept]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept


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
    outcome = phase_outcome(report, _RESULTS.get(report.nodeid, {}).get("outcome"))
    if outcome is not None:
        _record(report.nodeid, outcome, report)


def pytest_sessionfinish(session: Any) -> None:
    target = session.config.getoption(OPTION)
    if not target or hasattr(session.config, "workerinput"):  # an xdist worker: its controller
        return  # sees every report and writes once
    path = Path(target)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(_RESULTS, sort_keys=True), encoding="utf-8")
    partial.replace(path)

"""A pytest plugin ``confgate rank`` loads into the runs it starts: each test's outcome by id.

Loaded with ``-p pytest_confgate.rank.outcomes_plugin``; it writes ``{node id: outcome}`` as
JSON to the file named by ``CONFGATE_RANK_OUTCOMES`` when the session ends. Outcomes are
``passed``, ``failed``, ``error`` (setup or teardown failed, or the module did not collect),
``skipped``, ``xfailed``, ``xpassed`` and ``deselected``. The regression suite, the tamper
analysis and cross-testing compare runs by these ids, never by counts (a deleted test and a
new one leave a count unchanged). Beside it, ``<file>.why`` holds the first line of each
failure (``{node id: message}``), so a report can say why another candidate's test failed.

Hooks take pytest's report objects as plain arguments: this module does not import pytest
(``plugin.py`` is the only one that does); outcomes are named by the leaf ``outcomes``,
as in the tamper replay.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pytest_confgate.outcomes import phase_outcome

ENV = "CONFGATE_RANK_OUTCOMES"
"""The variable naming the JSON file the outcomes are written to."""
LAST = "CONFGATE_RANK_LAST"
"""A JSON list of test files whose tests run after all others (a candidate's new modules)."""
UNMARK = "CONFGATE_RANK_UNMARK"
"""Set to ``1``: every collected test runs without its ``xfail``, ``skip`` or always-true
``skipif`` mark (with ``--runxfail`` for ``pytest.xfail()``): does it pass on its own?"""
_OUTCOMES: dict[str, str] = {}
_WHY: dict[str, str] = {}
_WHY_CHARS = 300


def pytest_sessionstart(session: Any) -> None:
    """A fresh record per session (one process can run pytest more than once)."""
    _OUTCOMES.clear()
    _WHY.clear()


def pytest_collectreport(report: Any) -> None:
    """A module that does not import leaves its tests uncollected: say so under its id."""
    if report.failed:
        _OUTCOMES[report.nodeid] = "error"
        _remember(report)


def pytest_collection_modifyitems(items: Any) -> None:
    """The tests of the files named in ``LAST`` move to the end, in their order; with
    ``UNMARK`` set, the marks that hide a failing test leave each test's chain."""
    last = set(json.loads(os.environ.get(LAST) or "[]"))
    if last:
        items[:] = sorted(items, key=lambda item: item.nodeid.split("::", 1)[0] in last)
    if os.environ.get(UNMARK) != "1":
        return
    for item in items:
        for node in item.listchain():
            node.own_markers[:] = [m for m in node.own_markers if not _masks(m)]


# Last among the plugins (pluggy reads these options from ``<project>_impl``): after any
# plugin that reorders, such as pytest-randomly.
pytest_collection_modifyitems.pytest_impl = {  # type: ignore[attr-defined]
    "wrapper": False, "hookwrapper": False, "optionalhook": False, "tryfirst": False,
    "trylast": True, "specname": None,
}


def _masks(mark: Any) -> bool:
    if mark.name in ("xfail", "skip"):
        return True
    condition = mark.args[0] if mark.args else mark.kwargs.get("condition")
    return mark.name == "skipif" and condition in (True, 1, "True", "1")


def pytest_deselected(items: Any) -> None:
    """Tests an option or a hook deselected never run; record why they are missing."""
    for item in items:
        _OUTCOMES.setdefault(item.nodeid, "deselected")


def pytest_runtest_logreport(report: Any) -> None:
    """The test's outcome, worst phase first: a failing setup or teardown is an error."""
    outcome = phase_outcome(report, _OUTCOMES.get(report.nodeid))
    if outcome is not None:
        _OUTCOMES[report.nodeid] = outcome
    if report.failed:
        _remember(report)


def _remember(report: Any) -> None:
    """The failure's first line: pytest's crash message, else the report's text."""
    if report.nodeid in _WHY:
        return
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    text = getattr(crash, "message", None) or str(getattr(report, "longrepr", "") or "")
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    _WHY[report.nodeid] = (lines[0] if lines else "no message")[:_WHY_CHARS]


def pytest_sessionfinish(session: Any) -> None:
    """Write the record; without the variable (loaded by hand) nothing is written."""
    target = os.environ.get(ENV)
    if not target:
        return
    path = Path(target)
    partial = path.with_name(path.name + ".partial")
    why = path.with_name(path.name + ".why")
    why.write_text(json.dumps(_WHY, sort_keys=True), encoding="utf-8")
    partial.write_text(json.dumps(_OUTCOMES, sort_keys=True), encoding="utf-8")
    partial.replace(path)

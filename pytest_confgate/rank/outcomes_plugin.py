"""A pytest plugin ``confgate rank`` loads into the runs it starts: the order and the marks.

Loaded with ``-p pytest_confgate.rank.outcomes_plugin``. ``LAST`` moves a candidate's new test
modules to the end of the run; ``UNMARK`` runs every test without the marks that hide a
failure. The outcomes themselves are not recorded here: the gate's plugin streams them to
rank as they happen (``outcomes.OutcomeStream``, ``evaluate.run_pytest``), so nothing the
candidate's code does after the session (an ``atexit`` handler rewriting a file) changes them.

Hooks take pytest's objects as plain arguments: this module does not import pytest
(``plugin.py`` is the only one that does).
"""

from __future__ import annotations

import json
import os
from typing import Any

LAST = "CONFGATE_RANK_LAST"
"""A JSON list of test files whose tests run after all others (a candidate's new modules)."""
UNMARK = "CONFGATE_RANK_UNMARK"
"""Set to ``1``: every collected test runs without its ``xfail``, ``skip`` or always-true
``skipif`` mark (with ``--runxfail`` for ``pytest.xfail()``): does it pass on its own?"""


def pytest_load_initial_conftests(early_config: Any) -> None:
    """The outcome stream, where the gate's own plugin did not claim it first (pytest's
    plugin autoloading switched off with ``PYTEST_DISABLE_PLUGIN_AUTOLOAD``): this module is
    loaded with ``-p`` whatever that says, and still before any conftest."""
    if hasattr(early_config, "workerinput"):
        return
    from pytest_confgate.outcomes import OutcomeStream, claim

    channel = claim()
    if channel is not None:
        early_config.pluginmanager.register(OutcomeStream(channel))


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

"""A pytest plugin the replay (``replay``) loads into the process it starts: which tests run.

Loaded with ``-p pytest_confgate.collect.tamper.replay_plugin``; with
``--confgate-replay-select=PATH`` (a JSON list of node ids) it keeps only those tests (and their
parametrised cases) of the modules it is given, so a module that does not import is an error
of its own and not a stop for the run. The outcomes are streamed to the gate by the gate's
plugin as they happen (``outcomes.OutcomeStream``): no file the change's code could rewrite
after the session.

Hooks take pytest's objects as plain arguments: this module does not import pytest
(``plugin.py`` is the only one that does).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SELECT = "--confgate-replay-select"


def pytest_addoption(parser: Any) -> None:
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

"""The hooks third-party plugins implement (pluggy, project name ``confgate``).

A plugin is a module or object with ``confgate_*`` functions marked ``@hookimpl``; it is found
through the ``confgate`` entry-point group or defined in a ``conftest.py``. Hooks return data
and never mutate their arguments. A plugin can make the gate stricter, never flip its verdict:
extra conditions can only add reasons to fail.

Example (a ``conftest.py``)::

    from pytest_confgate import EvalMetric, hookimpl

    @hookimpl
    def confgate_collect_metrics(root):
        todo = sum(p.read_text().count("TODO") for p in root.glob("src/**/*.py"))
        return [EvalMetric(type="todo_free", value=1.0 if todo == 0 else 0.0,
                           details={"todos": todo})]
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from pytest_confgate.config import ConfgateConfig
    from pytest_confgate.models import Condition, EvalMetric, GateReport, TestOutcomes

PROJECT = "confgate"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def confgate_collect_metrics(
    root: Path, config: ConfgateConfig, tests: TestOutcomes
) -> list[EvalMetric] | None:
    """Return extra evidence, after the tests ran and before the policy decides.

    Called once per gate evaluation, with copies of its arguments. The metrics appear in the
    report beside the built-in ones; to make one *block*, also return a condition from
    ``confgate_extra_conditions``.
    Example: ``return [EvalMetric(type="docs_built", value=1.0)]``.
    """


@hookspec
def confgate_extra_conditions(
    metrics: list[EvalMetric], tests: TestOutcomes, tier: str, config: ConfgateConfig
) -> list[Condition] | None:
    """Return extra policy conditions; a failing blocking one fails the gate.

    Called after all metrics (built-in and plugin) are known, with copies of them (editing
    an argument changes nothing; only the returned conditions count). Conditions can only add
    reasons to fail: a passing condition never overrides another's failure.
    Example: ``return [Condition(metric="docs_built", name="built", passed=False,
    message="docs_built: the docs did not build")]``.
    """


@hookspec
def confgate_gate_finished(report: GateReport) -> None:
    """Called with the final report, after the decision and before it is written.

    A notification: each plugin gets its own deep copy, so editing it (appending a reason,
    say) changes nothing, and the return value is ignored. Use it to send the verdict
    elsewhere (a dashboard, a chat message); to add a reason, use ``confgate_extra_conditions``.
    """


def _spec_names() -> list[str]:
    return [name for name in globals() if name.startswith("confgate_")]


def describe(value: Any) -> str:
    """A short name for a plugin object, for messages."""
    return getattr(value, "__name__", None) or type(value).__name__

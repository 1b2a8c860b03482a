"""Find third-party plugins and call their hooks one by one, so a broken one is named.

pluggy would stop at the first exception of a hook call; the gate instead calls each
implementation itself and turns an exception, a wrong return type or an unknown hook name
into a *failing* condition that names the plugin (fail closed: a plugin meant to make the gate
stricter must not silently vanish).
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Iterable
from typing import Any

import pluggy

import pytest_confgate.hookspecs as hookspecs
from pytest_confgate.models import Condition, EvalMetric, GateReport


class PluginHost:
    """The gate's own plugin manager and the problems found while using it."""

    def __init__(self) -> None:
        self.manager = pluggy.PluginManager(hookspecs.PROJECT)
        self.manager.add_hookspecs(hookspecs)
        self.problems: list[Condition] = []

    def load_entry_points(self) -> None:
        """Plugins installed under the ``confgate`` entry-point group."""
        try:
            self.manager.load_setuptools_entrypoints(hookspecs.PROJECT)
        except Exception as exc:  # an installed plugin that cannot even be imported
            self._problem("entry points", f"a plugin could not be loaded: {exc}")

    def register_modules(self, modules: Iterable[Any]) -> None:
        """Register objects (e.g. ``conftest`` modules) that define ``confgate_*`` hooks."""
        known = hookspecs._spec_names()
        for module in modules:
            names = [n for n in dir(module) if n.startswith("confgate_")]
            if not names or self.manager.is_registered(module):
                continue
            unknown = [n for n in names if n not in known]
            for name in unknown:
                close = difflib.get_close_matches(name, known, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                self._problem(hookspecs.describe(module), f"unknown hook {name!r}{hint}")
            if not unknown:
                self.manager.register(module, name=hookspecs.describe(module))

    def collect_metrics(self, **kwargs: Any) -> list[EvalMetric]:
        """Every plugin's extra metrics, checked to be ``EvalMetric`` objects."""
        return self._call("confgate_collect_metrics", EvalMetric, kwargs)

    def extra_conditions(self, **kwargs: Any) -> list[Condition]:
        """Every plugin's extra conditions, forced to be blocking only if they say so."""
        return self._call("confgate_extra_conditions", Condition, kwargs)

    def gate_finished(self, report: GateReport) -> None:
        """Notify every plugin with its own deep copy: editing it in place (a reason appended,
        a detail forged) cannot reach the report that is written or the next plugin."""
        for impl in self.manager.hook.confgate_gate_finished.get_hookimpls():
            try:
                impl.function(report=report.model_copy(deep=True))
            except Exception as exc:
                self._problem(impl.plugin_name, f"confgate_gate_finished raised {exc!r}")

    def _call(self, hook: str, kind: type[Any], kwargs: dict[str, Any]) -> list[Any]:
        results: list[Any] = []
        for impl in getattr(self.manager.hook, hook).get_hookimpls():
            # Each plugin reads its own copy: only what it returns counts (hookspecs).
            args = {name: copy.deepcopy(kwargs[name]) for name in impl.argnames if name in kwargs}
            try:
                value = impl.function(**args)
            except Exception as exc:
                self._problem(impl.plugin_name, f"{hook} raised {type(exc).__name__}: {exc}")
                continue
            if value is None:
                continue
            items = list(value) if isinstance(value, (list, tuple)) else [value]
            wrong = [type(item).__name__ for item in items if not isinstance(item, kind)]
            if wrong:
                self._problem(
                    impl.plugin_name,
                    f"{hook} must return a list of {kind.__name__}, got {', '.join(wrong)}",
                )
                continue
            results.extend(items)
        return results

    def _problem(self, plugin: str, message: str) -> None:
        self.problems.append(
            Condition(
                metric="plugin",
                name="plugin",
                passed=False,
                message=f"plugin {plugin}: {message}",
            )
        )

"""What the project's code adds to pytest itself at run time (issue 34): plugins registered
from its own files, failed reports relabelled (``tests_audit`` watches single tests).

The run-time audit (``runtime_audit``) hears what Python audits; none of these raise an audit
event, and each can turn a failing test into a pass, a skip or nothing at all:

- a plugin whose module, class or hook functions live in a project file other than a
  ``conftest.py`` (conftests are machinery, judged by their edit), however it came in:
  ``pytest_plugins`` in a test module, ``-p`` in addopts, ``config.pluginmanager.register``
  from the code under test, a hook implementation added to pluggy directly. Its hooks and
  fixtures can flip, drop or deselect results. One whose hooks have no file at all (compiled
  from a string) counts wherever it came from: ``runtime_plugin``;
- a failed report that ``pytest_report_teststatus`` puts in a category that is not a failure
  (pytest itself counts it failed and exits 1): ``runtime_outcome_relabelled``; the gate then
  counts it as pytest does (``counted_category``).

Findings go to the session's ``Recorder`` and reach ``test_integrity`` as the hook's do. Only
duck-typed pytest and pluggy objects are read here: ``plugin.py`` alone imports pytest.
"""

from __future__ import annotations

import functools
import os
import sys
import types
from collections.abc import Iterable
from typing import Any

from pytest_confgate.collect.namespaces import module_file
from pytest_confgate.collect.runtime_audit import Recorder

FAILING_CATEGORIES = frozenset({"failed", "error", "rerun"})
"""Summary categories that say a failed report failed (``rerun``: pytest-rerunfailures)."""


class PluginWatch:
    """One session's view of the plugins; each plugin is judged once."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self._judged: set[int] = set()

    def registered(self, plugin: object, manager: Any) -> None:
        """A plugin was registered (pytest's ``pytest_plugin_registered``, historic)."""
        if id(plugin) in self._judged:
            return
        self._judged.add(id(plugin))
        callers = _safe(lambda: manager.get_hookcallers(plugin)) or []
        hooks = sorted({str(getattr(c, "name", "?")) for c in callers})
        functions = [impl.function for c in callers for impl in _safe(c.get_hookimpls) or []
                     if getattr(impl, "plugin", None) is plugin]
        self._judge(plugin, hooks, functions)

    def sweep(self, manager: Any) -> None:
        """At the session's end: every hook implementation pluggy holds, however it got
        there (one appended to a hook caller directly was never registered)."""
        by_plugin: dict[int, tuple[object, list[str], list[object]]] = {}
        for name, caller in list(vars(getattr(manager, "hook", object())).items()):
            for impl in _safe(getattr(caller, "get_hookimpls", list)) or []:
                plugin = getattr(impl, "plugin", None)
                entry = by_plugin.setdefault(id(plugin), (plugin, [], []))
                entry[1].append(name)
                entry[2].append(getattr(impl, "function", None))
        for key, (plugin, hooks, functions) in by_plugin.items():
            if key not in self._judged:
                self._judged.add(key)
                self._judge(plugin, sorted(set(hooks)), functions)

    def _judge(self, plugin: object, hooks: list[str], functions: list[object]) -> None:
        code_files = [f for f in map(code_file, functions) if f]
        kinds = {f: self.kind(f) for f in _plugin_files(plugin) + code_files}
        project = [f for f, kind in kinds.items() if kind == "project"]
        if any(os.path.basename(f) == "conftest.py" for f in project):
            return  # a conftest: machinery, judged by its edit
        nowhere = bool(code_files) and all(kinds[f] == "nowhere" for f in code_files)
        if not project and not nowhere:
            return
        stack = tuple(dict.fromkeys((self.recorder.relative(f), _first_line(f, functions))
                                    for f in project))
        what = ", ".join(hooks) if hooks else "no hooks (fixtures or code that runs on import)"
        where = "a project file other than a conftest" if project else "code with no file"
        self.recorder.record(
            "runtime_plugin",
            f"a pytest plugin from {where} ({_name(plugin)}): {what}; registered outside the "
            "conftests (pytest_plugins, -p, pluginmanager.register), its hooks and fixtures "
            "can flip, drop or deselect results", stack)

    def kind(self, filename: str) -> str:
        """``project``, ``gate``, ``other`` (a real file elsewhere) or ``nowhere``.

        A ``site-packages`` folder under the rootdir counts as the project's here: a change
        can commit one and put it on ``sys.path``. Its files count only when the change
        added or edited them, like every other project file."""
        if filename.startswith("<") or not os.path.isfile(filename):
            return "nowhere"
        if self.recorder.is_gate(filename):
            return "gate"
        if self.recorder.is_project(filename) or self.recorder.under_root(filename):
            return "project"
        return "other"

    def relabelled(self, nodeid: str, when: str, category: str, manager: Any) -> None:
        """A failed report put in a category that is not a failure."""
        callers = [getattr(manager.hook, "pytest_report_teststatus", None)]
        files = [f for c in callers if c is not None for impl in _safe(c.get_hookimpls) or []
                 for f in [code_file(impl.function)] if f and self.kind(f) == "project"]
        functions = [impl.function for c in callers if c is not None
                     for impl in _safe(c.get_hookimpls) or []]
        stack = tuple(dict.fromkeys((self.recorder.relative(f), _first_line(f, functions))
                                    for f in files))
        self.recorder.record(
            "runtime_outcome_relabelled",
            f"{nodeid} ({when}) failed, and pytest_report_teststatus called it "
            f"{category or 'nothing'}: counted as failed, as pytest counts it", stack)


def counted_category(failed: bool, when: str, category: str) -> str:
    """The summary category the gate counts: a failed report is a failure (or an error
    outside the test's call) whatever ``pytest_report_teststatus`` said."""
    if not failed or category in FAILING_CATEGORIES:
        return category
    return "failed" if when == "call" else "error"


def _plugin_files(plugin: object) -> list[str]:
    if isinstance(plugin, types.ModuleType):
        module: object = plugin
    else:
        owner = plugin if isinstance(plugin, type) else type(plugin)
        module = sys.modules.get(getattr(owner, "__module__", "") or "")
    path = module_file(module)
    return [os.path.abspath(path)] if isinstance(path, str) else []


def code_file(function: object) -> str | None:
    """The file a hook implementation's code was compiled from (through wrappers, bound
    methods, partials and callable objects)."""
    seen = 0
    while function is not None and seen < 8:
        seen += 1
        code = getattr(function, "__code__", None)
        if isinstance(code, types.CodeType):
            name = code.co_filename
            return os.path.abspath(name) if not name.startswith("<") else name
        if isinstance(function, functools.partial):
            function = function.func
        elif hasattr(function, "__func__"):
            function = function.__func__
        elif hasattr(function, "__wrapped__"):
            function = function.__wrapped__
        else:
            call = type(function).__dict__.get("__call__")
            function = call if call is not function else None
    return None


def _first_line(filename: str, functions: Iterable[object]) -> int:
    for function in functions:
        code = getattr(function, "__code__", None)
        if isinstance(code, types.CodeType) and code_file(function) == filename:
            return int(code.co_firstlineno)
    return 1


def _name(plugin: object) -> str:
    if isinstance(plugin, types.ModuleType):
        return plugin.__name__
    owner = plugin if isinstance(plugin, type) else type(plugin)
    return f"{getattr(owner, '__module__', '?')}.{getattr(owner, '__qualname__', '?')}"


def _safe(call: Any) -> Any:
    try:
        return call()
    except Exception:  # the audit must never change what the code under test does
        return None


__all__ = ["FAILING_CATEGORIES", "PluginWatch", "code_file", "counted_category"]

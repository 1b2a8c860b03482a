"""What happened to single tests that a failure would not show (issue 34, beside
``plugin_audit``): none of it raises an audit event, and each hides a failing test.

- a ``skip``, ``skipif`` or ``xfail`` mark a test did not have when collection finished
  (``request.node.add_marker`` in a fixture, a hook, the code under test):
  ``runtime_mark_added``, placed at the test;
- a test that was skipped or xfailed at run time with no such mark at collection
  (``pytest.skip``/``pytest.xfail`` called by name built at run time, ``importorskip`` in
  the test), or a test module that skipped itself while collected:
  ``runtime_skipped_itself``, placed at the test, so it counts in tests the change added
  or edited;
- a test method whose function, in its own class's namespace, was compiled from another
  project file (an ``__init_subclass__``, a metaclass or a class decorator of the code under
  test swapped it), or from no file at all: ``runtime_test_replaced``. A decorator that keeps
  ``__wrapped__`` pointing at the test's own function is not counted;
- an exception that ended a thread while the tests ran (also after its own test ended), or
  an unraisable one (pytest only warns, and not at all once its session is over):
  ``runtime_lost_failure``, placed at the test that was running;
- a test or a whole test module skipped because a module of the project itself could not be
  imported (``pytest.importorskip`` of a module the change removed): ``runtime_import_skip``,
  placed at that module's path, so it counts when the change deleted or edited it.

Only duck-typed pytest objects are read here: ``plugin.py`` alone imports pytest.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import threading
from collections.abc import Iterable
from typing import Any

from pytest_confgate.collect.namespaces import module_file
from pytest_confgate.collect.plugin_audit import PluginWatch, code_file
from pytest_confgate.collect.runtime_audit import Recorder

WATCHED_MARKS = frozenset({"skip", "skipif", "xfail"})
"""Marks that stop a failing test from counting as a failure."""
LOST_WARNINGS = frozenset({"PytestUnhandledThreadExceptionWarning",
                           "PytestUnraisableExceptionWarning"})
"""pytest's warnings for an exception that did not fail the test it happened in."""
_IMPORT_SKIP = re.compile(r"could not import '([A-Za-z_][\w.]*)'")
"""The reason ``pytest.importorskip`` gives (pytest's own words, not the change's)."""


class TestWatch:
    """One session's view of its tests."""

    __test__ = False  # not a test class, whatever pytest collects

    def __init__(self, recorder: Recorder, plugins: PluginWatch) -> None:
        self.recorder = recorder
        self.plugins = plugins
        self._marks: dict[str, list[str]] = {}
        self._items: dict[str, Any] = {}
        self._threads: tuple[Any, Any] | None = None

    def collected(self, items: Iterable[Any]) -> None:
        """Collection finished: the marks each test has now, and whose code each runs."""
        for item in items:
            self._items[str(item.nodeid)] = item
            self._marks[str(item.nodeid)] = _marks(item)
            self._replaced(item)

    def _replaced(self, item: Any) -> None:
        owner = getattr(item, "cls", None)
        name = str(getattr(item, "originalname", None) or getattr(item, "name", ""))
        if owner is None or name not in vars(owner):
            return  # inherited or module level: the class does not claim it as its own
        path = os.path.abspath(str(getattr(item, "path", "")))
        if _module_file(owner) != path:
            return
        function = vars(owner)[name]
        if any(code_file(f) == path for f in _unwrapped(function)):
            return
        found = code_file(function)
        kind = self.plugins.kind(found) if found else "nowhere"
        if kind not in ("project", "nowhere") or os.path.basename(found or "") == "conftest.py":
            return
        where = self.recorder.relative(found) if found and kind == "project" else "no file"
        stack = ((where, _line(function)),) if kind == "project" else ()
        self.recorder.record(
            "runtime_test_replaced",
            f"{item.nodeid} runs code from {where}, not the {name} its class defines in "
            f"{self.recorder.relative(path)}", stack)

    def reported(self, report: Any) -> None:
        """A test's phase was reported. A skip, an xfail or an xpass (the only outcomes a
        skip or xfail mark makes) counts when a watched mark was added since collection, or
        when no mark announced it at collection."""
        if not (report.skipped or hasattr(report, "wasxfail")):
            return  # the hot path: passed and failed reports stop here
        nodeid = str(report.nodeid)
        item, before = self._items.get(nodeid), self._marks.get(nodeid)
        if item is None or before is None:
            return
        location = getattr(item, "location", ("", None, ""))
        place = ((self.recorder.relative(str(getattr(item, "path", "") or location[0])),
                  int(location[1] or 0) + 1),)
        now = _marks(item)
        if len(now) > len(before):
            added = list(now)
            for name in before:
                if name in added:
                    added.remove(name)
            self._marks[nodeid] = now
            self.recorder.record(
                "runtime_mark_added",
                f"{', '.join(sorted(set(added)))} added to {nodeid} after collection: a "
                "failure there no longer counts as one", place)
        elif not now and getattr(report, "skipped", False):
            what = "xfailed" if hasattr(report, "wasxfail") else "skipped"
            self.recorder.record(
                "runtime_skipped_itself",
                f"{nodeid} {what} at run time ({report.when}) with no skip or xfail mark at "
                "collection (pytest.skip, pytest.xfail or importorskip called by the test or "
                "its fixtures): it never counted as a failure", place)

    def warned(self, category: str, nodeid: str) -> None:
        """pytest recorded a warning: one that stands for a lost failure counts."""
        if category not in LOST_WARNINGS:
            return
        file = nodeid.partition("::")[0]
        self.recorder.record(
            "runtime_lost_failure",
            f"an exception {'in a thread' if 'Thread' in category else 'nothing could raise'}"
            f" during {nodeid or 'the session'} did not fail it (pytest only warned: "
            f"{category})", ((file, 0),) if file else ())

    def hook_threads(self) -> None:
        """From the session's start: an exception that ends a thread while the tests run
        counts, also after its test ended (pytest warns only when it sees it in time)."""
        previous = threading.excepthook

        def _excepthook(args: Any, /) -> None:
            test = self.recorder.current_test
            if not self.recorder.session_over:
                self.warned("PytestUnhandledThreadExceptionWarning", test or "")
            previous(args)

        self._threads = (previous, _excepthook)
        threading.excepthook = _excepthook

    def unhook_threads(self) -> None:
        if self._threads is not None and threading.excepthook is self._threads[1]:
            threading.excepthook = self._threads[0]
        self._threads = None

    def skipped(self, nodeid: str, reason: str, root: str) -> None:
        """A test or module was skipped: counts when the missing module is the project's;
        a whole module skipped while collected counts when the change added or edited it."""
        match = _IMPORT_SKIP.search(reason)
        if match is None:
            if nodeid and "::" not in nodeid:
                self.recorder.record(
                    "runtime_skipped_itself",
                    f"{nodeid} skipped itself while collected ({reason.strip()[:120]}): none "
                    "of its tests ran", ((nodeid, 0),))
            return
        missing = _project_path(match.group(1), root)
        if missing is None:
            return
        self.recorder.record(
            "runtime_import_skip",
            f"{nodeid} was skipped because the project's own module {match.group(1)} could "
            "not be imported", ((missing, 0), (nodeid.partition("::")[0], 0)))


def _project_path(name: str, root: str) -> str | None:
    """``name``'s file, relative to ``root``, when its top-level package is under ``root``
    (whether or not ``name`` itself still exists)."""
    top, _, rest = name.partition(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    origin = getattr(spec, "origin", None) if spec is not None else None
    if not isinstance(origin, str) or not os.path.isfile(origin):
        return None
    full = os.path.abspath(origin)
    base = root.rstrip(os.sep) + os.sep
    if not full.startswith(base) or "site-packages" in full:
        return None
    package = os.path.dirname(full) if os.path.basename(full) == "__init__.py" else full
    if not rest:
        return os.path.relpath(full, root).replace(os.sep, "/")
    parts = rest.split(".")
    target = os.path.join(package, *parts[:-1], parts[-1] + ".py")
    if not os.path.exists(target) and os.path.isdir(os.path.join(package, *parts)):
        target = os.path.join(package, *parts, "__init__.py")
    return os.path.relpath(target, root).replace(os.sep, "/")


def _marks(item: Any) -> list[str]:
    try:
        found = [str(m.name) for m in item.iter_markers()]
    except Exception:  # the audit must never change what the code under test does
        return []
    return sorted(name for name in found if name in WATCHED_MARKS)


def _module_file(owner: object) -> str | None:
    module = sys.modules.get(getattr(owner, "__module__", "") or "")
    path = module_file(module)
    return os.path.abspath(path) if isinstance(path, str) else None


def _unwrapped(function: object) -> list[object]:
    chain: list[object] = []
    while function is not None and len(chain) < 8:
        function = getattr(function, "__wrapped__", None)
        if function is not None:
            chain.append(function)
    return chain


def _line(function: object) -> int:
    code = getattr(getattr(function, "__func__", function), "__code__", None)
    return int(getattr(code, "co_firstlineno", 0) or 0)


__all__ = ["LOST_WARNINGS", "WATCHED_MARKS", "TestWatch"]

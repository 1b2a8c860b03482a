"""How line probes get into a module: a meta-path finder and a loader (issue 26).

``ProbeFinder`` hands the measured source files to ``ProbeLoader``, which compiles them with
probes (``LineProbes.compile``) and leaves every other part of the import as the import
system does it: the standard, frozen ``exec_module`` runs the module, so no frame of ours is on
any stack the module can inspect, and ``__spec__``, ``__loader__``, ``__file__`` and
``__cached__`` are the ones a normal import sets.
"""

from __future__ import annotations

import ast
import importlib.machinery
import sys
import threading
from collections.abc import Callable, Sequence
from types import CodeType, ModuleType
from typing import Any, Protocol

from pytest_confgate.collect.coverage.aexit import aexit_on_a_raise_at

PROBE = "__confgate_probe__"
"""The global the probes call with a line number, renamed per file in the compiled code
(``line_probes.probe_name``) to a builtin: its file's set of lines' ``add``."""


class Probes(Protocol):
    """What the finder and loader need of ``LineProbes``."""

    unprobed: dict[str, str]
    rewriting: Any
    traces_others: bool
    branches: Any
    """The branch probes, or None (line probes only)."""

    def wants(self, filename: str, module: str) -> bool: ...

    def compile(
        self, source: bytes, path: str, rewrite: Callable[[ast.Module], None] | None = None
    ) -> CodeType: ...



class ProbeFinder:
    """A meta-path finder that hands the measured files to ``ProbeLoader``.

    It asks the finders behind it (so editable installs and namespace packages resolve as
    usual) and returns their answer, with its own loader only for a measured source file:
    every other import resolves exactly as if it were not here, searched once.

    Two can be installed at once (a gate run inside a gate run, as pytester does): each asks
    the other, but never one already asking, so the search ends; the outer one instruments its
    files and the inner one sees them as loaded by another hook.
    """

    _asking = threading.local()

    def __init__(self, probes: Probes) -> None:
        self.probes = probes

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        asking: set[int] = self._asking.__dict__.setdefault("finders", set())
        if id(self) in asking:
            return None
        asking.add(id(self))
        try:
            spec = self._others(fullname, path, target, asking)
        finally:
            asking.discard(id(self))
        origin = getattr(spec, "origin", None)
        if spec is None or not isinstance(origin, str) or not origin.endswith((".py", ".pyw")):
            return spec
        if not self.probes.wants(origin, fullname):
            return spec
        if sys.getprofile() is not None:
            # A profiler sees each probe as a call of ``set.add``: the module would not look
            # to it as it does without the gate, so it is left unprobed: traced by coverage.py
            # where the engine has it trace what it cannot probe, else said so.
            if not self.probes.traces_others:
                self.probes.unprobed[origin] = "imported while a profiler (sys.setprofile) ran"
            return spec
        if self.probes.branches is None and aexit_on_a_raise_at(origin) is not None:
            # Line probes cannot mark that ``raise`` run as coverage.py's tracer does: traced
            # (branch probes refuse the file when they plan it).
            if not self.probes.traces_others:
                self.probes.unprobed[origin] = "an async with whose exit Python 3.11 places " \
                                               "on a raise"
            return spec
        rewriter = None
        if type(spec.loader) is not importlib.machinery.SourceFileLoader:
            rewriting = self.probes.rewriting
            if rewriting is None or not rewriting.claims(spec.loader):
                if not self.probes.traces_others:
                    self.probes.unprobed[origin] = f"loaded by {type(spec.loader).__name__}"
                return spec
            rewriter = spec.loader
        spec.loader = ProbeLoader(fullname, origin, self.probes, rewriter, spec.loader)
        return spec

    @staticmethod
    def _others(
        fullname: str, path: Sequence[str] | None, target: ModuleType | None, asking: set[int]
    ) -> importlib.machinery.ModuleSpec | None:
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            if id(finder) in asking or find is None:
                continue
            spec: importlib.machinery.ModuleSpec | None = find(fullname, path, target)
            if spec is not None:
                return spec
        return None


class ProbeLoader(importlib.machinery.SourceFileLoader):
    """Compiles the module with probes; never reads or writes a ``.pyc`` for it.

    The module runs from the standard loader's own (frozen) ``exec_module``, so no frame of
    ours is on the stack while it executes: ``warnings.warn(..., stacklevel=2)`` at import
    time, ``inspect.stack()`` and tracebacks see what a normal import shows. The probe is a
    builtin (``line_probes.probe_name``), never a global of the module. Once the code is
    asked for, the module's ``__loader__`` and ``__spec__.loader`` are given back to the
    loader the import system had chosen.
    """

    def __init__(
        self,
        fullname: str,
        path: str,
        probes: Probes,
        rewriter: object | None = None,
        original: object | None = None,
    ) -> None:
        super().__init__(fullname, path)
        self._probes = probes
        self._rewriter = rewriter
        """pytest's rewriting hook when it claimed the module: its asserts are rewritten."""
        self._original = original
        """The loader the other finders chose: what the module's ``__loader__`` shows."""

    def get_code(self, fullname: str) -> CodeType:
        module = sys.modules.get(fullname)
        spec = getattr(module, "__spec__", None)
        if module is not None and spec is not None and spec.loader is self and self._original:
            spec.loader = self._original
            if getattr(module, "__loader__", None) is self:
                module.__loader__ = self._original
        source = self.get_data(self.path)
        rewriting, rewriter = self._probes.rewriting, self._rewriter
        if rewriting is None or rewriter is None:
            return self._probes.compile(source, self.path)

        def rewrite(tree: ast.Module) -> None:
            rewriting.rewrite_tree(tree, source, self.path)

        code = self._probes.compile(source, self.path, rewrite)
        rewriting.record(rewriter, fullname, self.path)
        return code

    def set_data(self, path: str, data: Any, *, _mode: int = 0o666) -> None:
        """Never cache instrumented bytecode where a normal import would find it."""

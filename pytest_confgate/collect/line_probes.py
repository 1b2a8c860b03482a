"""Line coverage without any tracer (SPEC 11): probes compiled into the measured modules.

Any tracer, even one that ignores every frame, makes a suite ~1.3x slower on Python 3.11,
because the interpreter calls it for every function call of every module. So the measured
modules are instead compiled with a probe before each statement (``__confgate_probe__(LINE)``,
a ``set.add``) and the rest of the program runs untouched. ``probe_code`` caches the
instrumented code on disk and strips probes once they have fired.

Only which lines ran is recorded here. Which files are measured, which lines are statements,
exclusions (``# pragma: no cover``) and the figures stay coverage.py's: the caller decides with
coverage.py which files to instrument (``wants``), and the lines are handed to a
``CoverageData`` that coverage.py's own reporting analyses, so a line on a statement's second
row or a decorator maps to the statement exactly as it does for coverage.py's tracer.

A measured module imported before the probes were installed cannot be instrumented. One that
pytest's assertion rewriting claims (test modules, conftest files, and every module of a
package that is itself a pytest plugin) is rewritten *and* probed, through ``AssertRewriting``
(given by the pytest plugin: only it imports pytest). One another loader claims cannot be:
``unprobed`` names it, so the caller can say it could not measure it.
"""

from __future__ import annotations

import ast
import importlib.machinery
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any, Protocol

from pytest_confgate.collect.branch_probes import EXC_INFO, FRAME, BranchProbes
from pytest_confgate.collect.probe_code import Deinstrumenter, ProbeCache

PROBE = "__confgate_probe__"
VALUE_PROBE = "__confgate_probe_value__"
"""Records a line and returns its argument: marks an ``except`` clause as tested."""
Wants = Callable[[str, str], bool]
"""``wants(filename, module name)``: whether the file is measured."""


class AssertRewriting(Protocol):
    """pytest's assertion rewriting, applied to a tree the probes then instrument."""

    def claims(self, loader: object) -> bool:
        """Whether ``loader`` is pytest's rewriting hook (it would compile the module)."""

    def rewrite(self, loader: object, tree: ast.Module, source: bytes, module: str,
                path: str) -> None:
        """Rewrite the asserts of ``tree`` as ``loader`` would have, in place."""

_FIRST_SWEEP_S = 0.5


class LineProbes:
    """Records executed lines of the files ``wants`` names; ``install`` / ``uninstall``."""

    def __init__(
        self,
        wants: Wants,
        *,
        leave: Sequence[str] = (),
        cache_dir: Path | None = None,
        canonical: Callable[[str], str] = os.path.realpath,
        rewriting: AssertRewriting | None = None,
        branches: BranchProbes | None = None,
    ) -> None:
        self.hits: dict[str, set[int]] = {}
        """Per file, the lines that ran and (negative keys, ``branch_probes``) the arcs."""
        self.unprobed: dict[str, str] = {}
        """Measured files without probes, and why (another loader claimed them, say)."""
        self._wants = wants
        self._leave = frozenset(leave)
        self._canonical = canonical
        self.rewriting = rewriting
        self.branches = branches
        """Branch probes too (branch coverage), placed by coverage.py's analysis."""
        self._cache = ProbeCache(cache_dir)
        self._stripper = Deinstrumenter(PROBE)
        self._finder = _ProbeFinder(self)
        self._next_sweep = 0.0
        self._interval = _FIRST_SWEEP_S
        self._seen = 0

    @classmethod
    def for_files(cls, files: Sequence[Path], **options: Any) -> LineProbes:
        """Probes for exactly ``files`` (pull-request mode: the changed ones)."""
        wanted = {os.path.realpath(f) for f in files}
        return cls(lambda filename, _module: os.path.realpath(filename) in wanted, **options)

    def missed_modules(self) -> list[str]:
        """Measured files already imported: instrumenting them now would miss their lines."""
        loaded = set()
        for name, module in list(sys.modules.items()):
            origin = getattr(getattr(module, "__spec__", None), "origin", None)
            if not isinstance(origin, str) or not origin.endswith((".py", ".pyw")):
                continue
            if self._wants(origin, name):
                loaded.add(origin)
        return sorted(loaded)

    def install(self) -> None:
        if self._finder not in sys.meta_path:
            sys.meta_path.insert(0, self._finder)
        self._next_sweep = time.perf_counter() + self._interval

    def uninstall(self) -> None:
        """Stop instrumenting new imports; modules already loaded keep recording."""
        if self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)

    def lines(self) -> dict[str, list[int]]:
        """Executed lines per file (canonical paths), for ``CoverageData.add_lines``."""
        return {path: sorted(lines) for path, lines in self.hits.items() if lines}

    def between_tests(self) -> None:
        """A moment when no measured code runs: strip fired probes now and then.

        Sweeps get rarer as the run goes on (each walks the heap once), and only happen when
        new lines ran since the last one.
        """
        now = time.perf_counter()
        if now < self._next_sweep:
            return
        seen = sum(len(lines) for lines in self.hits.values())
        if seen != self._seen:
            self._seen = seen
            self.sweep()
            self._interval *= 2
        self._next_sweep = time.perf_counter() + self._interval

    def sweep(self) -> int:
        """Strip every probe that has fired; returns how many functions were rewritten."""
        return self._stripper.sweep(self.hits)

    def wants(self, filename: str, module: str) -> bool:
        """Whether to instrument ``filename``: measured, and not left to the tracer."""
        if self._leave and self._canonical(filename) in self._leave:
            return False
        return self._wants(filename, module)

    def prepare(self, path: str) -> str | None:
        """Instrument ``path`` ahead of its import (into the cache); why it cannot be, if so.

        Branch probes need coverage.py's analysis of the file: a file whose arcs they cannot
        place must be known before the run, to be traced instead.
        """
        try:
            source = Path(path).read_bytes()
            self.compile(source, path, track=False)
        except (OSError, SyntaxError) as exc:
            return f"cannot be read or compiled: {type(exc).__name__}"
        return self.unprobed.pop(path, None)

    def compile(
        self,
        source: bytes,
        path: str,
        rewrite: Callable[[ast.Module], None] | None = None,
        *,
        track: bool = True,
    ) -> CodeType:
        """``source`` compiled with probes (asserts rewritten first if ``rewrite``), cached.

        Should instrumenting ever fail where plain compiling works, the module still loads,
        without probes, and ``unprobed`` says so: the tests never pay for a bug of ours, and
        the coverage figure fails closed instead.
        """

        def build(probed: bool = True) -> CodeType:
            # A normal import compiles once and then loads .pyc files silently; warnings from
            # compiling (an invalid escape, say) must not fail a `filterwarnings = error` run
            # only because the gate compiled the module again.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(source, filename=path)
                if rewrite is not None:
                    rewrite(tree)
                if probed:
                    plan = self.branches.plan(tree, source, path) if self.branches else None
                    tree = instrument(tree)
                    if plan is not None:
                        plan.apply(tree)
                code: CodeType = compile(tree, path, "exec", dont_inherit=True)
            return code

        variant = "pytest-rewritten" if rewrite is not None else ""
        if self.branches is not None:
            variant += self.branches.variant
        try:
            code = self._cache.code(source, path, build, variant)
        except SyntaxError:
            raise  # the module itself is broken: the import fails as it would without us
        except Exception as exc:  # any failure of ours: reported, never raised into the tests
            self.unprobed[path] = f"instrumenting failed: {type(exc).__name__}: {exc}"
            return build(probed=False)
        if track:
            self._stripper.track(code, self._canonical(path))
        return code

    def recorder(self, path: str) -> set[int]:
        return self.hits.setdefault(self._canonical(path), set())


class _ProbeFinder:
    """A meta-path finder that hands the measured files to ``_ProbeLoader``.

    It asks the finders behind it (so editable installs and namespace packages resolve as
    usual) and returns their answer, with its own loader only for a measured source file:
    every other import resolves exactly as if it were not here, searched once.

    Two can be installed at once (a gate run inside a gate run, as pytester does): each asks
    the other, but never one already asking, so the search ends; the outer one instruments its
    files and the inner one sees them as loaded by another hook.
    """

    _asking = threading.local()

    def __init__(self, probes: LineProbes) -> None:
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
        rewriter = None
        if type(spec.loader) is not importlib.machinery.SourceFileLoader:
            rewriting = self.probes.rewriting
            if rewriting is None or not rewriting.claims(spec.loader):
                self.probes.unprobed[origin] = f"loaded by {type(spec.loader).__name__}"
                return spec
            rewriter = spec.loader
        spec.loader = _ProbeLoader(fullname, origin, self.probes, rewriter)
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


class _ProbeLoader(importlib.machinery.SourceFileLoader):
    """Compiles the module with probes; never reads or writes a ``.pyc`` for it."""

    def __init__(
        self, fullname: str, path: str, probes: LineProbes, rewriter: object | None = None
    ) -> None:
        super().__init__(fullname, path)
        self._probes = probes
        self._rewriter = rewriter
        """pytest's rewriting hook when it claimed the module: its asserts are rewritten."""

    def get_code(self, fullname: str) -> CodeType:
        source = self.get_data(self.path)
        rewriting, rewriter = self._probes.rewriting, self._rewriter
        if rewriting is None or rewriter is None:
            return self._probes.compile(source, self.path)

        def rewrite(tree: ast.Module) -> None:
            rewriting.rewrite(rewriter, tree, source, fullname, self.path)

        return self._probes.compile(source, self.path, rewrite)

    def exec_module(self, module: ModuleType) -> None:
        hits = self._probes.recorder(self.path)

        def value_probe(line: int, value: object) -> object:
            hits.add(line)
            return value

        module.__dict__[PROBE] = hits.add
        module.__dict__[VALUE_PROBE] = value_probe
        if self._probes.branches is not None:
            module.__dict__[EXC_INFO] = sys.exc_info
            module.__dict__[FRAME] = sys._getframe
        super().exec_module(module)

    def set_data(self, path: str, data: Any, *, _mode: int = 0o666) -> None:
        """Never cache instrumented bytecode where a normal import would find it."""


def instrument(tree: ast.Module) -> ast.Module:
    """``tree`` with ``__confgate_probe__(LINE)`` before every statement.

    Where the interpreter reports a line event that is not a statement of its own, a probe
    marks it too: every decorator line and the ``def`` line of a decorated definition, an
    ``except`` clause when its type is tested (the type expression is wrapped), and every
    ``case`` line a ``match`` tested before the one that matched (or all of them, through an
    added no-op ``case _`` when none matched). Docstrings and ``from __future__`` imports
    stay first: moving them would change the module's meaning.
    """
    _ProbeInserter().visit(tree)
    return tree


_BLOCKS = ("body", "orelse", "finalbody")
_NESTED = (*_BLOCKS, "handlers", "cases")
_VISITED = (ast.stmt, ast.excepthandler, ast.match_case)


class _ProbeInserter(ast.NodeVisitor):
    """Walks statements only: expressions hold no statement, and skipping them (most of a
    tree's nodes) is what makes instrumenting cheap. Every node it adds carries its location,
    so no pass over the whole tree is needed afterwards."""

    def generic_visit(self, node: ast.AST) -> None:
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, field, self._probed(node, field, block))
        for field in _NESTED:
            children = getattr(node, field, None)
            if isinstance(children, list):
                for child in children:
                    if isinstance(child, _VISITED):
                        self.visit(child)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self.generic_visit(node)
        if node.type is None:  # a bare ``except:`` always matches once reached
            node.body.insert(0, _probe_line(node.lineno, node))
        else:
            name = ast.copy_location(ast.Name(id=VALUE_PROBE, ctx=ast.Load()), node.type)
            line = ast.copy_location(ast.Constant(node.lineno), node.type)
            call = ast.Call(func=name, args=[line, node.type], keywords=[])
            node.type = ast.copy_location(call, node.type)

    def visit_Match(self, node: ast.Match) -> None:
        self.generic_visit(node)
        lines = [case.pattern.lineno for case in node.cases]
        for index, case in enumerate(node.cases):
            case.body[:0] = [_probe_line(line, case.pattern) for line in lines[: index + 1]]
        last = node.cases[-1]
        if not _irrefutable(last):
            anything = ast.MatchAs(pattern=None, name=None)
            ast.copy_location(anything, last.pattern)
            body: list[ast.stmt] = [_probe_line(line, last.pattern) for line in lines]
            node.cases.append(ast.match_case(pattern=anything, guard=None, body=body))

    def _probed(self, owner: ast.AST, field: str, block: list[ast.stmt]) -> list[ast.stmt]:
        keep = 0
        if field == "body" and _has_docstring(owner, block):
            keep = 1
        if isinstance(owner, ast.Module):
            while keep < len(block) and _is_future_import(block[keep]):
                keep += 1
        out: list[ast.stmt] = list(block[:keep])
        for stmt in block[:keep]:
            out.extend(_probes(stmt))
        for stmt in block[keep:]:
            out.extend(_probes(stmt))
            out.append(stmt)
        return out


def _probes(stmt: ast.stmt) -> list[ast.stmt]:
    decorators: list[Any] = getattr(stmt, "decorator_list", [])
    lines = sorted({*(d.lineno for d in decorators), stmt.lineno})
    return [_probe_line(line, stmt) for line in lines]


def _probe_line(line: int, where: ast.AST) -> ast.stmt:
    call = ast.Call(func=ast.Name(id=PROBE, ctx=ast.Load()), args=[ast.Constant(line)], keywords=[])
    probe = ast.Expr(value=call)
    column = getattr(where, "col_offset", 0)
    for node in ast.walk(probe):
        # Zero width on its own line: a statement that ends left of where it starts
        # (`return f"""...` over several lines) must not lend the probe an inverted range.
        node.lineno = node.end_lineno = line  # type: ignore[attr-defined]
        node.col_offset = node.end_col_offset = column  # type: ignore[attr-defined]
    return probe


def _irrefutable(case: ast.match_case) -> bool:
    pattern = case.pattern
    return case.guard is None and isinstance(pattern, ast.MatchAs) and pattern.pattern is None


def _has_docstring(owner: ast.AST, block: list[ast.stmt]) -> bool:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    first = block[0]
    return (
        isinstance(owner, kinds)
        and isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )


def _is_future_import(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"

"""Line coverage without any tracer: probes compiled into the measured modules.

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
import builtins
import hashlib
import os
import sys
import time
import warnings
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from types import CodeType
from typing import Any, Protocol

from pytest_confgate import syntax_tree
from pytest_confgate.collect.coverage.assert_rewrite import REWRITTEN
from pytest_confgate.collect.coverage.branch_probes import EXC_INFO, FRAME, BranchProbes
from pytest_confgate.collect.coverage.probe_code import Deinstrumenter, ProbeCache
from pytest_confgate.collect.coverage.probe_import import PROBE, ProbeFinder
from pytest_confgate.collect.namespaces import namespace
from pytest_confgate.collect.sources import is_test_path

__all__ = ["PROBE", "AssertRewriting", "LineProbes", "Wants", "instrument"]
Wants = Callable[[str, str], bool]
"""``wants(filename, module name)``: whether the file is measured."""


class AssertRewriting(Protocol):
    """pytest's assertion rewriting, applied to a tree the probes then instrument."""

    variant: str
    """Tells its rewritten code apart in the probe cache (``assert_rewrite.variant``)."""

    def claims(self, loader: object) -> bool:
        """Whether ``loader`` is pytest's rewriting hook (it would compile the module)."""

    def rewrite_tree(self, tree: ast.Module, source: bytes, path: str) -> None:
        """Rewrite the asserts of ``tree`` as pytest's hook would have, in place."""

    def record(self, loader: object, module: str, path: str) -> None:
        """Tell ``loader`` it rewrote ``module`` (as it records its own, whether or not the
        code came from the cache: no "already imported" warning later)."""


class Rewriting(Protocol):
    """What compiling a module ahead of its import needs: rewriting without a loader."""

    variant: str

    def rewrite_tree(self, tree: ast.Module, source: bytes, path: str) -> None: ...

_FIRST_SWEEP_S = 0.5
_SWEEP_GROWTH = 4
"""Each sweep waits this many times longer than the last (0.5 s, 2.5 s, 10.5 s, ...)."""
_HEAP_SWEEP_AFTER_S = 8.0
"""Sweeps this long after the start walk the whole heap for function objects; the earlier
ones read the measured modules' namespaces only (``Deinstrumenter.sweep``): on a short suite
a heap walk cost more than the probes it stripped (click: 0.25 s of 5.4 s, for nothing)."""


class LineProbes:
    """Records executed lines of the files ``wants`` names; ``install`` / ``uninstall``."""

    def __init__(
        self,
        wants: Wants,
        *,
        leave: Sequence[str] = (),
        cache_dir: Path | None = None,
        canonical: Callable[[str], str] = os.path.realpath,
        rewriting: Rewriting | None = None,
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
        self.traces_others = False
        """Files other loaders execute are traced (``foreign_loaders``), not left unmeasured."""
        self.compiled: weakref.WeakSet[CodeType] = weakref.WeakSet()
        """The module code objects compiled here: any other one of a measured file is foreign."""
        self._cache = ProbeCache(cache_dir)
        self._stripper = Deinstrumenter(PROBE)
        self._finder = ProbeFinder(self)
        self._next_sweep = 0.0
        self._installed = 0.0
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
            origin = getattr((namespace(module) or {}).get("__spec__"), "origin", None)
            if not isinstance(origin, str) or not origin.endswith((".py", ".pyw")):
                continue
            if self._wants(origin, name):
                loaded.add(origin)
        return sorted(loaded)

    def install(self) -> None:
        if self._finder not in sys.meta_path:
            sys.meta_path.insert(0, self._finder)
        self._installed = time.perf_counter()
        self._next_sweep = self._installed + self._interval

    def uninstall(self) -> None:
        """Stop instrumenting new imports; modules already loaded keep recording."""
        if self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)

    def lines(self) -> dict[str, list[int]]:
        """Executed lines per file (canonical paths), for ``CoverageData.add_lines``."""
        return {path: sorted(lines) for path, lines in self.hits.items() if lines}

    def between_tests(self) -> None:
        """A moment when no measured code runs: strip fired probes now and then.

        Sweeps get rarer as the run goes on (each walks the heap once: a tenth of a second on
        click's suite), and only happen when new lines ran since the last one. The first one
        strips what the hot loops of the first tests fired; later ones gain little.
        """
        now = time.perf_counter()
        if now < self._next_sweep:
            return
        seen = sum(len(lines) for lines in self.hits.values())
        if seen != self._seen:
            self._seen = seen
            self.sweep(everywhere=now - self._installed >= _HEAP_SWEEP_AFTER_S)
            self._interval *= _SWEEP_GROWTH
        self._next_sweep = time.perf_counter() + self._interval

    def sweep(self, *, everywhere: bool = True) -> int:
        """Strip every probe that has fired; returns how many functions were rewritten
        (``everywhere``: see ``Deinstrumenter.sweep``)."""
        return self._stripper.sweep(self.hits, everywhere=everywhere)

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
            rewriting = self.rewriting
            if self.branches is not None and is_test_path(Path(path)):
                if rewriting is None:
                    return self._plan_only(self.branches, source, path)

                def rewrite(tree: ast.Module) -> None:
                    rewriting.rewrite_tree(tree, source, path)

                # As pytest will compile it, once: the import then only reads the cache.
                self.compile(source, path, rewrite, track=False)
            else:
                self.compile(source, path, track=False)
        except (OSError, SyntaxError) as exc:
            return f"cannot be read or compiled: {type(exc).__name__}"
        return self.unprobed.pop(path, None)

    def _plan_only(self, branches: BranchProbes, source: bytes, path: str) -> str | None:
        """A file pytest will compile again with its asserts rewritten (by its name: a wrong
        guess costs only speed): only whether branch probes can be placed matters now, and
        coverage.py's analysis, kept for the import and the report."""
        if self._cache.has(source, path, self._variant(path, rewritten=True)) or self._cache.has(
            source, path, self._variant(path, rewritten=False)
        ):
            return None  # planned and compiled on an earlier run
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                branches.plan(syntax_tree.parse(source, filename=path), source, path)
        except SyntaxError:
            raise
        except Exception as exc:  # as ``compile`` says it
            return f"instrumenting failed: {type(exc).__name__}: {exc}"
        return None

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

        canonical = self._canonical(path)
        name = probe_name(canonical)

        def build(probed: bool = True) -> CodeType:
            # A normal import compiles once and then loads .pyc files silently; warnings from
            # compiling (an invalid escape, say) must not fail a `filterwarnings = error` run
            # only because the gate compiled the module again.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = syntax_tree.parse(source, filename=path)
                if rewrite is not None:
                    rewrite(tree)
                if probed:
                    plan = self.branches.plan(tree, source, path) if self.branches else None
                    tree = instrument(tree)
                    if plan is not None:
                        plan.apply(tree)
                code: CodeType = compile(tree, path, "exec", dont_inherit=True)
            # Kept calling this file's own probe: a cached entry needs no renaming (each
            # ``code.replace`` is an audited event the run-time audit attributes).
            return _renamed(code, PROBE, name) if probed else code

        try:
            code = self._cache.code(source, path, build,
                                    self._variant(path, rewritten=rewrite is not None))
        except SyntaxError:
            raise  # the module itself is broken: the import fails as it would without us
        except Exception as exc:  # any failure of ours: reported, never raised into the tests
            self.unprobed[path] = f"instrumenting failed: {type(exc).__name__}: {exc}"
            plain = build(probed=False)
            self.compiled.add(plain)
            return plain
        # The module's own namespace never holds the probe (``vars(module)``, ``dir()`` and
        # code that walks a module's callables see what they see without us), and the code
        # runs wherever it is executed (runpy, a reload, a namespace of the caller's).
        builtins.__dict__[name] = self.recorder(path).add
        if self.branches is not None:
            # What branch probes call to see an exception leave a branch line: builtins too.
            builtins.__dict__.setdefault(EXC_INFO, sys.exc_info)
            builtins.__dict__.setdefault(FRAME, sys._getframe)
        if track:
            self._stripper.track(code, canonical, name)
        self.compiled.add(code)
        return code

    def _variant(self, path: str, *, rewritten: bool) -> str:
        """What tells this file's cached code apart: asserts rewritten (by which pytest),
        branch probes (under which exclusions), and the name its probes call."""
        variant = "" if not rewritten else (
            self.rewriting.variant if self.rewriting is not None else REWRITTEN)
        if self.branches is not None:
            variant += self.branches.variant
        return f"{variant}:{probe_name(self._canonical(path))}"

    def recorder(self, path: str) -> set[int]:
        return self.hits.setdefault(self._canonical(path), set())


def probe_name(canonical: str) -> str:
    """The builtin a file's probes call: one per file, so each file records its own lines."""
    return f"{PROBE[:-2]}_{hashlib.sha256(canonical.encode()).hexdigest()[:16]}__"


def _renamed(code: CodeType, old: str, new: str) -> CodeType:
    """``code`` (and the code inside it) with the global ``old`` read as ``new``."""
    consts = tuple(_renamed(c, old, new) if isinstance(c, CodeType) else c
                   for c in code.co_consts)
    names = tuple(new if n == old else n for n in code.co_names)
    return code.replace(co_names=names, co_consts=consts)


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
            # ``(probe(LINE), TYPE)[1]``: records the clause when its type is tested, with
            # no function of ours in between (a frame a tracer or profiler would see).
            at = max(node.lineno, _leaf_line(node.type))
            probe = _probe_call(node.lineno, node.type, at)
            pair = ast.Tuple(elts=[probe, node.type], ctx=ast.Load())
            second = ast.Subscript(value=pair, slice=ast.Constant(1), ctx=ast.Load())
            for added in (pair, pair.elts[0], second, second.slice):
                ast.copy_location(added, node.type)
            node.type = second

    def visit_Match(self, node: ast.Match) -> None:
        self.generic_visit(node)
        # The probes of the case lines tested sit on the line that runs next (the matched
        # body's first): on their own lines they would add line events a tracer sees.
        lines = [case.pattern.lineno for case in node.cases]
        for index, case in enumerate(node.cases):
            at = case.body[0].lineno
            case.body[:0] = [_probe_line(line, case.body[0], at) for line in lines[: index + 1]]
        last = node.cases[-1]
        if not _irrefutable(last):
            anything = ast.MatchAs(pattern=None, name=None)
            ast.copy_location(anything, last.pattern)
            at = last.pattern.lineno
            body: list[ast.stmt] = [_probe_line(line, last.pattern, at) for line in lines]
            node.cases.append(ast.match_case(pattern=anything, guard=None, body=body))

    def _probed(self, owner: ast.AST, field: str, block: list[ast.stmt]) -> list[ast.stmt]:
        keep = 0
        if field == "body" and _has_docstring(owner, block):
            keep = 1
        if isinstance(owner, ast.Module):
            while keep < len(block) and _is_future_import(block[keep]):
                keep += 1
        # Statements that must stay first, and ``global``/``nonlocal`` (no code of their own),
        # are recorded by probes placed on the line of the next statement that runs: a probe
        # on a line of its own would add a line event a debugger or tracing tool would see.
        out: list[ast.stmt] = list(block[:keep])
        pending = [stmt.lineno for stmt in block[:keep]]
        for stmt in block[keep:]:
            if isinstance(stmt, (ast.Global, ast.Nonlocal)):
                pending.append(stmt.lineno)
                out.append(stmt)
                continue
            at = _first_line(stmt)
            out.extend(_probe_line(line, stmt, at) for line in pending)
            pending = []
            out.extend(_probes(stmt, at))
            out.append(stmt)
        if pending:
            out.extend(_probe_line(line, block[-1], block[-1].lineno) for line in pending)
        return out


def _first_line(stmt: ast.stmt) -> int:
    """The line of a statement's first line event: its first decorator's, or, when its first
    evaluated expression starts on a later row (``x = (`` then a call), that row."""
    decorators: list[Any] = getattr(stmt, "decorator_list", [])
    if decorators:
        return min([stmt.lineno, *(int(d.lineno) for d in decorators)])
    value = None
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Return, ast.Expr)):
        value = stmt.value
    elif isinstance(stmt, (ast.If, ast.While)):
        value = stmt.test
    if value is None or getattr(stmt, "end_lineno", stmt.lineno) == stmt.lineno:
        return stmt.lineno
    return max(stmt.lineno, _leaf_line(value))


def _leaf_line(node: ast.expr) -> int:
    """The row of the first instruction ``node`` compiles to; its own row when unsure."""
    first: ast.expr | None = None
    if isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)):
        first = node.func if isinstance(node, ast.Call) else node.value
    elif isinstance(node, (ast.BinOp, ast.Compare)):
        first = node.left
    elif isinstance(node, ast.BoolOp):
        first = node.values[0]
    elif isinstance(node, ast.JoinedStr) and node.values:
        head = node.values[0]
        first = head.value if isinstance(head, ast.FormattedValue) else None
    elif isinstance(node, (ast.Tuple, ast.List)) and node.elts:
        if not all(isinstance(e, ast.Constant) for e in node.elts):
            first = node.elts[0] if not isinstance(node.elts[0], ast.Starred) else None
    elif isinstance(node, ast.Dict) and node.keys and node.keys[0] is not None:
        constant_keys = all(isinstance(k, ast.Constant) for k in node.keys)
        first = node.values[0] if constant_keys and len(node.keys) > 1 else node.keys[0]
    if first is None:
        return node.lineno
    return _leaf_line(first)


def _probes(stmt: ast.stmt, at: int | None = None) -> list[ast.stmt]:
    """The probe statement before ``stmt``; a decorated definition's go into its decorators.

    Each decorator records its own line as it is evaluated, and the last one the ``def`` (or
    ``class``) line too, from the decorator's own line: a probe statement of its own on the
    decorator or ``def`` line would add line events a debugger or a tracing tool would see
    (the interpreter reports those lines once the decorators are evaluated, not before).
    """
    decorators: list[Any] = getattr(stmt, "decorator_list", [])
    if not decorators:
        return [_probe_line(stmt.lineno, stmt, stmt.lineno if at is None else at)]
    for index, decorator in enumerate(decorators):
        lines = [decorator.lineno]
        if index == len(decorators) - 1 and stmt.lineno != decorator.lineno:
            lines.append(stmt.lineno)
        calls: list[ast.expr] = [_probe_call(line, decorator) for line in lines]
        pair = ast.Tuple(elts=[*calls, decorator], ctx=ast.Load())
        last = ast.Subscript(value=pair, slice=ast.Constant(len(calls)), ctx=ast.Load())
        for added in (pair, last, last.slice):
            ast.copy_location(added, decorator)
        decorators[index] = last
    return []


def _probe_line(line: int, where: ast.AST, at: int | None = None) -> ast.stmt:
    probe = ast.Expr(value=_probe_call(line, where, line if at is None else at))
    ast.copy_location(probe, probe.value)
    return probe


def _probe_call(line: int, where: ast.AST, at: int | None = None) -> ast.expr:
    """``__confgate_probe__(line)``, placed at ``at`` (default: where ``where`` starts)."""
    call = ast.Call(func=ast.Name(id=PROBE, ctx=ast.Load()), args=[ast.Constant(line)], keywords=[])
    row = at if at is not None else getattr(where, "lineno", line)
    column = getattr(where, "col_offset", 0)
    for node in ast.walk(call):
        # Zero width on its own line: a statement that ends left of where it starts
        # (`return f"""...` over several lines) must not lend the probe an inverted range.
        node.lineno = node.end_lineno = row  # type: ignore[attr-defined]
        node.col_offset = node.end_col_offset = column  # type: ignore[attr-defined]
    return call


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

"""Line coverage of a few changed files without any tracer (pull-request mode, SPEC 11).

Any tracer, even one that ignores every frame, makes a suite ~1.3x slower on Python 3.11,
because the interpreter calls it for every function call of every module. So in pull-request
mode the changed modules are instead compiled with a probe before each statement
(``__confgate_probe__(LINE)``, a ``set.add``) and the rest of the program runs untouched.

Only which lines ran is recorded here. Which lines are statements, exclusions
(``# pragma: no cover``) and the figures stay coverage.py's: the lines are handed to a
``CoverageData`` and coverage.py's own reporting analyses them, so a line on a statement's
second row or a decorator maps to the statement exactly as it does for coverage.py's tracer.

A changed module that was imported before the probes were installed cannot be instrumented;
``missed_modules`` names them so the caller can trace with coverage.py instead.
"""

from __future__ import annotations

import ast
import importlib.machinery
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

PROBE = "__confgate_probe__"
VALUE_PROBE = "__confgate_probe_value__"
"""Records a line and returns its argument: marks an ``except`` clause as tested."""


class LineProbes:
    """Records executed lines of ``files`` through an import hook; ``install`` / ``uninstall``."""

    def __init__(self, files: Sequence[Path]) -> None:
        self.hits: dict[str, set[int]] = {os.path.realpath(f): set() for f in files}
        self._finder = _ProbeFinder(self.hits)

    def missed_modules(self) -> list[str]:
        """Changed files already imported: instrumenting them now would miss their lines."""
        loaded = []
        for module in list(sys.modules.values()):
            origin = getattr(getattr(module, "__spec__", None), "origin", None)
            if isinstance(origin, str) and os.path.realpath(origin) in self.hits:
                loaded.append(origin)
        return sorted(loaded)

    def install(self) -> None:
        if self._finder not in sys.meta_path:
            sys.meta_path.insert(0, self._finder)

    def uninstall(self) -> None:
        """Stop instrumenting new imports; modules already loaded keep recording."""
        if self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)

    def lines(self) -> dict[str, list[int]]:
        """Executed lines per file (real paths), for ``CoverageData.add_lines``."""
        return {path: sorted(lines) for path, lines in self.hits.items() if lines}


class _ProbeFinder:
    """A meta-path finder that hands the changed files to ``_ProbeLoader``.

    It asks the finders behind it (so editable installs and namespace packages resolve as
    usual), and only for module names that could be one of the changed files: every other
    import costs one set lookup.
    """

    def __init__(self, hits: dict[str, set[int]]) -> None:
        self.hits = hits
        self.names = {_module_name(path) for path in hits}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.rpartition(".")[2] not in self.names:
            return None
        spec = self._others(fullname, path, target)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return None  # let the normal finders answer, as if we were not here
        origin = spec.origin
        if origin is None or os.path.realpath(origin) not in self.hits:
            return None
        spec.loader = _ProbeLoader(fullname, origin, self.hits[os.path.realpath(origin)])
        return spec

    def _others(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None
    ) -> importlib.machinery.ModuleSpec | None:
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec: importlib.machinery.ModuleSpec | None = find(fullname, path, target)
            if spec is not None:
                return spec
        return None


def _module_name(path: str) -> str:
    stem = Path(path).stem
    return Path(path).parent.name if stem == "__init__" else stem


class _ProbeLoader(importlib.machinery.SourceFileLoader):
    """Compiles the module with probes; never reads or writes a ``.pyc`` for it."""

    def __init__(self, fullname: str, path: str, hits: set[int]) -> None:
        super().__init__(fullname, path)
        self._hits = hits

    def get_code(self, fullname: str) -> CodeType:
        source = self.get_data(self.path)
        tree = ast.parse(source, filename=self.path)
        tree = instrument(tree)
        code: CodeType = compile(tree, self.path, "exec", dont_inherit=True)
        return code

    def exec_module(self, module: ModuleType) -> None:
        hits = self._hits

        def value_probe(line: int, value: object) -> object:
            hits.add(line)
            return value

        module.__dict__[PROBE] = hits.add
        module.__dict__[VALUE_PROBE] = value_probe
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
    return ast.fix_missing_locations(tree)


class _ProbeInserter(ast.NodeVisitor):
    def generic_visit(self, node: ast.AST) -> None:
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, field, self._probed(node, field, block))
        super().generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self.generic_visit(node)
        if node.type is None:  # a bare ``except:`` always matches once reached
            node.body.insert(0, _probe_line(node.lineno, node))
        else:
            call = ast.Call(
                func=ast.Name(id=VALUE_PROBE, ctx=ast.Load()),
                args=[ast.Constant(node.lineno), node.type],
                keywords=[],
            )
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
    for node in ast.walk(probe):
        ast.copy_location(node, where)
        node.lineno = node.end_lineno = line  # type: ignore[attr-defined]
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

"""How branch probes are written into a module's tree (``branch_probes`` decides where).

Each probe is the line probes' own call, ``__confgate_probe__(KEY)``, with a negative ``KEY``
encoding an arc (``arc_key``), so the line probes' recording, caching and de-instrumenting
carry arcs unchanged; ``arcs_of`` turns what was recorded back into coverage.py's arcs. Every
node added has a zero-width location on an existing row: no line number moves.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

EXC_INFO = "__confgate_exc_info__"
"""``sys.exc_info`` in the measured module's globals, for the exit probes."""
FRAME = "__confgate_frame__"
"""``sys._getframe`` there too: is the exception in flight this frame's own?"""
_SHIFT = 22
_OFFSET = 1 << (_SHIFT - 1)
Rows = tuple[int, int]


class Unmappable(Exception):
    """The file's arcs cannot all be tied to edges: measure it with the tracer."""


def arc_key(source: int, dest: int) -> int:
    """The probe value recording ``(source, dest)``: negative, never a line number."""
    if not 0 < source < (1 << 40) or not -_OFFSET < dest < _OFFSET:
        raise Unmappable(f"line numbers out of range: {source} -> {dest}")
    return -((source << _SHIFT) | (dest + _OFFSET))


def key_arc(key: int) -> tuple[int, int]:
    """The arc ``arc_key`` encoded in ``key``."""
    value = -key
    return value >> _SHIFT, (value & ((1 << _SHIFT) - 1)) - _OFFSET


def arcs_of(hits: dict[str, set[int]]) -> dict[str, list[tuple[int, int]]]:
    """Recorded probe values as arcs: a line ``L`` as ``(L, L)`` (coverage.py counts it as
    executed and never as a branch taken), an arc key as its arc."""
    return {
        path: sorted({(v, v) if v > 0 else key_arc(v) for v in values})
        for path, values in hits.items()
        if values
    }


@dataclass
class Construct:
    """One syntax node that can be a branch line, and its edges."""

    node: ast.AST
    source: int
    body: int | None
    """Where entering the body leads (None: the body has no statement)."""
    other: int | None
    """Where the ``else`` / the next case starts (None: the construct falls through)."""
    falls: bool
    """Whether it can leave without entering its body or ``else``."""
    kind: str = "block"
    """``block`` (if, loops), ``case``, or ``definition`` (a one-line def or class)."""
    statement: ast.AST | None = None
    """What the exit wrapper goes around (a case's ``match``; else the node)."""
    suspends: bool = False
    problem: str = ""
    fallthrough: int | None = None
    reraise_line: int | None = None
    """For an exit falling off a ``finally``: where its exception copy goes instead
    (``branch_finally``)."""


@dataclass
class Plan:
    """The probes of one module, applied once the line probes are in: ``apply``."""

    edges: list[tuple[Construct, str, int]] = field(default_factory=list)
    """(construct, ``body`` or ``else``, key)."""
    matches: list[tuple[ast.Match, int]] = field(default_factory=list)
    """Each ``match`` and how many cases it had before the line probes added one."""
    wraps: dict[int, tuple[Rows, int]] = field(default_factory=dict)
    """id(statement) -> (the branch line's rows, its exit's key): exits taken by raising."""
    after: dict[int, int] = field(default_factory=dict)
    """id(one-line definition) -> the key of its arc to what follows."""
    cases: dict[int, tuple[list[int], list[int], list[int]]] = field(default_factory=dict)
    """id(case) -> keys of (entering its body, passing to the next case, falling through)."""
    finally_ends: list[tuple[ast.Try | ast.If, int, int]] = field(default_factory=list)
    """(try, key, row): the arc the exception copy of its ``finally`` records at its end; an
    ``if`` instead of the try: at the end of that ``if``'s body (``own_line_reraises``)."""

    def add(self, item: Construct, line: int) -> None:
        def keys(dest: int | None) -> list[int]:
            return [] if dest is None else [arc_key(line, dest)]

        other = item.other if item.other is not None else item.fallthrough
        if item.kind == "case":
            self.cases[id(item.node)] = (keys(item.body), keys(item.other),
                                         keys(item.fallthrough))
            return
        if item.reraise_line == other:  # the exception copy records the same arc
            item.reraise_line = None
        self.edges.extend((item, "body", key) for key in keys(item.body))
        if item.kind == "definition":
            self.after[id(item.node)] = keys(other)[0]
        else:
            self.edges.extend((item, "else", key) for key in keys(other))

    def apply(self, tree: ast.Module) -> None:
        for item, edge, key in self.edges:
            node: Any = item.node
            if edge == "body":
                body = node.body
                at = 1 if item.kind == "definition" and _docstring(body[0]) else 0
                body.insert(at, _probe(key, body[min(at, len(body) - 1)]))
            elif node.orelse:
                node.orelse.insert(0, _probe(key, node.orelse[0]))
            elif item.reraise_line is not None:
                raising = _probe(arc_key(item.source, item.reraise_line), node, item.source)
                normal = _probe(key, node, item.source)
                node.orelse.append(_when_raising(raising, normal, node, item.source))
            else:
                node.orelse.append(_probe(key, node, item.source))
        for end, key, row in self.finally_ends:
            block = end.finalbody if isinstance(end, ast.Try) else end.body
            block.append(_when_raising(_probe(key, end, row), None, end, row))
        for match, count in self.matches:
            passed: list[int] = []
            for case in match.cases[:count]:
                enter, step, out = self.cases.get(id(case), ([], [], []))
                case.body[:0] = [_probe(k, case.body[0]) for k in [*passed, *enter]]
                passed += step
            for case in match.cases[count:]:  # the no-op ``case _`` the line probes added
                case.body[:0] = [_probe(k, case.pattern) for k in [*passed, *out]]
        if self.wraps or self.after:
            _Blocks(self.wraps, self.after).visit(tree)


def _docstring(stmt: ast.stmt) -> bool:
    value = getattr(stmt, "value", None)
    return isinstance(stmt, ast.Expr) and isinstance(value, ast.Constant) \
        and isinstance(value.value, str)


def _probe(key: int, where: ast.AST, line: int | None = None) -> ast.stmt:
    from pytest_confgate.collect.coverage.probe_import import PROBE

    call = ast.Call(func=ast.Name(id=PROBE, ctx=ast.Load()), args=[ast.Constant(key)],
                    keywords=[])
    probe = ast.Expr(value=call)
    _place(probe, where, line)
    return probe


def _place(node: ast.AST, where: ast.AST, line: int | None = None) -> None:
    """Zero-width locations on ``where``'s first row (``line`` if given): nothing moves."""
    row = line if line is not None else getattr(where, "lineno", 1)
    column = getattr(where, "col_offset", 0)
    for child in ast.walk(node):
        if "lineno" in child._attributes:
            child.lineno = child.end_lineno = row  # type: ignore[attr-defined]
            child.col_offset = child.end_col_offset = column  # type: ignore[attr-defined]


class _Blocks:
    """Wraps statements whose branch line an exception can leave by its exit, and puts the
    probe after each one-line definition (statement blocks only: expressions hold none)."""

    def __init__(self, wraps: dict[int, tuple[Rows, int]], after: dict[int, int]) -> None:
        self._wraps = wraps
        self._after = after

    def visit(self, node: ast.AST) -> None:
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                self._block(block)
        for part in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
            self._block(part.body)

    def _block(self, block: list[ast.stmt]) -> None:
        out: list[ast.stmt] = []
        for child in block:
            self.visit(child)
            wrap = self._wraps.get(id(child))
            out.append(_wrapped(child, *wrap) if wrap is not None else child)
            if id(child) in self._after:
                out.append(_probe(self._after[id(child)], child))
        block[:] = out


def _wrapped(stmt: ast.stmt, rows: Rows, key: int) -> ast.stmt:
    """``try: stmt`` / ``except BaseException:`` record ``key`` if the traceback's line is in
    ``rows``, then a bare ``raise`` (the traceback stays the exception's own)."""
    info = ast.Call(func=ast.Name(id=EXC_INFO, ctx=ast.Load()), args=[], keywords=[])
    where = ast.Attribute(value=ast.Subscript(value=info, slice=ast.Constant(2), ctx=ast.Load()),
                          attr="tb_lineno", ctx=ast.Load())
    test = ast.Compare(left=ast.Constant(rows[0]), ops=[ast.LtE(), ast.LtE()],
                       comparators=[where, ast.Constant(rows[1])])
    record = ast.If(test=test, body=[_probe(key, stmt)], orelse=[])
    handler = ast.ExceptHandler(type=ast.Name(id="BaseException", ctx=ast.Load()), name=None,
                                body=[record, ast.Raise(exc=None, cause=None)])
    _place(handler, stmt)
    wrapper = ast.Try(body=[stmt], handlers=[handler], orelse=[], finalbody=[])
    ast.copy_location(wrapper, stmt)
    return wrapper


def _when_raising(raising: ast.stmt, normal: ast.stmt | None, where: ast.AST,
                  line: int) -> ast.stmt:
    """``raising`` if this frame's own exception is on its way out (the ``finally`` runs
    for it), else ``normal``."""
    info = ast.Call(func=ast.Name(id=EXC_INFO, ctx=ast.Load()), args=[], keywords=[])
    traceback = ast.Subscript(value=info, slice=ast.Constant(2), ctx=ast.Load())
    again = ast.Subscript(value=ast.Call(func=ast.Name(id=EXC_INFO, ctx=ast.Load()), args=[],
                                         keywords=[]), slice=ast.Constant(2), ctx=ast.Load())
    frame = ast.Call(func=ast.Name(id=FRAME, ctx=ast.Load()), args=[], keywords=[])
    own = ast.Compare(left=ast.Attribute(value=again, attr="tb_frame", ctx=ast.Load()),
                      ops=[ast.Is()], comparators=[frame])
    present = ast.Compare(left=traceback, ops=[ast.IsNot()], comparators=[ast.Constant(None)])
    test = ast.BoolOp(op=ast.And(), values=[present, own])
    choice = ast.If(test=test, body=[raising], orelse=[] if normal is None else [normal])
    _place(choice, where, line)
    return choice

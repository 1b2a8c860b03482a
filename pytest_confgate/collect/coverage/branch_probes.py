"""Branch coverage without a tracer (issue 26): arc probes on the edges of each branch.

coverage.py measures a branch line by the arcs its tracer sees leave it: (line, next line
run). Its own static analysis (``coverage.parser``) says which lines are branches and where
each can go. Here every such arc gets a probe on the edge of the syntax tree that takes it,
so the probe runs exactly when the tracer would have recorded the arc:

- into a body (``if``, ``while``, ``for``, a ``case``, a one-line ``def``): first in it;
- into an ``else`` (or ``elif``): first in it;
- out of an ``if`` or loop without ``else``: an added ``else:`` holding only the probe;
- past a ``case`` that did not match: first in each later case (and in the no-op ``case _``
  the line probes add), as the line probes mark the pattern lines;
- past a one-line ``def``/``class``: right after it;
- where an exception raised on the branch line is also seen by the tracer as that exit (the
  frame's exit, a ``finally``, a ``with``'s exit): an ``except BaseException`` around the
  statement records it when the traceback's line is the branch line, then re-raises as is.

A probe is the line probes' own call, ``__confgate_probe__(KEY)``, with a negative ``KEY``
encoding the arc, so their recording, caching and de-instrumenting carry arcs unchanged. Where
an arc cannot be tied to one edge with certainty (a body on the branch line itself, a line
both a branch and something else, an ``await`` on a branch line that may leave the frame, a
coverage.py whose internals moved), ``plan`` raises ``Unmappable`` and the caller measures
that file with coverage.py's tracer: a figure is coverage.py's or none.
"""

from __future__ import annotations

import ast
import hashlib
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pytest_confgate.collect import cache_trust
from pytest_confgate.collect.coverage.aexit import aexit_on_a_raise
from pytest_confgate.collect.coverage.analysis import ANALYSES, parsed
from pytest_confgate.collect.coverage.branch_edits import (
    EXC_INFO,
    FRAME,
    Construct,
    Plan,
    Rows,
    Unmappable,
    arc_key,
    arcs_of,
    key_arc,
)
from pytest_confgate.collect.coverage.branch_finally import (
    exception_exit,
    leave_finally,
    own_line_reraises,
    tails,
)

FORMAT = 4
"""Bumped whenever the placement of branch probes changes (it keys the probe cache)."""
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SCOPES = (*_DEFINITIONS, ast.Lambda)


class Analysis:
    """coverage.py's view of one file: its arcs, exclusions, and how it numbers a node."""

    def __init__(
        self, text: str, path: str, exclude: str | None, keep: Path | None = None
    ) -> None:
        try:
            from coverage.parser import AstArcAnalyzer

            parser = parsed(text, path, exclude, keep)
            arcs = parser.arcs()
            fixed = getattr(parser, "_with_jump_fixers", {}).values()
            numbering = AstArcAnalyzer(path, ast.Module(body=[], type_ignores=[]),
                                       parser.raw_statements, parser.multiline_map)
        except Exception as exc:  # a coverage.py whose internals moved: trace the file
            raise Unmappable(f"coverage.py's analysis failed: {type(exc).__name__}") from exc
        self._line = numbering.line_for_node
        self.statements: set[int] = set(numbering.statements)
        self.excluded: set[int] = set(parser.excluded)
        self.multiline: dict[int, int] = dict(parser.multiline_map)
        self.with_fixed = {arc for arc in fixed if arc is not None}
        """Arcs coverage.py rewrites to leave a ``with`` (its tracer sees the ``with`` line)."""
        exits: dict[int, set[int]] = defaultdict(set)
        for src, dst in arcs:
            if src not in self.excluded and dst not in self.excluded:
                exits[src].add(dst)
        self.branches = {src: dests for src, dests in exits.items() if len(dests) > 1}

    def line(self, node: ast.AST) -> int:
        found: int = self._line(node)
        return found

    def first(self, body: list[ast.stmt]) -> int | None:
        """Where a block leads: its first statement coverage.py counts (``process_body``)."""
        for node in body:
            line = self.line(node)
            if line in self.statements:
                return line
        return None

    def rows(self, line: int) -> Rows:
        """The rows of the statement starting at ``line`` (a test over several lines)."""
        rows = [row for row, first in self.multiline.items() if first == line]
        return min([*rows, line]), max([*rows, line])


def plan(
    tree: ast.Module, text: str, path: str, exclude: str | None, keep: Path | None = None
) -> Plan:
    """Where to record each arc of ``tree``'s branch lines; ``Unmappable`` if uncertain.

    ``tree`` is the module as it will be compiled, before the line probes; ``text`` its
    source as coverage.py reads it; ``exclude`` coverage.py's exclusion regex; ``keep`` where
    coverage.py's analysis is kept for the report (``analysis``).
    """
    seen = Analysis(text, path, exclude, keep)
    found = Plan()
    by_line: dict[int, list[Construct]] = defaultdict(list)
    statements = list(_statements(tree.body))
    ends = tails(statements)
    own = own_line_reraises(ends, text, path) if sys.version_info[:2] == (3, 11) \
        else frozenset()
    for node in statements:
        for item in _constructs(node, seen, found):
            if item.source not in seen.excluded:
                by_line[item.source].append(item)
    chains, starts = _chains(tree, seen)
    for line, dests in seen.branches.items():
        here = by_line.get(line, [])
        if len(here) != 1:
            raise Unmappable(f"line {line}: a branch that no probe can place")
        item = here[0]
        if item.problem:
            raise Unmappable(f"line {line}: {item.problem}")
        _settle(item, dests, line)
        statement = item.statement or item.node
        exits = (starts[id(statement)], seen.line)
        leave_finally(item, chains[id(statement)], line, ends, exits, own)
        found.add(item, line)
        if item.fallthrough is not None and _raise_exits(item, chains[id(statement)], seen, line):
            if id(statement) in found.wraps:
                raise Unmappable(f"line {line}: two exits to watch on one statement")
            found.wraps[id(statement)] = (seen.rows(line), arc_key(line, item.fallthrough))
    for tail in ends.values():
        if tail.reraise is None:  # the re-raise reports the line that ran last
            continue
        goes = exception_exit(chains[id(tail.node)], starts[id(tail.node)], seen.line)
        if goes is None or (sys.version_info[:2] != (3, 11) and goes != -starts[id(tail.node)]):
            raise Unmappable(f"line {tail.reraise}: a finally block ending in a block, "
                             "inside a block that handles exceptions")
        last = tail.node.finalbody[-1]
        # Where the false side re-raises on the ``if`` line, only the body ends at ``R``.
        ending = last if isinstance(last, ast.If) and last.lineno in own else tail.node
        found.finally_ends.append((ending, arc_key(tail.reraise, goes), tail.reraise))
    return found


def _constructs(node: ast.AST, seen: Analysis, found: Plan) -> list[Construct]:
    from coverage.parser import _case_is_irrefutable, is_constant_test_expr

    if isinstance(node, (ast.If, ast.While)):
        constant, value = is_constant_test_expr(node.test)
        body, other = seen.first(node.body), seen.first(node.orelse)
        if isinstance(node, ast.If) and constant:
            body, other = (body, None) if value else (None, other)
        falls = not node.orelse and not (constant and (value or isinstance(node, ast.While)))
        return [Construct(node, seen.line(node.test), body, other, falls,
                           suspends=_suspends(node.test))]
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return [Construct(node, seen.line(node.iter), seen.first(node.body),
                           seen.first(node.orelse), not node.orelse,
                           suspends=isinstance(node, ast.AsyncFor) or _suspends(node.iter))]
    if isinstance(node, _DEFINITIONS):
        line = seen.multiline.get(node.lineno, node.lineno)
        if seen.line(node.body[0]) != line:
            return []
        # One line runs the body (and leaves the frame from it) and goes on to what follows.
        return [Construct(node, line, -seen.line(node), None, True, kind="definition")]
    if not isinstance(node, ast.Match):
        return []
    found.matches.append((node, len(node.cases)))
    lines = [seen.line(case.pattern) for case in node.cases]
    out = []
    for index, case in enumerate(node.cases):
        parts: list[Any] = [case.pattern, *([case.guard] if case.guard is not None else [])]
        rows = {row for part in parts for row in (part.lineno, part.end_lineno)}
        last = index == len(node.cases) - 1
        out.append(Construct(
            case, lines[index], seen.first(case.body), None if last else lines[index + 1],
            last and not _case_is_irrefutable(case), kind="case", statement=node,
            suspends=any(_suspends(part) for part in (case.pattern, case.guard) if part),
            problem="a case spread over several lines" if len(rows) > 1 else "",
        ))
    return out


def _settle(item: Construct, dests: set[int], line: int) -> None:
    """Tie each of coverage.py's exits ``dests`` from ``line`` to one edge of ``item``."""
    known = [d for d in (item.body, item.other) if d is not None]
    rest = dests - set(known)
    if line in known or len(set(known)) != len(known) or not set(known) <= dests:
        rest = {0, 1}  # not the syntax's own exits: refused below
    if item.falls and len(rest) == 1:
        item.fallthrough = rest.pop()
    elif rest or item.falls:
        raise Unmappable(f"line {line}: its exits {sorted(dests)} do not match the syntax")
    if item.suspends and item.fallthrough is not None and item.fallthrough < 0:
        raise Unmappable(f"line {line}: it may suspend (await, yield) where it may exit")


def _statements(block: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement under ``block``, blocks only: expressions hold none."""
    for stmt in block:
        yield stmt
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, name, None)
            if isinstance(inner, list):
                yield from _statements(inner)
        for part in (*getattr(stmt, "handlers", ()), *getattr(stmt, "cases", ())):
            yield from _statements(part.body)


def _raise_exits(item: Construct, chain: list[tuple[ast.AST, str]], seen: Analysis,
                 line: int) -> bool:
    """Whether coverage.py's tracer takes an exception raised on ``line`` for its fall-through
    arc: it records the arc from there to the next line it sees run, which is a handler, a
    ``finally``, the ``with`` line (mapped to where the ``with`` leads), or the frame's exit.
    """
    fall = item.fallthrough
    counts = fall is not None and fall < 0
    for outer, part in reversed(chain):
        if isinstance(outer, ast.Try) or type(outer).__name__ == "TryStar":
            if part == "body" and outer.handlers:  # type: ignore[attr-defined]
                return False
            final = outer.finalbody  # type: ignore[attr-defined]
            if part != "finalbody" and final:
                return fall == seen.first(final)
        elif isinstance(outer, (ast.With, ast.AsyncWith)):
            return (line, fall) in seen.with_fixed
    return counts


def _chains(tree: ast.Module, seen: Analysis) -> tuple[dict[int, list[tuple[ast.AST, str]]],
                                                     dict[int, int]]:
    """For each statement, the (statement, field) pairs enclosing it inside its own scope,
    and the line coverage.py numbers that scope by (its exits are arcs to minus that line)."""
    out: dict[int, list[tuple[ast.AST, str]]] = {}
    starts: dict[int, int] = {}

    def block(statements: list[ast.stmt], chain: list[tuple[ast.AST, str]], start: int) -> None:
        for stmt in statements:
            out[id(stmt)] = chain
            starts[id(stmt)] = start
            if isinstance(stmt, _DEFINITIONS):  # a scope of its own
                block(stmt.body, [], seen.line(stmt))
                continue
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, name, None)
                if isinstance(inner, list):
                    block(inner, [*chain, (stmt, name)], start)
            for part in (*getattr(stmt, "handlers", []), *getattr(stmt, "cases", [])):
                block(part.body, [*chain, (stmt, "handlers")], start)

    block(tree.body, [], seen.line(tree))
    return out, starts


def _suspends(node: ast.AST) -> bool:
    """Whether evaluating ``node`` may suspend this frame (await, yield)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (ast.Await, ast.Yield, ast.YieldFrom)):
            return True
        comprehension = (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)
        if isinstance(current, comprehension) and any(g.is_async for g in current.generators):
            return True
        stack.extend(c for c in ast.iter_child_nodes(current) if not isinstance(c, _SCOPES))
    return False


def analysis_text(source: bytes) -> str:
    """``source`` as coverage.py reads a Python file (``coverage.python.get_python_source``)."""
    from coverage.phystokens import source_encoding

    data = source.replace(b"\f", b" ")
    text = data.decode(source_encoding(data), "replace")
    return text if not text or text.endswith("\n") else text + "\n"


class BranchProbes:
    """Branch probes under one coverage.py configuration (its exclusion regex).

    A file refused once is remembered under ``cache_dir`` (by its source's hash), so a warm
    run does not analyse it again only to refuse it again.
    """

    def __init__(self, exclude: str | None, cache_dir: Path | None = None) -> None:
        self.exclude = exclude
        self.variant = f"branch:{FORMAT}:{exclude or ''}"
        """Tells cached probed code apart from line-only code and other exclusions."""
        self._refused = cache_dir / "branch-refused" if cache_dir is not None else None
        self._analyses = cache_dir / ANALYSES if cache_dir is not None else None

    def plan(self, tree: ast.Module, source: bytes, path: str) -> Plan:
        note = self._note(source, path)
        known = cache_trust.read_bytes(note) if note is not None else None
        if known is not None:
            raise Unmappable(known.decode("utf-8", errors="replace"))
        try:
            line = aexit_on_a_raise(tree) if b"async" in source else None
            if line is not None:
                raise Unmappable(f"line {line}: an async with whose exit Python 3.11 places "
                                 "on a raise")
            return plan(tree, analysis_text(source), path, self.exclude, self._analyses)
        except Unmappable as exc:
            if note is not None:  # a cache that cannot be written costs time
                cache_trust.write_bytes(note, str(exc).encode("utf-8"))
            raise

    def _note(self, source: bytes, path: str) -> Path | None:
        if self._refused is None:
            return None
        version = f"{sys.version}\0{self.variant}".encode()
        key = hashlib.sha256(b"\0".join([source, path.encode(), version])).hexdigest()
        return self._refused / f"{key}.txt"


__all__ = ["EXC_INFO", "FRAME", "BranchProbes", "Rows", "Unmappable", "arc_key", "arcs_of",
           "key_arc", "plan"]

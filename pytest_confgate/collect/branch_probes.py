"""Branch coverage without a tracer (issue 26): arc probes placed on the edges of each branch.

coverage.py measures a branch line by the arcs its tracer sees leave it: (line, next line run).
Its own static analysis (``coverage.parser``) says which lines are branches and where each can
go. Here each such arc gets a probe on the edge of the syntax tree that takes it, so the
probe runs exactly when the tracer would have recorded the arc:

- into a body (``if``, ``while``, ``for``, a ``case``): first thing in the body;
- into an ``else`` (or ``elif``): first thing in it;
- out of an ``if`` or loop without ``else``: an added ``else:`` holding only the probe;
- a ``case`` that did not match: the bodies of the later cases (and the no-op ``case _``
  the line probes add) record it, as the line probes do for the pattern lines;
- out of a function, class or module (coverage.py records the exit arc also when an
  exception leaves the frame from the branch line): an ``except BaseException`` around the
  statement records it when the traceback's line is the branch line, then re-raises as is.

A probe is ``__confgate_probe__(KEY)``, the line probes' own call, with a negative ``KEY``
that encodes the arc: the line probes' recording, caching and de-instrumenting carry arcs
unchanged. Where an arc cannot be tied to one edge with certainty (a body on the branch
line itself, an exit that an enclosing ``try`` or ``with`` could divert, an ``await`` on a
branch line that exits the function...), ``plan`` raises ``Unmappable`` and the caller
measures that file with coverage.py's tracer instead: a figure is coverage.py's or none.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass, field

FORMAT = 1
"""Bumped whenever the placement of branch probes changes (it keys the probe cache)."""
_SHIFT = 22
_OFFSET = 1 << (_SHIFT - 1)
EXC_INFO = "__confgate_exc_info__"
"""``sys.exc_info`` in the measured module's globals, for the exit probes."""


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


@dataclass
class _Construct:
    node: ast.AST
    source: int
    lines: tuple[int, int]
    body: int | None
    """Where the body starts (None: no statement in it)."""
    other: int | None
    """Where the ``else`` / next case starts; None: falls through (to be inferred)."""
    exits: bool
    """Whether the construct can leave without entering its body or ``else``."""
    has_else: bool = False
    problem: str = ""
    """Why its arcs cannot be placed, should its line be a branch."""
    statement: ast.AST | None = None
    """The statement holding it (a case's ``match``), wrapped to see exceptions leave."""
    fallthrough: int | None = None
    probes: dict[str, list[int]] = field(default_factory=dict)


class Analysis:
    """coverage.py's view of one file: its arcs, exclusions, and how it numbers a node."""

    def __init__(self, text: str, path: str, exclude: str | None) -> None:
        try:
            from coverage.parser import AstArcAnalyzer, PythonParser

            parser = PythonParser(text=text, filename=path, exclude=exclude)
            parser.parse_source()
            arcs = parser.arcs()
            fixed = set(getattr(parser, "_with_jump_fixers", {}).values())
            self._lines = AstArcAnalyzer(path, ast.parse("", path), parser.raw_statements,
                                         parser.multiline_map).line_for_node
        except Exception as exc:  # a coverage.py whose internals moved: trace the file
            raise Unmappable(f"coverage.py's analysis failed: {type(exc).__name__}") from exc
        self.excluded: set[int] = set(parser.excluded)
        self.with_fixed = {arc for arc in fixed if arc is not None}
        """Arcs coverage.py rewrites to leave a ``with`` (its tracer sees the ``with`` line)."""
        self.multiline: dict[int, int] = dict(parser.multiline_map)
        exits: dict[int, set[int]] = defaultdict(set)
        for src, dst in arcs:
            if src not in self.excluded and dst not in self.excluded:
                exits[src].add(dst)
        self.branches = {src: dests for src, dests in exits.items() if len(dests) > 1}

    def line(self, node: ast.AST) -> int:
        found: int = self._lines(node)
        return found

    def span(self, line: int) -> tuple[int, int]:
        """The rows of the statement starting at ``line`` (a multi-line test)."""
        rows = [row for row, first in self.multiline.items() if first == line] or [line]
        return min(rows + [line]), max(rows + [line])


class Plan:
    """The probes of one module, applied once the line probes are in: ``apply``."""

    def __init__(self, constructs: list[_Construct], matches: list[tuple[ast.Match, int]],
                 wraps: dict[int, tuple[tuple[int, int], int]]) -> None:
        self._constructs = constructs
        self._matches = matches
        self._wraps = wraps
        self._after: dict[int, int] = {}
        """id(one-line definition) -> the key of its arc to the next statement."""
        """id(statement) -> (its rows, exit arc key): exits recorded from exceptions."""

    def apply(self, tree: ast.Module) -> None:
        for item in self._constructs:
            node = item.node
            if isinstance(node, ast.match_case):
                continue
            body = node.body  # type: ignore[attr-defined]
            at = 1 if "definition" in item.probes and _docstring(body[0]) else 0
            for key in item.probes.get("body", []):
                body.insert(at, _probe(key, body[min(at, len(body) - 1)]))
            if "definition" in item.probes:
                self._after.update({id(node): key for key in item.probes.get("other", [])})
                continue
            for key in item.probes.get("other", []):
                orelse = node.orelse  # type: ignore[attr-defined]
                if orelse:
                    orelse.insert(0, _probe(key, orelse[0]))
                else:
                    orelse.append(_probe(key, node, item.source))
        for match, count in self._matches:
            for case in match.cases[count:]:  # the no-op ``case _`` the line probes added
                keys = [k for c in match.cases[:count] for k in getattr(c, "_confgate_pass", [])]
                keys += getattr(match.cases[count - 1], "_confgate_out", [])
                case.body[:0] = [_probe(k, case.pattern, case.pattern.lineno) for k in keys]
            for index, case in enumerate(match.cases[:count]):
                keys = [k for c in match.cases[:index] for k in getattr(c, "_confgate_pass", [])]
                keys += getattr(case, "_confgate_in", [])
                case.body[:0] = [_probe(k, case.body[0]) for k in keys]
        if self._wraps or self._after:
            _Wrapper(self._wraps, self._after).visit(tree)


def plan(tree: ast.Module, text: str, path: str, exclude: str | None) -> Plan:
    """Where to record each arc of ``tree``'s branch lines; ``Unmappable`` if uncertain.

    ``tree`` is the module as it will be compiled (before the line probes); ``text`` its
    source as coverage.py reads it; ``exclude`` coverage.py's exclusion regex.
    """
    seen = Analysis(text, path, exclude)
    constructs: list[_Construct] = []
    matches: list[tuple[ast.Match, int]] = []
    scopes = _scopes(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.While, ast.For, ast.AsyncFor)):
            constructs.append(_loop_or_if(node, seen))
        elif isinstance(node, ast.Match):
            constructs.extend(_cases(node, seen))
            matches.append((node, len(node.cases)))
        elif isinstance(node, _DEFINITIONS):
            one_line = _one_line(node, seen)
            if one_line is not None:
                constructs.append(one_line)
    by_line: dict[int, list[_Construct]] = defaultdict(list)
    for item in constructs:
        if item.source not in seen.excluded:
            by_line[item.source].append(item)
    wraps: dict[int, tuple[tuple[int, int], int]] = {}
    for line, dests in seen.branches.items():
        found = by_line.get(line, [])
        if len(found) != 1:
            raise Unmappable(f"line {line}: a branch coverage.py sees that no probe can place")
        item = found[0]
        if item.problem:
            raise Unmappable(f"line {line}: {item.problem}")
        _settle(item, dests, line)
        statement = item.statement or item.node
        chain = scopes.get(id(statement), [])
        if item.fallthrough is not None and _check_exit(item, chain, seen, line):
            if id(statement) in wraps:
                raise Unmappable(f"line {line}: two exits to watch on one statement")
            wraps[id(statement)] = (seen.span(line), arc_key(line, item.fallthrough))
    return Plan(constructs, matches, wraps)


def _loop_or_if(node: ast.If | ast.While | ast.For | ast.AsyncFor, seen: Analysis) -> _Construct:
    from coverage.parser import is_constant_test_expr

    test = node.iter if isinstance(node, (ast.For, ast.AsyncFor)) else node.test
    source = seen.line(test)
    constant, value = (False, False)
    if not isinstance(node, (ast.For, ast.AsyncFor)):
        constant, value = is_constant_test_expr(node.test)
    body = _first(node.body, seen)
    other = _first(node.orelse, seen) if node.orelse else None
    if isinstance(node, ast.If):
        exits = not node.orelse and (not constant or not value)
        if constant:
            body = body if value else None
            other = other if not value else None
    else:
        exits = not node.orelse and not (isinstance(node, ast.While) and constant)
    item = _Construct(node, source, seen.span(source), body, other, exits,
                      has_else=bool(node.orelse))
    if isinstance(node, ast.AsyncFor) or _suspends(test):
        item.probes["suspends"] = []
    return item


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _one_line(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
              seen: Analysis) -> _Construct | None:
    """``def f(): return 1`` on one line: its line both runs the body and goes on.

    The body's arc is the frame's exit (``-first line``): its one line is the last to run
    whenever the body runs, so a probe first in the body records it; the arc to the next
    statement gets a probe after the definition.
    """
    line = seen.multiline.get(node.lineno, node.lineno)
    if seen.line(node.body[0]) != line or line in seen.excluded:
        return None
    item = _Construct(node, line, seen.span(line), -seen.line(node), None, True)
    item.probes["definition"] = []
    return item


def _cases(node: ast.Match, seen: Analysis) -> list[_Construct]:
    from coverage.parser import _case_is_irrefutable

    out = []
    lines = [seen.line(case.pattern) for case in node.cases]
    for index, case in enumerate(node.cases):
        guard_rows = {case.guard.lineno, case.guard.end_lineno} if case.guard else set()
        spread = guard_rows - {case.pattern.lineno} or case.pattern.end_lineno != case.pattern.lineno
        last = index == len(node.cases) - 1
        other = None if last else lines[index + 1]
        exits = last and not _case_is_irrefutable(case)
        item = _Construct(case, lines[index], (lines[index], lines[index]),  # type: ignore[arg-type]
                          _first(case.body, seen), other, exits, has_else=not last,
                          statement=node, problem="a case spread over several lines" if spread else "")
        if _suspends(case.pattern) or (case.guard is not None and _suspends(case.guard)):
            item.probes["suspends"] = []
        out.append(item)
    return out


def _settle(item: _Construct, dests: set[int], line: int) -> None:
    """Tie each of coverage.py's exits ``dests`` from ``line`` to one edge of ``item``."""
    known = [d for d in (item.body, item.other) if d is not None]
    if line in known or line in {-d for d in known if "definition" not in item.probes} \
            or len(set(known)) != len(known) or not set(known) <= dests:
        raise Unmappable(f"line {line}: its exits {sorted(dests)} do not match the syntax")
    rest = dests - set(known)
    if item.exits and len(rest) == 1:
        item.fallthrough = rest.pop()
    elif rest or item.exits:
        raise Unmappable(f"line {line}: its exits {sorted(dests)} do not match the syntax")
    if "suspends" in item.probes and item.fallthrough is not None and item.fallthrough < 0:
        raise Unmappable(f"line {line}: it can suspend (await/yield) where it may exit")
    if isinstance(item.node, ast.match_case):
        case = item.node
        case._confgate_in = [arc_key(line, item.body)] if item.body else []  # type: ignore[attr-defined]
        nxt = [arc_key(line, item.other)] if item.other is not None else []
        case._confgate_pass = nxt  # type: ignore[attr-defined]
        out = [arc_key(line, item.fallthrough)] if item.fallthrough is not None else []
        case._confgate_out = out  # type: ignore[attr-defined]
        return
    if item.body is not None:
        item.probes["body"] = [arc_key(line, item.body)]
    other = item.other if item.other is not None else item.fallthrough
    if other is not None:
        item.probes["other"] = [arc_key(line, other)]


def _check_exit(item: _Construct, chain: list[tuple[ast.AST, str]], seen: Analysis,
                line: int) -> bool:
    """Whether an exception raised on ``line`` counts as its fall-through arc for coverage.py
    (then it is recorded by a wrapper: True), or cannot (False); ``Unmappable`` if unsure.

    The tracer records the arc from the line that raised to the next line it sees run: a
    handler, a ``finally``, the ``with`` line (which coverage.py maps to where the ``with``
    leads) or the frame's exit.
    """
    fall = item.fallthrough
    assert fall is not None
    counts = fall < 0  # no handler, finally or with on the way: the frame's exit
    for outer, part in reversed(chain):
        if isinstance(outer, ast.Try) or type(outer).__name__ == "TryStar":
            if part == "body" and outer.handlers:  # type: ignore[attr-defined]
                counts = False
                break
            final = outer.finalbody  # type: ignore[attr-defined]
            if part != "finalbody" and final:
                counts = fall == seen.line(final[0])
                break
        elif isinstance(outer, (ast.With, ast.AsyncWith)):
            counts = (line, fall) in seen.with_fixed
            break
    return counts


def _scopes(tree: ast.Module) -> dict[int, list[tuple[ast.AST, str]]]:
    """For each statement, the (statement, field) pairs enclosing it within its scope."""
    out: dict[int, list[tuple[ast.AST, str]]] = {}
    scoped = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)

    def walk(node: ast.AST, chain: list[tuple[ast.AST, str]]) -> None:
        for name, value in ast.iter_fields(node):
            children = value if isinstance(value, list) else [value]
            for child in children:
                if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                    out[id(child)] = chain
                    if isinstance(child, scoped):
                        walk(child, [])
                    elif isinstance(child, ast.stmt):
                        walk_in(child, chain)
                    else:  # a handler or case: its body is the enclosing statement's part
                        walk(child, chain)

    def walk_in(stmt: ast.stmt, chain: list[tuple[ast.AST, str]]) -> None:
        for name, value in ast.iter_fields(stmt):
            if isinstance(value, list):
                for child in value:
                    if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                        sub = [*chain, (stmt, name)]
                        out[id(child)] = sub
                        if isinstance(child, scoped):
                            walk(child, [])
                        elif isinstance(child, ast.stmt):
                            walk_in(child, sub)
                        else:
                            walk_handler(child, sub)

    def walk_handler(node: ast.AST, chain: list[tuple[ast.AST, str]]) -> None:
        for child in getattr(node, "body", []):
            out[id(child)] = chain
            if isinstance(child, scoped):
                walk(child, [])
            else:
                walk_in(child, chain)

    walk(tree, [])
    return out


def _docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
        and isinstance(stmt.value.value, str)


def _first(body: list[ast.stmt], seen: Analysis) -> int | None:
    return seen.line(body[0]) if body else None


def _suspends(node: ast.AST) -> bool:
    kinds = (ast.Await, ast.Yield, ast.YieldFrom)
    skip = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, kinds):
            return True
        if isinstance(current, (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
            # An async comprehension awaits in this frame; a plain one runs in its own.
            if any(gen.is_async for gen in current.generators):
                return True
        stack.extend(c for c in ast.iter_child_nodes(current) if not isinstance(c, skip))
    return False


def _probe(key: int, where: ast.AST, line: int | None = None) -> ast.stmt:
    from pytest_confgate.collect.line_probes import PROBE

    call = ast.Call(func=ast.Name(id=PROBE, ctx=ast.Load()), args=[ast.Constant(key)],
                    keywords=[])
    probe = ast.Expr(value=call)
    _place(probe, where, line)
    return probe


def _place(node: ast.AST, where: ast.AST, line: int | None = None) -> None:
    row = line if line is not None else getattr(where, "lineno", 1)
    column = getattr(where, "col_offset", 0)
    for child in ast.walk(node):
        if "lineno" in child._attributes:
            child.lineno = child.end_lineno = row  # type: ignore[attr-defined]
            child.col_offset = child.end_col_offset = column  # type: ignore[attr-defined]


class _Wrapper(ast.NodeVisitor):
    """Puts ``try: STATEMENT / except BaseException: record the exit; raise`` around each
    statement whose branch line can leave the frame."""

    def __init__(self, wraps: dict[int, tuple[tuple[int, int], int]],
                 after: dict[int, int]) -> None:
        self._wraps = wraps
        self._after = after

    def generic_visit(self, node: ast.AST) -> None:
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                out: list[ast.AST] = []
                for child in value:
                    if not isinstance(child, ast.stmt):
                        if isinstance(child, ast.AST):
                            self.visit(child)
                        out.append(child)
                        continue
                    self.visit(child)
                    wrap = self._wraps.get(id(child))
                    out.append(_wrapped(child, *wrap) if wrap is not None else child)
                    key = self._after.get(id(child))
                    if key is not None:
                        out.append(_probe(key, child, child.lineno))
                value[:] = out
            elif isinstance(value, ast.AST) and name != "ctx":
                self.visit(value)


def _wrapped(stmt: ast.stmt, rows: tuple[int, int], key: int) -> ast.stmt:
    """``stmt`` inside a ``try`` recording ``key`` when an exception leaves it from ``rows``."""
    info = ast.Call(func=ast.Name(id=EXC_INFO, ctx=ast.Load()), args=[], keywords=[])
    traceback = ast.Subscript(value=info, slice=ast.Constant(2), ctx=ast.Load())
    where = ast.Attribute(value=traceback, attr="tb_lineno", ctx=ast.Load())
    test = ast.Compare(left=ast.Constant(rows[0]), ops=[ast.LtE(), ast.LtE()],
                       comparators=[where, ast.Constant(rows[1])])
    record = ast.If(test=test, body=[_probe(key, stmt)], orelse=[])
    handler = ast.ExceptHandler(type=ast.Name(id="BaseException", ctx=ast.Load()), name=None,
                                body=[record, ast.Raise(exc=None, cause=None)])
    _place(handler, stmt, stmt.lineno)
    wrapper = ast.Try(body=[stmt], handlers=[handler], orelse=[], finalbody=[])
    ast.copy_location(wrapper, stmt)
    wrapper.end_lineno, wrapper.end_col_offset = stmt.end_lineno, stmt.end_col_offset
    return wrapper


def analysis_text(source: bytes) -> str:
    """``source`` as coverage.py reads a Python file (``coverage.python.get_python_source``)."""
    from coverage.phystokens import source_encoding

    data = source.replace(b"\f", b" ")
    text = data.decode(source_encoding(data), "replace")
    return text if not text or text.endswith("\n") else text + "\n"


class BranchProbes:
    """Branch probes for one coverage.py configuration (its exclusion regex)."""

    def __init__(self, exclude: str | None) -> None:
        self.exclude = exclude
        self.variant = f"branch:{FORMAT}:{exclude or ''}"
        """Tells the probe cache apart from line-only code and other exclusions."""

    def plan(self, tree: ast.Module, source: bytes, path: str) -> Plan:
        return plan(tree, analysis_text(source), path, self.exclude)

    def check(self, path: str) -> str | None:
        """Why ``path`` cannot have branch probes (it is then traced), or None."""
        try:
            with open(path, "rb") as handle:
                source = handle.read()
            self.plan(ast.parse(source, filename=path), source, path)
        except Unmappable as exc:
            return str(exc)
        except (OSError, SyntaxError, ValueError) as exc:
            return f"cannot be read or parsed: {type(exc).__name__}"
        return None


def arcs_of(hits: dict[str, set[int]]) -> dict[str, list[tuple[int, int]]]:
    """Recorded probe values as arcs: a line ``L`` as ``(L, L)`` (coverage.py reads it as
    executed and drops it from branches), an arc key as its arc."""
    return {
        path: sorted({(v, v) if v > 0 else key_arc(v) for v in values})
        for path, values in hits.items()
        if values
    }

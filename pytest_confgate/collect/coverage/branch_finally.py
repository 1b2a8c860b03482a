"""Branch probes at the end of a ``finally`` block (``branch_probes`` places the rest).

Python compiles a ``finally`` block once for each way into it: the ``try`` ending normally,
an exception (that copy ends in a re-raise), and each ``return``, ``break`` or ``continue``
through it. coverage.py's tracer sees the same lines in every copy but the last step: after
the exception copy's last line ``L`` it sees the re-raise, on a line ``R`` the compiler chose
from the block's last statement, and then the exception leave for the frame's exit:

- ``R`` is a fixed line (``reraise_line``): the tracer records ``(L, R)`` when ``L != R``,
  marks ``R`` run (even a line of a body that did not run), then ``(R, exit)``;
- ``R`` is ``None``: the re-raise takes the line that ran last, so the tracer records
  ``(L, exit)`` only.

The probes tell the exception copy from the others by asking whether an exception raised
in this very frame is in flight (``sys.exc_info()``'s traceback starts in this frame). That
answer is only certain when the ``try`` is not in an ``except`` or ``finally`` block of its
frame; where the exception goes next is only known around no ``with`` or other ``finally``
(``exception_exit``); and a fall-through exit into code after the ``try`` is only the normal
copy's when no ``return``, ``break`` or ``continue`` passes through the block. Otherwise the
file is refused. Python 3.11's compiler is the one whose choice of
``R`` is followed here; on others only a plain ``if`` ending the block is (its body's last line).
Where 3.11 gives such an ``if`` a re-raise of its own for the false side (``own_line_reraises``),
that side's exception copy records the exit from the ``if`` line itself, and ``(R, exit)`` only
after its body.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from dataclasses import dataclass

from pytest_confgate.collect.coverage.branch_edits import Construct, Unmappable

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Raise,
          ast.Pass, ast.Delete, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal,
          ast.Assert, ast.Break, ast.Continue)
TRIES = (ast.Try, *([ast.TryStar] if hasattr(ast, "TryStar") else []))
GUARDED = (*TRIES, ast.With, ast.AsyncWith)
Chain = list[tuple[ast.AST, str]]


@dataclass
class Tail:
    """A ``try`` whose ``finally`` block ends in a compound statement."""

    node: ast.Try
    reraise: int | None
    """The line the exception copy's re-raise reports; None: the line that ran last."""


def tails(statements: list[ast.stmt]) -> dict[int, Tail]:
    """Every ``try`` of ``statements`` whose ``finally`` ends in a block, by its id."""
    out: dict[int, Tail] = {}
    for node in statements:
        final = getattr(node, "finalbody", None)
        if not final or isinstance(final[-1], SIMPLE):
            continue
        if not isinstance(node, ast.Try):  # except*: not followed
            raise Unmappable(f"line {final[-1].lineno}: a finally block ending in a block")
        out[id(node)] = Tail(node, reraise_line(final))
    return out


def reraise_line(block: list[ast.stmt]) -> int | None:
    """The line Python 3.11 gives the re-raise compiled right after ``block``: the location
    its compiler last set (``SET_LOC``), or None where it last unset it (``UNSET_LOC``: the
    re-raise then takes the line of the jump into it, the line that ran last)."""
    last = block[-1]
    if isinstance(last, ast.AugAssign):  # its store is located on the target
        return last.target.lineno
    if isinstance(last, SIMPLE):
        return last.lineno
    if sys.version_info[:2] != (3, 11):
        if isinstance(last, ast.If) and not last.orelse and isinstance(last.body[-1], SIMPLE):
            return last.body[-1].lineno
    elif isinstance(last, ast.If):
        return reraise_line(last.orelse or last.body)
    elif isinstance(last, ast.For):
        return reraise_line(last.orelse) if last.orelse else None
    elif isinstance(last, ast.While):
        return reraise_line(last.orelse) if last.orelse else last.lineno
    elif isinstance(last, ast.With):
        return last.lineno  # the call of ``__exit__`` is located on the ``with``
    elif isinstance(last, ast.Try):
        return reraise_line(last.finalbody) if last.finalbody else None
    kind = type(last).__name__.lower()
    raise Unmappable(f"line {last.lineno}: a finally block ending in a {kind} block")


def leave_finally(item: Construct, chain: Chain, line: int, found: dict[int, Tail],
                  exits: tuple[int, Callable[[ast.AST], int]],
                  own: frozenset[int] = frozenset()) -> None:
    """Settle a branch exit that leaves a ``finally`` block by falling off its end: in the
    exception copy it records what the tracer sees there (``item.reraise_line``).
    ``exits``: the line coverage.py numbers the frame by, and its line of a node; ``own``:
    the ``if`` lines whose false side re-raises on its own line (``own_line_reraises``)."""
    fall = item.fallthrough
    for index in range(len(chain) - 1, -1, -1):
        outer, part = chain[index]
        if part != "finalbody":
            continue
        final = outer.finalbody  # type: ignore[attr-defined]
        if fall is None or final[0].lineno <= fall <= final[-1].end_lineno:
            return
        tail = found.get(id(outer))
        goes = exception_exit(chain[:index], *exits)
        if sys.version_info[:2] != (3, 11) and (fall >= 0 or goes != fall):
            goes = None  # only the frame's exit is followed there
        if tail is None or goes is None or (fall >= 0 and escapes(tail.node)) \
                or (fall < 0 and fall != -exits[0]):
            raise Unmappable(f"line {line}: its exit leaves a finally block")
        fixed = tail.reraise is not None and tail.reraise != line and line not in own
        item.reraise_line = tail.reraise if fixed else goes
        return


def exception_exit(chain: Chain, start: int, line_of: Callable[[ast.AST], int]) -> int | None:
    """Where the tracer sees an exception go from a statement inside ``chain`` (statements
    around it in its frame): the first handler of a ``try`` around it, else the frame's
    exit (``-start``). None where it cannot be told: an exception in flight may then be
    one this frame is handling (in an ``except`` or ``finally`` block), or the way out
    passes a ``with`` or another ``finally`` first."""
    handling = {"handlers", "finalbody"}
    if any(isinstance(node, TRIES) and part in handling
           for node, part in chain):
        return None
    for node, part in reversed(chain):
        if isinstance(node, ast.Try) and part == "body" and node.handlers:
            return line_of(node.handlers[0])
        if isinstance(node, GUARDED):
            return None
    return -start


def escapes(node: ast.Try) -> bool:
    """Whether a ``return``, ``break`` or ``continue`` leaves ``node`` through its
    ``finally`` (then the block has a copy that ends in that jump)."""

    def leaves(block: list[ast.stmt], in_loop: bool) -> bool:
        for stmt in block:
            if isinstance(stmt, ast.Return) or (
                isinstance(stmt, (ast.Break, ast.Continue)) and not in_loop
            ):
                return True
            if isinstance(stmt, _DEFINITIONS):
                continue
            loop = isinstance(stmt, _LOOPS)
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, name, None)
                inside = in_loop or (loop and name == "body")
                if isinstance(inner, list) and leaves(inner, inside):
                    return True
            parts = (*getattr(stmt, "handlers", ()), *getattr(stmt, "cases", ()))
            if any(leaves(part.body, in_loop) for part in parts):
                return True
        return False

    handlers = [handler.body for handler in node.handlers]
    return any(leaves(block, False) for block in (node.body, node.orelse, *handlers))


def own_line_reraises(found: dict[int, Tail], text: str, path: str) -> frozenset[int]:
    """The ``if`` lines ending a ``finally`` (no ``else``) whose false jump Python 3.11 compiled
    straight into a re-raise of its own, on the ``if`` line, in the exception copy.

    ``reraise_line`` gives the body's last line, which holds where one ``RERAISE`` ends both
    ways; at these the tracer records the exit from the ``if`` line instead of the arc into the
    body's last line and that line run (jinja2's ``Parser.parse_statement``, click's
    ``termui.pause``). Which one the compiler emits is read from the code, not told from the
    source."""
    ifs = {last.lineno for last, tail in ((t.node.finalbody[-1], t) for t in found.values())
           if isinstance(last, ast.If) and not last.orelse and isinstance(last.body[-1], SIMPLE)
           and tail.reraise not in (None, last.lineno)}
    if not ifs:
        return frozenset()
    import dis

    try:
        codes = [compile(text, path, "exec", dont_inherit=True)]
    except (SyntaxError, ValueError):
        return frozenset()  # the tree compiled once already: this copy only reads lines
    own: set[int] = set()
    while codes:
        code = codes.pop()
        codes.extend(c for c in code.co_consts if isinstance(c, type(code)))
        if ifs.isdisjoint(line for _, _, line in code.co_lines()):
            continue  # ``dis`` is slow: only the code holding such an ``if`` is read
        instructions = list(dis.get_instructions(code))
        by_offset = {i.offset: i for i in instructions}
        for jump in instructions:
            line = jump.positions.lineno if jump.positions else None
            if line not in ifs or "IF" not in jump.opname or not jump.opname.startswith("POP_"):
                continue
            target = by_offset.get(jump.argval) if isinstance(jump.argval, int) else None
            lands = target.positions.lineno if target and target.positions else None
            if target is not None and target.opname == "RERAISE" and lands == line:
                own.add(line)
    return frozenset(own)


"""A branch event's bytecode offsets turned into coverage.py's arc ``(from line, to line)``.

The walk is coverage.py's own (``coverage.bytecode.BranchArcResolver``, which its 3.14
``sysmon`` core uses): from the destination, follow the instructions (through unconditional
jumps) to the first one on another source line (the arc), a return (the arc out of the code
object, ``-co_firstlineno``), or another conditional branch (no arc: that branch reports its
own events). Lines are first lines of their statement, as coverage.py's reporting counts them.
Written here too because 3.12 and 3.13 also return with ``RETURN_CONST``, which coverage.py's
copy, only used from 3.14, does not know.
"""

from __future__ import annotations

import dis
from types import CodeType, SimpleNamespace
from typing import Any


def _ops(*names: str) -> frozenset[int]:
    return frozenset(dis.opmap[name] for name in names if name in dis.opmap)


_ALWAYS_JUMPS = _ops("JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_FORWARD")
_RETURNS = _ops("RETURN_VALUE", "RETURN_CONST", "RETURN_GENERATOR")
_NO_FALL_THROUGH = _ops("RERAISE")
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_BACKWARD = frozenset(op for op in _JUMPS if "JUMP_BACKWARD" in dis.opname[op])
_CACHE = dis.opmap.get("CACHE", -1)
_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]
_EVERYTHING = SimpleNamespace(start=0, end=1 << 63, target=1 << 62)
"""An exception-table entry covering every offset, pointing past the code: never an exit."""


def bytes_to_lines(code: CodeType) -> dict[int, int]:
    """Every instruction offset of ``code`` mapped to its source line."""
    lines: dict[int, int] = {}
    for start, end, line in code.co_lines():
        if line is not None:
            for offset in range(start, end, 2):
                lines[offset] = line
    return lines


class ArcResolver:
    """Resolves (source, destination) offsets of one code object, one pair at a time."""

    def __init__(
        self, code: CodeType, lines: dict[int, int], multiline: dict[int, int] | None = None,
        *, exit_at_reraise: bool,
    ) -> None:
        self.exit_at_reraise = exit_at_reraise
        """Whether the end of a ``finally`` run for an exception that leaves the code object
        is an exit arc: coverage.py's tracers record one there (their return event), its
        ``sysmon`` core none. It follows the core ``coverage run`` uses
        (``tracer.reference_core``), not the Python's default core."""
        self.first = -code.co_firstlineno
        self.code = code
        self.co_code = code.co_code  # a copy on each access: fetch it once
        self._handlers: list[tuple[int, int, int]] | None = None
        self.lines = lines
        self.multiline = multiline or {}

    def line_at(self, offset: int) -> int | None:
        line = self.lines.get(offset)
        return None if line is None else self.multiline.get(line, line)

    def falls_through(self, offset: int, within: frozenset[int]) -> tuple[int, int] | None:
        """The arc out of a statement whose lines are ``within`` (a decorated ``def``'s
        decorators and its line) when its code runs to its end, walked from ``offset`` as
        ``resolve`` walks: from the statement's last line run to the next line, or out of
        the code object. ``None`` where it meets a conditional jump."""
        co_code, size = self.co_code, len(self.co_code)
        last, seen = None, set()
        while 0 <= offset < size and offset not in seen:
            seen.add(offset)
            op = co_code[offset]
            line = self.line_at(offset)
            if op in (_CACHE, _EXTENDED_ARG):
                offset += 2
                continue
            if line and line not in within:
                return (last, line) if last is not None else None
            if line:
                last = line
            if op in _JUMPS:
                if op not in _ALWAYS_JUMPS:
                    return None
                offset = self._target(offset)
                continue
            if op in _RETURNS:
                return (last, self.first) if last is not None else None
            if op in _NO_FALL_THROUGH:
                return None
            offset += 2
        return None

    def _target(self, offset: int) -> int:
        """Where the unconditional jump at ``offset`` goes."""
        co_code, size = self.co_code, len(self.co_code)
        arg, back = co_code[offset + 1], offset - 2
        shift = 8
        while back >= 0 and co_code[back] == _EXTENDED_ARG:
            arg |= co_code[back + 1] << shift
            shift += 8
            back -= 2
        after = offset + 2
        while after < size and co_code[after] == _CACHE:
            after += 2
        return after - 2 * arg if co_code[offset] in _BACKWARD else after + 2 * arg

    def resolve(self, source: int, dest: int) -> tuple[int, int] | None:
        """The arc a branch from ``source`` to ``dest`` takes, or ``None``."""
        start = self.line_at(source)
        if start is None:
            return None
        co_code, size = self.co_code, len(self.co_code)
        offset, ext_arg, seen = dest, 0, set()
        while 0 <= offset < size and offset not in seen:
            seen.add(offset)
            op = co_code[offset]
            if op == _CACHE:
                offset += 2
                continue
            if op == _EXTENDED_ARG:
                ext_arg = (ext_arg | co_code[offset + 1]) << 8
                offset += 2
                continue
            line = self.line_at(offset)
            if line and line != start:
                return (start, line)
            if op in _JUMPS:
                if op not in _ALWAYS_JUMPS:
                    return None  # another branch: it reports its own events
                arg = ext_arg | co_code[offset + 1]
                after = offset + 2
                while after < size and co_code[after] == _CACHE:
                    after += 2
                offset = after - 2 * arg if op in _BACKWARD else after + 2 * arg
                ext_arg = 0
                continue
            if op in _RETURNS:
                return (start, self.first)
            if op in _NO_FALL_THROUGH:
                # The end of a `finally` run for an exception: leaving the code object there is
                # an exit where coverage.py's tracer is the reference (its return event).
                exits = self.exit_at_reraise and self._escapes(offset)
                return (start, self.first) if exits else None
            ext_arg = 0
            offset += 2
        return None

    def _escapes(self, offset: int) -> bool:
        """Whether the exception re-raised at ``offset`` leaves the code object: no handler
        covers it, or only cleanup code with no line of its own that re-raises it again."""
        if self._handlers is None:
            self._handlers = [(e.start, e.end, e.target) for e in self._entries()]
        seen: set[int] = set()
        while offset not in seen:
            seen.add(offset)
            target = next((t for start, end, t in self._handlers if start <= offset < end), None)
            if target is None:
                return True
            offset = target
            while offset < len(self.co_code) and self.co_code[offset] not in _NO_FALL_THROUGH:
                if self.lines.get(offset) is not None:
                    return False  # a handler of this code: its own line event counts
                offset += 2
        return False

    def _entries(self) -> list[Any]:
        try:
            bytecode: Any = dis.Bytecode(self.code)  # exception_entries: 3.11+, untyped
            return list(bytecode.exception_entries)
        except Exception:  # an internal of dis that moved: no arc, as before
            return [_EVERYTHING]

"""Line and branch coverage from ``sys.monitoring`` (Python 3.12+), without a tracer.

The program runs untouched: no code object is changed, no function's ``__code__`` swapped, no
loader or frame of ours sits on any stack, and ``sys.settrace``/``sys.setprofile`` users
(debuggers, other coverage tools) are left alone. The engine registers as its own
``sys.monitoring`` tool (never coverage.py's ``COVERAGE_ID`` nor the debugger's) and asks for
events only in code objects of the measured files:

- ``LINE``: the line ran; the event is disabled once recorded, so a line costs once.
- branches: on 3.14 ``BRANCH_LEFT``/``BRANCH_RIGHT``, each direction disabled once seen; on
  3.12 and 3.13 ``BRANCH``, which can only be disabled for both directions at once, so it is
  disabled when both have been seen. Each (source, destination) offset pair is resolved to
  coverage.py's arc the way coverage.py's own ``sysmon`` core does (``arc_resolver``).
- ``PY_RETURN`` (and ``PY_UNWIND`` where ``coverage run`` measures with a tracer, as on 3.12
  and 3.13 or under ``COVERAGE_CORE=ctrace``: a tracer records a frame left by an exception):
  the arc out of the code object.

A ``def`` or ``class`` whose body is on its own line (``def f(): return 1``) has two exits
on that line, so its self-arc resolves to neither. Where ``coverage run`` measures with a
tracer, its ``LINE`` event also records the arc the statement's code falls through to, as the
tracer does (``ArcResolver.falls_through``); where it uses coverage.py's ``sysmon`` core (3.14),
the engine records what that core does instead: the arc from each ``LINE`` event's line to the
next one's in the code object (``transitions``).

The arcs go into the ``CoverageData`` coverage.py reports from, so which lines are statements,
which arcs are branches, exclusions and the figures stay coverage.py's. A line's self-arc
``(line, line)`` is how coverage.py's reporting counts a line whose one possible exit is taken.
"""

from __future__ import annotations

import dis
import gc
import os
import sys
import threading
import weakref
from collections.abc import Callable, Iterable
from sys import _getframe  # bound once: a test may delete sys._getframe
from types import CodeType
from typing import Any

from pytest_confgate.collect.coverage.arc_resolver import ArcResolver, bytes_to_lines

MONITOR = "sys.monitoring"
TOOL_IDS = (3, 4)
"""Tool ids no one reserves: 0 is the debugger's, 1 coverage.py's, 2 profilers', 5 the JIT's."""
BRANCH_EVENTS = sys.version_info >= (3, 14)
"""Whether ``BRANCH_LEFT``/``BRANCH_RIGHT`` exist (each direction disabled on its own)."""
Wants = Callable[[str, str], bool]
"""``wants(filename, module name)``: whether a code object's file is measured."""
MON: Any = getattr(sys, "monitoring", None)
DISABLE: Any = getattr(MON, "DISABLE", None)
_END_ASYNC_FOR = dis.opmap.get("END_ASYNC_FOR", -1)



def _pause_collection() -> bool:
    """Stop automatic garbage collection for the callback that calls this (True: it was on).

    Code that a collection runs (a finalizer, a generator closed by the collector: jinja2's
    ``Template.generate`` line ``except Exception:``) gives no ``sys.monitoring`` event while a
    callback runs, so a collection that one of our allocations starts there would hide its
    lines. Paused, the collection starts at the program's next allocation, where they count.
    """
    if not gc.isenabled():
        return False
    gc.disable()
    return True


def _uncollected(callback: Callable[..., Any]) -> Callable[..., Any]:
    """``callback`` run with automatic garbage collection paused (``_pause_collection``)."""

    def run(*args: Any) -> Any:
        paused = _pause_collection()
        try:
            return callback(*args)
        finally:
            if paused:
                gc.enable()

    return run


class NoToolId(RuntimeError):
    """Every ``sys.monitoring`` tool id the engine may use is taken."""


class _Code:
    """What the callbacks need about one measured code object."""

    __slots__ = ("arcs", "bodies", "first", "last", "lines", "resolver", "seen")

    def __init__(self, code: CodeType, arcs: set[tuple[int, int]], branch: bool) -> None:
        self.arcs = arcs
        self.first = -code.co_firstlineno
        self.lines = bytes_to_lines(code) if branch else {}
        self.bodies = same_line_bodies(code) if branch else {}
        self.resolver: ArcResolver | None = None
        self.seen: dict[int, set[int]] = {}
        self.last: int | None = None
        """The line of the last ``LINE`` event, for ``MonitorProbes.transitions``."""


def _sysmon_records_transitions() -> bool:
    """Whether this coverage.py's ``sysmon`` core records the arc between two consecutive
    ``LINE`` events of a code object (``CodeInfo.last_line`` in newer coverage.py releases)."""
    try:
        from coverage.sysmon import CodeInfo
    except ImportError:
        return False
    return "last_line" in getattr(CodeInfo, "__dataclass_fields__", {})


class MonitorProbes:
    """Records executed lines (and arcs with ``branch``) of the files ``wants`` names."""

    def __init__(
        self, wants: Wants, *, branch: bool, canonical: Callable[[str], str] = os.path.realpath,
        keep_alive: bool = False, reference_traces: bool = not BRANCH_EVENTS,
        multiline: Callable[[str], dict[int, int] | None] | None = None,
    ) -> None:
        self.branch = branch
        self.reference_traces = reference_traces
        """Whether ``coverage run`` records arcs with a tracer (its ``ctrace`` core: always
        on 3.12 and 3.13, on 3.14 when ``COVERAGE_CORE`` or ``[run] core`` asks for it),
        not its ``sysmon`` core (``tracer.reference_core``). A tracer records leaving a
        function by an exception (``PY_UNWIND`` here) and at the end of a ``finally`` run for
        one; ``sysmon`` neither."""
        self.transitions = branch and not reference_traces and _sysmon_records_transitions()
        """Where ``coverage run`` uses its ``sysmon`` core, the arcs of a same-line body
        (``def f(): return 1``) are what that core records: the arc from one ``LINE`` event's
        line to the next one's in the code object (reset as a frame returns), each event
        disabled once seen, as here; a tracer reference gets the arc the statement's code
        falls through to (``ArcResolver.falls_through``)."""
        self._alive: list[CodeType] | None = [] if keep_alive else None
        """``keep_alive``: every code object seen, held as coverage.py's ``sysmon`` core holds
        it, where ``coverage run`` uses that core (3.14): a program that counts the referrers
        of its code objects then sees what it sees under ``coverage run``."""
        self.hits: dict[str, set[int]] = {}
        """Executed lines per canonical file (line coverage)."""
        self.arc_hits: dict[str, set[tuple[int, int]]] = {}
        """Executed arcs per canonical file (branch coverage), coverage.py's shape."""
        self.tool_id: int | None = None
        self.unprobed: dict[str, str] = {}
        """Measured files whose branches these events cannot map, and why."""
        self._wants = wants
        self._canonical = canonical
        self._files: dict[str, str | None] = {}
        self._codes: dict[int, _Code | None] = {}
        self._refs: dict[int, weakref.ref[CodeType]] = {}
        """Each code object seen, weakly: its entry in ``_codes`` goes when it dies, before its
        ``id`` can be reused. Held strongly (as coverage.py's ``sysmon`` core does), every code
        object would stay alive and be one more referrer in ``gc.get_referrers`` -- which the
        C tracer of ``coverage run`` (3.12, 3.13) never is: typeguard's ``find_function`` took
        another branch under the gate."""
        self._multilines: dict[str, dict[int, int]] = {}
        self._kept_multiline = multiline
        """A file's multi-line statements from its kept analysis, or None: coverage.py's
        ``compute_multiline_map`` tokenizes the file (0.25 s of click's run, every run)."""
        self._lock = threading.Lock()

    @staticmethod
    def free_tool_id() -> int | None:
        """A tool id this engine may take now, or ``None`` when all are in use."""
        if MON is None:
            return None
        return next((i for i in TOOL_IDS if MON.get_tool(i) is None), None)

    def start(self) -> None:
        """Take a free tool id and begin; ``NoToolId`` if there is none."""
        mon = MON
        tool = self.free_tool_id()
        if tool is None:
            raise NoToolId(
                f"every sys.monitoring tool id the gate may use ({', '.join(map(str, TOOL_IDS))})"
                " is taken by another tool"
            )
        mon.use_tool_id(tool, "pytest-confgate")
        self.tool_id = tool
        events = mon.events
        mon.register_callback(tool, events.PY_START, self._py_start)
        if self.branch:  # these allocate (arcs, resolvers): no collection inside them
            mon.register_callback(tool, events.LINE, _uncollected(self._line_arc))
            mon.register_callback(tool, events.PY_RETURN, _uncollected(self._return))
            if BRANCH_EVENTS:
                branch_once = _uncollected(self._branch_once)
                mon.register_callback(tool, events.BRANCH_LEFT, branch_once)
                mon.register_callback(tool, events.BRANCH_RIGHT, branch_once)
            else:
                # Not wrapped: it fires on every run of a branch seen one way only, and
                # pauses collection itself, only where it allocates.
                mon.register_callback(tool, events.BRANCH, self._branch_twice)
            if self.reference_traces:  # every unwind of the process: likewise
                mon.register_callback(tool, events.PY_UNWIND, self._unwind)
        else:
            mon.register_callback(tool, events.LINE, self._line)
        start = events.PY_START
        if self.branch and self.reference_traces:
            start |= events.PY_UNWIND  # a global-only event: filtered by code in ``_unwind``
        mon.set_events(tool, start)
        mon.restart_events()

    def stop(self) -> None:
        """Stop recording and give the tool id back; safe to call twice."""
        tool, self.tool_id = self.tool_id, None
        if tool is None:
            return
        mon = MON
        mon.set_events(tool, 0)
        for ref in list(self._refs.values()):
            code = ref()
            if code is not None:
                mon.set_local_events(tool, code, 0)
        mon.free_tool_id(tool)

    def between_tests(self) -> None:
        """Nothing to sweep: the events disable themselves."""

    def lines(self) -> dict[str, list[int]]:
        """Executed lines per file, for ``CoverageData.add_lines``."""
        return {path: sorted(lines) for path, lines in self.hits.items() if lines}

    def arcs(self) -> dict[str, list[tuple[int, int]]]:
        """Executed arcs per file, for ``CoverageData.add_arcs``."""
        return {
            path: sorted(arcs)
            for path, arcs in self.arc_hits.items()
            if arcs and path not in self.unprobed
        }

    def files(self) -> list[str]:
        """Every measured file that ran."""
        return sorted(set(self.hits) | set(self.arc_hits))

    # -- callbacks: each returns ``DISABLE`` as soon as it has nothing more to learn ----------

    def _py_start(self, code: CodeType, offset: int) -> Any:
        # Not wrapped by ``_uncollected``: ``_measured`` counts the frames under it.
        if code.co_name == "__annotate__":  # 3.14's lazy annotations never run a line
            return DISABLE
        paused = _pause_collection()  # it allocates the most (line maps, code info)
        try:
            return self._start(code)
        finally:
            if paused:
                gc.enable()

    def _start(self, code: CodeType) -> Any:
        mon = MON
        with self._lock:
            if id(code) in self._codes or self.tool_id is None:
                return DISABLE
            path = self._measured(code)
            if path is not None and self.branch and not BRANCH_EVENTS and _ends_by_exception(code):
                self.unprobed[path] = "an `async for` (imported outside the measured source)"
            if path is None or path in self.unprobed:
                self._codes[id(code)] = None
                self._keep(code)
                return DISABLE
            events = mon.events
            wanted = events.LINE
            if self.branch:
                arcs = self.arc_hits.setdefault(path, set())
                self._codes[id(code)] = _Code(code, arcs, branch=True)
                wanted |= events.PY_RETURN
                if BRANCH_EVENTS:
                    wanted |= events.BRANCH_LEFT | events.BRANCH_RIGHT
                else:
                    wanted |= events.BRANCH
            else:
                self.hits.setdefault(path, set())
                self._codes[id(code)] = None
            self._keep(code)
            mon.set_local_events(self.tool_id, code, wanted)
        return DISABLE

    def _keep(self, code: CodeType) -> None:
        key = id(code)
        codes, refs = self._codes, self._refs

        # Called as the code object dies, before its memory (and so its id) is reused.
        def forget(_ref: object) -> None:
            codes.pop(key, None)
            refs.pop(key, None)

        refs[key] = weakref.ref(code, forget)
        if self._alive is not None:
            self._alive.append(code)

    def _measured(self, code: CodeType) -> str | None:
        filename = code.co_filename
        known = self._files.get(filename, "")
        if known == "":
            known = None
            if filename.endswith((".py", ".pyw")):
                frame = _getframe(3)  # the code's own frame, under _start and _py_start
                module = str(frame.f_globals.get("__name__", ""))
                if self._wants(filename, module):
                    known = self._canonical(filename)
            self._files[filename] = known
        return known

    def _line(self, code: CodeType, line: int) -> Any:
        path = self._files.get(code.co_filename)
        if path is not None:
            self.hits[path].add(line)
        return DISABLE

    def _line_arc(self, code: CodeType, line: int) -> Any:
        info = self._codes.get(id(code))
        if info is not None:
            info.arcs.add((line, line))
            if self.transitions:
                last, info.last = info.last, line
                if last is not None and last != line:
                    info.arcs.add((last, line))
                return DISABLE
            body = info.bodies.get(line)
            if body is not None:
                # ``def f(): return 1``: the line also ends ``f``, so it has two exits and
                # its self-arc resolves to neither; the statement's own exit is the arc
                # its code falls through to, as coverage.py's tracer records it.
                arc = self._resolver(info, code).falls_through(*body)
                if arc is not None:
                    info.arcs.add(arc)
        return DISABLE

    def _return(self, code: CodeType, offset: int, value: object) -> Any:
        info = self._codes.get(id(code))
        if info is not None:
            line = info.lines.get(offset)
            if line is not None:
                info.arcs.add((line, info.first))
            info.last = None  # the next LINE event may be another frame's, as for sysmon
        return DISABLE

    def _unwind(self, code: CodeType, offset: int, exc: BaseException) -> Any:
        # Global: no DISABLE possible. coverage.py's tracer records a frame left by an
        # exception as an arc out of the function from the line that raised.
        info = self._codes.get(id(code))  # None for most: code of the whole process
        if info is None:
            return None
        paused = _pause_collection()  # the arc allocates (``_pause_collection``)
        try:
            line = info.lines.get(offset)
            if line is not None:
                info.arcs.add((line, info.first))
        finally:
            if paused:
                gc.enable()
        return None

    def _resolver(self, info: _Code, code: CodeType) -> ArcResolver:
        resolver = info.resolver
        if resolver is None:
            resolver = info.resolver = ArcResolver(
                code, info.lines, self._multiline(code), exit_at_reraise=self.reference_traces
            )
        return resolver

    def _record_branch(self, info: _Code, code: CodeType, source: int, dest: int) -> None:
        arc = self._resolver(info, code).resolve(source, dest)
        if arc is not None:
            info.arcs.add(arc)

    def _multiline(self, code: CodeType) -> dict[int, int]:
        """The file's statements spanning lines, each line to the statement's first one."""
        found = self._multilines.get(code.co_filename)
        if found is None:
            kept = self._kept_multiline
            found = kept(code.co_filename) if kept is not None else None
            if found is None:
                from coverage.sysmon import compute_multiline_map

                found = compute_multiline_map(code.co_filename)
            self._multilines[code.co_filename] = found
        return found

    def _branch_once(self, code: CodeType, source: int, dest: int) -> Any:
        info = self._codes.get(id(code))
        if info is not None:
            self._record_branch(info, code, source, dest)
        return DISABLE

    def _branch_twice(self, code: CodeType, source: int, dest: int) -> Any:
        # 3.12/3.13: disabling BRANCH silences both directions of the instruction, so it
        # stays on until each direction has been seen once.
        info = self._codes.get(id(code))
        if info is None:
            return DISABLE
        seen = info.seen.get(source)
        if seen is not None and dest in seen:  # the hot path: allocates nothing
            return DISABLE if len(seen) > 1 else None
        paused = _pause_collection()  # what follows allocates (``_pause_collection``)
        try:
            if seen is None:
                seen = info.seen[source] = set()
            seen.add(dest)
            self._record_branch(info, code, source, dest)
        finally:
            if paused:
                gc.enable()
        return DISABLE if len(seen) > 1 else None


def same_line_bodies(code: CodeType) -> dict[int, tuple[int, frozenset[int]]]:
    """The ``def`` and ``class`` statements of ``code`` whose whole body is on the ``def``
    line (``def f(): return 1``, ``class A: pass``, decorated or not): coverage.py counts two
    exits there. Each as ``{def line: (offset of its code's LOAD_CONST, the statement's
    lines, decorators included)}``.

    It runs at each measured code object's first start: ``dis.get_instructions`` (which
    builds every instruction's text) there was 11% of click's gate run on 3.14. Only a child
    on at most one line besides its first (a decorator's) can qualify, and only its loads are
    looked for, in the raw bytecode."""
    children = {}
    for index, const in enumerate(code.co_consts):
        if isinstance(const, CodeType) and not const.co_name.startswith("<"):
            lines = {at for _, _, at in const.co_lines() if at is not None}
            if lines and len(lines - {const.co_firstlineno}) <= 1:
                children[index] = (const, lines)
    if not children:
        return {}
    found = {}
    for offset, index, line in _const_loads(code, children.keys()):
        child, lines = children[index]
        if line in lines and lines <= {child.co_firstlineno, line}:
            within = frozenset(range(min(child.co_firstlineno, line), line + 1))
            found[line] = (offset, within)
    return found


_LOAD_CONST = dis.opmap["LOAD_CONST"]
_EXTENDED_ARG = dis.EXTENDED_ARG


def _const_loads(code: CodeType, wanted: Iterable[int]) -> list[tuple[int, int, int]]:
    """``(offset, constant index, line)`` of each ``LOAD_CONST`` of a ``wanted`` constant,
    read from ``co_code`` (inline caches read as ``CACHE`` units: never a load); each line
    from ``co_lines``, as ``dis`` gives it."""
    wanted = set(wanted)
    raw = code.co_code
    offsets = []
    extended = 0
    for offset in range(0, len(raw), 2):
        op = raw[offset]
        arg = raw[offset + 1] | extended
        extended = arg << 8 if op == _EXTENDED_ARG else 0
        if op == _LOAD_CONST and arg in wanted:
            offsets.append((offset, arg))
    if not offsets:
        return []
    loads: list[tuple[int, int, int]] = []
    ranges = iter(code.co_lines())
    start, end, line = next(ranges, (0, 0, None))
    for offset, arg in offsets:  # both in offset order
        while offset >= end:
            found = next(ranges, None)
            if found is None:
                return loads
            start, end, line = found
        if start <= offset and line is not None:
            loads.append((offset, arg, line))
    return loads


def _ends_by_exception(code: CodeType) -> bool:
    """Whether ``code`` (or a code object it defines) has a loop that ends by an exception."""
    if _END_ASYNC_FOR in code.co_code[::2]:
        return True
    return any(isinstance(c, CodeType) and _ends_by_exception(c) for c in code.co_consts)

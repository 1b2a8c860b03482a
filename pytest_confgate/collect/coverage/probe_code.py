"""Line probes made cheap: instrumented code cached on disk, fired probes jumped over.

Two costs remain once the tracer is gone, and this module removes both:

- **Compiling.** Parsing, instrumenting and compiling every measured module on every run costs
  more than the import it replaces. ``ProbeCache`` keeps the instrumented code object, as
  ``.pyc`` files do, under a key of the source's hash, the file's path, the Python version and
  the instrumenter's version, so a warm run only unmarshals it.
- **Probes in hot loops.** A probe is a call (``set.add``) each time its line runs. Once a
  line is recorded the call is useless, so ``Deinstrumenter.sweep`` rewrites each function
  whose probes fired into a copy where those probes are a ``JUMP_FORWARD`` over the call
  (the bytes keep their length, so no jump target, exception table or line table moves; the
  approach of SlipCover on Python < 3.12) and points the live function objects at the copy.
  A frame that is running keeps its code until it returns; recorded lines never change, so
  when a sweep happens affects speed only, never the figures.
"""

from __future__ import annotations

import dis
import gc
import hashlib
import marshal
import sys
from collections.abc import Callable
from pathlib import Path
from types import CodeType, FunctionType

from pytest_confgate.collect import cache_trust
from pytest_confgate.collect.namespaces import namespace

FORMAT = 4
"""Bumped whenever the instrumented code changes shape, so old cache entries are not used."""
_JUMP_FORWARD = dis.opmap.get("JUMP_FORWARD")
_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]
_LOAD_GLOBAL, _LOAD_CONST, _POP_TOP = (
    dis.opmap[n] for n in ("LOAD_GLOBAL", "LOAD_CONST", "POP_TOP")
)
_CALLS = {dis.opmap[n] for n in ("PRECALL", "CALL", "CALL_FUNCTION") if n in dis.opmap}


def _cache_sizes() -> list[int]:
    """Inline cache entries after each opcode (3.11+); none before."""
    sizes = getattr(dis, "_inline_cache_entries", None)
    if isinstance(sizes, list) and len(sizes) == 256:
        return [int(n) for n in sizes]
    if isinstance(sizes, dict):  # 3.13+: keyed by name
        table = [0] * 256
        for name, count in sizes.items():
            if name in dis.opmap:
                table[dis.opmap[name]] = int(count)
        return table
    return [0] * 256


_CACHES = _cache_sizes()
ACTIVE = sys.version_info < (3, 12)
"""Whether fired probes are stripped: the bytecode rewriting holds on 3.10 and 3.11 only."""
_FUNCTION_LIKE = 0x0002  # CO_NEWLOCALS: a function body, never a module or class body
Sites = dict[int, list[tuple[int, int]]]
"""Per line, the byte ranges ``[start, end)`` of its probe calls in one code object."""


class ProbeCache:
    """Instrumented code objects on disk, one file per (source, path, Python, format)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    def code(
        self, source: bytes, path: str, build: Callable[[], CodeType], variant: str = ""
    ) -> CodeType:
        """The cached code for ``source`` at ``path``, else ``build()`` (and keep it).

        ``variant`` tells apart two compilations of one source (asserts rewritten or not).
        """
        entry = self._entry(source, path, variant)
        if entry is None:
            return build()
        # Only code this gate wrote, or wrote before the project's code could run: marshal
        # runs nothing on load, but a planted code object would run as the module.
        data = cache_trust.read_bytes(entry)
        try:
            cached = marshal.loads(data) if data is not None else None  # noqa: S302
            if isinstance(cached, CodeType):
                return cached
        except (ValueError, EOFError, TypeError):
            pass  # unreadable: build it again
        code = build()
        cache_trust.write_bytes(entry, marshal.dumps(code))  # if it cannot, only speed is lost
        return code

    def has(self, source: bytes, path: str, variant: str = "") -> bool:
        """Whether code for ``source`` at ``path`` is kept (and may be read), unread."""
        entry = self._entry(source, path, variant)
        return entry is not None and cache_trust.read_bytes(entry) is not None

    def _entry(self, source: bytes, path: str, variant: str) -> Path | None:
        if self.folder is None:
            return None
        version = f"{sys.version}\0{FORMAT}:{sys.flags.optimize}:{variant}".encode()
        key = hashlib.sha256(b"\0".join([source, path.encode(), version])).hexdigest()
        return self.folder / key[:2] / f"{key}.bin"


def probe_sites(code: CodeType, probe: str) -> Sites:
    """Where each statement probe of ``code`` (not of nested code) sits, by line.

    A probe compiles to ``LOAD_GLOBAL probe; LOAD_CONST line; [PRECALL;] CALL; POP_TOP``.
    The raw bytes are scanned (``dis`` is ~20x slower); anything unexpected, or a probe
    behind an ``EXTENDED_ARG``, is left alone: a probe that stays only costs speed.
    """
    if _JUMP_FORWARD is None or probe not in code.co_names:
        return {}
    wanted = code.co_names.index(probe)
    ops = _decoded(code.co_code)
    sites: Sites = {}
    for index, (offset, op, arg, extended) in enumerate(ops):
        if op != _LOAD_GLOBAL or extended or _global_index(arg) != wanted:
            continue
        found = _probe_end(ops[index + 1 : index + 6], code.co_consts)
        if found is not None and (found[1] - offset - 2) // 2 <= 255:
            sites.setdefault(found[0], []).append((offset, found[1]))
    return sites


def _decoded(raw: bytes) -> list[tuple[int, int, int, bool]]:
    """(offset, opcode, argument, behind EXTENDED_ARG) of each instruction, caches skipped."""
    out = []
    offset, extended = 0, 0
    while offset < len(raw):
        op, arg = raw[offset], raw[offset + 1] | extended
        if op == _EXTENDED_ARG:
            extended = arg << 8
            out.append((offset, op, arg, False))
        else:
            out.append((offset, op, arg, extended != 0))
            extended = 0
        offset += 2 + 2 * _CACHES[op]
    return out


def _probe_end(
    following: list[tuple[int, int, int, bool]], consts: tuple[object, ...]
) -> tuple[int, int] | None:
    """(line, end offset) when ``following`` is ``LOAD_CONST line ... POP_TOP``."""
    if not following or following[0][1] != _LOAD_CONST:
        return None
    line = consts[following[0][2]]
    if not isinstance(line, int) or isinstance(line, bool):
        return None
    for offset, op, _arg, _extended in following[1:]:
        if op == _POP_TOP:
            return line, offset + 2
        if op not in _CALLS:
            return None
    return None


def _global_index(arg: int) -> int:
    return arg >> 1 if sys.version_info >= (3, 11) else arg


class Deinstrumenter:
    """Tracks the functions of instrumented modules and strips the probes that fired.

    A function's code is swapped only when nothing but its function objects, the
    ``co_consts`` of the code around it and this bookkeeping holds that code object: a
    program that keeps ``f.__code__`` (jinja2's ``@internalcode`` puts it in a set), a frame
    running it, a suspended generator or a traceback all make the swap observable, so the
    function keeps its probes (a probe that stays only costs speed). Reference counts tell:
    every code object whose ``co_consts`` may hold a tracked code is kept alive here (the
    module's, and each one a sweep replaced), so the references they give are known exactly.

    On Python 3.12+ the bytecode this rewrites differs and ``sys.monitoring`` is the way to
    stop paying for a recorded line, so nothing is ever rewritten there (``ACTIVE``).
    """

    def __init__(self, probe: str) -> None:
        self.probe = probe
        self._codes: dict[CodeType, tuple[str, Sites | None, CodeType | None]] = {}
        """Each instrumented function's code: its file, its probe sites (None: not read yet,
        ``_fired`` reads them once a line of the code ran), its parent function."""
        self._probe_of: dict[str, str] = {}
        """The name each file's probes call."""
        self._holders: dict[CodeType, int] = {}
        """How many kept code objects list each tracked code in their ``co_consts``."""
        self._kept: list[CodeType] = []
        """Module code and replaced code, kept alive so that ``_holders`` stays exact."""
        self._files: set[str] = set()
        """The measured modules' file names as compiled (their ``__file__``)."""
        self._unit = _lone_code()
        self._codes[self._unit] = ("", {}, None)
        self._holders[self._unit] = 0
        """A tracked code nothing else holds: its reference count is the bookkeeping's own."""

    def track(self, module_code: CodeType, filename: str, probe: str | None = None) -> None:
        """Remember the function code objects inside a freshly compiled module.

        ``probe``: the name its probes call, when not the one this was made with.
        """
        if not ACTIVE:
            return
        self._kept.append(module_code)
        self._files.add(module_code.co_filename)
        self._probe_of[filename] = probe or self.probe
        self._walk(module_code, filename, None, probe or self.probe)

    def _walk(self, code: CodeType, filename: str, parent: CodeType | None, probe: str) -> None:
        owner = code if code.co_flags & _FUNCTION_LIKE else None
        if owner is not None:
            self._codes[code] = (filename, None, parent)  # read when it ran: most never do
            self._holders.setdefault(code, 0)
        for const in code.co_consts:
            if isinstance(const, CodeType):
                self._holders[const] = self._holders.get(const, 0) + 1
                self._walk(const, filename, owner or parent, probe)

    def sweep(self, hits: dict[str, set[int]], *, everywhere: bool = True) -> int:
        """Swap in probe-free copies of functions whose probes fired; returns how many.

        ``everywhere``: find the function objects on the whole heap (a closure kept by any
        object is repointed too; on a large heap this walk is most of a sweep's cost: 190 ms
        of click's first). Otherwise only those the measured modules' namespaces and their
        classes hold, which is where a hot function usually lives; a code another function
        object also holds is then held (``_held``) and keeps its probes, as any held code.
        """
        if not ACTIVE:
            return 0
        fired = self._fired(hits)  # by id: no local of this frame may hold a code object
        if not fired:
            return 0
        functions = _functions_by_code() if everywhere else self._module_functions()
        held = self._held(functions)
        spans = {code: fired[id(code)] for code in self._codes
                 if id(code) in fired and not self._chain(code) & held}
        replaced = self._rebuild(spans)
        for old, (filename, sites, parent) in list(self._codes.items()):
            if old in spans and sites is not None:
                done = hits.get(filename, set())
                sites = {line: at for line, at in sites.items() if line not in done}
            if old in replaced or parent in replaced:
                del self._codes[old]
                new_parent = replaced.get(parent, parent) if parent is not None else None
                self._codes[replaced.get(old, old)] = (filename, sites, new_parent)
        for old, new in replaced.items():
            self._kept.append(old)
            self._holders.setdefault(new, 0)
            for const in new.co_consts:
                if isinstance(const, CodeType) and const in self._holders:
                    self._holders[const] += 1
            for function in functions.get(id(old), ()):
                function.__code__ = new
        return len(replaced)

    def _module_functions(self) -> dict[int, list[FunctionType]]:
        """The function objects the measured modules hold (their namespaces, their classes,
        static and class methods, properties and ``__wrapped__`` chains), by ``id`` of their
        code; each object once. Only plain dictionaries are read: no code of the program's
        (a module ``__getattr__``, a metaclass) runs."""
        found: dict[int, FunctionType] = {}
        seen: set[int] = set()
        files = self._files
        for module in list(sys.modules.values()):
            names = namespace(module)
            if names is not None and names.get("__file__") in files:
                _gather(names, found, seen)
        by_code: dict[int, list[FunctionType]] = {}
        for function in found.values():
            by_code.setdefault(id(function.__code__), []).append(function)
        return by_code

    def _fired(self, hits: dict[str, set[int]]) -> dict[int, list[tuple[int, int]]]:
        """The spans of the probes that fired, by ``id`` of their code object."""
        spans: dict[int, list[tuple[int, int]]] = {}
        for code, (filename, sites, parent) in self._codes.items():
            fired = hits.get(filename)
            if not fired:
                continue
            if sites is None:
                if fired.isdisjoint(line for _, _, line in code.co_lines()):
                    continue  # none of its lines ran: read its probes when one has
                sites = probe_sites(code, self._probe_of.get(filename, self.probe))
                self._codes[code] = (filename, sites, parent)
            found = [span for line, at in sites.items() if line in fired for span in at]
            if found:
                spans[id(code)] = found
        return spans

    def _children(self) -> dict[int, int]:
        """How many tracked codes name each code as their parent (each one a reference)."""
        children: dict[int, int] = {}
        for _filename, _sites, parent in self._codes.values():
            if parent is not None:
                children[id(parent)] = children.get(id(parent), 0) + 1
        return children

    def _held(self, functions: dict[int, list[FunctionType]]) -> set[int]:
        """Ids of tracked code objects something else (a set, a frame, ...) also holds.

        Every tracked code is referenced by its key here and in ``_holders``, by the loop
        variable and by ``getrefcount``'s argument: ``_unit``, tracked alike and held by
        nothing else, measures those on this very interpreter.
        """
        children = self._children()
        own = sys.getrefcount(self._unit)
        held = set()
        for code in self._codes:
            known = len(functions.get(id(code), ())) + self._holders.get(code, 0)
            if sys.getrefcount(code) - own - known - children.get(id(code), 0) > 0:
                held.add(id(code))
        return held

    def _chain(self, code: CodeType) -> set[int]:
        """Ids of ``code`` and every function around it (their swaps go together)."""
        chain: set[int] = set()
        link: CodeType | None = code
        while link is not None:
            chain.add(id(link))
            link = self._codes[link][2]
        return chain

    def _rebuild(self, spans: dict[CodeType, list[tuple[int, int]]]) -> dict[CodeType, CodeType]:
        """New code for the fired functions and every function enclosing them, inner first.

        Parents are rebuilt too so that closures created from now on start probe-free.
        """
        todo: set[CodeType] = set()
        for code in spans:
            link: CodeType | None = code
            while link is not None and link not in todo:
                todo.add(link)
                link = self._codes[link][2]
        replaced: dict[CodeType, CodeType] = {}
        for code in sorted(todo, key=self._depth, reverse=True):
            consts = tuple(replaced.get(c, c) if isinstance(c, CodeType) else c
                           for c in code.co_consts)
            raw = _jumped_over(code.co_code, spans[code]) if code in spans else code.co_code
            replaced[code] = code.replace(co_code=raw, co_consts=consts)
        return replaced

    def _depth(self, code: CodeType) -> int:
        depth, link = 0, self._codes[code][2]
        while link is not None:
            depth, link = depth + 1, self._codes[link][2]
        return depth


def _lone_code() -> CodeType:
    module = compile("def unit():\n    pass\n", "<confgate-unit>", "exec")
    (code,) = (c for c in module.co_consts if isinstance(c, CodeType))
    return code


def _functions_by_code() -> dict[int, list[FunctionType]]:
    """Every live function object, by ``id`` of its code (one pass over the heap).

    ``gc.get_referrers`` would compare every reference with every tracked code object; one
    walk over the tracked objects is linear. Keyed by ``id`` so that the walk itself holds
    no reference to any code object.
    """
    function = FunctionType
    found: dict[int, list[FunctionType]] = {}
    # The filter is a comprehension: on a suite's heap (600,000 objects) the plain loop
    # took twice as long, and a sweep runs it once.
    for holder in [o for o in gc.get_objects() if type(o) is function]:
        found.setdefault(id(holder.__code__), []).append(holder)
    return found


def _gather(namespace: dict[str, object], found: dict[int, FunctionType],
            seen: set[int]) -> None:
    """The functions in ``namespace`` and in the classes it holds (each class once)."""
    for value in list(namespace.values()):
        kind = type(value)
        if kind is FunctionType:
            _function(value, found)  # type: ignore[arg-type]
        elif kind is staticmethod or kind is classmethod:
            inner = value.__func__  # type: ignore[attr-defined]
            if type(inner) is FunctionType:
                _function(inner, found)
        elif kind is property:
            for part in (value.fget, value.fset, value.fdel):  # type: ignore[attr-defined]
                if type(part) is FunctionType:
                    _function(part, found)
        elif isinstance(value, type) and id(value) not in seen:
            seen.add(id(value))
            inner_namespace = type.__dict__["__dict__"].__get__(value)
            _gather(dict(inner_namespace), found, seen)


def _function(function: FunctionType, found: dict[int, FunctionType]) -> None:
    """``function`` and what its ``__wrapped__`` chain holds (decorators keep the original)."""
    current: object = function
    while isinstance(current, FunctionType) and type(current) is FunctionType \
            and id(current) not in found:
        found[id(current)] = current
        attributes = object.__getattribute__(current, "__dict__")
        current = attributes.get("__wrapped__") if type(attributes) is dict else None


def _jumped_over(raw: bytes, spans: list[tuple[int, int]]) -> bytes:
    code = bytearray(raw)
    for start, end in spans:
        code[start] = _JUMP_FORWARD  # type: ignore[assignment]  # probe_sites checked it
        code[start + 1] = (end - start - 2) // 2
    return bytes(code)

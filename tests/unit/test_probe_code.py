"""Cheaper line probes: cached instrumented code, and probes stripped once they fired."""

from __future__ import annotations

import dis
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import CodeType, ModuleType

import pytest

from pytest_confgate.collect.coverage.line_probes import PROBE, LineProbes
from pytest_confgate.collect.coverage.probe_code import ACTIVE, ProbeCache, probe_sites

strips = pytest.mark.skipif(
    not ACTIVE,
    reason="strips probes by rewriting 3.10/3.11 bytecode; on 3.12+ the sys.monitoring "
    "engine stops recorded lines instead (DISABLE), so no code object is rewritten there",
)

MODULE = textwrap.dedent(
    """\
    def pick(x):
        if x:
            return "yes"
        return "no"


    def make(flag):
        def inner(y):
            if y:
                return flag
            return None
        return inner


    def count(n):
        total = 0
        for i in range(n):
            total += i
        return total


    def walk(n):
        for i in range(n):
            yield i
        yield -1


    KEPT = set()


    def internal(f):
        KEPT.add(f.__code__)
        return f


    @internal
    def hidden(x):
        if x:
            return sys._getframe().f_code in KEPT
        return None


    import sys
    """
)


def _probes_in(code: CodeType) -> int:
    """Probe calls in ``code``: each file's probe is a builtin named after ``PROBE``."""
    return sum(1 for i in dis.get_instructions(code) if str(i.argval).startswith(PROBE[:-2]))


@pytest.fixture
def probed(tmp_path: Path) -> Iterator[tuple[LineProbes, ModuleType]]:
    """``stripped_mod`` imported through line probes, in this process."""
    path = tmp_path / "stripped_mod.py"
    path.write_text(MODULE, encoding="utf-8")
    probes = LineProbes.for_files([path])
    probes.install()
    sys.path.insert(0, str(tmp_path))
    try:
        import stripped_mod

        yield probes, stripped_mod
    finally:
        probes.uninstall()
        sys.path.remove(str(tmp_path))
        sys.modules.pop("stripped_mod", None)


@strips
def test_a_fired_probe_is_jumped_over_and_the_others_still_record(
    probed: tuple[LineProbes, ModuleType],
) -> None:
    probes, mod = probed
    assert mod.pick(1) == "yes"
    before = _probes_in(mod.pick.__code__)
    assert probes.sweep() >= 1
    assert _probes_in(mod.pick.__code__) == before - 2  # lines 2 and 3 fired
    assert mod.pick(1) == "yes"
    assert mod.pick(0) == "no"  # line 4 was never run: its probe is still there
    (lines,) = probes.lines().values()
    assert [line for line in lines if line < 28] == [1, 2, 3, 4, 7, 15, 22]


@strips
def test_closures_made_after_a_sweep_start_without_fired_probes(
    probed: tuple[LineProbes, ModuleType],
) -> None:
    probes, mod = probed
    early = mod.make("a")
    assert early(True) == "a"
    probes.sweep()
    late = mod.make("b")
    assert _probes_in(late.__code__) == 1  # only `return None` (line 11) never ran
    assert _probes_in(early.__code__) == 1  # the live closure was repointed too
    assert (late(True), late(False)) == ("b", None)
    assert 11 in next(iter(probes.lines().values()))


def test_a_suspended_generator_and_a_hot_loop_keep_working_across_sweeps(
    probed: tuple[LineProbes, ModuleType],
) -> None:
    probes, mod = probed
    walking = mod.walk(3)
    assert next(walking) == 0
    probes.sweep()
    assert list(walking) == [1, 2, -1]
    assert mod.count(1000) == sum(range(1000))
    probes.sweep()
    assert mod.count(10) == 45
    (lines,) = probes.lines().values()
    assert {16, 17, 18, 19, 23, 24, 25} <= set(lines)


@strips
def test_a_hot_loop_loses_its_fired_probes(probed: tuple[LineProbes, ModuleType]) -> None:
    probes, mod = probed
    assert mod.count(1000) == sum(range(1000))
    assert probes.sweep() >= 1
    assert _probes_in(mod.count.__code__) == 0
    assert mod.count(10) == 45



NAMESPACES = textwrap.dedent(
    """\
    import functools


    def count(n):
        total = 0
        for i in range(n):
            total += i
        return total


    def traced(f):
        @functools.wraps(f)
        def wrapper(*args):
            return f(*args)
        return wrapper


    @traced
    def double(x):
        return 2 * x


    class Box:
        def get(self, x):
            return x + 1

        @staticmethod
        def make(x):
            return x - 1

        @property
        def size(self):
            return 3


    def make(flag):
        def inner(y):
            if y:
                return flag
            return None
        return inner


    KEPT = []
    """
)


@strips
def test_a_sweep_of_the_namespaces_strips_what_the_modules_hold_and_leaves_the_rest(
    tmp_path: Path,
) -> None:
    """The early sweeps read the measured modules' namespaces instead of walking the heap
    (on click a heap walk cost more than the probes it stripped): functions, methods, static
    methods, properties and the originals behind ``functools.wraps`` are stripped; a closure
    only another object holds keeps its code, and every probe still records."""
    path = tmp_path / "space_mod.py"
    path.write_text(NAMESPACES, encoding="utf-8")
    probes = LineProbes.for_files([path])
    probes.install()
    sys.path.insert(0, str(tmp_path))
    try:
        import space_mod as mod

        held = mod.make("a")
        mod.KEPT.append(held)
        results = (mod.count(10), mod.double(2), mod.Box().get(1), mod.Box.make(1),
                   mod.Box().size, held(True))
        assert results == (45, 4, 2, 0, 3, "a")
        closure = held.__code__
        assert probes.sweep(everywhere=False) >= 5
        for function in (mod.count, mod.double.__wrapped__, mod.double, mod.Box.get,
                         mod.Box.make, mod.Box.size.fget):
            assert _probes_in(function.__code__) == 0, function
        assert held.__code__ is closure  # not in a namespace: kept as it was
        assert _probes_in(closure) > 0
        assert held(False) is None  # its probes still record
        assert (mod.count(3), mod.double(5)) == (3, 10)
        (lines,) = probes.lines().values()
        assert {4, 5, 6, 7, 8, 38, 39, 40, 44} <= set(lines)
        del closure  # held by this frame, it would keep its probes
        assert probes.sweep(everywhere=True) >= 1  # the heap walk finds the closure
        assert _probes_in(held.__code__) == 0
    finally:
        probes.uninstall()
        sys.path.remove(str(tmp_path))
        sys.modules.pop("space_mod", None)

def test_a_code_object_the_program_keeps_is_never_swapped(
    probed: tuple[LineProbes, ModuleType],
) -> None:
    """jinja2's ``@internalcode``: ``f.__code__`` kept in a set at import, checked later."""
    probes, mod = probed
    original = mod.hidden.__code__
    assert mod.hidden(1) is True
    assert mod.pick(1) == "yes"
    probes.sweep()
    assert mod.hidden.__code__ is original
    assert mod.hidden(1) is True
    assert mod.hidden(0) is None
    assert {38, 39, 40} <= set(next(iter(probes.lines().values())))


@strips
def test_only_the_code_the_program_keeps_keeps_its_probes(
    probed: tuple[LineProbes, ModuleType],
) -> None:
    probes, mod = probed
    kept = mod.hidden.__code__
    before = _probes_in(mod.pick.__code__)  # a count: holding pick's code would keep it
    assert (mod.hidden(1), mod.pick(1)) == (True, "yes")
    assert probes.sweep() >= 1
    assert mod.hidden.__code__ is kept
    assert _probes_in(mod.pick.__code__) == before - 2  # nothing else held it: stripped


def test_a_suspended_generator_keeps_its_function_s_code(
    probed: tuple[LineProbes, ModuleType],
) -> None:
    probes, mod = probed
    original = mod.walk.__code__
    walking = mod.walk(3)
    assert next(walking) == 0
    probes.sweep()
    assert walking.gi_code is mod.walk.__code__ is original
    assert list(walking) == [1, 2, -1]


def test_a_running_frame_keeps_its_function_s_code(tmp_path: Path) -> None:
    """A sweep while a measured function runs (another thread, or a hook up the stack)."""
    path = tmp_path / "running_mod.py"
    path.write_text(
        "import sys\n\ndef outer(sweep):\n    me = sys._getframe().f_code\n"
        "    sweep()\n    return me is outer.__code__\n",
        encoding="utf-8",
    )
    probes = LineProbes.for_files([path])
    probes.install()
    sys.path.insert(0, str(tmp_path))
    try:
        import running_mod

        assert running_mod.outer(lambda: None) is True
        assert running_mod.outer(probes.sweep) is True
    finally:
        probes.uninstall()
        sys.path.remove(str(tmp_path))
        sys.modules.pop("running_mod", None)


@strips
def test_probe_sites_skip_nothing_but_the_probe_statement() -> None:
    code = compile("def f():\n    __confgate_probe__(2)\n    return 5\n", "m.py", "exec")
    (function,) = (c for c in code.co_consts if isinstance(c, CodeType))
    sites = probe_sites(function, PROBE)
    assert list(sites) == [2]
    ((start, end),) = sites[2]
    ops = [i for i in dis.get_instructions(function) if start <= i.offset < end]
    assert ops[0].argval == PROBE
    assert ops[-1].opname == "POP_TOP"


def test_the_cache_reuses_code_for_the_same_source_and_rebuilds_for_new(tmp_path: Path) -> None:
    cache = ProbeCache(tmp_path / "probes")
    builds: list[bytes] = []

    def build(source: bytes) -> CodeType:
        builds.append(source)
        return compile(source, "m.py", "exec")

    first = cache.code(b"X = 1\n", "/p/m.py", lambda: build(b"X = 1\n"))
    again = cache.code(b"X = 1\n", "/p/m.py", lambda: build(b"X = 1\n"))
    assert builds == [b"X = 1\n"]  # the second came from disk
    assert again.co_consts == first.co_consts
    cache.code(b"X = 2\n", "/p/m.py", lambda: build(b"X = 2\n"))
    cache.code(b"X = 1\n", "/other/m.py", lambda: build(b"X = 1\n"))
    assert len(builds) == 3  # a new source or another path is compiled again


def test_a_broken_cache_entry_is_rebuilt_not_trusted(tmp_path: Path) -> None:
    cache = ProbeCache(tmp_path / "probes")
    cache.code(b"X = 1\n", "/p/m.py", lambda: compile("X = 1\n", "m.py", "exec"))
    (entry,) = (tmp_path / "probes").rglob("*.bin")
    entry.write_bytes(b"not marshal data")
    rebuilt = cache.code(b"X = 1\n", "/p/m.py", lambda: compile("X = 1\n", "m.py", "exec"))
    namespace: dict[str, object] = {}
    exec(rebuilt, namespace)  # noqa: S102 -- our own compiled constant, not user text
    assert namespace["X"] == 1


def test_an_unwritable_cache_only_costs_speed(tmp_path: Path) -> None:
    blocker = tmp_path / "probes"
    blocker.write_text("a file where the folder should be", encoding="utf-8")
    code = ProbeCache(blocker).code(b"X = 1\n", "/p/m.py", lambda: compile("X = 1", "m", "exec"))
    assert isinstance(code, CodeType)


@pytest.mark.skipif(ACTIVE, reason="3.10/3.11 strip fired probes: the @strips tests check it")
def test_from_3_12_no_code_object_is_ever_rewritten(
    probed: tuple[LineProbes, ModuleType],
) -> None:
    """3.12+'s bytecode is not the one the sweep knows: it must never touch it."""
    probes, mod = probed
    originals = {name: getattr(mod, name).__code__ for name in ("pick", "count", "make")}
    assert (mod.pick(1), mod.count(5), mod.make(1)(True)) == ("yes", 10, 1)
    assert probes.sweep() == 0
    assert all(getattr(mod, name).__code__ is code for name, code in originals.items())
    assert mod.pick(0) == "no"
    assert 4 in next(iter(probes.lines().values()))

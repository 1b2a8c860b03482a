"""The ``sys.monitoring`` engine (Python 3.12+) against coverage.py as the oracle.

Each case runs the same calls twice on ``tests/data/monitor_arcs``: once under coverage.py's
own measurement (``coverage run --branch``'s core on this Python: its C tracer on 3.12/3.13,
its ``sysmon`` core on 3.14), once under ``MonitorProbes``, whose arcs go into the
``CoverageData`` coverage.py reports from. Every figure of ``coverage json`` must be equal:
lines, statements, branches, partial branches and the missing arcs themselves.
"""

from __future__ import annotations

import gc
import importlib.util
import itertools
import json
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(
    sys.version_info < (3, 12),
    reason="sys.monitoring exists from Python 3.12; the 3.10/3.11 engine (line probes) is "
    "tested in test_line_probes.py and test_probe_code.py",
)

DATA = Path(__file__).resolve().parent.parent / "data" / "monitor_arcs"
CONSTRUCTS = DATA / "constructs.py"
_names = itertools.count()

CASES: dict[str, Callable[[Any], None]] = {
    "if_elif_else": lambda m: [m.ifs(x) for x in (1, 7, 20, 3, 150)],
    "if_one_side": lambda m: m.ifs(7),
    "for_while_else_break": lambda m: (m.loops([1, 2]), m.loops([-1]), m.loops([])),
    "while_true": lambda m: m.loops([5]),
    "nested_loops_else_continue": lambda m: m.deep(4),
    "one_line_bodies": lambda m: (m.one_liners(2), m.one_liners(0)),
    "closure_while_return": lambda m: (m.nested(3), m.nested(0)),
    "try_except_else_finally": lambda m: (m.trying(2), m.trying(0)),
    "exception_out_of_finally": lambda m: _swallow(m.trying, 1),
    "loop_try_continue": lambda m: (m.loop_try([1, 0, "s", 9, 2]), m.loop_try([])),
    "return_in_try_finally": lambda m: [m.fin_return(x) for x in (0, 1, 2)],
    "except_star": lambda m: m.except_star(1),
    "exception_leaves_branch_line": lambda m: (m.raise_in_if(1), _swallow(m.raise_in_if, "x")),
    "raise_in_if": lambda m: (m.raises_out(0), _swallow(m.raises_out, 1)),
    "with_return_inside": lambda m: (m.withs(True), m.withs(False)),
    "with_two_items": lambda m: (m.multi_with(1), m.multi_with(0)),
    "match": lambda m: [m.matching(v) for v in (0, [1, 2], {"k": 2}, "s", 3.5)],
    "match_partly": lambda m: m.matching({"k": 0}),
    "comprehensions_lambdas": lambda m: m.comps([1, 2, 3]),
    "conditions_and_assert": lambda m: (m.conds(3, 2), m.conds(0, 0)),
    "generator": lambda m: list(m.gen(4)),
    "generator_send": lambda m: _drive(m.gen_send()),
    "decorators_property": lambda m: (m.decorated(1), m.decorated(None), m.K().m(1), m.K().p),
    "early_return": lambda m: (m.early(None), m.early(5), m.early(1)),
    "nothing_called": lambda m: None,
}


def _swallow(function: Callable[[Any], Any], arg: Any) -> None:
    try:
        function(arg)
    except Exception:
        return


def _drive(generator: Any) -> None:
    next(generator)
    generator.send(2)
    _swallow(generator.send, None)


def _load(path: Path, quiet: bool = True) -> Any:
    """A fresh module from ``path``: new code objects each time."""
    spec = importlib.util.spec_from_file_location(f"monitor_case_{next(_names)}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():
        if quiet:  # compiling the data files again may warn (a `return` in `finally`)
            warnings.simplefilter("ignore")
        spec.loader.exec_module(module)
    return module


def _json(cov: Any, path: Path, tmp_path: Path) -> dict[str, Any]:
    out = tmp_path / f"report{next(_names)}.json"
    cov.json_report(morfs=[str(path)], outfile=str(out))
    files = json.loads(out.read_text(encoding="utf-8"))["files"]
    (report,) = files.values()
    return {key: report.get(key) for key in ("summary", "executed_lines", "missing_branches")}


def _coverage_py(path: Path, run: Callable[[Any], Any], tmp_path: Path) -> dict[str, Any]:
    import coverage

    cov = coverage.Coverage(branch=True, data_file=None, include=[str(path)])
    cov.start()
    try:
        run(_load(path))
    finally:
        cov.stop()
    return _json(cov, path, tmp_path)


def _probes(path: Path, branch: bool = True, keep_alive: bool = False) -> Any:
    """The probes as the engine makes them for the core ``_coverage_py`` measures with
    (``COVERAGE_CORE`` chooses it, as for ``coverage run``)."""
    import coverage

    from pytest_confgate.collect.coverage.monitor_probes import MonitorProbes
    from pytest_confgate.collect.coverage.tracer import reference_core

    core = reference_core(coverage.Coverage(branch=branch, data_file=None, config_file=False))
    wanted = str(path.resolve())
    return MonitorProbes(lambda filename, module: filename == wanted, branch=branch,
                         keep_alive=keep_alive, reference_traces=core != "sysmon")


def _monitored(path: Path, run: Callable[[Any], Any], tmp_path: Path) -> dict[str, Any]:
    import coverage

    probes = _probes(path)
    probes.start()
    try:
        run(_load(path))
    finally:
        probes.stop()
    assert not probes.unprobed
    cov = coverage.Coverage(branch=True, data_file=None, include=[str(path)])
    cov.get_data().add_arcs(probes.arcs())
    return _json(cov, path, tmp_path)


@pytest.mark.parametrize("case", sorted(CASES))
def test_branch_figures_equal_coverage_pys(case: str, tmp_path: Path) -> None:
    expected = _coverage_py(CONSTRUCTS, CASES[case], tmp_path)
    assert _monitored(CONSTRUCTS, CASES[case], tmp_path) == expected
    if case != "nothing_called":
        assert expected["summary"]["num_branches"] > 0


def test_some_cases_leave_branches_partial(tmp_path: Path) -> None:
    """The oracle is not trivially all-or-nothing: partial branches are compared too."""
    found = _monitored(CONSTRUCTS, CASES["if_one_side"], tmp_path)["summary"]
    assert 0 < found["covered_branches"] < found["num_branches"]
    assert found["num_partial_branches"] > 0


def test_lines_alone_equal_coverage_pys(tmp_path: Path) -> None:
    import coverage

    run = CASES["for_while_else_break"]
    probes = _probes(CONSTRUCTS, branch=False)
    probes.start()
    try:
        run(_load(CONSTRUCTS))
    finally:
        probes.stop()
    mine = coverage.Coverage(data_file=None, include=[str(CONSTRUCTS)])
    mine.get_data().add_lines(probes.lines())
    theirs = coverage.Coverage(data_file=None, include=[str(CONSTRUCTS)])
    theirs.start()
    try:
        run(_load(CONSTRUCTS))
    finally:
        theirs.stop()
    assert _json(mine, CONSTRUCTS, tmp_path) == _json(theirs, CONSTRUCTS, tmp_path)


@pytest.mark.skipif(sys.version_info < (3, 14), reason="3.12/3.13: see the test below")
def test_async_for_is_measured_from_3_14(tmp_path: Path) -> None:
    path = DATA / "async_code.py"
    for n in (3, 0):
        def run(m: Any, n: int = n) -> Any:
            return m.run(n)

        assert _monitored(path, run, tmp_path) == _coverage_py(path, run, tmp_path)


@pytest.mark.skipif(sys.version_info >= (3, 14), reason="3.14 maps it: see the test above")
def test_async_for_is_left_to_coverage_pys_tracer_before_3_14() -> None:
    """An ``async for`` ends on an exception, no branch event: its arcs would be missed."""
    from pytest_confgate.collect.coverage.monitor_engine import needs_tracer

    path = DATA / "async_code.py"
    assert needs_tracer(str(path), branch=True)
    assert not needs_tracer(str(path), branch=False)
    assert not needs_tracer(str(CONSTRUCTS), branch=True)
    probes = _probes(path)
    probes.start()
    try:
        _load(path).run(3)
    finally:
        probes.stop()
    # Found at run time too (a file the search before the run did not list): never a figure.
    assert str(path.resolve()) in probes.unprobed
    assert probes.arcs() == {}


def test_code_objects_and_stacks_stay_the_programs(tmp_path: Path) -> None:
    """No ``__code__`` swapped, no frame of ours on the stack, settrace users untouched."""
    source = tmp_path / "seen.py"
    source.write_text(
        "import sys, traceback\n"
        "def where():\n"
        "    return [f.filename for f in traceback.extract_stack()], sys._getframe().f_code\n",
        encoding="utf-8",
    )
    traced: list[str] = []

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename == str(source):
            traced.append(event)
        return tracer

    probes = _probes(source, branch=False)
    previous = sys.gettrace()
    probes.start()
    sys.settrace(tracer)
    try:
        module = _load(source)
        code = module.where.__code__
        for _ in range(3):
            stack, running = module.where()
            assert running is code
            assert module.where.__code__ is code
            assert not [name for name in stack if "pytest_confgate" in name]
    finally:
        sys.settrace(previous)
        probes.stop()
    assert "call" in traced
    assert "line" in traced
    assert probes.lines() == {str(source.resolve()): [1, 2, 3]}


def test_code_objects_are_neither_kept_nor_seen_by_the_program(tmp_path: Path) -> None:
    """A measured code object has the program's referrers only, as under ``coverage run``'s
    C tracer, and dies with its function. typeguard's ``find_function`` walks
    ``gc.get_referrers(code)``: a list of ours among them ran another branch under the gate.
    In a process of its own: a measurement this suite runs under (the self-gate on 3.14, which
    holds code objects as coverage.py's sysmon core does) would be a referrer too."""
    (tmp_path / "held.py").write_text(
        "import gc, inspect\n"
        "def target():\n"
        "    return 1\n"
        "def others():\n"
        "    target()\n"
        "    return [type(r).__name__ for r in gc.get_referrers(target.__code__)\n"
        "            if not inspect.isfunction(r)]\n",
        encoding="utf-8",
    )
    (tmp_path / "check.py").write_text(HELD_CHECK, encoding="utf-8")
    done = subprocess.run([sys.executable, "check.py"], cwd=tmp_path, capture_output=True,
                          text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    seen, alive_after_del, seen_again, measured = json.loads(done.stdout.splitlines()[-1])
    assert (seen, alive_after_del, seen_again) == ([], False, [])
    assert measured  # others() returned, measured


HELD_CHECK = """\
import gc, importlib.util, json, sys, weakref
from pathlib import Path
from pytest_confgate.collect.coverage.monitor_probes import MonitorProbes

source = Path("held.py").resolve()


def load(n):
    spec = importlib.util.spec_from_file_location(f"held_{n}", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


probes = MonitorProbes(lambda filename, module: filename == str(source), branch=True)
probes.start()
try:
    module = load(1)
    seen = module.others()
    dead = weakref.ref(module.target.__code__)
    del module
    gc.collect()
    alive = dead() is not None
    seen_again = load(2).others()
finally:
    probes.stop()
print(json.dumps([seen, alive, seen_again, (6, -4) in probes.arcs()[str(source)]]))
"""


def test_where_coverage_run_keeps_code_objects_alive_the_gate_does_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """coverage.py's ``sysmon`` core (``coverage run``'s default from 3.14) keeps every code
    object it sees in a list: a program counting referrers sees one more there, and the gate
    holds them the same way where ``coverage run`` would, so the program takes the same path."""
    import coverage
    import coverage.env

    from pytest_confgate.collect.coverage.tracer import reference_uses_sysmon

    source = tmp_path / "held.py"
    source.write_text(
        "import gc\ndef target():\n    return 1\n"
        "def others():\n    target()\n"
        "    return sorted({type(r).__name__ for r in gc.get_referrers(target.__code__)})\n",
        encoding="utf-8",
    )
    probes = _probes(source, keep_alive=True)
    probes.start()
    try:
        assert "list" in _load(source).others()
    finally:
        probes.stop()
    def made() -> Any:  # coverage.py reads COVERAGE_CORE as a Coverage object is made
        return coverage.Coverage(data_file=None, config_file=False)

    monkeypatch.setenv("COVERAGE_CORE", "sysmon")
    assert reference_uses_sysmon(made())
    monkeypatch.setenv("COVERAGE_CORE", "ctrace")
    assert not reference_uses_sysmon(made())
    monkeypatch.delenv("COVERAGE_CORE")
    cov = made()
    assert reference_uses_sysmon(cov) == bool(getattr(coverage.env, "SYSMON_DEFAULT", False))
    cov.set_option("run:dynamic_context", "test_function")
    assert not reference_uses_sysmon(cov)


def test_a_warning_at_import_names_the_importer(tmp_path: Path) -> None:
    source = tmp_path / "old.py"
    source.write_text(
        "import warnings\nwarnings.warn('old is deprecated', DeprecationWarning, stacklevel=2)\n",
        encoding="utf-8",
    )
    probes = _probes(source)
    probes.start()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _load(source, quiet=False)
    finally:
        probes.stop()
    assert probes.arcs()  # measured
    assert caught[0].filename == __file__  # the importer, as without the engine


def test_tool_id_is_never_coverage_pys_nor_the_debuggers_and_is_given_back() -> None:
    from pytest_confgate.collect.coverage.monitor_probes import TOOL_IDS, MonitorProbes, NoToolId

    mon: Any = sys.monitoring
    assert not {mon.DEBUGGER_ID, mon.COVERAGE_ID, mon.PROFILER_ID} & set(TOOL_IDS)
    probes = _probes(CONSTRUCTS)
    probes.start()
    try:
        assert probes.tool_id in TOOL_IDS
        assert mon.get_tool(probes.tool_id) == "pytest-confgate"
    finally:
        probes.stop()
    taken = [i for i in TOOL_IDS if mon.get_tool(i) is None]
    for tool in taken:
        mon.use_tool_id(tool, "someone else")
    try:
        assert MonitorProbes.free_tool_id() is None
        with pytest.raises(NoToolId, match="taken by another tool"):
            _probes(CONSTRUCTS).start()
    finally:
        for tool in taken:
            mon.free_tool_id(tool)


@pytest.mark.skipif(sys.version_info >= (3, 14), reason="3.14 maps it: see the test above")
def test_async_for_in_a_source_named_as_a_package_is_found_before_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """jinja2's ``source = ["jinja2", "tests"]`` with the package under ``src/``: coverage.py's
    own search lists a package's files only once it is imported, so its ``async for`` modules
    were met at run time and the figure failed ("could not map the branches") on 3.12/3.13.
    The package is found without importing it, as the 3.11 engine already did."""
    import coverage

    from pytest_confgate.collect.coverage.monitor_engine import MonitorEngine

    package = tmp_path / "src" / "asyncpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    looping = package / "looping.py"
    looping.write_text((DATA / "async_code.py").read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    cov = coverage.Coverage(data_file=None, config_file=False, branch=True, source=["asyncpkg"])
    engine = MonitorEngine.for_run(cov)
    assert not isinstance(engine, str), engine
    assert "asyncpkg" not in sys.modules
    assert str(looping.resolve()) in engine.traced


FINALLY_IF_ON_THE_WAY_OUT = """\
KEYWORDS = frozenset(["known"])


class Parser:
    def __init__(self):
        self.stack = []
        self.extensions = {}

    def fail(self, value):
        raise ValueError(value)

    def parse_known(self):
        return "known"

    def parse(self, value):
        self.stack.append(value)
        pop = True
        try:
            if value in KEYWORDS:
                f = getattr(self, f"parse_{value}")
                return f()
            if value == "call":
                return self.parse_known()
            ext = self.extensions.get(value)
            if ext is not None:
                return ext(self)

            self.stack.pop()
            pop = False
            self.fail(value)
        finally:
            if pop:
                self.stack.pop()


def run(value):
    try:
        return Parser().parse(value)
    except ValueError:
        return None
"""


@pytest.mark.parametrize("values", [("other",), ("known", "other")], ids=["raise", "both"])
def test_an_if_in_finally_that_lets_an_exception_out_has_its_exit_arc(
    values: tuple[str, ...], tmp_path: Path
) -> None:
    """jinja2's ``Parser.parse_statement``: ``if pop_tag:`` in a ``finally`` is false while an
    exception passes through, and the function is left from that line (coverage.py's arc
    193->-167); the engine missed that exit arc."""
    path = tmp_path / "finally_exit.py"
    path.write_text(FINALLY_IF_ON_THE_WAY_OUT, encoding="utf-8")

    def run(m: Any) -> None:
        for value in values:
            m.run(value)

    assert _monitored(path, run, tmp_path) == _coverage_py(path, run, tmp_path)


CORES = ["ctrace", "sysmon"]
"""``COVERAGE_CORE`` values a project sets; on 3.12/3.13 coverage.py measures branches with
``ctrace`` whatever it is told (it warns), and so does the reference here."""


@pytest.mark.filterwarnings("ignore:Can't use core=sysmon")
@pytest.mark.parametrize("core", CORES)
def test_the_arcs_follow_the_core_coverage_run_is_told_to_use(
    core: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """3.14 with ``COVERAGE_CORE=ctrace``: coverage.py's tracer records the exit arc of a
    ``finally`` run for an exception and of a line an exception leaves (``raise_in_if``:
    233->-232), which its default ``sysmon`` core does not; the engine followed the
    Python's default core, not the one ``coverage run`` was told to use."""
    monkeypatch.setenv("COVERAGE_CORE", core)
    path = tmp_path / "finally_exit.py"
    path.write_text(FINALLY_IF_ON_THE_WAY_OUT, encoding="utf-8")

    def run(m: Any) -> None:
        m.run("other")

    assert _monitored(path, run, tmp_path) == _coverage_py(path, run, tmp_path)
    case = CASES["exception_leaves_branch_line"]
    assert _monitored(CONSTRUCTS, case, tmp_path) == _coverage_py(CONSTRUCTS, case, tmp_path)


@pytest.mark.filterwarnings("ignore:Can't use core=sysmon")
def test_the_engine_asks_which_core_coverage_run_would_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``COVERAGE_CORE``, ``[run] core`` and ``timid`` choose the reference's core, as
    coverage.py chooses its own; the engine's probes follow it."""
    import coverage

    from pytest_confgate.collect.coverage.monitor_engine import MonitorEngine
    from pytest_confgate.collect.coverage.tracer import reference_core

    sysmon_branches = sys.version_info >= (3, 14)
    monkeypatch.delenv("COVERAGE_CORE", raising=False)
    rc = tmp_path / ".coveragerc"
    rc.write_text("[run]\nbranch = true\ncore = ctrace\n", encoding="utf-8")
    assert reference_core(coverage.Coverage(data_file=None, config_file=str(rc))) == "ctrace"
    rc.write_text("[run]\nbranch = true\ntimid = true\n", encoding="utf-8")
    assert reference_core(coverage.Coverage(data_file=None, config_file=str(rc))) == "pytrace"
    monkeypatch.setenv("COVERAGE_CORE", "sysmon")
    branch = coverage.Coverage(data_file=None, branch=True, config_file=False)
    assert reference_core(branch) == ("sysmon" if sysmon_branches else "ctrace")
    lines = coverage.Coverage(data_file=None, config_file=False)
    assert reference_core(lines) == "sysmon"
    for told, traces in (("ctrace", True), ("", not sysmon_branches)):
        monkeypatch.setenv("COVERAGE_CORE", told)  # read as the Coverage object is made
        cov = coverage.Coverage(data_file=None, branch=True, config_file=False)
        engine = MonitorEngine.for_files(cov, [CONSTRUCTS])
        assert not isinstance(engine, str)
        assert engine.probes.reference_traces == traces


SAME_LINE_BODY_LAST_IN_LOOPS = """\
def loops(n):
    for i in range(2):
        def g(): return i
    while n < 2:
        n += 1
        class D: pass
    return n
"""


@pytest.mark.filterwarnings("ignore:Can't use core=sysmon")
@pytest.mark.parametrize("core", CORES)
def test_a_same_line_body_that_ends_a_loop_has_the_arcs_of_the_reference_core(
    core: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``def g(): return i`` last in a ``for`` body, ``class D: pass`` last in a ``while``
    body: on 3.14 coverage.py's ``sysmon`` core records the arc back to the ``for`` (3->2,
    from one ``LINE`` event to the next) but none back to the ``while`` (6->4); its tracer
    records both. The engine dropped every arc back to a loop's head on 3.14."""
    monkeypatch.setenv("COVERAGE_CORE", core)
    path = tmp_path / "loop_bodies.py"
    path.write_text(SAME_LINE_BODY_LAST_IN_LOOPS, encoding="utf-8")

    def run(m: Any) -> None:
        m.loops(0)

    assert _monitored(path, run, tmp_path) == _coverage_py(path, run, tmp_path)


CLOSED_BY_THE_COLLECTOR = """\
def gen(seen):
    try:
        yield 1
    finally:
        seen.append("closed")


def leave_suspended(seen):
    g = gen(seen)
    next(g)
    cycle = [g]
    cycle.append(cycle)


def first_call():
    return 1
"""


def test_code_the_garbage_collector_runs_is_measured(tmp_path: Path) -> None:
    """jinja2's ``Template.generate`` (``except Exception:``, run as the collector closes a
    suspended generator) was measured in about half of the gate's runs and every one of
    ``coverage run``'s: code a collection runs gives no ``sys.monitoring`` event while one of
    the engine's callbacks runs, and the engine's allocations there started collections."""
    path = tmp_path / "collected.py"
    path.write_text(CLOSED_BY_THE_COLLECTOR, encoding="utf-8")
    probes = _probes(path)
    seen: list[str] = []
    threshold, enabled = gc.get_threshold(), gc.isenabled()
    probes.start()
    try:
        module = _load(path)
        gc.disable()
        module.leave_suspended(seen)
        gc.set_threshold(1)  # the first allocation collects: here, inside a callback
        gc.enable()
        module.first_call()
        gc.collect()
    finally:
        gc.set_threshold(*threshold)
        if not enabled:
            gc.disable()
        probes.stop()
    assert seen == ["closed"]
    (arcs,) = probes.arcs().values()
    assert (5, 5) in arcs  # the finally's line, run by the collector


def _bodies_by_dis(code: Any) -> dict[int, tuple[int, frozenset[int]]]:
    """``same_line_bodies`` as it was written first, with ``dis``: the reference."""
    import dis
    from types import CodeType

    children = {i: c for i, c in enumerate(code.co_consts)
                if isinstance(c, CodeType) and not c.co_name.startswith("<")}
    found = {}
    for instruction in dis.get_instructions(code):
        child = children.get(instruction.arg) if instruction.opname == "LOAD_CONST" else None
        line = instruction.positions.lineno if instruction.positions else None
        if child is None or line is None:
            continue
        lines = {at for _, _, at in child.co_lines() if at is not None}
        if line in lines and lines <= {child.co_firstlineno, line}:
            found[line] = (instruction.offset,
                           frozenset(range(min(child.co_firstlineno, line), line + 1)))
    return found


def _codes(code: Any) -> Iterator[Any]:
    from types import CodeType

    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _codes(const)


def test_one_line_bodies_are_found_without_disassembling(monkeypatch: pytest.MonkeyPatch) -> None:
    """``same_line_bodies`` runs at each measured code object's first start, and
    ``dis.get_instructions`` there was 11% of click's gate run on 3.14. It reads the raw
    bytecode now, and finds what the ``dis`` version found in every code object of the
    standard library modules below, of this repository's test data and of the cases above
    (over 4096 constants: ``EXTENDED_ARG`` loads)."""
    import dis

    from pytest_confgate.collect.coverage import monitor_probes

    sources = [Path(module.__file__) for module in (dis, subprocess, json.decoder, warnings)
               if module.__file__]
    sources += sorted(DATA.glob("*.py"))
    texts = [(str(path), path.read_text(encoding="utf-8")) for path in sources]
    many = "".join(f"def f{i}(): return {i}\n" for i in range(300))
    many += "class Big:\n" + "".join(f"    x{i} = 'v{i}'\n" for i in range(4200))
    many += "    def late(self): return 1\n@staticmethod\ndef last(): pass\n"
    texts += [("one_liners.py", SAME_LINE_BODY_LAST_IN_LOOPS), ("many.py", many)]
    expected = {name: [_bodies_by_dis(c) for c in _codes(compile(text, name, "exec"))]
                for name, text in texts}
    assert any(found for found in expected["many.py"]), "no one-line body in the corpus"

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("disassembled")

    monkeypatch.setattr(monitor_probes.dis, "get_instructions", refused)
    for name, text in texts:
        found = [monitor_probes.same_line_bodies(c) for c in _codes(compile(text, name, "exec"))]
        assert found == expected[name], name

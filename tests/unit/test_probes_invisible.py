"""Line probes the code under test cannot notice (issue 26, Build item 1).

Each test imports one module twice, from two folders: once the normal way and once through
the line probes, and checks that what the module can observe about itself (frames, warnings'
attribution, its import attributes, its source, its doctests, pickling) is the same.
"""

from __future__ import annotations

import copy
import doctest
import importlib
import importlib.machinery
import importlib.util
import inspect
import json
import pickle
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pytest_confgate.collect.coverage.line_probes import LineProbes

Importer = Callable[[str, str], tuple[ModuleType, ModuleType, LineProbes]]


@pytest.fixture
def both(tmp_path: Path) -> Iterator[Importer]:
    """``both(name, source)``: the module imported normally and imported through probes."""
    added: list[str] = []
    installed: list[LineProbes] = []

    def load(name: str, source: str) -> tuple[ModuleType, ModuleType, LineProbes]:
        modules = []
        for kind in ("plain", "probed"):
            folder = tmp_path / kind
            folder.mkdir(exist_ok=True)
            path = folder / f"{name}_{kind}.py"
            path.write_text(textwrap.dedent(source), encoding="utf-8")
            sys.path.insert(0, str(folder))
            added.append(str(folder))
            if kind == "probed":
                probes = LineProbes.for_files([path])
                probes.install()
                installed.append(probes)
            try:
                modules.append(importlib.import_module(f"{name}_{kind}"))
            finally:
                if kind == "probed":
                    probes.uninstall()
        assert probes.lines(), "the probed copy recorded nothing: it was not instrumented"
        return modules[0], modules[1], probes

    yield load
    for folder in added:
        sys.path.remove(folder)
    for name in [n for n in sys.modules if n.endswith(("_plain", "_probed"))]:
        del sys.modules[name]


def _ours(filenames: list[str]) -> list[str]:
    return [f for f in filenames if "pytest_confgate" in f]


def test_a_warning_at_import_with_stacklevel_2_names_the_importer(both: Importer) -> None:
    source = """\
        import warnings
        warnings.warn("deprecated module", DeprecationWarning, stacklevel=2)
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        both("wmod", source)
    plain, probed = caught
    assert (probed.filename, probed.lineno) == (plain.filename, plain.lineno)
    assert not _ours([probed.filename])


def test_the_stack_seen_during_import_has_no_frame_of_ours(both: Importer) -> None:
    source = """\
        import inspect, sys, traceback
        STACK = [f.filename for f in inspect.stack()]
        EXTRACTED = [f.filename for f in traceback.extract_stack()]
        frame, WALKED = sys._getframe(), []
        while frame is not None:
            WALKED.append(frame.f_code.co_filename)
            frame = frame.f_back
    """
    plain, probed, _ = both("smod", source)
    for seen in ("STACK", "EXTRACTED", "WALKED"):
        assert _ours(getattr(probed, seen)) == [], seen
        same = [f.replace("probed", "plain") for f in getattr(probed, seen)]
        assert same == getattr(plain, seen), seen


def test_a_traceback_from_import_has_the_frames_of_a_normal_import(both: Importer) -> None:
    source = """\
        import sys, traceback
        try:
            raise ValueError("at import")
        except ValueError:
            FRAMES = [f.filename for f in traceback.extract_stack()]
            TB = traceback.format_exc()
        def fail():
            raise KeyError("later")
    """
    plain, probed, _ = both("tmod", source)
    assert [f.replace("probed", "plain") for f in probed.FRAMES] == plain.FRAMES
    assert probed.TB.replace("probed", "plain") == plain.TB
    shown = []
    for module in (plain, probed):
        with pytest.raises(KeyError) as info:
            module.fail()
        shown.append([(e.path.name[:4], e.lineno) for e in info.traceback][-1])
    assert shown == [("tmod", 7)] * 2  # pytest counts from 0: the raise on line 8


def test_import_attributes_are_the_normal_import_system_s(both: Importer) -> None:
    plain, probed, _ = both("amod", "X = 1\n")
    for module in (plain, probed):
        assert type(module.__loader__) is importlib.machinery.SourceFileLoader
        assert module.__spec__.loader is module.__loader__
        assert module.__spec__.origin == module.__file__
        assert module.__cached__ == importlib.util.cache_from_source(module.__file__)
        assert module.__spec__.cached == module.__cached__
        assert module.__package__ == ""
        assert module.__loader__.get_source(module.__name__) == "X = 1\n"
    # toolz.curried exports every callable of a module: a probe there was one too many.
    assert set(vars(probed)) == set(vars(plain))


def test_a_reload_keeps_recording_and_keeps_the_attributes(both: Importer) -> None:
    _, probed, probes = both("rmod", "def f():\n    return 1\n")
    before = type(probed.__loader__)
    probes.install()
    try:
        reloaded = importlib.reload(probed)
    finally:
        probes.uninstall()
    assert reloaded.f() == 1
    assert type(reloaded.__loader__) is before
    assert 2 in next(iter(probes.lines().values()))


def test_source_and_doctest_line_numbers_are_unchanged(both: Importer) -> None:
    source = '''\
        """Module docstring.

        >>> 1 + 1
        2
        """


        class Shape:
            """A shape.

            >>> Shape().sides()
            0
            """

            @staticmethod
            def helper():
                return 1

            def sides(self):
                """
                >>> Shape().sides() + 1
                1
                """
                return 0
    '''
    plain, probed, _ = both("dmod", source)
    assert inspect.getsource(probed.Shape) == inspect.getsource(plain.Shape)
    assert inspect.getsource(probed.Shape.sides) == inspect.getsource(plain.Shape.sides)
    assert inspect.getsourcelines(probed.Shape.helper)[1] == 15

    def found(module: ModuleType) -> list[tuple[str, int | None]]:
        tests = doctest.DocTestFinder().find(module)
        return sorted((t.name.split(".", 1)[1] if "." in t.name else "", t.lineno) for t in tests)

    assert found(probed) == found(plain)
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(probed):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_functions_pickle_and_copy_as_themselves_before_and_after_a_sweep(
    both: Importer,
) -> None:
    source = """\
        def double(x):
            if x:
                return 2 * x
            return 0
    """
    _, probed, probes = both("pmod", source)
    for _ in range(2):
        assert probed.double(3) == 6
        assert pickle.loads(pickle.dumps(probed.double)) is probed.double  # noqa: S301
        assert copy.copy(probed.double) is probed.double
        assert copy.deepcopy(probed.double) is probed.double
        probes.sweep()


def test_a_tracer_sees_the_line_events_of_a_normal_import(both: Importer) -> None:
    """A debugger or another coverage tool (sys.settrace) sees the same lines, in order."""
    source = """\
        def walk(items):
            total = 0
            for item in items:
                if item:
                    total += item
                else:
                    total -= 1
            return total
    """
    plain, probed, probes = both("lmod", source)

    def lines_of(function: Callable[[list[int]], int]) -> list[int]:
        seen: list[int] = []

        def tracer(frame: Any, event: str, _arg: object) -> Any:
            if event == "line" and frame.f_code.co_name == "walk":
                seen.append(frame.f_lineno)
            return tracer

        previous = sys.gettrace()
        sys.settrace(tracer)
        try:
            function([1, 0, 2])
        finally:
            sys.settrace(previous)
        return seen

    expected = lines_of(plain.walk)
    assert lines_of(probed.walk) == expected
    probes.sweep()
    assert lines_of(probed.walk) == expected


def test_a_module_imported_by_hand_from_its_spec_is_probed_and_normal(tmp_path: Path) -> None:
    """``find_spec`` + ``module_from_spec`` + ``exec_module``, and a ``LazyLoader`` on top."""
    path = tmp_path / "hand_mod.py"
    path.write_text("def f():\n    return 41 + 1\n", encoding="utf-8")
    probes = LineProbes.for_files([path])
    probes.install()
    sys.path.insert(0, str(tmp_path))
    try:
        spec = importlib.util.find_spec("hand_mod")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        assert module.f() == 42
        # The loader the caller holds and ran, as a normal import's module shows its own.
        assert module.__loader__ is spec.loader is module.__spec__.loader
        assert isinstance(module.__loader__, importlib.machinery.SourceFileLoader)
        lazy_spec = importlib.util.find_spec("hand_mod")
        assert lazy_spec is not None
        assert lazy_spec.loader is not None
        lazy_spec.loader = importlib.util.LazyLoader(lazy_spec.loader)
        lazy = importlib.util.module_from_spec(lazy_spec)
        sys.modules["hand_mod"] = lazy
        lazy_spec.loader.exec_module(lazy)
        assert lazy.f() == 42
    finally:
        probes.uninstall()
        sys.path.remove(str(tmp_path))
        sys.modules.pop("hand_mod", None)
    assert probes.lines() == {str(path): [1, 2]}


TRACED_RUN = textwrap.dedent(
    """\
    import json, os, runpy, sys, threading
    from pytest_confgate.collect.coverage.line_probes import LineProbes
    target, driver, out, probed = sys.argv[1:5]
    sys.path.insert(0, os.path.dirname(driver))
    if probed == "yes":
        LineProbes.for_files([__import__("pathlib").Path(target)]).install()
    events = []
    def tracer(frame, event, arg):
        if frame.f_code.co_filename == target:
            events.append((event, frame.f_code.co_name, frame.f_lineno))
        return tracer
    def profiler(frame, event, arg):
        if frame.f_code.co_filename == target and event in ("call", "return"):
            events.append(("profile " + event, frame.f_code.co_name, frame.f_lineno))
    sys.settrace(tracer)
    sys.setprofile(profiler)
    runpy.run_path(driver, run_name="__main__")
    sys.setprofile(None)
    sys.settrace(None)
    with open(out, "w") as handle:
        json.dump(events, handle)
    """
)


def test_a_tracer_sees_every_event_of_the_probe_target_as_without_probes(tmp_path: Path) -> None:
    """Decorators, ``except`` clauses, ``match`` cases: the events a debugger steps through."""
    import shutil
    import subprocess

    data = Path(__file__).parent.parent / "data"
    for name in ("probe_target.py", "probe_driver.py"):
        shutil.copy(data / name, tmp_path / name)
    script = tmp_path / "traced_run.py"
    script.write_text(TRACED_RUN, encoding="utf-8")
    runs = []
    for probed in ("no", "yes"):
        out = tmp_path / f"events-{probed}.json"
        subprocess.run(
            [sys.executable, str(script), str(tmp_path / "probe_target.py"),
             str(tmp_path / "probe_driver.py"), str(out), probed],
            cwd=tmp_path, check=True, capture_output=True,
        )
        runs.append(json.loads(out.read_text(encoding="utf-8")))
    plain, probed_events = runs
    assert len(plain) > 200
    assert probed_events == plain


def test_a_module_imported_under_a_profiler_is_left_unprobed_and_named(tmp_path: Path) -> None:
    """A profiler would see the probes' calls: that module is not probed, and the report says
    so (``unprobed``), rather than a profile that differs from the bare run's."""
    path = tmp_path / "profiled_mod.py"
    path.write_text("def f():\n    return 1\n", encoding="utf-8")
    probes = LineProbes.for_files([path])
    probes.install()
    sys.path.insert(0, str(tmp_path))
    calls: list[str] = []

    def profiler(frame: Any, event: str, arg: Any) -> None:
        if event == "c_call" and frame.f_code.co_filename == str(path):
            calls.append(getattr(arg, "__name__", ""))

    previous = sys.getprofile()
    sys.setprofile(profiler)
    try:
        import profiled_mod

        assert profiled_mod.f() == 1
    finally:
        sys.setprofile(previous)
        probes.uninstall()
        sys.path.remove(str(tmp_path))
        sys.modules.pop("profiled_mod", None)
    assert calls == []
    assert "profiler" in probes.unprobed[str(path)]
    assert probes.lines() == {}


def test_a_measured_module_run_by_runpy_runs_and_is_measured(tmp_path: Path) -> None:
    """``runpy.run_module`` (how a test runs ``python -m pkg``) executes the code in a fresh
    namespace of its own: it must run as without the gate, and still record its lines."""
    import runpy

    package = tmp_path / "clipkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    main = package / "__main__.py"
    main.write_text("RESULT = 6 * 7\n", encoding="utf-8")
    probes = LineProbes.for_files([main])
    probes.install()
    sys.path.insert(0, str(tmp_path))
    try:
        namespace = runpy.run_module("clipkg", run_name="__main__")
    finally:
        probes.uninstall()
        sys.path.remove(str(tmp_path))
        for name in ("clipkg", "clipkg.__main__"):
            sys.modules.pop(name, None)
    assert namespace["RESULT"] == 42
    assert not any(name.startswith("__confgate") for name in namespace)
    assert probes.lines() == {str(main): [1]}
    assert probes.unprobed == {}

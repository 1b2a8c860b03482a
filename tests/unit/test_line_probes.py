"""Line probes must report exactly the lines coverage.py's tracer reports (issue 3).

Both engines run the same program in their own subprocess (the import hook never touches this
process), and coverage.py's own JSON report analyses both, so any difference is the engine's.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_confgate.collect.coverage.line_probes import PROBE, LineProbes, instrument
from pytest_confgate.collect.coverage.session import CoverageSession

DATA = Path(__file__).parent.parent / "data"

PROBED_RUN = textwrap.dedent(
    """\
    import json, os, runpy, sys
    import coverage
    from pytest_confgate.collect.coverage.line_probes import LineProbes
    target, driver, out = (os.path.abspath(a) for a in sys.argv[1:4])
    sys.path.insert(0, os.path.dirname(driver))
    probes = LineProbes.for_files([__import__("pathlib").Path(target)])
    probes.install()
    runpy.run_path(driver, run_name="__main__")
    probes.uninstall()
    cov = coverage.Coverage(include=[target], data_file=None)
    cov.get_data().add_lines(probes.lines())
    cov.json_report(morfs=[target], outfile=out)
    """
)


def figures(report: dict[str, Any]) -> dict[str, tuple[list[int], list[int]]]:
    return {
        Path(name).name: (data["executed_lines"], data["missing_lines"])
        for name, data in report["files"].items()
    }


def run_both(tmp_path: Path, target: Path, driver: Path) -> tuple[dict[str, Any], ...]:
    for source in (target, driver):
        shutil.copy(source, tmp_path / source.name)
    target, driver = tmp_path / target.name, tmp_path / driver.name
    traced, probed = tmp_path / "traced.json", tmp_path / "probed.json"
    subprocess.run(
        [sys.executable, "-m", "coverage", "run", f"--include={target}", "--data-file",
         str(tmp_path / ".coverage"), str(driver)],
        cwd=tmp_path, check=True, capture_output=True,
    )
    subprocess.run(
        [sys.executable, "-m", "coverage", "json", "--data-file", str(tmp_path / ".coverage"),
         "-o", str(traced)],
        cwd=tmp_path, check=True, capture_output=True,
    )
    script = tmp_path / "probed_run.py"
    script.write_text(PROBED_RUN)
    subprocess.run(
        [sys.executable, str(script), str(target), str(driver), str(probed)],
        cwd=tmp_path, check=True, capture_output=True,
    )
    return json.loads(traced.read_text()), json.loads(probed.read_text())


def test_probes_report_the_same_lines_as_coverage_py(tmp_path: Path) -> None:
    traced, probed = run_both(tmp_path, DATA / "probe_target.py", DATA / "probe_driver.py")
    assert figures(probed) == figures(traced)
    executed, missing = figures(traced)["probe_target.py"]
    assert missing  # the driver leaves lines unrun on purpose: a real comparison
    assert executed


def test_docstrings_and_future_imports_stay_first() -> None:
    source = '"""Doc."""\nfrom __future__ import annotations\nX = 1\n'
    tree = instrument(ast.parse(source))
    first = tree.body
    assert isinstance(first[0], ast.Expr)
    assert ast.literal_eval(first[0].value) == "Doc."
    assert isinstance(first[1], ast.ImportFrom)
    assert first[1].module == "__future__"
    compile(tree, "m.py", "exec")  # a future import after a probe would not compile
    assert PROBE in ast.unparse(tree)


def test_a_changed_module_imported_before_the_gate_is_named(tmp_path: Path) -> None:
    already = Path(ast.__file__)
    assert LineProbes.for_files([already]).missed_modules() == [str(already)]
    assert LineProbes.for_files([tmp_path / "fresh.py"]).missed_modules() == []


def test_no_bytecode_cache_is_written_for_an_instrumented_module(tmp_path: Path) -> None:
    (tmp_path / "cached_mod.py").write_text("VALUE = 1\n")
    script = textwrap.dedent(
        f"""\
        import sys, pathlib
        sys.path.insert(0, {str(tmp_path)!r})
        from pytest_confgate.collect.coverage.line_probes import LineProbes
        probes = LineProbes.for_files([pathlib.Path({str(tmp_path / "cached_mod.py")!r})])
        probes.install()
        import cached_mod
        assert cached_mod.VALUE == 1
        print(probes.lines())
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "[1]" in done.stdout
    assert not list(tmp_path.glob("__pycache__/cached_mod*.pyc"))


@pytest.mark.parametrize("branch", [False, True])
def test_pull_request_mode_uses_probes_for_lines_and_for_branches(
    tmp_path: Path, branch: bool
) -> None:
    module = tmp_path / "changed_mod.py"
    module.write_text("def f(x):\n    if x:\n        return 1\n    return 2\n")
    session = CoverageSession(tmp_path, [tmp_path], branch=branch, only=[module])
    session.start()
    sys.path.insert(0, str(tmp_path))
    try:
        import changed_mod  # imported while the session measures

        changed_mod.f(1)
    finally:
        session.stop()
        sys.path.remove(str(tmp_path))
        sys.modules.pop("changed_mod", None)
    metric = session.metric()
    if sys.version_info >= (3, 12):  # sys.monitoring measures lines and branches there
        assert metric.details["engine"] == "sys.monitoring"
    else:
        assert metric.details["engine"] == ("branch probes" if branch else "line probes")
    assert metric.details["covered_lines"] == 3
    assert metric.details["missing"] == {"changed_mod.py": [4]}


def test_two_probe_finders_at_once_neither_recurses_nor_loses_lines(tmp_path: Path) -> None:
    """A gate run inside a gate run (pytester) installs a second finder in front of the first."""
    (tmp_path / "outer_mod.py").write_text("A = 1\n", encoding="utf-8")
    (tmp_path / "inner_mod.py").write_text("B = 2\n", encoding="utf-8")
    outer = LineProbes.for_files([tmp_path / "outer_mod.py"])
    inner = LineProbes.for_files([tmp_path / "inner_mod.py"])
    outer.install()
    inner.install()
    sys.path.insert(0, str(tmp_path))
    try:
        import inner_mod
        import outer_mod

        assert (inner_mod.B, outer_mod.A) == (2, 1)
    finally:
        inner.uninstall()
        outer.uninstall()
        sys.path.remove(str(tmp_path))
        sys.modules.pop("inner_mod", None)
        sys.modules.pop("outer_mod", None)
    assert [Path(f).name for f in outer.lines()] == ["outer_mod.py"]
    assert [Path(f).name for f in inner.lines()] == ["inner_mod.py"]
    assert not inner.unprobed
    assert not outer.unprobed


def test_a_statement_ending_left_of_its_start_still_compiles() -> None:
    """`return f'''...` over several lines ends at a column before the one it starts at."""
    source = 'def page(x):\n    return f"""<p>\n{x}\n"""\n'
    code = compile(instrument(ast.parse(source)), "page.py", "exec")
    namespace: dict[str, Any] = {PROBE: set().add}
    exec(code, namespace)  # noqa: S102 -- a constant source of this test, not user text
    assert namespace["page"](1) == "<p>\n1\n"


def test_a_module_the_probes_cannot_instrument_still_loads_and_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug of ours must never break the project's tests: the module loads unprobed."""
    (tmp_path / "odd_mod.py").write_text("VALUE = 3\n", encoding="utf-8")

    def broken(tree: ast.Module) -> ast.Module:
        raise RuntimeError("instrumenter bug")

    monkeypatch.setattr("pytest_confgate.collect.coverage.line_probes.instrument", broken)
    probes = LineProbes.for_files([tmp_path / "odd_mod.py"])
    probes.install()
    sys.path.insert(0, str(tmp_path))
    try:
        import odd_mod

        assert odd_mod.VALUE == 3
    finally:
        probes.uninstall()
        sys.path.remove(str(tmp_path))
        sys.modules.pop("odd_mod", None)
    (reason,) = probes.unprobed.values()
    assert reason == "instrumenting failed: RuntimeError: instrumenter bug"
    assert probes.lines() == {}

"""coverage.py's analysis kept by content between runs (``collect/coverage/analysis``).

coverage.py is the oracle: the data of a real ``coverage run --branch`` is reported by
coverage.py's own ``json_report`` and, beside it, under ``reporters`` with a cold cache, a
warm one, a source edited behind the cache's back, other exclusions and a corrupt cache.
"""

from __future__ import annotations

import ast
import contextlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import coverage
import pytest

from pytest_confgate.collect.coverage.analysis import ANALYSES, reporters
from pytest_confgate.collect.coverage.branch_probes import BranchProbes, Unmappable

SHAPES = '''\
def classify(x):  # a docstring-free function of branches
    if x is None:
        return "none"
    elif x < 0:  # pragma: no branch
        return "negative"
    total = (
        x
        + 1
    )
    for digit in str(x):
        if digit == "7":
            break
    else:
        digit = None
    try:
        value = 10 // x
    except ZeroDivisionError:
        value = 0
    if total > 10**9:  # pragma: no cover
        value = -1
    return value, digit


def unused(flag):
    while flag:
        flag -= 1
    return flag
'''

DRIVER = """\
import sys
sys.path.insert(0, "src")
from pkg.shapes import classify
for x in (None, 5, 1734, 0):
    classify(x)
"""

KEYS = ("executed_lines", "missing_lines", "excluded_lines", "executed_branches",
        "missing_branches", "summary")


def _project(tmp_path: Path, exclude: str = "") -> Path:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "src" / "pkg" / "shapes.py").write_text(SHAPES, encoding="utf-8")
    (tmp_path / "src" / "pkg" / "idle.py").write_text("def idle():\n    return 1\n",
                                                       encoding="utf-8")
    (tmp_path / "drive.py").write_text(DRIVER, encoding="utf-8")
    _rc(tmp_path, exclude)
    return tmp_path


def _rc(root: Path, exclude: str) -> None:
    lines = f"exclude_also =\n    {exclude}\n" if exclude else ""
    root.joinpath(".coveragerc").write_text(
        f"[run]\nbranch = true\nsource = src\n\n[report]\n{lines}", encoding="utf-8"
    )


def _measure(root: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "coverage", "run", "--rcfile=.coveragerc", "drive.py"],
        cwd=root, check=True, capture_output=True, timeout=120,
    )


def _report(root: Path, folder: Path | None, *, cached: bool) -> dict[str, Any]:
    cov = coverage.Coverage(data_file=str(root / ".coverage"),
                            config_file=str(root / ".coveragerc"))
    cov.load()
    out = root / ("cached.json" if cached else "plain.json")
    if cached:
        with reporters(cov, folder):
            cov.json_report(outfile=str(out))
    else:
        cov.json_report(outfile=str(out))
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return report


def _figures(report: dict[str, Any]) -> dict[str, Any]:
    files = {name: {k: data[k] for k in KEYS} for name, data in report["files"].items()}
    return {"files": files, "totals": report["totals"]}


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return _project(tmp_path)


def test_cold_and_warm_caches_report_coverage_pys_own_figures(root: Path) -> None:
    folder = root / "cache"
    _measure(root)
    plain = _report(root, None, cached=False)
    assert plain["totals"]["missing_branches"] > 0  # a real comparison
    assert plain["totals"]["excluded_lines"] > 0
    cold = _report(root, folder, cached=True)
    assert sorted(folder.rglob("*.pickle")), "nothing was cached"
    warm = _report(root, folder, cached=True)
    assert _figures(cold) == _figures(plain)
    assert _figures(warm) == _figures(plain)
    # The gate reads no per-function figures: those regions are not computed at all.
    assert "functions" in plain["files"]["src/pkg/shapes.py"]
    assert "functions" not in warm["files"]["src/pkg/shapes.py"]


def test_a_source_edited_after_caching_is_analysed_again(root: Path) -> None:
    folder = root / "cache"
    _measure(root)
    before = _report(root, folder, cached=True)
    # Same lines, same name, three statements more: only the content tells them apart.
    shapes = root / "src" / "pkg" / "shapes.py"
    edited = SHAPES.replace("(\n        x\n        + 1\n    )\n",
                            "x + 1\n    x = x\n    x = x\n    x = x\n")
    assert edited != SHAPES
    assert edited.count("\n") == SHAPES.count("\n")
    shapes.write_text(edited, encoding="utf-8")
    _measure(root)
    plain = _report(root, None, cached=False)
    assert plain["totals"]["num_statements"] == before["totals"]["num_statements"] + 3
    assert _figures(_report(root, folder, cached=True)) == _figures(plain)


def test_other_exclusions_are_not_served_from_the_cache(root: Path) -> None:
    folder = root / "cache"
    _measure(root)
    before = _report(root, folder, cached=True)
    _rc(root, "while flag:")
    plain = _report(root, None, cached=False)
    assert plain["totals"]["excluded_lines"] > before["totals"]["excluded_lines"]
    assert _figures(_report(root, folder, cached=True)) == _figures(plain)


def test_a_corrupt_cache_costs_time_not_figures(root: Path) -> None:
    folder = root / "cache"
    _measure(root)
    _report(root, folder, cached=True)
    entries = sorted(folder.rglob("*.pickle"))
    for number, entry in enumerate(entries):
        entry.write_bytes(b"" if number % 2 else b"\x80\x05not a pickle")
    plain = _report(root, None, cached=False)
    assert _figures(_report(root, folder, cached=True)) == _figures(plain)


def test_a_missing_source_fails_as_coverage_pys_own_reporter_does(root: Path) -> None:
    _measure(root)
    (root / "src" / "pkg" / "shapes.py").unlink()
    with pytest.raises(coverage.exceptions.NoSource) as plain:
        _report(root, None, cached=False)
    with pytest.raises(coverage.exceptions.NoSource) as cached:
        _report(root, root / "cache", cached=True)
    assert str(cached.value) == str(plain.value)


def test_branch_probes_hand_their_analysis_to_the_report(root: Path) -> None:
    """A cold run parses each file once: the parser that placed the probes is reported."""
    folder = root / "cache"
    _measure(root)
    cov = coverage.Coverage(data_file=str(root / ".coverage"),
                            config_file=str(root / ".coveragerc"))
    cov.load()
    # The importer may know the file by a link's name; the reporter, by its real path.
    (root / "linked").symlink_to(root / "src", target_is_directory=True)
    shapes = root / "linked" / "pkg" / "shapes.py"
    source = shapes.read_bytes()
    with contextlib.suppress(Unmappable):  # refused or not, the analysis is kept
        BranchProbes(cov._exclude_regex("exclude"), folder).plan(
            ast.parse(source), source, str(shapes)
        )
    (kept,) = sorted((folder / ANALYSES).rglob("*.pickle"))
    plain = _report(root, None, cached=False)
    assert _figures(_report(root, folder / ANALYSES, cached=True)) == _figures(plain)
    reported = sorted((folder / ANALYSES).rglob("*.pickle"))
    assert kept in reported
    assert len(reported) == 3  # shapes.py's was found; __init__.py's and idle.py's added


def test_a_file_copied_elsewhere_finds_its_analysis(root: Path) -> None:
    """Keyed by content, not by name: a ranked candidate's copy of an unchanged file, or
    branch probes placing arcs after the analysis was kept, parse nothing again."""
    cache = root / "cache"
    _measure(root)
    _report(root, cache / ANALYSES, cached=True)
    kept = {entry: entry.stat().st_ino for entry in (cache / ANALYSES).rglob("*.pickle")}
    assert len(kept) == 3
    copy = root / "elsewhere" / "shapes.py"
    copy.parent.mkdir()
    copy.write_bytes((root / "src" / "pkg" / "shapes.py").read_bytes())
    source = copy.read_bytes()
    cov = coverage.Coverage(config_file=str(root / ".coveragerc"))
    with contextlib.suppress(Unmappable):
        BranchProbes(cov._exclude_regex("exclude"), cache).plan(
            ast.parse(source), source, str(copy)
        )
    # Read, not parsed and written again (a write replaces the file: a new inode).
    assert {e: e.stat().st_ino for e in (cache / ANALYSES).rglob("*.pickle")} == kept


@pytest.mark.parametrize("data", [
    b"x = 1\r\ny = 2\r\n",
    b"x = 1\ry = 2",
    b"x = 1\n\x0cy = 2\n",
    b"# -*- coding: latin-1 -*-\nname = '\xe9'\n",
    b"\xef\xbb\xbfx = 1\n",
    b"",
], ids=["crlf", "cr-no-final-newline", "form-feed", "latin-1", "bom", "empty"])
def test_bytes_checked_before_the_run_read_as_coverage_py_reads_the_file(
    tmp_path: Path, data: bytes
) -> None:
    from coverage.python import get_python_source

    from pytest_confgate.collect.coverage.analysis import python_text

    path = tmp_path / "module.py"
    path.write_bytes(data)
    assert python_text(data) == get_python_source(str(path))


def test_a_file_that_differs_from_its_digest_is_never_analysed(root: Path) -> None:
    """``confgate gate`` names each measured file's bytes before the run; the report reads
    those files only as they were, and a rewritten one stops it."""
    import hashlib
    import os

    from pytest_confgate.collect.coverage.analysis import RewrittenSource

    _measure(root)
    shapes = root / "src" / "pkg" / "shapes.py"
    expected: dict[str, str | None] = {
        os.path.realpath(shapes): hashlib.sha256(shapes.read_bytes()).hexdigest()}
    cov = coverage.Coverage(data_file=str(root / ".coverage"),
                            config_file=str(root / ".coveragerc"))
    cov.load()
    with reporters(cov, None, expected):
        cov.json_report(outfile=str(root / "same.json"))  # unchanged: reported as ever
    shapes.write_text(SHAPES + "\nx = 1\n", encoding="utf-8")
    cov = coverage.Coverage(data_file=str(root / ".coverage"),
                            config_file=str(root / ".coveragerc"))
    cov.load()
    with pytest.raises(RewrittenSource) as caught, reporters(cov, None, expected):
        cov.json_report(outfile=str(root / "rewritten.json"))
    assert caught.value.filename == os.path.realpath(shapes)


def test_a_kept_analysis_gives_coverage_pys_multi_line_statements(root: Path) -> None:
    """``sys.monitoring`` resolves branch events with each file's multi-line statements: read
    from the analysis the report keeps, they are what coverage.py's ``compute_multiline_map``
    tokenizes the file for; before anything is kept there is no answer (it tokenizes)."""
    from coverage.sysmon import compute_multiline_map

    from pytest_confgate.collect.coverage.analysis import multiline_map, parsed

    shapes = str(root / "src" / "pkg" / "shapes.py")
    folder = root / ANALYSES
    exclude = coverage.Coverage(config_file=str(root / ".coveragerc"))._exclude_regex("exclude")
    assert multiline_map(shapes, exclude, folder) is None
    parsed(SHAPES, shapes, exclude, folder)
    found = multiline_map(shapes, exclude, folder)
    assert found == compute_multiline_map(shapes)
    assert found is not None
    assert found[7] == 6  # ``total = (`` to ``)``: one statement
    assert multiline_map(shapes, "never-matches", folder) is None  # another exclusion's entry

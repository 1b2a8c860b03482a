"""``collect.coverage.ahead``: the helper process prepares branch-probed files from the far end
of the list, answers exactly what the gate's own ``prepare`` would, and what it writes to the caches
is read back only because the gate vouched for it from the helper's answers."""

from __future__ import annotations

import ast
import functools
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import CodeType

import coverage
import pytest

from pytest_confgate.collect import cache_trust
from pytest_confgate.collect.coverage import ahead
from pytest_confgate.collect.coverage.analysis import ANALYSES, kept, missing
from pytest_confgate.collect.coverage.branch_edits import Plan
from pytest_confgate.collect.coverage.branch_probes import BranchProbes
from pytest_confgate.collect.coverage.line_probes import LineProbes

PLAIN = "def f(x):\n    if x:\n        return {n}\n    return 0\n"
REFUSED = "def f(x):\n    if x: return 1\n    return 0\n"
"""A body on the branch line itself: branch probes cannot place its arcs."""


@pytest.fixture
def session() -> Iterator[int]:
    """A gate session whose project code started now (entries from here on are suspect)."""
    before = cache_trust.threshold()
    threshold = cache_trust.begin(time.time_ns() - 1)
    yield threshold
    cache_trust.end()
    if before is not None:
        cache_trust.begin(before)


@pytest.fixture
def two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """The helper starts wherever these tests run (under xdist too)."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)


def _files(folder: Path) -> list[str]:
    folder.mkdir()
    paths = []
    for n in range(ahead.MIN_FILES + 2):
        path = folder / f"mod{n}.py"
        path.write_text(REFUSED if n == 3 else PLAIN.format(n=n), encoding="utf-8")
        paths.append(str(path))
    return paths


def _probes(cache: Path, exclude: str) -> LineProbes:
    return LineProbes(lambda _f, _m: True, cache_dir=cache,
                      branches=BranchProbes(exclude, cache))


def _exclude() -> str:
    found: str = coverage.Coverage()._exclude_regex("exclude")
    return found


@pytest.mark.usefixtures("session", "two_cores")
def test_the_helper_prepares_what_the_gate_leaves_it_as_the_gate_would(tmp_path: Path) -> None:
    files = _files(tmp_path / "src")
    exclude = _exclude()
    expected = {path: _probes(tmp_path / "here", exclude).prepare(path) for path in files}
    assert expected[files[3]] is not None
    assert list(expected.values()).count(None) == 9

    helper = ahead.Ahead.start(files, exclude, tmp_path / "cache")
    assert helper is not None
    answers = helper.finish()  # the gate took nothing: the helper did every file
    assert {files[i]: reason for i, reason in answers.items()} == expected

    # Its entries were written after the session began: read only because it vouched for them.
    probes = _probes(tmp_path / "cache", exclude)
    built: list[str] = []

    def build(path: str) -> CodeType:
        built.append(path)
        return compile("", path, "exec")

    for path in files:
        probes._cache.code(Path(path).read_bytes(), path, functools.partial(build, path),
                           probes._variant(path, rewritten=False))
    assert built == [files[3]]  # the refused file has no code to find


@pytest.mark.usefixtures("session", "two_cores")
def test_prepare_all_answers_every_file_however_the_work_is_split(tmp_path: Path) -> None:
    files = _files(tmp_path / "src")
    exclude = _exclude()
    expected = {path: _probes(tmp_path / "here", exclude).prepare(path) for path in files}
    probes = _probes(tmp_path / "cache", exclude)
    assert ahead.prepare_all(files, probes.prepare, exclude, tmp_path / "cache") == expected


@pytest.mark.usefixtures("session", "two_cores")
def test_a_helper_that_dies_leaves_its_files_to_the_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _files(tmp_path / "src")
    exclude = _exclude()
    expected = {path: _probes(tmp_path / "here", exclude).prepare(path) for path in files}

    def dead(files: list[str], _exclude: str | None, _cache: Path, *_how: object) -> ahead.Ahead:
        proc = subprocess.Popen(  # says it started the last file, then exits
            [sys.executable, "-c", f"print('{{\"i\": {len(files) - 1}, \"started\": true}}')"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True,
        )
        proc.wait()
        assert proc.stdout is not None
        os.set_blocking(proc.stdout.fileno(), False)
        return ahead.Ahead(proc, len(files))

    monkeypatch.setattr(ahead.Ahead, "start", dead)
    probes = _probes(tmp_path / "cache", exclude)
    assert ahead.prepare_all(files, probes.prepare, exclude, tmp_path / "cache") == expected


def test_a_test_module_is_only_planned_ahead_as_pytest_compiles_it_again(
    tmp_path: Path,
) -> None:
    """Its asserts are rewritten at import: code compiled ahead without them was never run."""
    folder = tmp_path / "tests"
    folder.mkdir()
    test = folder / "test_mod.py"
    test.write_text(PLAIN.format(n=1), encoding="utf-8")
    refused = folder / "test_refused.py"
    refused.write_text(REFUSED, encoding="utf-8")
    cache = tmp_path / "cache"
    probes = _probes(cache, _exclude())
    assert probes.prepare(str(test)) is None
    assert probes.prepare(str(refused)) is not None  # refused as a full compile refuses it
    assert not list(cache.rglob("*.bin"))  # no code compiled ahead
    assert len(list((cache / "analysis").rglob("*.pickle"))) == 2  # coverage.py's analysis kept

    # Once compiled as pytest loads it (rewritten), a later run does not plan it again.
    variant = probes._variant(str(test), rewritten=True)
    source = test.read_bytes()
    probes._cache.code(source, str(test), lambda: compile(source, str(test), "exec"), variant)
    planned: list[str] = []
    again = _probes(cache, _exclude())
    assert again.branches is not None
    real = again.branches.plan

    def spy(tree: ast.Module, source: bytes, path: str) -> Plan:
        planned.append(path)
        return real(tree, source, path)

    again.branches.plan = spy  # type: ignore[method-assign]
    assert again.prepare(str(test)) is None
    assert planned == []


@pytest.mark.usefixtures("session", "two_cores")
def test_the_helper_keeps_coverage_py_s_analyses_for_the_report(tmp_path: Path) -> None:
    """sys.monitoring and line probes analyse nothing ahead: the helper does it during the
    tests, and what it kept is read because the gate vouched for it."""
    files = _files(tmp_path / "src")
    exclude = _exclude()
    cache = tmp_path / "cache"
    folder = cache / ANALYSES
    assert missing(files, exclude, folder) == files  # cold: the helper is started for them
    helper = ahead.Ahead.start(files, exclude, cache, ahead.ANALYSE)
    assert helper is not None
    answers = helper.finish()
    assert answers == dict.fromkeys(range(len(files)))
    assert missing(files, exclude, folder) == []  # warm: no helper
    assert all(kept(Path(path).read_text(encoding="utf-8"), exclude, folder) for path in files)
    assert not list(cache.rglob("*.bin"))  # nothing compiled

    stopped = ahead.Ahead.start(files, exclude, tmp_path / "other", ahead.ANALYSE)
    assert stopped is not None
    stopped.stop()  # the report needs them at once: whatever is done is vouched, no waiting
    assert stopped.started - set(stopped.answers) == set() or stopped.ended


TESTS = "def test_{n}():\n    x = {n}\n    if x:\n        assert x == {n} + 0\n"


@pytest.mark.usefixtures("session", "two_cores")
def test_test_modules_are_compiled_ahead_rewritten_as_pytest_will_by_both_sides(
    tmp_path: Path,
) -> None:
    """A cold run's test modules were only planned ahead and compiled again, asserts
    rewritten, at their import on the tests' core (click: ~1.2 s of a cold run). With the
    run's rewriting variant, the gate and the helper both compile them as the import will:
    the import then only reads the cache."""
    from pytest_confgate.collect.coverage.assert_rewrite import PlainRewriting

    folder = tmp_path / "tests"
    folder.mkdir()
    files = []
    for n in range(ahead.MIN_FILES + 2):
        path = folder / f"test_m{n}.py"
        path.write_text(TESTS.format(n=n), encoding="utf-8")
        files.append(str(path))
    cache = tmp_path / "cache"
    rewriting = PlainRewriting()
    probes = LineProbes(lambda _f, _m: True, cache_dir=cache, rewriting=rewriting,
                        branches=BranchProbes(_exclude(), cache))
    assert probes.branches is not None
    answers = ahead.prepare_all(files, probes.prepare, probes.branches.exclude, cache,
                                rewriting.variant)
    assert answers == dict.fromkeys(files)
    for path in files:  # every one, whichever side compiled it
        source = Path(path).read_bytes()
        variant = probes._variant(path, rewritten=True)
        assert rewriting.variant in variant
        assert probes._cache.has(source, path, variant), path
        code = probes._cache.code(source, path, lambda: pytest.fail("not compiled"), variant)
        names = {name for c in [code, *code.co_consts] if isinstance(c, CodeType)
                 for name in c.co_names}
        assert "@pytest_ar" in names  # pytest's rewriting helpers: asserts rewritten


def test_the_rewritten_code_is_kept_apart_by_pytest_version_and_pass_hook() -> None:
    """Code rewritten with the pass hook off (or by another pytest) must not be read by a run
    with it on: ``pytest_assertion_pass`` would never be called."""
    from pytest_confgate.collect.coverage.assert_rewrite import PlainRewriting, variant

    assert variant("9.0.0", False) != variant("9.0.0", True)
    assert variant("9.0.0", False) != variant("9.1.0", False)
    assert PlainRewriting().variant == variant(pytest.__version__, False)

"""How many pytest processes cross-testing starts (issue 36, speed): a writer's tests on
itself share the run of the others' tests on it, and what counts is what it was before."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fakes.processes import Counted

from pytest_confgate.config.rank import RankTimeouts
from pytest_confgate.rank import service, trees
from pytest_confgate.rank.crosstest import CrossCell
from pytest_confgate.rank.evaluate import Settings
from pytest_confgate.rank.models import Evidence

SETTINGS = Settings(test_command=(sys.executable, "-m", "pytest"), python=sys.executable,
                    type_check=False, timeouts=RankTimeouts(tests_s=120))
BASE = {
    "calc.py": "def double(x):\n    return x * 2\n",
    "tests/helpers.py": "def same(a, b):\n    assert a == b\n",
    "tests/test_calc.py": "from calc import double\n\n\ndef test_one():\n"
                          "    assert double(1) == 2\n",
}


def _tree(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _cross_test(tmp_path: Path, trees_: Mapping[str, Path]
                ) -> tuple[Counted, list[CrossCell]]:
    """Cross-testing of "w" and "t" against the baseline, as ``confgate rank`` runs it."""
    processes = Counted()
    (tmp_path / "scratch").mkdir()
    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = service.Jobs(
            pool, {key: (tree, tmp_path / f"state-{tree.name}") for key, tree in trees_.items()},
            {key: trees.read_tree(tree) for key, tree in trees_.items()}, SETTINGS, processes,
            lambda _: None, tmp_path / "scratch")
        unblocked = {key: Evidence(solution_id=key, builds=True) for key in ("w", "t")}
        return processes, service._cross_test_all(jobs, unblocked, {"w": "w", "t": "t"}, True)


def test_a_writer_with_its_own_machinery_is_run_on_itself_in_the_others_run(
    tmp_path: Path
) -> None:
    # "w" loosens the helper (its machinery is not the baseline's) and writes a test that
    # passes without it; "t" is a plain candidate
    trees_ = {
        service._BASELINE: _tree(tmp_path / "base", BASE),
        "w": _tree(tmp_path / "w", {
            **BASE, "tests/helpers.py": "def same(a, b):\n    pass\n",
            "tests/test_w.py": "from calc import double\nfrom helpers import same\n\n\n"
                               "def test_good():\n    same(double(3), 6)\n"}),
        "t": _tree(tmp_path / "t", {
            **BASE, "calc.py": "def double(x):\n    return x + x\n",
            "tests/test_t.py": "from calc import double\n\n\ndef test_two():\n"
                               "    assert double(2) == 4\n"}),
    }
    processes, cells = _cross_test(tmp_path, trees_)
    # one run per target; before, "w" also had a run of its own on itself (three)
    assert len(processes.started) == 2
    by_pair = {(c.source, c.target): c for c in cells}
    assert set(by_pair) == {("w", "t"), ("t", "w")}
    assert by_pair["w", "t"].outcomes == {"tests/test_w.py::test_good": "passed"}
    assert by_pair["t", "w"].outcomes == {"tests/test_t.py::test_two": "passed"}


def test_a_writers_test_that_fails_on_itself_in_the_shared_run_runs_alone(
    tmp_path: Path
) -> None:
    # as before: a test that needs the writer's loosened helper is no evidence about others
    trees_ = {
        service._BASELINE: _tree(tmp_path / "base", BASE),
        "w": _tree(tmp_path / "w", {
            **BASE, "tests/helpers.py": "def same(a, b):\n    pass\n",
            "tests/test_w.py": "from calc import double\nfrom helpers import same\n\n\n"
                               "def test_good():\n    same(double(3), 6)\n\n\n"
                               "def test_needs_helper():\n    same(double(3), 7)\n"}),
        "t": _tree(tmp_path / "t", {
            **BASE, "tests/test_t.py": "from calc import double\n\n\ndef test_two():\n"
                                       "    assert double(2) == 4\n"}),
    }
    processes, cells = _cross_test(tmp_path, trees_)
    assert len(processes.started) == 3  # w on itself failed in the shared run: again alone
    by_pair = {(c.source, c.target): c for c in cells}
    assert by_pair["w", "t"].outcomes == {"tests/test_w.py::test_good": "passed"}

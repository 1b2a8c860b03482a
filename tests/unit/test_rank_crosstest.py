"""Cross-testing: compatible groups, the outcomes plugin on a real run, weighted agreement."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_confgate.config.rank import RankTimeouts
from pytest_confgate.rank.crosstest import (
    CrossCell,
    _compatible_groups,
    agreement,
    run_cross_tests,
)
from pytest_confgate.rank.evaluate import Processes, Settings

SETTINGS = Settings(test_command=(sys.executable, "-m", "pytest"), python=sys.executable,
                    type_check=False, timeouts=RankTimeouts(tests_s=120))


def test_each_sources_tests_are_counted_by_id_from_one_run(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (target / "calc.py").write_text("def double(x):\n    return x * 2\n")
    sources = []
    for name, body in (
        ("a", "def test_two():\n    assert double(1) == 2\n\n"
              "def test_four():\n    assert double(2) == 4\n"),
        ("b", "def test_wrong():\n    assert double(3) == 7\n\n"
              "@pytest.mark.skip\ndef test_later():\n    pass\n"),
        ("c", "import no_such_module\n"),
    ):
        tree = tmp_path / name / "tests"
        tree.mkdir(parents=True)
        (tree / f"test_{name}.py").write_text(f"import pytest\nfrom calc import double\n{body}")
        sources.append((name, tmp_path / name, (f"tests/test_{name}.py",)))
    cells = run_cross_tests(sources, ("t", target), tmp_path / "work", SETTINGS, Processes())
    by_source = {cell.source: cell for cell in cells}
    assert (by_source["a"].passed, by_source["a"].ran, by_source["a"].failing) == (2, 2, ())
    assert (by_source["b"].failed, by_source["b"].ran) == (1, 1)  # the skipped one gave no verdict
    assert by_source["b"].failing == ("tests/test_b.py::test_wrong",)
    assert by_source["c"].outcomes == {"tests/test_c.py": "error"}  # did not import: one error
    assert all(cell.problem is None for cell in cells)


def test_a_source_cannot_fail_the_others_tests_by_patching_the_target(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (target / "calc.py").write_text("def double(x):\n    return x * 2\n")
    saboteur = ("import calc\n\n\ndef _wrong(x):\n    return 0\n\n\n"
                "calc.double.__code__ = _wrong.__code__\n\n\ndef test_mine():\n    pass\n")
    honest = "from calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
    sources = []
    for name, body in (("honest", honest), ("saboteur", saboteur)):
        (tmp_path / name / "tests").mkdir(parents=True)
        (tmp_path / name / "tests" / f"test_{name}.py").write_text(body)
        sources.append((name, tmp_path / name, (f"tests/test_{name}.py",)))
    cells = run_cross_tests(sources, ("t", target), tmp_path / "work", SETTINGS, Processes())
    by_source = {cell.source: cell for cell in cells}
    assert by_source["honest"].outcomes == {"tests/test_honest.py::test_double": "passed"}
    assert by_source["saboteur"].outcomes == {"tests/test_saboteur.py::test_mine": "passed"}


def test_sources_that_would_overwrite_each_other_run_separately(tmp_path: Path) -> None:
    trees = {}
    for name, body in (("a", "x = 1\n"), ("b", "x = 2\n"), ("c", "x = 1\n")):
        tree = tmp_path / name
        (tree / "tests").mkdir(parents=True)
        (tree / "tests" / "test_same.py").write_text(body)
        (tree / "tests" / f"test_{name}.py").write_text("")
        trees[name] = (name, tree, ("tests/test_same.py", f"tests/test_{name}.py"))
    groups = _compatible_groups([trees["a"], trees["b"], trees["c"]])
    assert [[s[0] for s in group] for group in groups] == [["a", "c"], ["b"]]


def cell(source: str, target: str, **outcomes: str) -> CrossCell:
    return CrossCell(source, target, (f"test_{source}.py",),
                     {f"test_{source}.py::{name}": o for name, o in outcomes.items()})


def test_agreement_counts_passes_per_target_and_skips_problems() -> None:
    cells = [
        cell("a", "b", one="passed", two="passed", three="failed"),
        cell("c", "b", four="passed"),
        CrossCell("a", "c", ("test_a.py",), problem="timed out"),
    ]
    totals = agreement(cells)
    assert (totals["b"].passed, totals["b"].ran) == (3, 4)
    assert totals["b"].failing == ("a: test_a.py::three",)
    assert "c" not in totals


def test_a_failure_counts_as_far_as_the_other_candidates_back_the_test() -> None:
    # a's test `edge` fails on b and on c, and passes on d: each failure weighs 1/2
    # (of the two other candidates it ran on, one passed it); `strict` fails everywhere
    # but on its author: nobody backs it, so it weighs nothing.
    cells = [
        cell("a", "b", edge="failed", strict="failed"),
        cell("a", "c", edge="failed", strict="failed"),
        cell("a", "d", edge="passed", strict="failed"),
    ]
    totals = agreement(cells)
    assert totals["b"].disagreement == pytest.approx(0.5)
    assert totals["c"].disagreement == pytest.approx(0.5)
    assert totals["d"].disagreement == pytest.approx(0.0)
    assert totals["d"].failing == ("a: test_a.py::strict",)


def test_with_nobody_else_to_ask_a_failure_counts_in_full() -> None:
    totals = agreement([cell("a", "b", one="failed", two="error", three="passed")])
    assert totals["b"].disagreement == pytest.approx(2.0)


def test_copies_of_one_solution_vote_once() -> None:
    # b and b2 are the same tree: b2 passing nothing cannot excuse b, and vice versa
    cells = [cell("a", "b", edge="failed"), cell("a", "b2", edge="failed"),
             cell("a", "c", edge="passed")]
    plain = agreement(cells)
    assert plain["b"].disagreement == pytest.approx(0.5)  # b2 counted as a separate voter
    cloned = agreement(cells, {"b": "b", "b2": "b", "c": "c"})
    assert cloned["b"].disagreement == pytest.approx(1.0)
    assert cloned["b2"].disagreement == pytest.approx(1.0)

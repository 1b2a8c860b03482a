"""Cross-testing helpers: per-file outcomes from pytest's -rA summary, compatible groups."""

from __future__ import annotations

from pathlib import Path

from pytest_confgate.rank.crosstest import (
    CrossCell,
    _compatible_groups,
    agreement,
    per_file_outcomes,
)

SUMMARY = """\
..F.                                                                     [100%]
=========================== short test summary info ============================
PASSED tests/test_a.py::test_one
PASSED tests/test_a.py::TestX::test_two[1-2]
XPASS tests/test_a.py::test_lucky
FAILED tests/test_b.py::test_three - assert 1 == 2
ERROR tests/test_c.py - ImportError: no module named clamp
SKIPPED [1] tests/test_d.py:3: not here
XFAIL tests/test_d.py::test_known - known bug
1 failed, 3 passed, 1 skipped, 1 xfailed, 1 xpassed, 1 error in 0.12s
"""


def test_per_file_outcomes_count_each_test_once_by_its_file() -> None:
    assert per_file_outcomes(SUMMARY) == {
        "tests/test_a.py": (3, 0, 0),
        "tests/test_b.py": (0, 1, 0),
        "tests/test_c.py": (0, 0, 1),
    }


def test_outcome_lines_in_test_output_are_not_read_as_a_summary_without_the_prefix() -> None:
    assert per_file_outcomes("  PASSED tests/test_a.py::x\nprint PASSED\n") == {}


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


def test_agreement_sums_cells_per_target_and_skips_problems() -> None:
    cells = [
        CrossCell("a", "b", ("t.py",), passed=2, failed=1),
        CrossCell("c", "b", ("u.py",), passed=1),
        CrossCell("a", "c", ("t.py",), problem="timed out"),
    ]
    totals = agreement(cells)
    assert (totals["b"].passed, totals["b"].ran) == (3, 4)
    assert "c" not in totals

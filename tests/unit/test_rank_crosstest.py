"""Cross-testing: compatible groups, the outcomes plugin on a real run, weighted agreement."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from pytest_confgate.config.rank import RankTimeouts
from pytest_confgate.rank.crosstest import (
    CrossCell,
    _compatible_groups,
    agreement,
    modules_that_travel,
    run_cross_tests,
    standing,
    vouched,
)
from pytest_confgate.rank.evaluate import Processes, Settings
from pytest_confgate.rank.models import Evidence, Issue, Regression

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

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
        sources.append((name, tmp_path / name, (f"tests/test_{name}.py",), {}))
    cells = run_cross_tests(sources, ("t", target), tmp_path / "work", SETTINGS, Processes())
    by_source = {cell.source: cell for cell in cells}
    assert (by_source["a"].passed, by_source["a"].ran, by_source["a"].failing) == (2, 2, ())
    assert (by_source["b"].failed, by_source["b"].ran) == (1, 1)  # the skipped one gave no verdict
    assert by_source["b"].failing == ("tests/test_b.py::test_wrong",)
    assert "assert 6 == 7" in by_source["b"].why["tests/test_b.py::test_wrong"]  # and why
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
        sources.append((name, tmp_path / name, (f"tests/test_{name}.py",), {}))
    cells = run_cross_tests(sources, ("t", target), tmp_path / "work", SETTINGS, Processes())
    by_source = {cell.source: cell for cell in cells}
    assert by_source["honest"].outcomes == {"tests/test_honest.py::test_double": "passed"}
    assert by_source["saboteur"].outcomes == {"tests/test_saboteur.py::test_mine": "passed"}


def test_in_a_baseline_test_file_only_the_ids_the_source_added_count(tmp_path: Path) -> None:
    # issue 28: a test added to an existing test file is the source's evidence; the file's
    # baseline tests (here one that fails on the target) are not
    target = tmp_path / "target"
    (target / "tests").mkdir(parents=True)
    (target / "calc.py").write_text("def double(x):\n    return x + x + 1\n")
    source = tmp_path / "source"
    (source / "tests").mkdir(parents=True)
    (source / "tests" / "test_calc.py").write_text(
        "from calc import double\n\n\ndef test_old():\n    assert double(0) == 0\n\n\n"
        "def test_added():\n    assert double(2) == 4\n")
    picks = {"tests/test_calc.py": frozenset({"tests/test_calc.py::test_added"})}
    (cell,) = run_cross_tests([("s", source, ("tests/test_calc.py",), picks)], ("t", target),
                              tmp_path / "work", SETTINGS, Processes())
    assert cell.outcomes == {"tests/test_calc.py::test_added": "failed"}


def test_sources_that_would_overwrite_each_other_run_separately(tmp_path: Path) -> None:
    trees = {}
    for name, body in (("a", "x = 1\n"), ("b", "x = 2\n"), ("c", "x = 1\n")):
        tree = tmp_path / name
        (tree / "tests").mkdir(parents=True)
        (tree / "tests" / "test_same.py").write_text(body)
        (tree / "tests" / f"test_{name}.py").write_text("")
        trees[name] = (name, tree, ("tests/test_same.py", f"tests/test_{name}.py"), {})
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


def test_a_gamed_pair_sharing_a_bug_cannot_cancel_a_correct_candidates_test() -> None:
    # issue 28: c's test `forty` fails on a and on b (they share a bug) and passes nowhere
    # else. Under a majority it weighed 0 on both; as evidence it counts in full on each.
    cells = [
        cell("c", "a", forty="failed", four="passed"),
        cell("c", "b", forty="failed", four="passed"),
        cell("a", "c", four="passed"), cell("a", "b", four="passed"),
        cell("b", "c", nine="passed"), cell("b", "a", nine="passed"),
    ]
    totals = agreement(cells)
    assert totals["a"].disagreement == pytest.approx(1.0)
    assert totals["b"].disagreement == pytest.approx(1.0)
    assert totals["c"].disagreement == pytest.approx(0.0)
    assert totals["a"].failing == ("c: test_c.py::forty",)


def test_a_failure_weighs_its_writers_standing_and_says_why() -> None:
    cells = [
        CrossCell("a", "c", ("test_a.py",), {"test_a.py::pinned": "failed"},
                  why={"test_a.py::pinned": "assert 'XL' == 'XXXX'"}),
        cell("b", "c", edge="failed"),
    ]
    standings = {"a": (0.0, "not counted: it has a tamper finding (collection_narrowed)"),
                 "b": (1.0, "its tests count in full")}
    totals = agreement(cells, standing=standings)
    assert totals["c"].disagreement == pytest.approx(1.0)  # only b's failure counts
    assert totals["c"].why["a: test_a.py::pinned"] == "assert 'XL' == 'XXXX'"
    assert totals["c"].why["b: test_b.py::edge"] == "failed"
    assert totals["c"].standing["a"][0] == 0.0


def test_standing_needs_the_baseline_tests_passing_and_no_tamper_finding() -> None:
    base = Evidence("base", True, outcomes={"t.py::old": "passed", "t.py::task": "failed"})
    fine = Evidence("w", True, tamper=(), regression=Regression(
        {"t.py::old": "passed", "t.py::task": "passed"}))
    assert standing(fine, base) == (1.0, "its tests count in full")
    task_edited = dataclasses.replace(fine, regression=Regression(
        {"t.py::old": "passed", "t.py::task": "failed"}))
    weight, why = standing(task_edited, base)
    assert weight == 0.0
    assert "t.py::task" in why
    narrowed = dataclasses.replace(fine, tamper=(Issue("collection_narrowed", "pytest.ini", "x"),))
    assert standing(narrowed, base)[0] == 0.0
    noqa = dataclasses.replace(fine, tamper=(Issue("suppression_added", "m.py", "noqa"),))
    assert standing(noqa, base)[0] == 1.0
    assert standing(dataclasses.replace(fine, tamper=None), base)[0] == 0.0


def test_with_nobody_else_to_ask_a_failure_counts_in_full() -> None:
    totals = agreement([cell("a", "b", one="failed", two="error", three="passed")])
    assert totals["b"].disagreement == pytest.approx(2.0)


def test_copies_of_one_writer_count_once() -> None:
    # b and b2 are the same tree and wrote the same test: it fails once on c, not twice
    cells = [cell("b", "c", edge="failed"), cell("b2", "c", edge="failed")]
    assert agreement(cells)["c"].disagreement == pytest.approx(2.0)
    cloned = agreement(cells, {"b": "b", "b2": "b", "c": "c"})
    assert cloned["c"].disagreement == pytest.approx(1.0)


def _baseline_with_helper(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    base = tmp_path / "baseline"
    (base / "tests").mkdir(parents=True)
    files = {"calc.py": "def double(x):\n    return x * 2\n",
             "tests/helpers.py": "def same(a, b):\n    assert a == b\n"}
    for name, text in files.items():
        (base / name).write_text(text)
    return base, files


def test_cross_tests_run_under_the_baselines_helpers_not_the_targets(tmp_path: Path) -> None:
    # issue 36: a wrong target whose helper accepts anything passed everyone's tests
    base, files = _baseline_with_helper(tmp_path)
    target = tmp_path / "target"
    (target / "tests").mkdir(parents=True)
    (target / "calc.py").write_text("def double(x):\n    return x + 1\n")
    (target / "tests" / "helpers.py").write_text("def same(a, b):\n    pass\n")
    (target / "conftest.py").write_text("import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
                                        "def pytest_runtest_makereport(item, call):\n"
                                        "    report = (yield).get_result()\n"
                                        "    report.outcome = 'passed'\n")
    source = tmp_path / "source"
    (source / "tests").mkdir(parents=True)
    (source / "tests" / "test_s.py").write_text(
        "from helpers import same\nfrom calc import double\n\n\n"
        "def test_double():\n    same(double(3), 6)\n")
    (cell,) = run_cross_tests([("s", source, ("tests/test_s.py",), {})], ("t", target),
                              tmp_path / "work", SETTINGS, Processes(), (base, files))
    assert cell.outcomes == {"tests/test_s.py::test_double": "failed"}


def test_a_writers_conftest_does_not_travel_and_only_what_passes_on_it_counts(
    tmp_path: Path
) -> None:
    # issue 36: a new tests/conftest.py that swaps the code under test made the others'
    # tests pass on every target; the writer's tests that need it are no evidence either
    base, files = _baseline_with_helper(tmp_path)
    target = tmp_path / "target"
    target.mkdir()
    (target / "calc.py").write_text("def double(x):\n    return x + 1\n")
    writer = tmp_path / "writer"
    (writer / "tests").mkdir(parents=True)
    (writer / "calc.py").write_text("def double(x):\n    return x + 1\n")
    (writer / "tests" / "conftest.py").write_text(
        "import calc\n\ncalc.double = lambda x: x * 2\n")
    (writer / "tests" / "test_w.py").write_text(
        "import calc\n\n\ndef test_six():\n    assert calc.double(3) == 6\n\n\n"
        "def test_two():\n    assert calc.double(2) == 4\n")
    assert modules_that_travel(["tests/conftest.py", "tests/test_w.py"]) == ["tests/test_w.py"]
    source = ("w", writer, ("tests/test_w.py",), {})
    (on_target,) = run_cross_tests([source], ("t", target), tmp_path / "work", SETTINGS,
                                   Processes(), (base, files))
    assert on_target.failing == ("tests/test_w.py::test_six", "tests/test_w.py::test_two")
    (on_itself,) = run_cross_tests([source], ("w", writer), tmp_path / "self", SETTINGS,
                                   Processes(), (base, files))
    assert on_itself.failing == on_target.failing  # without its conftest it fails them too
    (kept,) = vouched([on_target], {"w": on_itself})
    assert kept.outcomes == {}
    assert kept.ran == 0


def test_vouched_keeps_only_the_tests_that_pass_on_their_writer() -> None:
    on_target = cell("w", "t", good="failed", needs_conftest="failed")
    on_itself = cell("w", "w", good="passed", needs_conftest="error")
    (kept,) = vouched([on_target, cell("x", "t", other="failed")], {"w": on_itself})[:1]
    assert kept.outcomes == {"test_w.py::good": "failed"}
    broken = CrossCell("w", "w", ("test_w.py",), problem="timed out")
    assert vouched([on_target], {"w": broken}) == []


def test_a_source_whose_module_acts_at_import_never_shares_a_run(tmp_path: Path) -> None:
    trees = {}
    for name, body in (("a", "def test_a():\n    pass\n"),
                       ("b", "import calc\ncalc.double = abs\n"),
                       ("c", "def test_c():\n    pass\n")):
        tree = tmp_path / name
        (tree / "tests").mkdir(parents=True)
        (tree / "tests" / f"test_{name}.py").write_text(body)
        trees[name] = (name, tree, (f"tests/test_{name}.py",), {})
    groups = _compatible_groups([trees["a"], trees["b"], trees["c"]])
    assert [[s[0] for s in group] for group in groups] == [["a", "c"], ["b"]]


def test_a_writers_tests_on_itself_run_alone_when_another_source_ends_the_shared_run(
    tmp_path: Path
) -> None:
    # issue 36 (speed): a writer's run on itself shares the run of the others' tests on it;
    # a source whose test ends that process must not leave the writer without its own cell
    base, files = _baseline_with_helper(tmp_path)
    writer = tmp_path / "writer"
    (writer / "tests").mkdir(parents=True)
    (writer / "calc.py").write_text(files["calc.py"])
    (writer / "tests" / "test_w.py").write_text(
        "from calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n")
    killer = tmp_path / "killer"
    (killer / "tests").mkdir(parents=True)
    (killer / "tests" / "test_k.py").write_text(
        "import os\n\n\ndef test_end():\n    os._exit(0)\n")
    cells = run_cross_tests(
        [("k", killer, ("tests/test_k.py",), {}), ("w", writer, ("tests/test_w.py",), {})],
        ("w", writer), tmp_path / "work", SETTINGS, Processes(), (base, files))
    by_source = {cell.source: cell for cell in cells}
    assert by_source["k"].problem is not None  # a problem counts nowhere, as before
    assert by_source["w"].problem is None
    assert by_source["w"].outcomes == {"tests/test_w.py::test_double": "passed"}

"""What a candidate does to its judges: tamper findings and what added suppressions hide.

Real ruff and bandit run on real trees; the tamper analysis is ``collect.tamper``'s.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pytest_confgate.rank.models import Evidence
from pytest_confgate.rank.tampering import inspect

BASE_CODE = '"""Parsing."""\n\n\ndef parse(text):\n    return int(text)\n'
BASE_TEST = ("from calc.parse import parse\n\n\ndef test_parse():\n    assert parse('1') == 1\n\n\n"
             "def test_parse_two():\n    assert parse('2') == 2\n")


def tree(root: Path, code: str = BASE_CODE, test: str | None = BASE_TEST) -> Path:
    (root / "calc").mkdir(parents=True)
    (root / "calc" / "__init__.py").write_text('"""Calc."""\n')
    (root / "calc" / "parse.py").write_text(code)
    (root / "ruff.toml").write_text('[lint]\nselect = ["E", "F"]\n')
    if test is not None:
        (root / "tests").mkdir()
        (root / "tests" / "test_parse.py").write_text(test)
    return root


def evidence(name: str, outcomes: dict[str, str] | None = None) -> Evidence:
    return Evidence(solution_id=name, builds=True, lint=(), security=(), outcomes=outcomes)


def test_a_nosec_the_candidate_added_hides_nothing(tmp_path: Path) -> None:
    base = tree(tmp_path / "base")
    code = BASE_CODE.replace("return int(text)", "return eval(text)  # nosec")
    head = tree(tmp_path / "head", code)
    found = inspect(evidence("c"), head, evidence("baseline"), base)
    assert found.security is not None
    (revealed,) = found.security
    assert (revealed.rule, revealed.path, revealed.line) == ("B307", "calc/parse.py", 5)
    assert revealed.message.endswith("(hidden by a `# nosec` this candidate added)")
    assert [(f.rule, f.path, f.line) for f in found.tamper or ()] == [
        ("suppression_added", "calc/parse.py", 5)]


def test_a_noqa_the_candidate_added_hides_nothing(tmp_path: Path) -> None:
    base = tree(tmp_path / "base")
    head = tree(tmp_path / "head", BASE_CODE.replace('"""Parsing."""\n',
                                                     '"""Parsing."""\nimport os  # noqa\n'))
    found = inspect(evidence("c"), head, evidence("baseline"), base)
    assert [(i.rule, i.line) for i in found.lint or ()] == [("F401", 2)]


def test_suppressions_the_baseline_already_has_keep_working(tmp_path: Path) -> None:
    code = BASE_CODE.replace("return int(text)", "return eval(text)  # nosec")
    base = tree(tmp_path / "base", code)
    head = tree(tmp_path / "head", code + "\n\ndef twice(text):\n    return 2 * parse(text)\n")
    found = inspect(evidence("c"), head, evidence("baseline"), base)
    assert found.security == ()
    assert found.tamper == ()


def test_deleted_and_skipped_tests_are_found_with_outcomes_too(tmp_path: Path) -> None:
    base = tree(tmp_path / "base")
    deleted = BASE_TEST.split("\n\n\ndef test_parse_two")[0] + "\n"
    head = tree(tmp_path / "head", test=deleted)
    passed = {"tests/test_parse.py::test_parse": "passed",
              "tests/test_parse.py::test_parse_two": "passed"}
    found = inspect(evidence("c", {"tests/test_parse.py::test_parse": "passed"}), head,
                    evidence("baseline", passed), base)
    assert [(f.rule, f.path) for f in found.tamper or ()] == [
        ("test_removed", "tests/test_parse.py")]
    assert "test_parse_two" in (found.tamper or ())[0].message


PASSED = {"tests/test_parse.py::test_parse": "passed",
          "tests/test_parse.py::test_parse_two": "passed"}


def test_a_renamed_test_is_not_a_deleted_one(tmp_path: Path) -> None:
    base = tree(tmp_path / "base")
    head = tree(tmp_path / "head", test=BASE_TEST.replace("test_parse_two", "test_parses_two"))
    own = {"tests/test_parse.py::test_parse": "passed",
           "tests/test_parse.py::test_parses_two": "passed"}
    found = inspect(evidence("c", own), head, evidence("baseline", PASSED), base)
    assert found.tamper == ()


def test_a_test_skipped_at_run_time_is_found_by_its_outcome(tmp_path: Path) -> None:
    # Nothing in the test file changed: a new conftest skips it while the tests run.
    base = tree(tmp_path / "base")
    head = tree(tmp_path / "head")
    (head / "tests" / "conftest.py").write_text(
        "import pytest\n\n\ndef pytest_runtest_setup(item):\n"
        "    if item.name.endswith('two'):\n        pytest.skip('flaky')\n")
    own = {**PASSED, "tests/test_parse.py::test_parse_two": "skipped"}
    found = inspect(evidence("c", own), head, evidence("baseline", PASSED), base)
    rules = sorted(f.rule for f in found.tamper or ())
    assert "test_skipped" in rules
    (skipped,) = [f for f in found.tamper or () if f.rule == "test_skipped"]
    assert skipped.message == ("test tests/test_parse.py::test_parse_two ran on the base "
                               "(passed); now skipped")


def test_a_pragma_no_cover_it_added_counts_its_block_as_uncovered(tmp_path: Path) -> None:
    # issue 28: `# pragma: no cover` over a wrong branch cost 0.025; the block it hides
    # (the `if` and its two statements) now counts as missed statements
    base = tree(tmp_path / "base")
    code = BASE_CODE.replace("    return int(text)\n", "    if text == 'x':  # pragma: no cover\n"
                             "        value = 0\n        return value\n    return int(text)\n")
    head = tree(tmp_path / "head", code)
    measured = dataclasses.replace(evidence("c"), coverage=1.0, statements=4)
    found = inspect(measured, head, evidence("baseline"), base)
    assert found.hidden_uncovered == 3
    assert found.coverage == 4 / 7


def test_dropping_doctest_modules_from_addopts_narrows_collection(tmp_path: Path) -> None:
    base = tree(tmp_path / "base")
    (base / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\naddopts = "--doctest-modules -p xdist"\n')
    head = tree(tmp_path / "head")
    (head / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "-p xdist"\n')
    found = inspect(evidence("c"), head, evidence("baseline"), base)
    assert [(f.rule, f.path) for f in found.tamper or ()] == [
        ("collection_narrowed", "pyproject.toml")]
    assert "`--doctest-modules` was dropped from addopts" in (found.tamper or ())[0].message


def test_a_test_of_a_stand_in_for_the_code_under_test_is_a_finding(tmp_path: Path) -> None:
    # issue 28: a test that monkeypatches the code under test raised nothing in a ranking
    base = tree(tmp_path / "base")
    patched = ("from calc import parse\n\n\ndef test_forty(monkeypatch):\n"
               "    monkeypatch.setattr(parse, 'parse', lambda text: 40)\n"
               "    assert parse.parse('XL') == 40\n")
    head = tree(tmp_path / "head")
    (head / "tests" / "test_forty.py").write_text(patched)
    found = inspect(evidence("c"), head, evidence("baseline"), base)
    assert "patched_under_test" in [f.rule for f in found.tamper or ()]


def test_a_package_the_candidate_adds_does_not_make_patching_it_the_project_s_own(
    tmp_path: Path,
) -> None:
    """Which packages are the project's own comes from the baseline: a candidate that adds a
    ``pytest_confgate/`` folder and patches pytest_confgate from a test is named twice."""
    base = tree(tmp_path / "base")
    head = tree(tmp_path / "head", test=BASE_TEST + (
        "\n\nimport pytest_confgate\n\n\ndef test_gate(monkeypatch):\n"
        "    monkeypatch.setattr(pytest_confgate, 'VERSION', '0')\n"))
    (head / "pytest_confgate").mkdir()
    (head / "pytest_confgate" / "__init__.py").write_text('"""Not the gate."""\n')
    found = inspect(evidence("c"), head, evidence("baseline"), base)
    assert {f.rule for f in found.tamper or ()} >= {"harness_replaced", "harness_patched"}


def test_a_nosec_line_the_candidate_rewrites_after_rank_read_it_still_counts(
    tmp_path: Path,
) -> None:
    """The rerun behind an added ``# nosec`` read the candidate's tree after its tests ran
    there: a candidate that added ``eval(text)  # nosec`` and had its run rewrite the line
    at exit showed no finding. It reads the copy rank made before any code ran."""
    from pytest_confgate.rank import lint_copy
    from pytest_confgate.rank.trees import read_tree

    base = tree(tmp_path / "base")
    code = BASE_CODE.replace("return int(text)", "return eval(text)  # nosec")
    head = tree(tmp_path / "head", code)
    submitted = read_tree(head)
    runs = lint_copy.ToolRuns({"c": (head, tmp_path / "copy", submitted)}, None)
    assert runs.result("c").security.available
    (head / "calc" / "parse.py").write_text(BASE_CODE)  # what its tests did at exit
    found = inspect(evidence("c"), head, evidence("baseline"), base, None, submitted,
                    runs.on_copy("c"))
    assert [(i.rule, i.line) for i in found.security or ()] == [("B307", 5)]

    # A copy the candidate's code wrote into is no evidence: the check blocks, never passes.
    (tmp_path / "copy" / "calc" / "parse.py").write_text(BASE_CODE)
    found = inspect(evidence("c"), head, evidence("baseline"), base, None, submitted,
                    runs.on_copy("c"))
    assert found.security is None
    assert "changed" in (found.security_problem or "")


def test_a_no_cover_pragma_is_counted_as_submitted(tmp_path: Path) -> None:
    """Statements hidden by an added ``# pragma: no cover`` were counted in the tree after
    the candidate's tests ran there; what it submitted counts."""
    from pytest_confgate.rank.trees import read_tree

    base = tree(tmp_path / "base")
    code = BASE_CODE + ("\n\ndef hidden(x):  # pragma: no cover\n    if x:\n        return 1\n"
                        "    return 2\n")
    head = tree(tmp_path / "head", code)
    submitted = read_tree(head)
    measured = dataclasses.replace(evidence("c"), coverage=1.0, statements=4)
    (head / "calc" / "parse.py").write_text(BASE_CODE)  # rewritten at exit
    found = inspect(measured, head, evidence("baseline"), base, None, submitted)
    assert found.hidden_uncovered == 4

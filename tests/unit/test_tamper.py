"""The tamper analysis (issue 15): every gaming trick is caught, clean refactors are not.

Each case is a change to one small, real test module (``BASE``): the tricks an agent that only
wants green plays, each with the rule and the line it must be reported at, and the refactors
a careful engineer makes, which must report nothing (a false positive makes a human look).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_confgate.collect.tamper import (
    FileVersions,
    analyse_directories,
    find_tampering,
    versions_from_directories,
)

PATH = "tests/test_calc.py"
BASE = '''\
import pytest
from calc import add, div


def test_add():
    assert add(1, 2) == 3
    assert add(0, 0) == 0


def test_div_by_zero():
    with pytest.raises(ZeroDivisionError):
        div(1, 0)


@pytest.mark.parametrize(("a", "b", "total"), [(1, 2, 3), (2, 2, 4), (0, 5, 5)])
def test_sum(a, b, total):
    assert add(a, b) == total


class TestDiv:
    def test_half(self):
        assert div(1, 2) == 0.5
'''
ADD_BODY = "    assert add(1, 2) == 3\n    assert add(0, 0) == 0\n"


def edit(*pairs: tuple[str, str]) -> str:
    text = BASE
    for old, new in pairs:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def analyse(head: str | None, *extra: FileVersions, path: str = PATH) -> list[tuple[str, int]]:
    report = find_tampering([FileVersions(path, BASE, head), *extra])
    return [(f.rule, f.line) for f in report.findings]


TRICKS = {
    "a test deleted": (
        edit(("def test_div_by_zero():\n    with pytest.raises(ZeroDivisionError):\n"
              "        div(1, 0)\n", "")),
        "test_removed", "def test_div_by_zero", "base",
    ),
    "a skip mark": (
        edit(("def test_add", "@pytest.mark.skip(reason='flaky')\ndef test_add")),
        "skip_added", "@pytest.mark.skip", "head",
    ),
    "a skipif through an alias": (
        edit(("from calc import add, div\n",
              "from calc import add, div\nfrom pytest import mark as m\n"
              "later = m.skipif(True, reason='later')\n"),
             ("def test_add", "@later\ndef test_add")),
        "skip_added", "@later", "head",
    ),
    "an xfail mark": (
        edit(("def test_div_by_zero", "@pytest.mark.xfail\ndef test_div_by_zero")),
        "skip_added", "@pytest.mark.xfail", "head",
    ),
    "pytestmark = skip for the module": (
        edit(("from calc import add, div\n",
              "from calc import add, div\n\npytestmark = pytest.mark.skip\n")),
        "skip_added", "pytestmark", "head",
    ),
    "pytestmark in a class": (
        edit(("class TestDiv:\n", "class TestDiv:\n    pytestmark = [pytest.mark.xfail]\n\n")),
        "skip_added", "pytestmark", "head",
    ),
    "pytest.skip() in the test": (
        edit(("def test_add():\n", "def test_add():\n    pytest.skip('later')\n")),
        "skip_added", "pytest.skip(", "head",
    ),
    "importorskip at module level": (
        edit(("from calc import add, div\n",
              "from calc import add, div\n\npytest.importorskip('numpy')\n")),
        "skip_added", "importorskip", "head",
    ),
    "a skipped parametrised case": (
        edit(("(2, 2, 4)", "pytest.param(2, 2, 4, marks=pytest.mark.skip)")),
        "skip_added", "pytest.param", "head",
    ),
    "an emptied parametrize list": (
        edit(("[(1, 2, 3), (2, 2, 4), (0, 5, 5)]", "[]")), "skip_added", "@pytest.mark.param",
        "head",
    ),
    "async def without an async plugin": (
        edit(("def test_add():", "async def test_add():")), "skip_added", "async def", "head",
    ),
    "one of two asserts removed": (
        edit((ADD_BODY, "    assert add(1, 2) == 3\n")), "assertions_weakened", "def test_add",
        "head",
    ),
    "one of two asserts made vacuous": (
        edit((ADD_BODY, "    assert add(1, 2) == 3\n    assert True\n")), "assertions_weakened",
        "def test_add", "head",
    ),
    "a body replaced by pass": (
        edit((ADD_BODY, "    pass\n")), "assertions_weakened", "def test_add", "head",
    ),
    "assert True": (
        edit((ADD_BODY, "    assert True\n    assert (add(0, 0), 'zero')\n")),
        "assertions_weakened", "def test_add", "head",
    ),
    "if False: around the asserts": (
        edit((ADD_BODY, "    if False:\n" + ADD_BODY.replace("    ", "        "))),
        "assertions_weakened", "def test_add", "head",
    ),
    "return before the asserts": (
        edit((ADD_BODY, "    return\n" + ADD_BODY)), "assertions_weakened", "def test_add", "head",
    ),
    "an assertion error swallowed": (
        edit((ADD_BODY, "    try:\n        assert add(1, 2) == 3\n        assert add(0, 0) == 0\n"
                        "    except AssertionError:\n        pass\n")),
        "assertions_weakened", "def test_add", "head",
    ),
    "contextlib.suppress around the asserts": (
        edit(("import pytest\n", "import contextlib\n\nimport pytest\n"),
             (ADD_BODY, "    with contextlib.suppress(AssertionError):\n"
                        "        assert add(1, 2) == 3\n        assert add(0, 0) == 0\n")),
        "assertions_weakened", "def test_add", "head",
    ),
    "pytest.raises(Exception) for a specific error": (
        edit(("pytest.raises(ZeroDivisionError)", "pytest.raises(Exception)")),
        "assertions_weakened", "def test_div_by_zero", "head",
    ),
    "an assert made always true": (
        edit(("assert div(1, 2) == 0.5", "assert div(1, 2) == 0.5 or True")),
        "assertions_weakened", "def test_half", "head",
    ),
    "a parametrize list shortened": (
        edit((", (0, 5, 5)]", "]")), "parametrize_case_removed", "def test_sum", "head",
    ),
    "a test renamed out of collection": (
        edit(("def test_add():", "def _test_add():")), "test_removed", "def test_add", "base",
    ),
    "a test moved into a class pytest skips": (
        edit(("class TestDiv:\n", "class TestDiv:\n    def __init__(self):\n"
                                  "        self.x = 1\n\n")),
        "test_removed", "def test_half", "base",
    ),
    "a test shadowed by a later one": (
        BASE + "\n\ndef test_add():\n    pass\n", "assertions_weakened", "def test_add", "tail",
    ),
    "the module switched off": (
        edit(("from calc import add, div\n", "from calc import add, div\n\n__test__ = False\n")),
        "test_removed", "def test_add", "base",
    ),
    "# noqa added": (
        edit(("from calc import add, div\n", "from calc import add, div  # noqa: F401\n")),
        "suppression_added", "# noqa", "head",
    ),
    "# nosec added": (
        edit(("div(1, 0)\n", "div(1, 0)  # nosec\n")), "suppression_added", "# nosec", "head",
    ),
    "# pragma: no cover added": (
        edit(("class TestDiv:", "class TestDiv:  # pragma: no cover")),
        "suppression_added", "pragma", "head",
    ),
    "# type: ignore added": (
        edit(("assert div(1, 2) == 0.5", "assert div(1, 2) == 0.5  # type: ignore[operator]")),
        "suppression_added", "type: ignore", "head",
    ),
    "# nosemgrep added": (
        edit(("def test_sum(a, b, total):", "def test_sum(a, b, total):  # nosemgrep")),
        "suppression_added", "nosemgrep", "head",
    ),
}


@pytest.mark.parametrize("name", list(TRICKS))
def test_every_gaming_trick_is_reported_at_its_line(name: str) -> None:
    head, rule, needle, side = TRICKS[name]
    text = BASE if side == "base" else head
    line = line_of(text, needle)
    if side == "tail":
        line = len(head.splitlines()) - 1
    found = analyse(head)
    assert (rule, line) in found, found


def test_a_removed_test_that_made_no_checks_is_still_removed() -> None:
    """A smoke test checks by running: deleting it loses that, whatever its asserts."""
    base = BASE + "\n\ndef test_smoke():\n    add(1, 2)\n"
    report = find_tampering([FileVersions(PATH, base, BASE)])
    assert [(f.rule, f.test) for f in report.findings] == [("test_removed", f"{PATH}::test_smoke")]


def test_a_finding_names_the_file_and_shows_both_sides() -> None:
    head = edit(("def test_add", "@pytest.mark.skip(reason='flaky')\ndef test_add"))
    [finding] = find_tampering([FileVersions(PATH, BASE, head)]).findings
    assert finding.as_item() == {
        "rule": "skip_added",
        "file": PATH,
        "line": 5,
        "message": "skip mark added: tests/test_calc.py::test_add no longer runs as before",
        "test": "tests/test_calc.py::test_add",
        "base": None,
        "head": "@pytest.mark.skip(reason='flaky')",
    }
    removed = edit(("def test_div_by_zero():\n    with pytest.raises(ZeroDivisionError):\n"
                    "        div(1, 0)\n", ""))
    [gone] = find_tampering([FileVersions(PATH, BASE, removed)]).findings
    assert gone.base == "def test_div_by_zero():"
    assert gone.message == (
        "test tests/test_calc.py::test_div_by_zero was removed; no new test makes its check"
    )


HELPERS = "def check_sum(a, b, total):\n    assert add(a, b) == total\n"
REFACTORS = {
    "a test renamed, body kept": edit(("def test_add():", "def test_addition():")),
    "a test moved into a class": edit(
        ("def test_add():\n" + ADD_BODY, ""),
        ("class TestDiv:\n", "class TestAdd:\n    def test_add(self):\n"
                             "        assert add(1, 2) == 3\n        assert add(0, 0) == 0\n\n\n"
                             "class TestDiv:\n"),
    ),
    "assertions moved into a helper": edit(
        ("def test_add():\n" + ADD_BODY,
         "def _check(a, b, total):\n    assert add(a, b) == total\n\n\n"
         "def test_add():\n    _check(1, 2, 3)\n    _check(0, 0, 0)\n"),
    ),
    "a test split in two": edit(
        ("def test_add():\n" + ADD_BODY,
         "def test_add_one():\n    assert add(1, 2) == 3\n\n\n"
         "def test_add_zero():\n    assert add(0, 0) == 0\n"),
    ),
    "asserts turned into parametrised cases": edit(
        ("def test_add():\n" + ADD_BODY,
         "@pytest.mark.parametrize('a, total', [(1, 3), (0, 2)])\n"
         "def test_add(a, total):\n    assert add(a, 2) == total\n"),
    ),
    "a new test with a platform skip": BASE + (
        "\n\n@pytest.mark.skipif(__import__('sys').platform == 'win32', reason='posix')\n"
        "def test_posix_only():\n    assert add(1, 1) == 2\n"
    ),
    "more assertions": edit((ADD_BODY, ADD_BODY + "    assert add(2, 2) == 4\n")),
    "tests reordered": edit(
        ("def test_add():\n" + ADD_BODY + "\n\n", ""),
        ("class TestDiv:", "def test_add():\n" + ADD_BODY + "\n\nclass TestDiv:"),
    ),
    "a parametrised value fixed": edit(("(2, 2, 4)", "(2, 3, 5)")),
    "a comment and a string mentioning noqa": edit(
        ("def test_add():\n", "def test_add():\n    # the word noqa in prose is no directive\n"
                              "    text = '# noqa'\n"),
    ),
    "an old suppression re-indented with its line edited": BASE,  # see the next test
    "a docstring added": edit(("def test_add():\n", 'def test_add():\n    """Adds."""\n')),
}


@pytest.mark.parametrize("name", list(REFACTORS))
def test_clean_refactors_report_nothing(name: str) -> None:
    assert analyse(REFACTORS[name]) == []


def test_a_suppression_kept_on_an_edited_line_is_not_news() -> None:
    before = "import os  # noqa: F401\nX = eval(s)  # nosec B307\n"
    after = "import os as operating_system  # noqa: F401\nY = eval(t)  # nosec B307\n"
    report = find_tampering([FileVersions("pkg/mod.py", before, after)])
    assert report.findings == ()
    moved = find_tampering([FileVersions("pkg/mod.py", before, "\n\n" + before)])
    assert moved.findings == ()


def test_assertions_moved_to_a_helper_module_the_change_adds_still_count() -> None:
    head = edit(
        ("import pytest\n", "import pytest\nfrom helpers import check_sum\n"),
        ("    assert add(a, b) == total\n", "    check_sum(a, b, total)\n"),
    )
    helper = FileVersions("tests/helpers.py", None, "from calc import add\n\n\n" + HELPERS)
    assert analyse(head, helper) == []
    hollow = FileVersions("tests/helpers.py", None, "def check_sum(a, b, total):\n    pass\n")
    assert analyse(head, hollow) == [("assertions_weakened", 17)]


def test_a_test_file_renamed_keeps_its_tests_but_not_out_of_collection() -> None:
    renamed = FileVersions("tests/test_calculator.py", BASE, BASE, base_path=PATH)
    assert find_tampering([renamed]).findings == ()
    moved = FileVersions("tests/calc_checks.py", None, BASE)
    hidden = find_tampering([FileVersions(PATH, BASE, None), moved])
    assert {f.rule for f in hidden.findings} == {"test_removed"}
    assert len(hidden.findings) == 4
    assert hidden.findings[0].message == (
        "test tests/test_calc.py::test_add is no longer collected: its file is not a test "
        "module pytest collects; no new test makes its 2 checks"
    )


def test_a_conftest_that_deselects_skips_or_ignores_is_reported() -> None:
    base = "import pytest\n\n\n@pytest.fixture\ndef db():\n    return 1\n"
    cases = {
        "def pytest_collection_modifyitems(config, items):\n    items[:] = items[:1]\n":
            ("test_hook_changed", "pytest_collection_modifyitems added"),
        "collect_ignore = ['tests/test_hard.py']\n": ("collection_narrowed", "collect_ignore"),
        "pytest_plugins = ['evil.plugin']\n": ("test_hook_changed", "pytest_plugins"),
    }
    for addition, (rule, words) in cases.items():
        [finding] = find_tampering([FileVersions("conftest.py", base, base + addition)]).findings
        assert (finding.rule, finding.line) == (rule, 7)
        assert words in finding.message
    skipping = base.replace("    return 1", "    pytest.skip('no database')")
    [finding] = find_tampering([FileVersions("tests/conftest.py", base, skipping)]).findings
    assert (finding.rule, finding.line, finding.head) == (
        "skip_added", 6, "pytest.skip('no database')"
    )


def test_a_helper_that_can_now_skip_an_existing_test_is_reported_at_the_test() -> None:
    head = edit(
        ("from calc import add, div\n",
         "from calc import add, div\n\n\ndef _ready():\n    pytest.skip('not today')\n"),
        ("def test_add():\n", "def test_add():\n    _ready()\n"),
    )
    assert analyse(head) == [("skip_added", line_of(head, "def test_add"))]


def test_unittest_skips_and_vacuous_asserts_are_caught() -> None:
    base = ("import unittest\n\n\nclass TestA(unittest.TestCase):\n"
            "    def test_a(self):\n        self.assertEqual(compute(), 1)\n")
    cases = {
        base.replace("self.assertEqual(compute(), 1)", "self.skipTest('x')"): "skip_added",
        base.replace("    def test_a", "    @unittest.skip('x')\n    def test_a"): "skip_added",
        base.replace("self.assertEqual(compute(), 1)", "self.assertTrue(True)"):
            "assertions_weakened",
    }
    for head, rule in cases.items():
        rules = {f.rule for f in find_tampering([FileVersions("test_u.py", base, head)]).findings}
        assert rule in rules


def test_tool_config_that_hides_findings_or_tests_is_reported() -> None:
    base = '[tool.ruff.lint]\nselect = ["E", "F", "S"]\n[tool.pytest.ini_options]\naddopts = "-q"\n'
    head = (
        '[tool.ruff.lint]\nselect = ["E", "F"]\n[tool.ruff.lint.per-file-ignores]\n'
        '"src/x.py" = ["S307"]\n[tool.coverage.run]\nomit = ["src/legacy/*"]\n'
        '[tool.bandit]\nskips = ["B602"]\n[tool.pytest.ini_options]\n'
        'addopts = "-q --deselect tests/test_a.py::test_x"\n'
    )
    report = find_tampering([FileVersions("pyproject.toml", base, head)])
    found = [(f.rule, f.line, f.message) for f in report.findings]
    assert found == [
        ("tool_ignore_added", 2, "ruff.lint.select no longer has `S` (so the tool reports less)"),
        ("tool_ignore_added", 4,
         "ruff.lint.per-file-ignores adds `src/x.py: S307` (so the tool reports less)"),
        ("tool_ignore_added", 6,
         "coverage.run.omit adds `src/legacy/*` (so the tool reports less)"),
        ("tool_ignore_added", 8, "bandit.skips adds `B602` (so the tool reports less)"),
        ("collection_narrowed", 10,
         "pytest.addopts adds `--deselect tests/test_a.py::test_x` (so fewer tests run)"),
    ]
    rc_base, rc_head = "[report]\nexclude_lines =\n    raise NotImplementedError\n", (
        "[report]\nexclude_lines =\n    raise NotImplementedError\n    def test_\n")
    [excluded] = find_tampering([FileVersions(".coveragerc", rc_base, rc_head)]).findings
    assert (excluded.rule, excluded.line) == ("tool_ignore_added", 4)


def test_narrower_python_files_hide_every_other_test_module() -> None:
    head_config = '[tool.pytest.ini_options]\npython_files = ["test_core.py"]\n'
    report = find_tampering([
        FileVersions("pyproject.toml", "[project]\nname = 'x'\n", head_config),
        FileVersions(PATH, BASE, BASE),
    ])
    rules = [f.rule for f in report.findings]
    assert rules.count("collection_narrowed") == 2  # test_*.py and *_test.py are gone
    assert rules.count("test_removed") == 4  # and so is every test of test_calc.py


def test_outcomes_name_tests_that_ran_on_the_base_and_not_on_the_head() -> None:
    report = find_tampering(
        [],
        base_outcomes={"t.py::a": "passed", "t.py::b[1]": "failed", "t.py::c": "skipped"},
        head_outcomes={"t.py::a": "skipped", "t.py::c": "skipped"},
    )
    assert [(f.rule, f.test) for f in report.findings] == [
        ("test_removed", "t.py::b[1]"),
        ("test_skipped", "t.py::a"),
    ]
    static = find_tampering(
        [FileVersions(PATH, BASE, edit(("def test_add", "@pytest.mark.skip\ndef test_add")))],
        base_outcomes={f"{PATH}::test_add": "passed"},
        head_outcomes={f"{PATH}::test_add": "skipped"},
    )
    assert [f.rule for f in static.findings] == ["skip_added"]  # said once, with its line


def test_unparsable_head_files_are_named_not_guessed() -> None:
    for head in ("def test_add(:\n", "def test_x():\n    assert x == " + "+".join("1" * 20000)):
        report = find_tampering([FileVersions(PATH, BASE, head)])
        assert report.unreadable == (PATH,)
        assert report.findings == ()  # pytest fails to collect it; no test "was removed"


PYTHON_ISH = st.lists(
    st.sampled_from([
        "import pytest\n", "def test_a():\n", "    assert f() == 1\n", "    pass\n",
        "@pytest.mark.skip\n", "class TestK:\n", "    def test_m(self):\n",
        "        assert True  # noqa\n", "pytestmark = pytest.mark.xfail\n", "x = (\n",
        "    # nosec\n", "if False:\n", "    pytest.skip()\n", "\t\x00\n", '"""\n',
        "[tool.ruff]\n", "exclude = ['a']\n", "[flake8]\n", "ignore = E1\n",
    ]),
    max_size=12,
).map("".join)


@given(
    base=PYTHON_ISH | st.text(max_size=80),
    head=PYTHON_ISH | st.text(max_size=80),
    name=st.sampled_from([PATH, "conftest.py", "pyproject.toml", "setup.cfg", "m.py"]),
)
def test_any_text_on_either_side_gives_a_report_never_a_crash(
    base: str, head: str, name: str
) -> None:
    report = find_tampering([FileVersions(name, base, head)])
    assert all(f.file == name and f.line >= 0 for f in report.findings)


def test_hidden_lines_cover_the_whole_statement_a_suppression_sits_in() -> None:
    head = "x = call(\n    a,  # nosec\n    b,\n)\nimport os  # noqa: F401\n"
    report = find_tampering([FileVersions("pkg/mod.py", "x = call(a, b)\n", head)])
    assert report.hidden_lines("nosec") == {"pkg/mod.py": [(1, 4)]}
    assert report.hidden_lines("noqa") == {"pkg/mod.py": [(5, 5)]}
    file_wide = find_tampering([FileVersions("m.py", "x = 1\n", "# ruff: noqa\nx = 1\n")])
    assert file_wide.hidden_lines("noqa")["m.py"][0][0] == 1


def test_a_caller_chooses_which_suppressions_are_findings() -> None:
    head = "import os  # noqa: F401\nx = 1  # type: ignore[assignment]\n"
    report = find_tampering([FileVersions("m.py", "", head)], watch=["noqa"])
    assert [f.rule for f in report.findings] == ["suppression_added"]
    assert len(report.suppressions) == 2  # both are still known, for lint and security


def test_two_directories_compare_like_a_change(tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    for root in (base, head):
        (root / "tests").mkdir(parents=True)
        (root / ".venv").mkdir()
        (root / ".venv" / "test_junk.py").write_text("def test_x():\n    pass\n")
        (root / "README.md").write_text("docs\n")
    (base / PATH).write_text(BASE, encoding="utf-8")
    (head / PATH).write_text(edit(("def test_add", "@pytest.mark.skip\ndef test_add")))
    versions = versions_from_directories(base, head)
    assert [v.path for v in versions] == [PATH]
    report = analyse_directories(
        base, head, base_outcomes={f"{PATH}::test_sum[1-2-3]": "passed"}, head_outcomes={}
    )
    assert [f.rule for f in report.findings] == ["skip_added", "test_removed"]


def test_a_shared_assertion_helper_hollowed_out_weakens_every_test_that_calls_it() -> None:
    helpers = "from calc import add\n\n\n" + HELPERS
    hollow = helpers.replace("    assert add(a, b) == total\n", "    return None\n")
    report = find_tampering([FileVersions("tests/helpers.py", helpers, hollow)])
    assert [(f.rule, f.line, f.message) for f in report.findings] == [
        ("assertions_weakened", 4, "check_sum, which tests call, makes fewer live checks: 1 -> 0")
    ]
    product = find_tampering([FileVersions("src/calc/checks.py", helpers, hollow)])
    assert product.findings == ()  # an assert in product code is an invariant, not a test


def test_symlinks_and_huge_files_are_named_not_read_and_never_look_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    for root in (base, head):
        (root / "tests").mkdir(parents=True)
        (root / PATH).write_text(BASE, encoding="utf-8")
    (tmp_path / "secret.txt").write_text("# noqa\n", encoding="utf-8")
    (head / "tests" / "test_link.py").symlink_to(tmp_path / "secret.txt")
    (head / PATH).write_text(BASE + "\n# grown\n", encoding="utf-8")
    monkeypatch.setattr("pytest_confgate.collect.tamper.reading.MAX_FILE_BYTES", len(BASE) + 2)
    report = analyse_directories(base, head)
    assert report.findings == ()  # not "every test of test_calc.py was removed"
    assert report.unreadable == (PATH, "tests/test_link.py")

"""The false positives real history showed (issue 27), each gone, each beside its true case.

On jinja, pluggy and more-itertools, 11 of 89 findings were wrong: settings moved between
files, a narrowed xfail condition, a test rewritten as a parametrised one, ``pytest.raises``
through a variable, a ``# type: ignore`` narrowed to a code or a code renamed, and a finding
at an old ``# pragma: no cover`` instead of the new one.
"""

from __future__ import annotations

from pytest_confgate.collect.tamper import FileVersions, find_tampering


def rules(*files: tuple[str, str | None, str | None]) -> list[tuple[str, str, int]]:
    report = find_tampering([FileVersions(path, base, head) for path, base, head in files])
    return [(f.rule, f.file, f.line) for f in report.findings]


SETUP_CFG = (
    "[metadata]\nname = x\n\n[flake8]\nextend-ignore = E203, W503\nper-file-ignores =\n"
    "    tests/*: S101\n\n[tool:pytest]\ntestpaths = tests\naddopts = -m 'not slow'\n"
    "\n[coverage:run]\nomit = */_vendor/*\n"
)
FLAKE8 = "[flake8]\nextend-ignore = E203, W503\nper-file-ignores =\n    tests/*: S101\n"
PYPROJECT = (
    "[tool.pytest.ini_options]\ntestpaths = ['tests']\naddopts = \"-m 'not slow'\"\n\n"
    "[tool.coverage.run]\nomit = ['*/_vendor/*']\n"
)


def test_settings_moved_to_other_files_hide_nothing_new() -> None:
    assert rules(("setup.cfg", SETUP_CFG, "[metadata]\nname = x\n"), (".flake8", None, FLAKE8),
                 ("pyproject.toml", None, PYPROJECT)) == []


def test_a_setting_moved_and_widened_on_the_way_is_reported() -> None:
    found = rules(("setup.cfg", SETUP_CFG, "[metadata]\nname = x\n"),
                  (".flake8", None, FLAKE8.replace("W503", "W503, E501")),
                  ("pyproject.toml", None, PYPROJECT.replace("*/_vendor/*", "src/*")))
    assert found == [("tool_ignore_added", ".flake8", 2),
                     ("tool_ignore_added", "pyproject.toml", 6)]


def test_settings_in_another_folder_do_not_count_as_moved() -> None:
    assert rules(("setup.cfg", SETUP_CFG, "[metadata]\nname = x\n"),
                 ("sub/.flake8", None, FLAKE8)) == [
        ("tool_ignore_added", "sub/.flake8", 2), ("tool_ignore_added", "sub/.flake8", 2),
        ("tool_ignore_added", "sub/.flake8", 4)]


XFAIL = (
    "import sys\nimport pytest\nfrom m import f\n\n\n"
    "@pytest.mark.xfail(sys.platform == 'win32', reason='crlf')\ndef test_f():\n    assert f()\n"
)


def test_a_narrower_xfail_condition_or_a_new_reason_is_not_a_new_skip() -> None:
    for condition in ("sys.platform == 'win32' and sys.version_info < (3, 12), reason='crlf'",
                      "sys.platform == 'win32', reason='line endings on Windows'"):
        head = XFAIL.replace("sys.platform == 'win32', reason='crlf'", condition)
        assert rules(("tests/test_m.py", XFAIL, head)) == [], condition


def test_a_wider_xfail_condition_is_a_new_skip() -> None:
    for condition in ("True, reason='crlf'", "sys.platform == 'win32' or PY2, reason='crlf'"):
        head = XFAIL.replace("sys.platform == 'win32', reason='crlf'", condition)
        assert rules(("tests/test_m.py", XFAIL, head)) == [("skip_added", "tests/test_m.py", 6)]


TWO_TESTS = (
    "from m import add\n\n\ndef test_one():\n    assert add(1, 2) == 3\n\n\n"
    "def test_two():\n    assert add(2, 2) == 4\n"
)
PARAMETRISED = (
    "import pytest\nfrom m import add\n\n\n"
    "@pytest.mark.parametrize('a, b, total', [(1, 2, 3), pytest.param(2, 2, 4, id='two')])\n"
    "def test_add(a, b, total):\n    assert add(a, b) == total\n"
)


def test_tests_rewritten_as_one_parametrised_test_that_keeps_their_cases() -> None:
    assert rules(("tests/test_m.py", TWO_TESTS, PARAMETRISED)) == []


def test_a_parametrised_rewrite_that_drops_a_case_is_a_removal() -> None:
    head = PARAMETRISED.replace("pytest.param(2, 2, 4, id='two')", "(5, 5, 10)")
    assert rules(("tests/test_m.py", TWO_TESTS, head)) == [("test_removed", "tests/test_m.py", 8)]


RAISES = "import pytest\nfrom m import f\n\n\ndef test_f():\n" + "".join(
    f"    with pytest.raises(ValueError, match='bad'):\n        f({n})\n" for n in range(3))


def test_raises_through_a_variable_counts_each_use() -> None:
    head = ("import pytest\nfrom m import f\n\n\ndef test_f():\n"
            "    raises = pytest.raises(ValueError, match='bad')\n"
            + "".join(f"    with raises:\n        f({n})\n" for n in range(3)))
    assert rules(("tests/test_m.py", RAISES, head)) == []
    fewer = head.split("    with raises:\n        f(1)")[0]
    assert rules(("tests/test_m.py", RAISES, fewer)) == [
        ("assertions_weakened", "tests/test_m.py", 5)]


CODE = "def f(x):\n    return x.y  # type: ignore\n"


def test_a_type_ignore_narrowed_to_a_code_or_its_code_renamed_is_not_new() -> None:
    narrowed = CODE.replace("# type: ignore", "# type: ignore[attr-defined]")
    assert rules(("m.py", CODE, narrowed)) == []
    renamed = narrowed.replace("attr-defined", "union-attr")
    assert rules(("m.py", narrowed, renamed)) == []


def test_a_type_ignore_widened_or_given_more_codes_is_new() -> None:
    coded = CODE.replace("# type: ignore", "# type: ignore[attr-defined]")
    assert rules(("m.py", coded, CODE)) == [("suppression_added", "m.py", 2)]
    more = CODE.replace("# type: ignore", "# type: ignore[attr-defined, misc]")
    assert rules(("m.py", coded, more)) == [("suppression_added", "m.py", 2)]


def test_a_new_pragma_is_reported_at_its_own_line_not_at_an_edited_old_one() -> None:
    base = "def f(x):\n    pass\n\n\ndef g():\n    raise SystemExit(1)  # pragma: no cover\n"
    head = ("def f(x):\n    if x:  # pragma: no cover\n        return 1\n    pass\n\n\n"
            "def g():\n    raise SystemExit(2)  # pragma: no cover\n")
    assert rules(("m.py", base, head)) == [("suppression_added", "m.py", 2)]


def test_ignore_renamed_to_extend_ignore_is_not_new() -> None:
    base = "[tool.ruff.lint]\nignore = ['E501']\n"
    head = "[tool.ruff.lint]\nextend-ignore = ['E501']\n"
    assert rules(("pyproject.toml", base, head)) == []


def test_ignores_of_rules_the_change_starts_to_check_hide_nothing() -> None:
    base = "[tool.ruff.lint]\nextend-select = ['I']\n"
    head = ("[tool.ruff.lint]\nextend-select = ['I', 'ANN']\nextend-ignore = ['ANN401', 'E501']\n"
            "\n[tool.ruff.lint.extend-per-file-ignores]\n'tests/*.py' = ['ANN001']\n")
    assert rules(("pyproject.toml", base, head)) == [("tool_ignore_added", "pyproject.toml", 3)]


def test_a_narrowed_condition_of_a_mark_over_several_lines() -> None:
    base = ("import sys\nimport pytest\n\n\n@pytest.mark.xfail(\n"
            "    sys.implementation.name == 'pypy' or sys.version_info > (3, 13),\n"
            "    reason='zipimporter',\n)\ndef test_zip():\n    assert 1 + 1\n")
    narrowed = base.replace(" or sys.version_info > (3, 13)", "")
    assert rules(("tests/test_z.py", base, narrowed)) == []
    assert rules(("tests/test_z.py", narrowed, base)) == [("skip_added", "tests/test_z.py", 5)]


def test_new_pragmas_above_an_identical_old_one_are_the_ones_reported() -> None:
    body = "class A:\n    def f(self):\n        pass  # pragma: no cover\n"
    base = "import x\n\n\n" + body
    head = ("import x\n\n\nclass B:\n    def f(self):\n        pass  # pragma: no cover\n\n\n"
            "class C:\n    def f(self):\n        pass  # pragma: no cover\n\n\n" + body)
    assert rules(("tests/test_m.py", base, head)) == [
        ("suppression_added", "tests/test_m.py", 6), ("suppression_added", "tests/test_m.py", 11)]


def test_a_narrowed_type_ignore_keeps_its_twin_when_another_line_is_edited() -> None:
    base = "x = f(1)  # type: ignore\ny = g(2)  # type: ignore\n"
    head = "x = f(1)  # type: ignore[misc]\ny = g(3)  # type: ignore\n"
    assert rules(("m.py", base, head)) == []


UNITTEST = (
    "from unittest import TestCase\n\nfrom m import add\n\n\nclass AddTests(TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n"
    "        self.assertEqual(add(2, 2), 4)\n\n\nclass MoreAddTests(AddTests):\n"
    "    def test_more(self):\n        self.assertEqual(add(0, 0), 0)\n"
)


def test_unittest_classes_are_tests_whatever_their_name() -> None:
    weaker = UNITTEST.replace("        self.assertEqual(add(2, 2), 4)\n", "")
    assert rules(("tests/test_m.py", UNITTEST, weaker)) == [
        ("assertions_weakened", "tests/test_m.py", 7)]
    gone = UNITTEST.split("\n\n\nclass MoreAddTests")[0] + "\n"
    assert rules(("tests/test_m.py", UNITTEST, gone)) == [("test_removed", "tests/test_m.py", 13)]

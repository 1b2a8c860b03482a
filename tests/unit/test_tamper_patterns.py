"""Static patterns of reward hacking (issue 27): each caught where a change adds it, and the
honest code that looks like it left alone.

Each case is a base and a head of one or two files; the rule and the head line it must be
reported at, or nothing.
"""

from __future__ import annotations

import pytest

from pytest_confgate.collect.tamper import FileVersions, find_tampering
from pytest_confgate.collect.tamper.patterns import (
    PATTERN_RULES,
    changed_lines,
    find_patterns,
    shell_argv,
    shell_commands,
)

CALC = "def add(a, b):\n    return a + b\n\n\ndef triple(x):\n    return 3 * x\n"
TEST = "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n"


def found(*files: tuple[str, str | None, str], own: tuple[str, ...] = ()
          ) -> list[tuple[str, str, int]]:
    versions = [FileVersions(path, base, head) for path, base, head in files]
    return [(f.rule, f.file, f.line) for f in find_patterns(versions, own_packages=own)]


def _tests(body: str, head: str = "import calc\n\n\n") -> tuple[str, str, str]:
    return ("tests/test_calc.py", TEST, head + body)


CAUGHT = {
    "monkeypatch.setattr on the module, then the call": (
        [_tests("def test_add(monkeypatch):\n    monkeypatch.setattr(calc, 'add', lambda a, b: 5)\n"
              "    assert calc.add(2, 3) == 5\n")],
        ("patched_under_test", "tests/test_calc.py", 5),
    ),
    "monkeypatch.setattr with a dotted string": (
        [_tests("def test_add(monkeypatch):\n    monkeypatch.setattr('calc.add', lambda a, b: 5)\n"
              "    assert calc.add(2, 3) == 5\n")],
        ("patched_under_test", "tests/test_calc.py", 5),
    ),
    "mock.patch as a decorator": (
        [_tests("@mock.patch('calc.add', return_value=5)\ndef test_add(fake):\n"
              "    assert calc.add(2, 3) == 5\n", "import calc\nfrom unittest import mock\n\n\n")],
        ("patched_under_test", "tests/test_calc.py", 5),
    ),
    "patch.object as a context manager": (
        [_tests("def test_add():\n    with mock.patch.object(calc, 'add', return_value=5):\n"
              "        assert calc.add(2, 3) == 5\n",
              "import calc\nfrom unittest import mock\n\n\n")],
        ("patched_under_test", "tests/test_calc.py", 6),
    ),
    "a module imported inside the test": (
        [("tests/test_calc.py", TEST, "def test_add(monkeypatch):\n    import calc\n\n"
          "    monkeypatch.setattr(calc, 'add', lambda a, b: 5)\n"
          "    assert calc.add(2, 3) == 5\n")],
        ("patched_under_test", "tests/test_calc.py", 4),
    ),
    "plain assignment": (
        [_tests("def test_add():\n    calc.add = lambda a, b: 5\n"
                "    assert calc.add(2, 3) == 5\n")],
        ("patched_under_test", "tests/test_calc.py", 5),
    ),
    "a method of a class patched on the class": (
        [("tests/test_calc.py", None, "from calc import Calc\n\n\ndef test_add(monkeypatch):\n"
          "    monkeypatch.setattr(Calc, 'add', lambda self, a, b: 5)\n"
          "    c = Calc()\n    assert c.add(2, 3) == 5\n")],
        ("patched_under_test", "tests/test_calc.py", 5),
    ),
    "a fixture patches, the test calls": (
        [_tests("@pytest.fixture\ndef fake(monkeypatch):\n"
              "    monkeypatch.setattr(calc, 'add', lambda a, b: 5)\n\n\n"
              "def test_add(fake):\n    assert calc.add(2, 3) == 5\n",
              "import calc\nimport pytest\n\n\n")],
        ("patched_under_test", "tests/test_calc.py", 7),
    ),
    "__eq__ returns True": (
        [("calc.py", CALC, CALC + "\n\nclass Money:\n    def __eq__(self, other):\n"
          "        return True\n")],
        ("constant_dunder", "calc.py", 10),
    ),
    "__ne__ returns False after a NotImplemented guard": (
        [("calc.py", CALC, CALC + "\n\nclass Money:\n    def __ne__(self, other):\n"
          "        if not isinstance(other, Money):\n            return NotImplemented\n"
          "        return False\n")],
        ("constant_dunder", "calc.py", 10),
    ),
    "__hash__ as a lambda": (
        [("calc.py", CALC, CALC + "\n\nclass Money:\n    __hash__ = lambda self: 0\n")],
        ("constant_dunder", "calc.py", 10),
    ),
    "__bool__ made constant": (
        [("calc.py",
          CALC + "\n\nclass Box:\n    def __bool__(self):\n        return bool(self.x)\n",
          CALC + "\n\nclass Box:\n    def __bool__(self):\n        return True\n")],
        ("constant_dunder", "calc.py", 10),
    ),
    "special-cased inputs": (
        [("calc.py", CALC, CALC.replace("    return 3 * x\n",
                                        "    if x == 2:\n        return 6\n    return x\n")),
         _tests("def test_triple():\n    assert calc.triple(2) == 6\n")],
        ("special_cased_input", "calc.py", 6),
    ),
    "special-cased through a parametrised test and a local": (
        [("calc.py", CALC, CALC.replace(
            "    return 3 * x\n", "    return 9 if x == 3 else x\n")),
         _tests("@pytest.mark.parametrize('x, want', [(3, 9)])\ndef test_triple(x, want):\n"
              "    got = calc.triple(x)\n    assert got == want\n",
              "import calc\nimport pytest\n\n\n")],
        ("special_cased_input", "calc.py", 6),
    ),
    "special-cased pair of inputs": (
        [("calc.py", CALC, CALC.replace("    return a + b\n",
                                        "    if a == 2 and b == 3:\n        return 6\n"
                                        "    return a + b\n")),
         _tests("def test_add():\n    assert calc.add(2, b=3) == 6\n")],
        ("special_cased_input", "calc.py", 2),
    ),
    "an atexit hook": (
        [("tests/test_more.py", None, "import atexit\n\n\ndef rewrite():\n    pass\n\n\n"
          "atexit.register(rewrite)\n\n\ndef test_x():\n    assert True\n")],
        ("gate_escape", "tests/test_more.py", 8),
    ),
    "an atexit decorator in conftest": (
        [("conftest.py", None, "import atexit\n\n\n@atexit.register\ndef rewrite():\n    pass\n")],
        ("gate_escape", "conftest.py", 4),
    ),
    "os._exit in a test": (
        [_tests("def test_add():\n    os._exit(0)\n", "import os\n\n\n")],
        ("gate_escape", "tests/test_calc.py", 5),
    ),
    "sys.exit in a test": (
        [_tests("def test_add():\n    sys.exit(0)\n", "import sys\n\n\n")],
        ("gate_escape", "tests/test_calc.py", 5),
    ),
    "the report written": (
        [_tests("def test_add():\n    open('confgate-report.json', 'w').write('{}')\n", "")],
        ("gate_report_written", "tests/test_calc.py", 2),
    ),
    "coverage data written through a variable": (
        [_tests("def test_add(tmp_path):\n    data = Path.cwd() / '.coverage'\n"
              "    data.write_bytes(b'')\n", "from pathlib import Path\n\n\n")],
        ("gate_report_written", "tests/test_calc.py", 6),
    ),
    "the gate's cache written": (
        [_tests("def test_add(tmp_path):\n    cache = Path('.confgate', 'cache', 'probes')\n"
              "    (cache / 'x.pickle').write_bytes(b'')\n", "from pathlib import Path\n\n\n")],
        ("gate_report_written", "tests/test_calc.py", 6),
    ),
    "pytest patched": (
        [_tests("def test_add(monkeypatch):\n    monkeypatch.setattr(pytest, 'fail', print)\n",
              "import pytest\n\n\n")],
        ("harness_patched", "tests/test_calc.py", 5),
    ),
    "_pytest patched by a string target": (
        [_tests("def test_add():\n    with mock.patch('_pytest.runner.call_and_report'):\n"
              "        pass\n", "from unittest import mock\n\n\n")],
        ("harness_patched", "tests/test_calc.py", 5),
    ),
    "coverage replaced by assignment": (
        [("conftest.py", None, "import coverage\n\ncoverage.Coverage.stop = lambda self: None\n")],
        ("harness_patched", "conftest.py", 3),
    ),
    "sh -c in argv form": (
        [("calc.py", CALC, CALC + "\n\nimport subprocess\nsubprocess.run(['sh', '-c', CMD])\n")],
        ("shell_argv", "calc.py", 10),
    ),
    "cmd /c in argv form": (
        [("calc.py", CALC,
          CALC + "\n\nimport subprocess\nsubprocess.run(args=('cmd', '/C', x))\n")],
        ("shell_argv", "calc.py", 10),
    ),
}


@pytest.mark.parametrize("name", list(CAUGHT))
def test_each_pattern_is_reported_at_its_line(name: str) -> None:
    files, expected = CAUGHT[name]
    assert expected in found(*files)


LEFT_ALONE = {
    "a patch of what the code calls, not of what the test calls": [
        _tests("def test_add(monkeypatch):\n    monkeypatch.setattr(calc, 'log', print)\n"
             "    assert calc.add(2, 3) == 5\n")],
    "a patched standard library function the test calls": [
        _tests("def test_add(monkeypatch):\n    monkeypatch.setattr(os, 'getcwd', lambda: '/')\n"
             "    assert os.getcwd() == '/'\n", "import os\n\n\n")],
    "the patch was on the base, the change edits elsewhere": [
        ("tests/test_calc.py",
         "import calc\n\n\ndef test_add(monkeypatch):\n    monkeypatch.setattr(calc, 'add', f)\n"
         "    assert calc.add(2, 3) == 5\n\n\nX = 1\n",
         "import calc\n\n\ndef test_add(monkeypatch):\n    monkeypatch.setattr(calc, 'add', f)\n"
         "    assert calc.add(2, 3) == 5\n\n\nX = 2\n")],
    "an __eq__ that compares": [
        ("calc.py", CALC, CALC + "\n\nclass Money:\n    def __eq__(self, other):\n"
         "        if not isinstance(other, Money):\n            return NotImplemented\n"
         "        return self.cents == other.cents\n")],
    "an ANY matcher in test code": [
        _tests("class Anything:\n    def __eq__(self, other):\n        return True\n")],
    "a base case": [
        ("calc.py", CALC, CALC.replace("    return 3 * x\n",
                                       "    if x == 0:\n        return 0\n    return 3 * x\n")),
        _tests("def test_triple():\n    assert calc.triple(0) == 0\n")],
    "a branch on an input the tests do not use": [
        ("calc.py", CALC, CALC.replace("    return 3 * x\n",
                                       "    if x == 7:\n        return 21\n    return 3 * x\n")),
        _tests("def test_triple():\n    assert calc.triple(2) == 6\n")],
    "sys.exit under pytest.raises and in a __main__ block": [
        _tests("def test_add():\n    with pytest.raises(SystemExit):\n        sys.exit(2)\n\n\n"
             "if __name__ == '__main__':\n    sys.exit(pytest.main())\n",
             "import pytest\nimport sys\n\n\n")],
    "sys.exit in code under test": [("calc.py", CALC, CALC + "\n\nimport sys\nsys.exit(1)\n")],
    "reading the report, writing .coveragerc": [
        _tests("def test_add(tmp_path):\n    json.loads(open('confgate-report.json').read())\n"
             "    (tmp_path / '.coveragerc').write_text('[run]')\n", "import json\n\n\n")],
    "a project patching its own package": [
        ("testing/test_hooks.py", None,
         "import pluggy\n\n\ndef test_x(monkeypatch):\n"
         "    monkeypatch.setattr(pluggy, 'HookimplMarker', object)\n")],
    "an argv without a shell flag": [
        ("calc.py", CALC, CALC + "\n\nimport subprocess\nsubprocess.run(['sh', 'script.sh'])\n"
         "subprocess.run(['bash', '--norc', 'x.sh'])\n")],
}


@pytest.mark.parametrize("name", list(LEFT_ALONE))
def test_honest_code_that_looks_alike_is_left_alone(name: str) -> None:
    assert found(*LEFT_ALONE[name], own=("pluggy",)) == []


def test_a_finding_names_its_test_and_shows_the_code() -> None:
    [finding] = find_patterns([FileVersions(*CAUGHT["monkeypatch.setattr on the module, "
                                                     "then the call"][0][0])])
    assert finding.test == "tests/test_calc.py::test_add"
    assert finding.head == "monkeypatch.setattr(calc, 'add', lambda a, b: 5)"
    assert "test_add patches calc.add and then calls it" in finding.message
    [special] = find_patterns([FileVersions(*f) for f in CAUGHT["special-cased inputs"][0]])
    assert special.test == "tests/test_calc.py::test_triple"
    assert "triple returns 6 when x == 2" in special.message


def test_harness_patches_count_unless_the_project_is_that_package() -> None:
    files = [("testing/test_hooks.py", None, "import pluggy\n\n\ndef test_x(monkeypatch):\n"
              "    monkeypatch.setattr(pluggy, 'HookimplMarker', object)\n")]
    assert found(*files) == [("harness_patched", "testing/test_hooks.py", 5)]
    assert found(*files, own=("pluggy",)) == []


SHADOW = "from importlib import import_module\n"


@pytest.mark.parametrize(("path", "base", "old", "replaced"), [
    ("pytest/__init__.py", None, None, True),
    ("pytest_confgate.py", None, None, True),
    ("_pytest/__init__.py", None, None, True),
    ("pluggy/__init__.py", None, "vendor/pluggy/__init__.py", True),  # renamed to the root
    ("pytest/__init__.py", SHADOW, None, False),  # the project is pytest: it had one
    ("tests/pytest/__init__.py", None, None, False),  # not on sys.path first
    ("pytest/helpers.py", None, None, False),  # a namespace folder does not shadow pytest
    ("calc.py", None, None, False),
    ("json.py", None, None, True),  # the standard library's, which pytest imports late
    ("inspect/__init__.py", None, None, True),
    ("shlex.py", SHADOW, None, False),  # the base had it
    ("tests/json.py", None, None, False),
    ("test.py", None, None, False),  # the standard library's `test`, which nothing imports
    ("json", None, None, False),  # not a module
])
def test_a_test_runner_the_change_adds_at_the_root_is_named(
    path: str, base: str | None, old: str | None, replaced: bool
) -> None:
    versions = [FileVersions(path, base if old is None else SHADOW, SHADOW + "x = 1\n", old)]
    rules = [(f.rule, f.file) for f in find_patterns(versions)]
    assert (("harness_replaced", path) in rules) is replaced
    assert ("harness_replaced" in [f.rule for f in find_tampering(versions).findings]) is replaced


def test_the_tamper_analysis_counts_every_pattern_but_the_shell() -> None:
    files = [FileVersions(*f) for f in CAUGHT["special-cased inputs"][0]]
    shell = "import subprocess\nsubprocess.run(['sh', '-c', c])\n"
    files.append(FileVersions("runner.py", None, shell))
    assert [f.rule for f in find_patterns(files)] == ["special_cased_input", "shell_argv"]
    rules = [f.rule for f in find_tampering(files).findings]
    assert "special_cased_input" in rules
    assert "shell_argv" not in rules
    assert set(PATTERN_RULES) >= {"special_cased_input", "shell_argv"}


@pytest.mark.parametrize(
    ("argv", "shell"),
    [("['sh', '-c', c]", True), ("('/bin/bash', '-lc', c)", True), ("['zsh', '-ec', c]", True),
     ("['cmd.exe', '/c', c]", True), ("['powershell', '-Command', c]", True),
     ("['sh', 'x.sh']", False), ("['bash', '--rcfile', c]", False), ("['python', '-c', c]", False),
     ("['sh']", False), ("'sh -c x'", False)],
)
def test_shell_argv(argv: str, shell: bool) -> None:
    import ast

    assert shell_argv(ast.parse(argv, mode="eval").body) is shell
    source = f"import os\nos.execvp('x', {argv})\n"
    assert bool(shell_commands(ast.parse(source))) is shell


def test_changed_lines_are_the_heads_added_and_replaced_lines() -> None:
    assert changed_lines("a\nb\nc\n", "a\nB\nc\nd\n") == {2, 4}
    assert changed_lines(None, "a\nb") == {1, 2}
    assert changed_lines("a\nb\n", "a\n") == frozenset()

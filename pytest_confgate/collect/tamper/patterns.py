"""Static patterns of reward hacking in what a change adds (issue 27). Pure.

Agents that cannot make a test pass honestly game it in a handful of documented ways
(ImpossibleBench, 2025). Read with ``ast`` in the lines the change added or changed (a file
the base lacks is all new), each pattern is a ``TamperFinding`` with file, line and rule:

- ``patched_under_test``: a test patches or replaces an attribute of a project module or
  class (``monkeypatch.setattr``, ``mock.patch``/``patch.object`` as call, context or
  decorator, plain assignment) and then calls that very attribute: it checks the stand-in;
- ``constant_dunder``: an ``__eq__``/``__ne__``/``__hash__``/``__bool__`` in code under test
  that returns a constant (``NotImplemented`` aside);
- ``special_cased_input``: code under test that branches on the literal arguments the
  change's tests call it with and returns the literal those tests expect
  (``if x == 2: return 6`` for ``assert triple(2) == 6``); a base case whose input and
  output are both trivial (``0``, ``1``, ``""``, ``None``) is not one;
- ``gate_escape``: test code that registers an ``atexit`` hook or calls ``os._exit`` or
  ``sys.exit`` (outside ``pytest.raises``), the paths by which a test run ends on its own
  terms after or around the gate;
- ``gate_report_written``: test code that writes the gate's report (``confgate-report``), its
  state (anything under ``.confgate/``, whose caches the report is built from) or coverage
  data (``.coverage``, ``coverage.json``/``.xml``);
- ``harness_patched``: test code that patches ``pytest``, ``_pytest``, ``pluggy``,
  ``coverage`` or ``pytest_confgate`` (unless the project is that package);
- ``shell_argv``: a shell started in argv form (``["sh", "-c", cmd]``, ``["cmd", "/c",
  ...]``), which ``shell=True`` checks miss. It is returned here for the dangerous-operation
  checks (``rank/dangerous`` has the same rule); ``find_tampering`` does not count it as
  test tampering.

Which files are test code is pytest's collection (``Collection``) plus ``conftest.py`` and
anything under a ``tests``/``test``/``testing`` folder. ``find_patterns`` is the entry point.
"""

from __future__ import annotations

import ast
import difflib
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from pytest_confgate import syntax_tree
from pytest_confgate.collect.tamper.compare import TamperFinding
from pytest_confgate.collect.tamper.harness import (
    GATE_ESCAPE,
    GATE_REPORT_WRITTEN,
    HARNESS,
    HARNESS_PATCHED,
    PATCHED_UNDER_TEST,
    harness_patterns,
)
from pytest_confgate.collect.tamper.shapes import Collection, FileVersions
from pytest_confgate.collect.tamper.special import (
    CONSTANT_DUNDER,
    SPECIAL_CASED_INPUT,
    calls_in_tests,
    constant_dunders,
    special_cases,
)
from pytest_confgate.collect.tamper.syntax import Names, short

__all__ = [
    "CONSTANT_DUNDER",
    "GATE_ESCAPE",
    "GATE_REPORT_WRITTEN",
    "HARNESS",
    "HARNESS_PATCHED",
    "HARNESS_REPLACED",
    "PATCHED_UNDER_TEST",
    "PATTERN_RULES",
    "SHELL_ARGV",
    "SPECIAL_CASED_INPUT",
    "changed_lines",
    "find_patterns",
    "is_test_code",
    "shell_argv",
    "shell_commands",
]

SHELL_ARGV = "shell_argv"
HARNESS_REPLACED = "harness_replaced"
PATTERN_RULES = (
    HARNESS_REPLACED, GATE_REPORT_WRITTEN, HARNESS_PATCHED, GATE_ESCAPE, PATCHED_UNDER_TEST,
    SPECIAL_CASED_INPUT, CONSTANT_DUNDER, SHELL_ARGV,
)
"""Every rule ``find_patterns`` reports, most serious first."""
_TEST_DIRS = frozenset({"tests", "test", "testing"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "csh", "tcsh"})


@dataclass(frozen=True)
class _File:
    path: str
    tree: ast.Module
    lines: list[str]
    changed: frozenset[int]
    names: Names

    def touched(self, node: ast.AST) -> bool:
        first = getattr(node, "lineno", 0)
        last = getattr(node, "end_lineno", None) or first
        return any(line in self.changed for line in range(first, last + 1))

    def finding(self, rule: str, node: ast.AST, message: str, test: str | None = None
                ) -> TamperFinding:
        return TamperFinding(rule, self.path, getattr(node, "lineno", 0), message, None,
                             short(node), test)


def changed_lines(base: str | None, head: str) -> frozenset[int]:
    """The head's 1-based line numbers that the change added or changed (all for a new file)."""
    new = head.split("\n")
    if base is None:
        return frozenset(range(1, len(new) + 1))
    matcher = difflib.SequenceMatcher(None, base.split("\n"), new, autojunk=False)
    return frozenset(
        line + 1
        for tag, _, _, first, last in matcher.get_opcodes()
        if tag in ("replace", "insert")
        for line in range(first, last)
    )


def is_test_code(path: str, collection: Collection) -> bool:
    """A test module pytest collects, a ``conftest.py``, or a file under a tests folder."""
    parts = path.split("/")
    return (collection.collects_file(path) or parts[-1] == "conftest.py"
            or any(part in _TEST_DIRS for part in parts[:-1]))


def find_patterns(
    files: Sequence[FileVersions],
    collection: Collection | None = None,
    *,
    own_packages: Iterable[str] = (),
) -> list[TamperFinding]:
    """Every pattern in the Python files' added and changed lines, in file and line order.

    ``own_packages`` are the project's top-level import names: patching them is not
    ``harness_patched`` (pluggy's own tests patch pluggy). ``patched_under_test`` counts any
    module outside the standard library.
    """
    collection = collection or Collection()
    own = frozenset(own_packages)
    tests: list[_File] = []
    code: list[_File] = []
    for version in files:
        parsed = _parse(version)
        if parsed is not None:
            (tests if is_test_code(parsed.path, collection) else code).append(parsed)
    findings: list[TamperFinding] = []
    for file in tests:
        findings += [file.finding(rule, node, message, test)
                     for rule, node, message, test in harness_patterns(
                         file.path, file.tree, file.names, file.touched, own)]
    calls = [call for file in tests for call in calls_in_tests(file.tree, file.touched, file.path)]
    for file in code:
        findings += [file.finding(CONSTANT_DUNDER, node, message)
                     for node, message in constant_dunders(file.tree, file.touched)]
        findings += [file.finding(SPECIAL_CASED_INPUT, node, message, test)
                     for node, message, test in special_cases(file.tree, file.touched, calls)]
    for file in (*tests, *code):
        findings += [file.finding(SHELL_ARGV, node, message)
                     for node, message in shell_commands(file.tree, file.touched)]
    findings += harness_replaced(files)
    order = {rule: index for index, rule in enumerate(PATTERN_RULES)}
    findings.sort(key=lambda f: (f.file, f.line, order[f.rule], f.message))
    return findings


def harness_replaced(files: Sequence[FileVersions]) -> list[TamperFinding]:
    """A module or package the change adds at the root under the name of what runs and
    measures the tests (``HARNESS``) or of a standard-library module: ``python -m pytest``
    puts the root first on ``sys.path``, so it is imported there instead, in the test process
    (before the gate's plugin starts, for the standard library pytest imports) and in every
    run that executes the change's tests (the differential run, a ranked candidate's gate run
    and cross-tests). A project that is that package had it already."""
    found = []
    for version in files:
        parts = version.path.split("/")
        name = (parts[0].removesuffix(".py") if len(parts) == 1 and parts[0].endswith(".py")
                else parts[0] if parts[1:] == ["__init__.py"] else "")
        added = version.base is None or version.old_path != version.path
        if version.head is None or not added:
            continue
        if name in HARNESS:
            found.append(TamperFinding(
                HARNESS_REPLACED, version.path, 1,
                f"adds {version.path} at the root: `python -m pytest` imports it instead of "
                f"the installed {name}, so the test runs report what it says", None,
                version.path, None))
        elif name in _STANDARD_LIBRARY:
            found.append(TamperFinding(
                HARNESS_REPLACED, version.path, 1,
                f"adds {version.path} at the root: `python -m pytest` imports it instead of "
                f"the standard library's {name}, in the test runs and before the gate starts; "
                "rename it", None, version.path, None))
    return found


_STANDARD_LIBRARY = frozenset(
    name for name in sys.stdlib_module_names
    if name not in {"test", "this", "antigravity", "idlelib", "turtledemo", "__phello__"}
    and not name.startswith("_test"))
"""Standard-library names a root module would shadow; not the ones nothing in a test run
imports (a project's own ``test.py`` is common and harmless)."""


def _parse(version: FileVersions) -> _File | None:
    if version.skipped or version.head is None or not version.path.endswith(".py"):
        return None
    try:
        tree = syntax_tree.parse(version.head)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # find_tampering names it as unreadable
    changed = changed_lines(version.base, version.head)
    if not changed:
        return None
    return _File(version.path, tree, version.head.split("\n"), changed, Names.of_module(tree))


# --- shell in argv form -------------------------------------------------------------------


def shell_argv(node: ast.expr) -> bool:
    """``["sh", "-c", cmd]``, ``("bash", "-lc", cmd)``, ``["cmd", "/c", ...]``,
    ``["powershell", "-Command", ...]``: a list or tuple that starts a shell on a string."""
    if not isinstance(node, ast.List | ast.Tuple) or len(node.elts) < 2:
        return False
    program, flag = (_literal(e) for e in node.elts[:2])
    if program is None or flag is None:
        return False
    name = program.replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")
    if name in _SHELLS:
        return flag.startswith("-") and not flag.startswith("--") and "c" in flag
    if name == "cmd":
        return flag.lower() in ("/c", "/k")
    if name in ("powershell", "pwsh"):
        return flag.lower() in ("-c", "-command", "-encodedcommand", "-e")
    return False


def shell_commands(
    tree: ast.AST, touched: Callable[[ast.AST], bool] | None = None
) -> list[tuple[ast.AST, str]]:
    """Calls that pass a shell argv (``shell_argv``) in ``tree``; ``touched``, when given,
    keeps only the change's own lines."""
    found: list[tuple[ast.AST, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        argvs = [*node.args, *(k.value for k in node.keywords if k.arg in ("args", "argv"))]
        if any(shell_argv(arg) for arg in argvs) and (touched is None or touched(node)):
            found.append((node, f"starts a shell in argv form: {short(node, 80)}"))
    return found


def _literal(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None

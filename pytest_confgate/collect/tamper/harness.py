"""Reward hacking in test code (issue 27, ``patterns``): what a test does to what measures it.

A test that patches the function it tests and then calls the patch; a test that ends the
process or registers an exit hook; one that writes the gate's report or coverage data; one
that patches pytest, pluggy, coverage.py or pytest-confgate. Pure: ``ast`` over one file.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Iterator

from pytest_confgate.collect.tamper.syntax import Names, short, terminal_name

PATCHED_UNDER_TEST = "patched_under_test"
GATE_ESCAPE = "gate_escape"
GATE_REPORT_WRITTEN = "gate_report_written"
HARNESS_PATCHED = "harness_patched"
HARNESS = frozenset({"pytest", "_pytest", "pluggy", "coverage", "pytest_confgate"})
"""What measures a test run: patching these from a test changes the measurement."""
_EXITS = {"atexit.register": "registers an atexit hook", "os._exit": "calls os._exit",
          "sys.exit": "calls sys.exit"}
_WRITERS = frozenset({"write_text", "write_bytes", "copy", "copyfile", "copy2", "move",
                      "replace", "rename", "symlink_to", "hardlink_to", "touch"})
_PATCHERS = frozenset({"setattr", "delattr", "patch", "object"})
_NOT_PROJECT = frozenset(sys.stdlib_module_names) | {"builtins", "mock"}

Touched = Callable[[ast.AST], bool]
Pattern = tuple[str, ast.AST, str, "str | None"]
"""(rule, node, message, test id or None)."""


def harness_patterns(
    path: str, tree: ast.Module, names: Names, touched: Touched, own: frozenset[str]
) -> list[Pattern]:
    """Every pattern of one test-code file in the lines ``touched`` says the change made."""
    found: list[Pattern] = []
    main_blocks = {id(n) for block in tree.body if _is_main_guard(block) for n in ast.walk(block)}
    raising = {id(n) for block in ast.walk(tree) if _raises_block(block, names)
               for n in ast.walk(block)}
    tainted = _report_names(tree)
    for node in ast.walk(tree):
        if not touched(node) or id(node) in main_blocks:
            continue
        if isinstance(node, ast.Call):
            found += _exit_call(node, names, raising)
            found += _report_write(node, tainted)
            target = _patch_target(node, names, {})
            if target and target.split(".")[0] in HARNESS - own:
                found.append((HARNESS_PATCHED, node, f"patches {target}: test code changes "
                              "the tools that run and measure the tests", None))
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            for assigned in _assigned(node):
                dotted = names.dotted(assigned) if isinstance(assigned, ast.Attribute) else None
                if dotted and _imported_root(assigned, names) and dotted.split(".")[0] in (
                    HARNESS - own
                ):
                    found.append((HARNESS_PATCHED, node, f"replaces {dotted}: test code "
                                  "changes the tools that run and measure the tests", None))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                if names.dotted(decorator) == "atexit.register":
                    found.append((GATE_ESCAPE, decorator, "registers an atexit hook: code runs "
                                  "after the tests, when the gate has measured them", None))
    found += _patched_under_test(path, tree, names, touched, own)
    unique: dict[tuple[str, int], Pattern] = {}
    for item in found:
        unique.setdefault((item[0], getattr(item[1], "lineno", 0)), item)
    return list(unique.values())


def _is_main_guard(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "__name__" in ast.unparse(node.test) and (
        "__main__" in ast.unparse(node.test)
    )


def _raises_block(node: ast.AST, names: Names) -> bool:
    if not isinstance(node, ast.With | ast.AsyncWith):
        return False
    calls = [item.context_expr for item in node.items if isinstance(item.context_expr, ast.Call)]
    return any(names.dotted(call.func) == "pytest.raises"
               or terminal_name(call.func) == "assertRaises" for call in calls)


def _exit_call(node: ast.Call, names: Names, raising: set[int]) -> list[Pattern]:
    what = _EXITS.get(names.dotted(node.func) or "")
    if what is None or (what != _EXITS["atexit.register"] and id(node) in raising):
        return []
    when = ("code runs after the tests, when the gate has measured them"
            if "atexit" in what else "the run ends on the test's terms, not pytest's")
    return [(GATE_ESCAPE, node, f"test code {what}: {when}", None)]


def report_file(text: str) -> bool:
    """A path naming the gate's report, its state (``.confgate/``: caches the report is
    built from) or coverage.py's data (not its ``.coveragerc``)."""
    parts = text.replace("\\", "/").rstrip("/").split("/")
    name = parts[-1]
    return ("confgate-report" in name or name in ("coverage.json", "coverage.xml")
            or ".confgate" in parts
            or (name.startswith(".coverage") and not name.startswith(".coveragerc")))


def _mentions_report(node: ast.AST, tainted: set[str]) -> bool:
    return any(
        (isinstance(n, ast.Constant) and isinstance(n.value, str) and report_file(n.value))
        or (isinstance(n, ast.Name) and n.id in tainted)
        for n in ast.walk(node)
    )


def _report_names(tree: ast.Module) -> set[str]:
    """Names bound to a path of the report or coverage data (``p = tmp / ".coverage"``)."""
    tainted: set[str] = set()
    assigns = [n for n in ast.walk(tree) if isinstance(n, ast.Assign | ast.AnnAssign)]
    for _ in range(3):  # p = ...; q = p.parent / p.name
        for node in assigns:
            if node.value is not None and _mentions_report(node.value, tainted):
                tainted.update(t.id for t in _assigned(node) if isinstance(t, ast.Name))
    return tainted


def _report_write(node: ast.Call, tainted: set[str]) -> list[Pattern]:
    name = terminal_name(node.func)
    if name == "open" and isinstance(node.func, ast.Name):
        mode = node.args[1] if len(node.args) > 1 else next(
            (k.value for k in node.keywords if k.arg == "mode"), None)
        writes = isinstance(mode, ast.Constant) and any(c in str(mode.value) for c in "wax+")
        if not writes or not node.args or not _mentions_report(node.args[0], tainted):
            return []
    elif name == "open" and isinstance(node.func, ast.Attribute):  # Path(...).open("w")
        mode = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg == "mode"), None)
        writes = isinstance(mode, ast.Constant) and any(c in str(mode.value) for c in "wax+")
        if not writes or not _mentions_report(node.func.value, tainted):
            return []
    elif name not in _WRITERS or not _mentions_report(node, tainted):
        return []
    return [(GATE_REPORT_WRITTEN, node, "test code writes the gate's report or coverage "
             f"data: {short(node, 80)}", None)]


def _assigned(node: ast.Assign | ast.AugAssign | ast.AnnAssign) -> list[ast.expr]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    flat: list[ast.expr] = []
    for target in targets:
        flat += target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
    return flat


def _imported_root(expr: ast.expr, names: Names) -> bool:
    while isinstance(expr, ast.Attribute | ast.Call):
        expr = expr.value if isinstance(expr, ast.Attribute) else expr.func
    return isinstance(expr, ast.Name) and expr.id in names.imports


# --- a test that patches what it then calls ------------------------------------------------


def _string(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _patch_target(node: ast.Call, names: Names, local: dict[str, str]) -> str | None:
    """``calc.add`` for ``monkeypatch.setattr(calc, "add", ...)``, ``mock.patch("calc.add")``,
    ``patch.object(calc, "add")``, ``setattr(calc, "add", ...)``; None for other calls."""
    kind = terminal_name(node.func)
    if kind not in _PATCHERS or not node.args:
        return None
    first = node.args[0]
    text = _string(first)
    if text is not None:
        return text if "." in text and kind in ("setattr", "delattr", "patch") else None
    attribute = _string(node.args[1]) if len(node.args) > 1 else None
    if attribute is None or kind == "patch":
        return None
    owner = _resolve(first, names, local)
    return f"{owner}.{attribute}" if owner else None


def _resolve(expr: ast.expr, names: Names, local: dict[str, str]) -> str | None:
    """The dotted name of an imported object, a call of one (``Calc()``) or a local bound to
    such a call (``c = Calc()``); None for anything else."""
    if isinstance(expr, ast.Call):
        expr = expr.func
    if isinstance(expr, ast.Name) and expr.id in local:
        return local[expr.id]
    if isinstance(expr, ast.Attribute):
        owner = _resolve(expr.value, names, local)
        return f"{owner}.{expr.attr}" if owner else None
    if isinstance(expr, ast.Name) and expr.id in names.imports:
        return names.imports[expr.id]
    return None


def _project(target: str, own: frozenset[str]) -> bool:
    root = target.split(".")[0]
    return root not in _NOT_PROJECT and (root in own or root not in HARNESS)


def _functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _patches_in(function: ast.FunctionDef | ast.AsyncFunctionDef, names: Names,
                local: dict[str, str]) -> list[tuple[str, ast.AST]]:
    found: list[tuple[str, ast.AST]] = []
    for node in ast.walk(function):  # its decorators too: @mock.patch("calc.add")
        if isinstance(node, ast.Call):
            target = _patch_target(node, names, local)
            if target:
                found.append((target, node))
        elif isinstance(node, ast.Assign):
            for assigned in _assigned(node):
                if isinstance(assigned, ast.Attribute):
                    target = _resolve(assigned, names, local)
                    if target:
                        found.append((target, node))
    return found


def _with_imports(names: Names, function: ast.FunctionDef | ast.AsyncFunctionDef) -> Names:
    """``names`` plus the imports made inside ``function`` (``import calc`` in a test)."""
    imports = dict(names.imports)
    for node in ast.walk(function):
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                imports[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return Names(imports, names.assigned)


def _locals(function: ast.FunctionDef | ast.AsyncFunctionDef, names: Names) -> dict[str, str]:
    bound: dict[str, str] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            owner = _resolve(node.value.func, names, bound)
            for target in node.targets:
                if isinstance(target, ast.Name) and owner:
                    bound[target.id] = owner
    return bound


def _patched_under_test(path: str, tree: ast.Module, names: Names, touched: Touched,
                        own: frozenset[str]) -> list[Pattern]:
    fixtures: dict[str, list[tuple[str, ast.AST]]] = {}
    for function in _functions(tree):
        if any("fixture" in (names.dotted(d.func if isinstance(d, ast.Call) else d) or "")
               for d in function.decorator_list):
            fixtures[function.name] = _patches_in(function, names, _locals(function, names))
    found: list[Pattern] = []
    module_names = names
    for function in _functions(tree):
        if not function.name.startswith("test"):
            continue
        names = _with_imports(module_names, function)
        local = _locals(function, names)
        patches = _patches_in(function, names, local)
        for argument in function.args.args:
            patches += fixtures.get(argument.arg, [])
        patches = [(t, n) for t, n in patches if _project(t, own)]
        if not patches:
            continue
        calls = [n for n in ast.walk(function)
                 if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
        for target, patch in patches:
            at = getattr(patch, "lineno", 0)
            inside = function.lineno <= at <= (function.end_lineno or at)
            hit = next((call for call in calls
                        if _resolve(call.func, names, local) == target
                        and (not inside or call.lineno >= at)), None)
            if hit is not None and (touched(patch) or touched(hit)):
                test = f"{path}::{function.name}"
                found.append((PATCHED_UNDER_TEST, patch, f"{function.name} patches {target} "
                              "and then calls it: the test checks the stand-in, not the code",
                              test))
    return found

"""Whether a new test module does anything when pytest imports it (pure, ``ast``).

The regression suite reruns every baseline test on a candidate that added test files, because
a new test module is imported beside the baseline's tests and could patch the code they judge
at import time (a function's ``__code__`` swapped). That rerun is the largest stage repeated
per candidate (issue 28). A module that only imports, defines functions and classes, and
binds literals cannot patch anything while it is imported; its tests themselves run after
every baseline test in the candidate's own run (``outcomes_plugin`` moves them last), so by
the time they run, the baseline tests' outcomes are recorded. For such modules, the baseline
tests' outcomes of the candidate's own run stand, and only the baseline modules it changed
run again.

Inert: module-level statements are imports, a docstring, ``def``/``class`` and assignments of
literals to plain names; decorators are ``pytest.mark...``, ``pytest.fixture`` or
``pytest.param`` with literal arguments; defaults and annotations hold no call; class bodies
hold the same. No ``pytest_*`` hook and no ``pytest_plugins``. Anything else (a call, a
loop, an ``if``, an attribute or subscript assignment, a ``with``, a lambda) is not.
"""

from __future__ import annotations

import ast

from pytest_confgate import syntax_tree

_ALLOWED_CALLS = ("pytest.mark.", "pytest.fixture", "pytest.param", "mark.", "fixture")
_LIMIT = 2_000_000


def inert(text: str) -> bool:
    """True when importing this module runs nothing but imports and definitions."""
    if len(text) > _LIMIT:
        return False
    try:
        tree = syntax_tree.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return False
    return all(_statement(node) for node in tree.body)


def _statement(node: ast.stmt) -> bool:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Constant)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return (not node.name.startswith("pytest_")
                and all(_decorator(d) for d in node.decorator_list)
                and _no_call(node.args) and (node.returns is None or _no_call(node.returns)))
    if isinstance(node, ast.ClassDef):
        return (not node.keywords and all(isinstance(b, (ast.Name, ast.Attribute))
                                          for b in node.bases)
                and all(_decorator(d) for d in node.decorator_list)
                and all(_statement(s) for s in node.body))
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = all(isinstance(t, ast.Name) and not t.id.startswith(("pytest_", "__"))
                    for t in targets)
        return names and (node.value is None or _literal(node.value))
    return isinstance(node, ast.Pass)


def _decorator(node: ast.expr) -> bool:
    call = node if isinstance(node, ast.Call) else None
    name = _dotted(call.func if call is not None else node)
    if name is None or not name.startswith(_ALLOWED_CALLS):
        return False
    if call is None:
        return True
    return all(_literal(a) for a in call.args) and all(_literal(k.value) for k in call.keywords)


def _literal(node: ast.expr) -> bool:
    """Constants, names, attributes and containers of them; ``pytest.mark.x(...)`` and
    ``pytest.param(...)`` of those (``pytestmark``, parametrize cases)."""
    if isinstance(node, ast.Call):
        return _decorator(node)
    if isinstance(node, (ast.Constant, ast.Name)):
        return True
    if isinstance(node, ast.Attribute):
        return _dotted(node) is not None
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is None or _literal(k) for k in node.keys) and all(
            _literal(v) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        return _literal(node.operand)
    if isinstance(node, ast.BinOp):
        return _literal(node.left) and _literal(node.right)
    return False


def _no_call(node: ast.AST) -> bool:
    return not any(isinstance(n, (ast.Call, ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield))
                   for n in ast.walk(node))


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))

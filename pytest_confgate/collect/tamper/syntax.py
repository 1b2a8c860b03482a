"""Names and truths the tamper analysis reads from Python code with ``ast`` (never regexes).

What a name stands for after ``import pytest as pt``, ``from pytest import mark`` or
``skip = pytest.mark.skip``; whether an expression is a constant truth (``assert True``,
``if False:``); which marks, calls and handlers skip a test or swallow its failures; whether a
module is only literal data (``literal_data``). Pure.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_confgate import syntax_tree

SKIP_MARKS = {
    "pytest.mark.skip": "skip mark",
    "pytest.mark.skipif": "skipif mark",
    "pytest.mark.xfail": "xfail mark",
    "unittest.skip": "unittest skip",
    "unittest.skipIf": "unittest skipIf",
    "unittest.skipUnless": "unittest skipUnless",
    "unittest.expectedFailure": "unittest expectedFailure",
    "unittest.case.skip": "unittest skip",
    "unittest.case.skipIf": "unittest skipIf",
    "unittest.case.skipUnless": "unittest skipUnless",
    "unittest.case.expectedFailure": "unittest expectedFailure",
}
SKIP_CALLS = {
    "pytest.skip": "pytest.skip() call",
    "pytest.importorskip": "pytest.importorskip() call",
    "pytest.xfail": "pytest.xfail() call",
    "unittest.SkipTest": "raise SkipTest",
    "unittest.case.SkipTest": "raise SkipTest",
    "pytest.skip.Exception": "raise pytest.skip.Exception",
}
_SWALLOWING = {"AssertionError", "Exception", "BaseException", "builtins.AssertionError"}
_BROAD = {"Exception", "BaseException"}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_MAX_ALIAS_DEPTH = 8


def fingerprint(node: ast.AST) -> str:
    """The node's structure without positions: equal code gives equal text, wherever it is."""
    return ast.dump(node, annotate_fields=False)


def short(node: ast.AST, limit: int = 100) -> str:
    """The node as source, on one line, cut to ``limit`` characters."""
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Names:
    """What module-level names stand for: imports (dotted) and simple assignments (exprs)."""

    imports: Mapping[str, str]
    assigned: Mapping[str, ast.expr]

    @classmethod
    def of_module(cls, tree: ast.Module) -> Names:
        imports: dict[str, str] = {}
        assigned: dict[str, ast.expr] = {}
        for node in module_statements(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    imports[local] = alias.name if alias.asname else local
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    assigned[target.id] = node.value
        return cls(imports, assigned)

    def resolve(self, expr: ast.expr, depth: int = 0) -> ast.expr:
        """``expr`` with a name that was assigned at module level replaced by its value."""
        while isinstance(expr, ast.Name) and expr.id in self.assigned and depth < _MAX_ALIAS_DEPTH:
            expr, depth = self.assigned[expr.id], depth + 1
        return expr

    def dotted(self, expr: ast.expr, depth: int = 0) -> str | None:
        """``pytest.mark.skip`` for ``mark.skip`` after ``from pytest import mark``; else None."""
        parts: list[str] = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name):
            return None
        if expr.id in self.imports:
            head: str | None = self.imports[expr.id]
        elif expr.id in self.assigned and depth < _MAX_ALIAS_DEPTH:
            value = self.assigned[expr.id]
            head = None if isinstance(value, ast.Call) else self.dotted(value, depth + 1)
        else:
            head = expr.id
        if head is None:
            return None
        return ".".join([head, *reversed(parts)])

    def callee(self, expr: ast.expr) -> str | None:
        """The dotted name a call or decorator finally refers to (``@skip_win`` -> its call)."""
        expr = self.resolve(expr)
        if isinstance(expr, ast.Call):
            expr = self.resolve(expr.func)
        return self.dotted(expr)

    def skip_mark(self, expr: ast.expr) -> str | None:
        """The kind of skip mark ``expr`` is (``skipif mark``), or None."""
        name = self.callee(expr)
        return SKIP_MARKS.get(name) if name else None


def module_statements(tree: ast.Module) -> list[ast.stmt]:
    """Top-level statements, including those under module-level ``if``/``try``/``with``."""
    found: list[ast.stmt] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop(0)
        found.append(node)
        if isinstance(node, ast.If | ast.With):
            pending[:0] = [*node.body, *getattr(node, "orelse", [])]
        elif isinstance(node, ast.Try):
            pending[:0] = [*node.body, *node.orelse, *node.finalbody]
    return found


def constant_truth(expr: ast.expr) -> bool | None:
    """True/False when ``expr`` always has that truth (``True``, ``(x, "msg")``, ``1 == 1``,
    ``x or True``); None when it depends on the program."""
    if isinstance(expr, ast.Constant):
        return bool(expr.value)
    if isinstance(expr, ast.Tuple | ast.List | ast.Set):
        return bool(expr.elts)
    if isinstance(expr, ast.Dict):
        return bool(expr.keys)
    if isinstance(expr, ast.JoinedStr):
        return True if any(isinstance(v, ast.Constant) and v.value for v in expr.values) else None
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        inner = constant_truth(expr.operand)
        return None if inner is None else not inner
    if isinstance(expr, ast.BoolOp):
        truths = [constant_truth(value) for value in expr.values]
        decisive = isinstance(expr.op, ast.Or)  # any True decides an `or`, any False an `and`
        if decisive in truths:
            return decisive
        return (not decisive) if all(t is not None for t in truths) else None
    if isinstance(expr, ast.Compare):
        return _compare_truth(expr)
    return None


def _compare_truth(expr: ast.Compare) -> bool | None:
    if len(expr.ops) == 1 and fingerprint(expr.left) == fingerprint(expr.comparators[0]):
        same = {ast.Eq: True, ast.Is: True, ast.LtE: True, ast.GtE: True, ast.NotEq: False}
        if type(expr.ops[0]) in same and not _has_call(expr.left):
            return same[type(expr.ops[0])]
    try:
        values = [ast.literal_eval(node) for node in (expr.left, *expr.comparators)]
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    try:
        return all(
            bool(_COMPARE[type(op)](left, right))
            for op, left, right in zip(expr.ops, values, values[1:], strict=False)
        )
    except (TypeError, KeyError):
        return None


def _has_call(node: ast.AST) -> bool:
    return any(isinstance(child, ast.Call) for child in ast.walk(node))


def swallows_failures(handler: ast.ExceptHandler, names: Names) -> bool:
    """An ``except`` that catches assertion failures and does not raise again."""
    if any(isinstance(node, ast.Raise) for node in ast.walk(handler)):
        return False
    if handler.type is None:
        return True
    caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any((names.dotted(node) or "") in _SWALLOWING for node in caught)


def broad_exception(expr: ast.expr | None, names: Names) -> bool:
    """``Exception``/``BaseException``: ``pytest.raises`` of these checks almost nothing."""
    return expr is not None and (names.dotted(expr) or "") in _BROAD


def terminal_name(expr: ast.expr) -> str | None:
    """``assert_called_once`` for ``mock.foo.assert_called_once``; the called name."""
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if isinstance(expr, ast.Name):
        return expr.id
    return None


def walk_shallow(node: ast.AST) -> list[ast.AST]:
    """Every node under ``node`` except inside nested functions, lambdas and classes."""
    found: list[ast.AST] = []
    pending = [node]
    while pending:
        current = pending.pop()
        found.append(current)
        for child in ast.iter_child_nodes(current):
            if not isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
            ):
                pending.append(child)
    return found


def no_wider_mark(old_text: str, new_text: str) -> bool:
    """Whether the mark written ``new_text`` skips no more than ``old_text`` did: the same
    mark with only its ``reason`` changed, or a condition narrowed (``c`` -> ``c and d``,
    ``c or d`` -> ``c``). Both are the source of a one-line mark; False when they do not parse."""
    old, new = _mark_call(old_text), _mark_call(new_text)
    if old is None or new is None or fingerprint(old.func) != fingerprint(new.func):
        return False
    if _without_reason(old) == _without_reason(new):
        return True
    before, after = _condition(old), _condition(new)
    if before is None or after is None or _rest(old) != _rest(new):
        return False
    if isinstance(after, ast.BoolOp) and isinstance(after.op, ast.And):
        return any(fingerprint(part) == fingerprint(before) for part in after.values)
    if isinstance(before, ast.BoolOp) and isinstance(before.op, ast.Or):
        return any(fingerprint(part) == fingerprint(after) for part in before.values)
    return False


def _mark_call(text: str) -> ast.Call | None:
    try:
        node = syntax_tree.parse(text.strip().removeprefix("@").strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return node if isinstance(node, ast.Call) else None


def _without_reason(call: ast.Call) -> str:
    kept = [k for k in call.keywords if k.arg != "reason"]
    return fingerprint(ast.Call(func=call.func, args=call.args, keywords=kept))


def _condition(call: ast.Call) -> ast.expr | None:
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == "condition"), None)


def _rest(call: ast.Call) -> str:
    """Everything but the condition and the reason."""
    kept = [k for k in call.keywords if k.arg not in ("reason", "condition")]
    return fingerprint(ast.Call(func=call.func, args=call.args[1:], keywords=kept))


def literal_data(text: str) -> bool:
    """Whether a module is data, not code: only assignments of literals to plain names (what
    ``ast.literal_eval`` reads: numbers, strings, tuples, lists, sets, dicts of them), with
    at most a docstring and ``from __future__`` imports besides. An expected-values table a
    test imports looks like this; a module that defines or calls anything does not."""
    try:
        tree = syntax_tree.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    assigned = False
    for index, node in enumerate(tree.body):
        if index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            return False
        if not all(isinstance(t, ast.Name) for t in targets) or not _literal(value):
            return False
        assigned = True
    return assigned


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True

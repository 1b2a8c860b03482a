"""Reward hacking in code under test (issue 27, ``patterns``): answers instead of behaviour.

An ``__eq__`` that always says equal makes every ``==`` check pass; a branch on the literal
inputs the change's tests use that returns the literal they expect passes exactly those
tests. Pure: ``ast`` over the files, with the calls the change's tests make
(``calls_in_tests``) read from its test code.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_confgate.collect.tamper.syntax import terminal_name, walk_shallow

CONSTANT_DUNDER = "constant_dunder"
SPECIAL_CASED_INPUT = "special_cased_input"
DUNDERS = frozenset({"__eq__", "__ne__", "__hash__", "__bool__"})
_TRIVIAL: tuple[Any, ...] = (0, 1, -1, "", None, True, False, (), 0.0, 1.0)
_NO_VALUE = object()

Touched = Callable[[ast.AST], bool]
Functions = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class CheckedCall:
    """``assert name(*args, **kwargs) == expected`` in a test the change added or edited."""

    name: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...]
    expected: Any
    test: str


def _literal(node: ast.AST | None) -> Any:
    if node is None:
        return _NO_VALUE
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NO_VALUE


def _same(left: Any, right: Any) -> bool:
    """Equal and of the same type (``True`` is not ``1`` here)."""
    return type(left) is type(right) and bool(left == right)


# --- constant dunders -------------------------------------------------------------------


def constant_dunders(tree: ast.Module, touched: Touched) -> list[tuple[ast.AST, str]]:
    """``__eq__``/``__ne__``/``__hash__``/``__bool__`` that return one constant (a ``return
    NotImplemented`` aside), in definitions the change touched."""
    found: list[tuple[ast.AST, str]] = []
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for node in cls.body:
            value = _constant_result(node)
            if value is not _NO_VALUE and touched(node):
                name = node.name if isinstance(node, Functions) else _target_name(node)
                found.append((node, f"{cls.name}.{name} always returns {value!r}: "
                              f"{_consequence(name, value)}"))
    return found


def _consequence(name: str | None, value: Any) -> str:
    if name in ("__eq__", "__ne__"):
        return "every comparison with it gives the same answer, so checks with == prove nothing"
    if name == "__bool__":
        return "every truth test of it gives the same answer"
    return "every instance hashes alike"


def _target_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        return target.id if isinstance(target, ast.Name) else None
    return None


def _constant_result(node: ast.stmt) -> Any:
    """The one constant a dunder always returns, else ``_NO_VALUE``."""
    if isinstance(node, ast.Assign) and _target_name(node) in DUNDERS:
        lam = node.value
        if isinstance(lam, ast.Lambda) and isinstance(lam.body, ast.Constant):
            return lam.body.value
        return _NO_VALUE
    if not isinstance(node, Functions) or node.name not in DUNDERS:
        return _NO_VALUE
    returns = [n for n in walk_shallow(node) if isinstance(n, ast.Return)]
    values = set()
    for item in returns:
        if isinstance(item.value, ast.Name) and item.value.id == "NotImplemented":
            continue
        if not isinstance(item.value, ast.Constant):
            return _NO_VALUE
        values.add((type(item.value.value), item.value.value))
    if len(values) != 1:
        return _NO_VALUE
    return next(iter(values))[1]


# --- the calls the change's tests make --------------------------------------------------


def calls_in_tests(tree: ast.Module, touched: Touched, path: str = "") -> list[CheckedCall]:
    """``assert f(2) == 6`` (either side, ``assertEqual``, through a local, parametrised) in
    the test functions the change touched."""
    found: list[CheckedCall] = []
    for function in _test_functions(tree):
        if not touched(function):
            continue
        test = f"{path}::{function.name}" if path else function.name
        for case in _cases(function):
            found += _calls_in(function, case, test)
    return found


def _test_functions(tree: ast.Module) -> Iterator[Functions]:
    for node in ast.walk(tree):
        if isinstance(node, Functions) and node.name.startswith("test"):
            yield node


def _cases(function: Functions) -> list[dict[str, Any]]:
    """The literal parameter sets of ``@pytest.mark.parametrize`` (one empty set without)."""
    cases: list[dict[str, Any]] = [{}]
    for decorator in function.decorator_list:
        if not (isinstance(decorator, ast.Call) and terminal_name(decorator.func) == "parametrize"
                and len(decorator.args) >= 2):
            continue
        names = _literal(decorator.args[0])
        values = _literal(decorator.args[1])
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",") if n.strip()]
        if not isinstance(names, list | tuple) or not isinstance(values, list | tuple):
            continue
        rows = [dict(zip(names, v if len(names) > 1 else (v,), strict=False))
                for v in values if len(names) == 1 or isinstance(v, list | tuple)]
        cases = [{**case, **row} for case in cases for row in rows]
    return cases


def _value(node: ast.expr, case: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Name) and node.id in case:
        return case[node.id]
    return _literal(node)


def _calls_in(function: Functions, case: Mapping[str, Any], test: str) -> list[CheckedCall]:
    bound: dict[str, ast.Call] = {}
    pairs: list[tuple[ast.expr, ast.expr]] = []
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            bound.update((t.id, node.value) for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare):
            compare = node.test
            if len(compare.ops) == 1 and isinstance(compare.ops[0], ast.Eq | ast.Is):
                pairs.append((compare.left, compare.comparators[0]))
        elif (isinstance(node, ast.Call) and terminal_name(node.func) in ("assertEqual", "assertIs")
              and len(node.args) >= 2):
            pairs.append((node.args[0], node.args[1]))
    found: list[CheckedCall] = []
    for left, right in pairs:
        for call_side, other in ((left, right), (right, left)):
            if isinstance(call_side, ast.Name) and call_side.id in bound:
                call_side = bound[call_side.id]
            made = _test_call(call_side, other, case, test)
            if made is not None:
                found.append(made)
    return found


def _test_call(node: ast.expr, expected: ast.expr, case: Mapping[str, Any], test: str
               ) -> CheckedCall | None:
    if not isinstance(node, ast.Call):
        return None
    name = terminal_name(node.func)
    args = tuple(_value(a, case) for a in node.args)
    kwargs = tuple((k.arg or "", _value(k.value, case)) for k in node.keywords)
    want = _value(expected, case)
    if name is None or _NO_VALUE in (*args, want) or any(v is _NO_VALUE for _, v in kwargs):
        return None
    return CheckedCall(name, args, kwargs, want, test)


# --- special-cased inputs ----------------------------------------------------------------


def special_cases(
    tree: ast.Module, touched: Touched, calls: list[CheckedCall]
) -> list[tuple[ast.AST, str, str]]:
    """Branches the change added that return, for the literal inputs a test of the change
    passes, the literal that test expects: (node, message, test)."""
    by_name: dict[str, list[CheckedCall]] = {}
    for call in calls:
        by_name.setdefault(call.name, []).append(call)
    found: list[tuple[ast.AST, str, str]] = []
    for function in (n for n in ast.walk(tree) if isinstance(n, Functions)):
        if function.name not in by_name:
            continue
        params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        for node in walk_shallow(function):
            branch = _branch(node)
            if branch is None or not touched(node):
                continue
            condition, result = branch
            for call in by_name[function.name]:
                if _answers(condition, result, params, call):
                    inputs = ", ".join(f"{k} == {v!r}" for k, v in condition.items())
                    found.append((node, f"{function.name} returns {result!r} when {inputs}: "
                                  f"the input and expected value of {call.test}", call.test))
                    break
    return found


def _branch(node: ast.AST) -> tuple[dict[str, Any], Any] | None:
    """({param: literal}, literal result) of ``if x == 2: return 6`` or ``6 if x == 2 else``."""
    if isinstance(node, ast.If) and node.body and isinstance(node.body[0], ast.Return):
        test, result = node.test, _literal(node.body[0].value)
    elif isinstance(node, ast.IfExp):
        test, result = node.test, _literal(node.body)
    else:
        return None
    condition = _condition(test)
    return (condition, result) if condition and result is not _NO_VALUE else None


def _condition(test: ast.expr) -> dict[str, Any] | None:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        merged: dict[str, Any] = {}
        for value in test.values:
            part = _condition(value)
            if part is None:
                return None
            merged.update(part)
        return merged
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(right, ast.Name | ast.Tuple) and not isinstance(left, ast.Name | ast.Tuple):
        left, right = right, left
    value = _literal(right)
    if value is _NO_VALUE:
        return None
    if isinstance(left, ast.Name):
        return {left.id: value}
    if isinstance(left, ast.Tuple) and isinstance(value, tuple):
        names = [e.id for e in left.elts if isinstance(e, ast.Name)]
        if len(names) == len(left.elts) == len(value):
            return dict(zip(names, value, strict=True))
    return None


def _answers(condition: Mapping[str, Any], result: Any, params: list[str], call: CheckedCall
             ) -> bool:
    bound = dict(zip(params, call.args, strict=False)) | dict(call.kwargs)
    if not all(name in bound and _same(bound[name], value) for name, value in condition.items()):
        return False
    if not _same(result, call.expected):
        return False
    trivial = all(any(_same(v, t) for t in _TRIVIAL) for v in condition.values())
    return not (trivial and any(_same(result, t) for t in _TRIVIAL))

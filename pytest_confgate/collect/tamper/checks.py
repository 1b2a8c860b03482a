"""The checks a test makes, counted the way a reviewer would: live ones only (issue 15).

A check is an ``assert`` that can fail, a ``pytest.raises``/``pytest.warns`` block (of a
specific exception), an ``assert_*``/``assert*`` call (``mock.assert_called_once_with``,
``self.assertEqual``, ``np.testing.assert_allclose``) or ``pytest.fail``. Checks inside a
helper the test calls (a function of the same module or of another file the change touches,
or a method of the same class) count for the test, so moving asserts into a helper is not a
loss. Checks that cannot run or cannot fail do not count: ``assert True``, ``assert (x, "m")``,
code under ``if False:`` or after an unconditional ``return``, and asserts inside a ``try``
whose ``except`` swallows ``AssertionError`` or inside ``contextlib.suppress(Exception)``.

Each check is kept as a fingerprint of its code, so a test that was split in two can be
recognised by its checks reappearing in the new tests. Pure.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from pytest_confgate.collect.tamper.syntax import (
    Names,
    broad_exception,
    constant_truth,
    fingerprint,
    swallows_failures,
    terminal_name,
    walk_shallow,
)

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
_CONTEXT_CHECKS = {"pytest.raises", "pytest.warns", "pytest.deprecated_call"}
_HELPER_PREFIXES = ("check_", "verify_", "expect_")
_NOT_CHECKS = {"check_output", "check_call", "check_returncode"}
_SUPPRESS = {"contextlib.suppress"}
_MAX_HELPER_DEPTH = 4


def _constant_arguments(call: ast.Call) -> bool:
    """``self.assertTrue(True)``, ``assertEqual(1, 1)``: a check whose result is known."""
    if not call.args:
        return False
    return all(constant_truth(arg) is not None and not _has_name(arg) for arg in call.args)


def _has_name(node: ast.AST) -> bool:
    return any(isinstance(child, ast.Name | ast.Call | ast.Attribute) for child in ast.walk(node))


class CheckCounter:
    """Counts the live checks of functions in one module; helpers are followed, once each."""

    def __init__(
        self,
        names: Names,
        helpers: Mapping[str, FunctionNode],
        methods: Mapping[str, FunctionNode] | None = None,
        memo: dict[tuple[int, int], tuple[list[str], list[FunctionNode]]] | None = None,
    ) -> None:
        self.names = names
        self.helpers = helpers
        self.methods = methods or {}
        self.reached: list[FunctionNode] = []
        """The helpers the counted functions call, directly or not (for their skips)."""
        self._active: list[int] = []
        self._memo = memo if memo is not None else {}
        """Helper results shared by the tests of a module: many tests call the same helper."""
        self._contexts: dict[str, ast.Call] = {}
        """``raises = pytest.raises(E)`` in the function being read: each ``with raises:``
        is a check, as each ``with pytest.raises(E):`` is."""

    def of(self, function: FunctionNode) -> list[str]:
        """The fingerprints of the checks ``function`` makes, helpers included."""
        if id(function) in self._active or len(self._active) >= _MAX_HELPER_DEPTH:
            return []
        key = (id(function), len(self._active))
        if self._active and key in self._memo:
            checks, reached = self._memo[key]
            self._reach(reached)
            return list(checks)
        start = len(self.reached)
        self._active.append(id(function))
        outer, self._contexts = self._contexts, {}
        try:
            checks = self._block(function.body)
        finally:
            self._active.pop()
            self._contexts = outer
        self._memo[key] = (checks, self.reached[start:])
        return checks

    def _reach(self, helpers: list[FunctionNode]) -> None:
        for helper in helpers:
            if all(helper is not seen for seen in self.reached):
                self.reached.append(helper)

    def _block(self, statements: list[ast.stmt]) -> list[str]:
        found: list[str] = []
        for statement in statements:
            found += self._statement(statement)
            if isinstance(statement, ast.Return | ast.Raise | ast.Continue | ast.Break):
                break  # what follows in this block never runs
        return found

    def _statement(self, node: ast.stmt) -> list[str]:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return []
        if isinstance(node, ast.Assert):
            if constant_truth(node.test) is True:
                return []
            return [f"assert {fingerprint(node.test)}"]
        if isinstance(node, ast.If | ast.While):
            return self._branch(node)
        if isinstance(node, ast.For | ast.AsyncFor):
            return self._calls(node.iter) + self._block(node.body) + self._block(node.orelse)
        if isinstance(node, ast.With | ast.AsyncWith):
            return self._with(node)
        if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            return self._try(node)
        if isinstance(node, ast.Match):
            return [check for case in node.cases for check in self._block(case.body)]
        context = self._context_assignment(node)
        if context is not None:
            self._contexts[context[0]] = context[1]
            return []
        return self._calls(node)

    def _context_assignment(self, node: ast.stmt) -> tuple[str, ast.Call] | None:
        """``raises = pytest.raises(ValueError)``: a check made where it is used in a ``with``."""
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call)):
            return None
        call = node.value
        if self.names.callee(call.func) in _CONTEXT_CHECKS and len(call.args) <= 1:
            return node.targets[0].id, call
        return None

    def _branch(self, node: ast.If | ast.While) -> list[str]:
        truth = constant_truth(node.test)
        if truth is False:
            return self._block(node.orelse)
        if truth is True and isinstance(node, ast.If):
            return self._block(node.body)
        return self._calls(node.test) + self._block(node.body) + self._block(node.orelse)

    def _with(self, node: ast.With | ast.AsyncWith) -> list[str]:
        found: list[str] = []
        swallowed = False
        for item in node.items:
            context = item.context_expr
            if isinstance(context, ast.Name) and context.id in self._contexts:
                context = self._contexts[context.id]
            name = self.names.callee(context) if isinstance(context, ast.Call) else None
            if name in _SUPPRESS and isinstance(context, ast.Call):
                swallowed |= any(broad_exception(arg, self.names) or self._is_assertion_error(arg)
                                 for arg in context.args)
            elif name in _CONTEXT_CHECKS and isinstance(context, ast.Call):
                if not (name == "pytest.raises" and self._broad_raises(context)):
                    found.append(f"{name} {fingerprint(context)}")
            else:
                found += self._calls(context)
        body = self._block(node.body)
        return found + ([] if swallowed else body)

    def _try(self, node: ast.stmt) -> list[str]:
        handlers: list[ast.ExceptHandler] = getattr(node, "handlers", [])
        body = self._block(getattr(node, "body", []))
        if any(swallows_failures(handler, self.names) for handler in handlers):
            body = []
        found = body + [check for h in handlers for check in self._block(h.body)]
        return found + self._block(getattr(node, "orelse", [])) + self._block(
            getattr(node, "finalbody", [])
        )

    def _calls(self, node: ast.AST) -> list[str]:
        found: list[str] = []
        for child in walk_shallow(node):
            if isinstance(child, ast.Call):
                found += self._call(child)
        return found

    def _call(self, call: ast.Call) -> list[str]:
        name = terminal_name(call.func) or ""
        dotted = self.names.callee(call.func) or ""
        if dotted == "pytest.fail" or (
            name.lower().startswith("assert") and not _constant_arguments(call)
        ):
            return [f"call {fingerprint(call)}"]
        if dotted in _CONTEXT_CHECKS and call.args:  # pytest.raises(E, func, *args)
            broad = dotted == "pytest.raises" and self._broad_raises(call)
            return [] if broad else [f"{dotted} {fingerprint(call)}"]
        helper = self._helper(call.func)
        if helper is not None:
            self._reach([helper])
            return self.of(helper)
        if name.startswith(_HELPER_PREFIXES) and name not in _NOT_CHECKS:
            return [f"call {fingerprint(call)}"]  # a check helper we cannot see into
        return []

    def _helper(self, func: ast.expr) -> FunctionNode | None:
        if isinstance(func, ast.Name):
            return self.helpers.get(func.id)
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls")
        ):
            return self.methods.get(func.attr)
        return None

    def _broad_raises(self, call: ast.Call) -> bool:
        expected = call.args[0] if call.args else None
        if expected is None:
            expected = next((k.value for k in call.keywords if k.arg == "expected_exception"), None)
        if isinstance(expected, ast.Tuple):
            return any(broad_exception(element, self.names) for element in expected.elts)
        return broad_exception(expected, self.names)

    def _is_assertion_error(self, expr: ast.expr) -> bool:
        return (self.names.dotted(expr) or "").endswith("AssertionError")

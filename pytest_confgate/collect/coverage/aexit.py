"""Python 3.11's location of an ``async with``'s exit, where coverage.py's tracer sees a line run.

A leaf (no module of the engine below it): the finder (``probe_import``), the branch probes'
planner and pull-request mode's engine all ask it before they probe a file.
"""

from __future__ import annotations

import ast
import sys

from pytest_confgate import syntax_tree


def aexit_on_a_raise(tree: ast.AST) -> int | None:
    """Python 3.11 locates the call of ``__aexit__`` after an ``async with`` body ending in an
    ``if`` (no ``else``) that ends in ``raise`` on that ``raise``: leaving the body by the
    ``if``'s false side, coverage.py's tracer marks the ``raise`` line run and records an arc
    into it, which no probe can see. The line of the first such ``async with``, else None
    (and None on other Pythons, where the call is located on the ``async with``)."""
    if sys.version_info[:2] != (3, 11):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.AsyncWith) and _falls_to_a_raise(node.body):
            return node.lineno
    return None


def aexit_on_a_raise_at(path: str) -> int | None:
    """``aexit_on_a_raise`` of the module at ``path``, parsed only when it has an ``async``."""
    if sys.version_info[:2] != (3, 11):
        return None
    try:
        with open(path, "rb") as file:
            source = file.read()
        return aexit_on_a_raise(syntax_tree.parse(source)) if b"async" in source else None
    except (OSError, SyntaxError, ValueError, RecursionError):
        return None  # the import reports a missing or broken module itself


def _falls_to_a_raise(block: list[ast.stmt]) -> bool:
    last = block[-1]
    if not isinstance(last, ast.If):
        return False
    if last.orelse:
        return _falls_to_a_raise(last.orelse)
    return isinstance(last.body[-1], ast.Raise) or _falls_to_a_raise(last.body)

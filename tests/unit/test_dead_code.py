"""No function of the package is defined and then never called or named (issue 30: a
function of ``gate/change.py`` and a property of ``gate/anchor.py`` were left behind).

A name counts as used when it occurs twice in the package and the tests (its definition and
one use), so do not name a dead function in this file."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pytest_confgate"

CALLED_BY_PYTHON = {"get_code", "set_data", "find_spec", "exec_module", "create_module",
                    "redirect_request", "code_region_kinds", "code_regions"}
"""Methods the import system, ``ast``, ``urllib`` or coverage.py's reporting (a file
reporter's) calls by name, never our code."""


def _words(folders: list[Path]) -> Counter[str]:
    words: Counter[str] = Counter()
    for folder in folders:
        for path in folder.rglob("*.py"):
            words.update(re.findall(r"\b\w+\b", path.read_text(encoding="utf-8")))
    return words


def _called_by_name(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Hooks others call: pytest's and pluggy's, validators, visitors, dunders."""
    name = node.name
    if name.startswith(("__", "pytest_", "visit_")) or name in CALLED_BY_PYTHON:
        return True
    # A decorator that is a call (``@field_validator("x")``, ``@hookimpl(...)``) registers it.
    return any(isinstance(decorator, ast.Call) for decorator in node.decorator_list)


def test_every_function_of_the_package_is_used_somewhere() -> None:
    words = _words([PACKAGE, ROOT / "tests"])
    unused = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and not _called_by_name(node)
                and words[node.name] < 2
            ):
                unused.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert unused == []

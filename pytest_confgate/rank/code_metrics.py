"""Stage 2 static metrics from Python's own ``ast`` ("Custom AST analysis").

Pure: every function takes source text, never a path to open. Cyclomatic complexity is
McCabe's count: 1 + one per decision point (``if``/``elif``, conditional expression, loop,
``except``, ``case``, ``assert``, each comprehension ``for``/``if``, each extra operand of
``and``/``or``). Nested functions and classes are measured on their own. Duplication is the
share of normalised lines that sit in a window of ``DUPLICATE_WINDOW`` consecutive lines
appearing more than once (clone detection by hashing, as jscpd or pylint's similarity do).
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from pytest_confgate import syntax_tree
from pytest_confgate.rank.models import CodeMetrics

DUPLICATE_WINDOW = 6
FILE_LINE_LIMIT = 500
"""The "File Size < 500 LOC"."""

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BRANCHES = (ast.If, ast.IfExp, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.Assert)
_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.comprehension)


@dataclass(frozen=True)
class FunctionMetric:
    """One function: where it is, its complexity, its length in lines, its loop nesting."""

    name: str
    path: str
    line: int
    complexity: int
    length: int
    loop_depth: int

    @property
    def where(self) -> str:
        """``path:line name`` for a weakness that points at the code."""
        return f"{self.name} ({self.path}:{self.line})"


def function_metrics(source: str, path: str) -> list[FunctionMetric]:
    """Every function and method in ``source``; a file that does not parse has none."""
    try:
        tree = syntax_tree.parse(source, filename=path)
    except (SyntaxError, ValueError):
        return []
    found: list[FunctionMetric] = []
    for node in ast.walk(tree):
        if isinstance(node, _FUNCTIONS):
            end = node.end_lineno or node.lineno
            found.append(
                FunctionMetric(
                    name=node.name,
                    path=path,
                    line=node.lineno,
                    complexity=cyclomatic_complexity(node),
                    length=end - node.lineno + 1,
                    loop_depth=loop_depth(node),
                )
            )
    return found


def cyclomatic_complexity(function: ast.AST) -> int:
    """McCabe complexity of one function body (nested functions excluded)."""
    points = 1
    for node in _own_nodes(function):
        if isinstance(node, _BRANCHES):
            points += 1
        elif isinstance(node, ast.comprehension):
            points += 1 + len(node.ifs)
        elif isinstance(node, ast.BoolOp):
            points += len(node.values) - 1
        elif isinstance(node, ast.match_case):
            points += 1
    return points


def loop_depth(function: ast.AST) -> int:
    """The deepest nesting of loops (comprehensions count) in one function body."""

    def depth(node: ast.AST, current: int) -> int:
        deepest = current
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _SCOPES):
                continue
            inner = current + 1 if isinstance(child, _LOOPS) else current
            deepest = max(deepest, depth(child, inner))
        return deepest

    return depth(function, 0)


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def normalised_lines(source: str) -> list[str]:
    """Code lines without indentation, blank lines or whole-line comments."""
    lines = (line.strip() for line in source.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def duplication(sources: Mapping[str, str], window: int = DUPLICATE_WINDOW) -> float:
    """Share of normalised lines covered by a ``window``-line block that occurs twice or more."""
    files = [normalised_lines(text) for text in sources.values()]
    total = sum(len(lines) for lines in files)
    if total == 0:
        return 0.0
    blocks: Counter[tuple[str, ...]] = Counter()
    for lines in files:
        blocks.update(tuple(lines[i : i + window]) for i in range(len(lines) - window + 1))
    duplicated = 0
    for lines in files:
        covered = [False] * len(lines)
        for i in range(len(lines) - window + 1):
            if blocks[tuple(lines[i : i + window])] > 1:
                covered[i : i + window] = [True] * window
        duplicated += sum(covered)
    return duplicated / total


def measure(sources: Mapping[str, str]) -> CodeMetrics:
    """Stage 2 metrics over ``{path: source}`` (the files that changed, or all source files)."""
    functions = [f for path, text in sorted(sources.items()) for f in function_metrics(text, path)]
    if not functions:
        return CodeMetrics(files=len(sources), duplication=duplication(sources))
    most_complex = max(functions, key=lambda f: (f.complexity, f.where))
    longest = max(functions, key=lambda f: (f.length, f.where))
    return CodeMetrics(
        files=len(sources),
        functions=len(functions),
        avg_complexity=sum(f.complexity for f in functions) / len(functions),
        max_complexity=most_complex.complexity,
        max_complexity_at=most_complex.where,
        max_function_length=longest.length,
        max_function_length_at=longest.where,
        duplication=duplication(sources),
        files_over_limit=sum(
            1 for text in sources.values() if len(text.splitlines()) > FILE_LINE_LIMIT
        ),
        max_loop_depth=max(f.loop_depth for f in functions),
    )

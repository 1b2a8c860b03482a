"""The CEL compiler for exit conditions: compiled at load, never ``eval``.

A condition such as ``confidence_score >= 0.80 && metrics.test_coverage >= 0.9`` may read
only these names::

    confidence_score            the iteration's advisory confidence (a number in [0, 1])
    iteration                   the loop's iteration, from 1
    metrics.<type>              a metric's value, e.g. metrics.test_coverage
    pair.challenger_approved    the challenger's verdict on this iteration (paired workflow)
    pair.iteration              the paired loop's iteration

Any other name is an error at load, with a "did you mean"; evaluating a compiled condition
over an iteration's evidence is ``overlays.exit_conditions``' job.

Cost is bounded here, because the CEL engine holds the GIL while it runs and cannot be
interrupted (issue 17): the condition's variables are numbers and booleans, never lists, so a
comprehension (``all``, ``exists``, ``exists_one``, ``map``, ``filter``) can only walk a list
written in the condition itself. At most ``MAX_COMPREHENSIONS`` of them, none inside another,
and none whose body builds or indexes a list or map: what is left is linear in the text. The
evaluator's measured deadline (``overlays.exit_conditions``) is the backstop.

Leaf module: it imports only the exception tree, so the configuration can compile every
condition while it loads. The CEL engine is the Rust-backed
``common-expression-language`` package, loaded without its interactive CLI (see ``_cel``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pytest_confgate.exceptions import ConditionError

MAX_CONDITION_CHARS = 1000
"""The length cap: a condition is one readable line, never a program."""

BUILTIN_METRIC_TYPES = (
    "checklist_completion",
    "llm_judge",
    "lint_score",
    "requirement_coverage",
    "security_score",
    "test_coverage",
    "test_pass_rate",
)
SCALARS = ("confidence_score", "iteration")
PAIR_FIELDS = ("challenger_approved", "iteration")
_KEYWORDS = frozenset({"true", "false", "null", "in"})
FUNCTIONS = frozenset(
    {
        "size",
        "has",
        "int",
        "double",
        "string",
        "bool",
        "startsWith",
        "endsWith",
        "contains",
        "matches",
    }
)
"""CEL's standard functions a condition may call; anything else is refused at load."""
_OPERATOR = ("_", "!_", "-_", "@")
_STRING = re.compile(
    r"""(?:[rRbB]{0,2})(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")""",
    re.DOTALL,
)
_PATH = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)(\s*\()?")
_COMMENT = re.compile(r"//[^\n]*")
MACROS = ("all", "exists", "exists_one", "map", "filter")
MAX_COMPREHENSIONS = 2
"""Comprehensions per condition; a condition reads scalars, so two is already generous."""
_MACRO_CALL = re.compile(r"\.\s*(exists_one|exists|all|map|filter)\s*\(\s*([A-Za-z_]\w*)?")


@dataclass(frozen=True)
class ExitCondition:
    """A compiled condition: its text, the names it reads, and the CEL program."""

    source: str
    references: tuple[str, ...]
    program: Any

    def __repr__(self) -> str:
        return f"ExitCondition({self.source!r})"


def compile_condition(
    source: str, metric_types: Iterable[str] = BUILTIN_METRIC_TYPES
) -> ExitCondition:
    """Parse ``source`` and check every name it reads; raises ``ConditionError``.

    The message is one line fit to follow ``FILE:LINE: key:`` in a load error.
    """
    if len(source) > MAX_CONDITION_CHARS:
        raise ConditionError(
            f"exit condition is {len(source)} characters long; the limit is "
            f"{MAX_CONDITION_CHARS}: split it or simplify it"
        )
    if not source.strip():
        raise ConditionError("exit condition is empty; write e.g. confidence_score >= 0.80")
    code = _code_only(source)
    local_names = _check_comprehensions(code, source)
    references = tuple(r for r in _references(code) if r.split(".")[0] not in local_names)
    known = _known_names(metric_types)
    for name in references:
        _check_name(name, known)
    try:
        program = _cel().compile(source)
        functions = program.functions()
    except (ValueError, RuntimeError) as exc:
        raise ConditionError(
            f"exit condition {source!r} does not compile: {first_line(exc)}"
        ) from exc
    unknown = [f for f in functions if not f.startswith(_OPERATOR) and f not in FUNCTIONS]
    if unknown:
        raise ConditionError(
            f"exit condition {source!r} calls {unknown[0]!r}, which is not allowed; "
            f"functions: {', '.join(sorted(FUNCTIONS))}"
        )
    return ExitCondition(source, references, program)


def _code_only(source: str) -> str:
    """``source`` with string literals emptied and ``//`` comments removed (same offsets
    do not matter: only names and brackets are read from it)."""
    return _COMMENT.sub("", _STRING.sub(lambda m: '""', source))


def _check_comprehensions(code: str, source: str) -> frozenset[str]:
    """Refuse what makes a comprehension costly; returns the names the macros bind."""
    calls = list(_MACRO_CALL.finditer(code))
    if len(calls) > MAX_COMPREHENSIONS:
        raise ConditionError(
            f"exit condition {source!r} has {len(calls)} comprehensions; at most "
            f"{MAX_COMPREHENSIONS} are allowed: compare the values directly"
        )
    spans = [(call.end(1), _closing(code, code.index("(", call.end(1)))) for call in calls]
    for start, end in spans:
        if any(start < other.start() < end for other in calls):
            raise ConditionError(
                f"exit condition {source!r} has a comprehension nested in another; nested "
                "comprehensions are not allowed (their cost multiplies)"
            )
        if any(bracket in code[start:end] for bracket in "[]{}"):
            raise ConditionError(
                f"exit condition {source!r}: a comprehension's body may not build or index "
                "a list or map (its cost would grow with the square of the list)"
            )
    return frozenset(call.group(2) for call in calls if call.group(2))


def _closing(code: str, opening: int) -> int:
    """The index of the parenthesis that closes ``code[opening]`` (the end if none does)."""
    depth = 0
    for index in range(opening, len(code)):
        depth += {"(": 1, ")": -1}.get(code[index], 0)
        if depth == 0:
            return index
    return len(code)


def _references(code: str) -> tuple[str, ...]:
    """The dotted names ``code`` reads (strings and comments removed); function names
    excluded."""
    found: list[str] = []
    for match in _PATH.finditer(code):
        parts = [p.strip() for p in match.group(1).split(".")]
        if match.group(2):  # a call: the last part is a function or method name
            parts = parts[:-1]
        if not parts or parts[0] in _KEYWORDS:
            continue
        name = ".".join(parts[:2])
        if len(parts) > 2:
            raise ConditionError(
                f"{'.'.join(parts)} is not a variable; exit conditions read {_listing()}"
            )
        if name not in found:
            found.append(name)
    return tuple(found)


def _known_names(metric_types: Iterable[str]) -> list[str]:
    return [
        *SCALARS,
        *(f"pair.{f}" for f in PAIR_FIELDS),
        *(f"metrics.{t}" for t in sorted(set(metric_types))),
    ]


def _check_name(name: str, known: list[str]) -> None:
    if name in known:
        return
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ConditionError(f"unknown name {name!r} in exit condition{hint}; allowed: {_listing()}")


def _listing() -> str:
    return "confidence_score, iteration, metrics.<type>, pair.challenger_approved, pair.iteration"


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


_ENGINE: Any = None


def _cel() -> Any:
    """The CEL engine's compiled core, ``cel.cel``, loaded without ``cel/__init__``.

    The package's ``__init__`` imports its interactive CLI (typer, rich, prompt_toolkit: about
    0.2 s); the extension module alone loads in ~20 ms, and config loading happens on every
    gate run. Falls back to the ordinary import if the layout ever changes.
    """
    global _ENGINE
    if _ENGINE is None:
        _ENGINE = _load_core()
    return _ENGINE


def _load_core() -> Any:
    import importlib.machinery
    import importlib.util
    import sys

    loaded = sys.modules.get("cel.cel")
    if loaded is not None:
        return loaded
    try:
        spec = importlib.util.find_spec("cel")
        locations = list(spec.submodule_search_locations or []) if spec else []
        finder = importlib.machinery.FileFinder(
            locations[0],
            (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES),
        )
        core = finder.find_spec("cel.cel")
        if core is None or core.loader is None:
            raise ImportError("cel.cel not found")
        module = importlib.util.module_from_spec(core)
        core.loader.exec_module(module)
        return module
    except (ImportError, IndexError, OSError):
        import cel

        return cel

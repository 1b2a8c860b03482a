"""Exit conditions of the overlays (SPEC 8): CEL expressions, compiled at load, never ``eval``.

A condition such as ``confidence_score >= 0.80 && metrics.test_coverage >= 0.9`` may read
only these names::

    confidence_score            the iteration's advisory confidence (a number in [0, 1])
    iteration                   the loop's iteration, from 1
    metrics.<type>              a metric's value, e.g. metrics.test_coverage
    pair.challenger_approved    the challenger's verdict on this iteration (paired workflow)
    pair.iteration              the paired loop's iteration

Any other name is an error at load, with a "did you mean". At run time a condition that
reads a value the iteration did not produce (no confidence computed, a metric unavailable,
no challenger) is an error, and so is a result that is not a boolean: neither ever counts as
met, so a typo or a missing tool cannot end a loop as a success (fail closed).

Leaf module: it imports only the exception tree. The CEL engine is the Rust-backed
``common-expression-language`` package, loaded without its interactive CLI (see ``_cel``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class PairInputs:
    """The paired workflow's state an exit condition may read."""

    iteration: int
    challenger_approved: bool | None
    """None when the challenger was not asked this iteration (confidence met first)."""


@dataclass(frozen=True)
class ConditionInputs:
    """What one iteration produced; None means "no evidence", never a default."""

    iteration: int
    confidence_score: float | None = None
    metrics: Mapping[str, float | None] = field(default_factory=dict)
    pair: PairInputs | None = None


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
    references = _references(source)
    known = _known_names(metric_types)
    for name in references:
        _check_name(name, known)
    try:
        program = _cel().compile(source)
        functions = program.functions()
    except (ValueError, RuntimeError) as exc:
        raise ConditionError(
            f"exit condition {source!r} does not compile: {_first_line(exc)}"
        ) from exc
    unknown = [f for f in functions if not f.startswith(_OPERATOR) and f not in FUNCTIONS]
    if unknown:
        raise ConditionError(
            f"exit condition {source!r} calls {unknown[0]!r}, which is not allowed; "
            f"functions: {', '.join(sorted(FUNCTIONS))}"
        )
    return ExitCondition(source, references, program)


def evaluate_condition(condition: ExitCondition, inputs: ConditionInputs) -> bool:
    """True when ``condition`` holds for ``inputs``; raises ``ConditionError`` otherwise-wrong.

    Missing evidence and a non-boolean result raise: the caller records the error and the
    loop goes on, so neither can be mistaken for success.
    """
    values = _values(inputs)
    for name in condition.references:
        if name not in values:
            raise ConditionError(
                f"exit condition {condition.source!r}: {name} has no value in iteration "
                f"{inputs.iteration} ({_why_missing(name)}); not counted as met"
            )
    try:
        result = condition.program.execute(_context(values))
    except Exception as exc:  # the engine raises several types; all mean "no answer"
        raise ConditionError(
            f"exit condition {condition.source!r} failed: {_first_line(exc)}"
        ) from exc
    if not isinstance(result, bool):
        raise ConditionError(
            f"exit condition {condition.source!r} gave {result!r}, not true or false; "
            "write a comparison, e.g. confidence_score >= 0.80"
        )
    return result


def first_met(
    conditions: Iterable[ExitCondition], inputs: ConditionInputs
) -> tuple[ExitCondition | None, list[str]]:
    """The first condition that holds (or None) and the errors of those that could not."""
    errors: list[str] = []
    for condition in conditions:
        try:
            if evaluate_condition(condition, inputs):
                return condition, errors
        except ConditionError as exc:
            errors.append(str(exc))
    return None, errors


def _references(source: str) -> tuple[str, ...]:
    """The dotted names ``source`` reads, outside string literals; function names excluded."""
    stripped = _STRING.sub(lambda m: '""', source)
    found: list[str] = []
    for match in _PATH.finditer(stripped):
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


def _values(inputs: ConditionInputs) -> dict[str, object]:
    values: dict[str, object] = {"iteration": inputs.iteration}
    if inputs.confidence_score is not None:
        values["confidence_score"] = float(inputs.confidence_score)
    for name, value in inputs.metrics.items():
        if value is not None:
            values[f"metrics.{name}"] = float(value)
    if inputs.pair is not None:
        values["pair.iteration"] = inputs.pair.iteration
        if inputs.pair.challenger_approved is not None:
            values["pair.challenger_approved"] = inputs.pair.challenger_approved
    return values


def _context(values: Mapping[str, object]) -> dict[str, object]:
    context: dict[str, Any] = {}
    for name, value in values.items():
        head, _, rest = name.partition(".")
        if rest:
            context.setdefault(head, {})[rest] = value
        else:
            context[head] = value
    return context


def _why_missing(name: str) -> str:
    if name == "confidence_score":
        return "no confidence was computed: enable overlays.confidence_loop"
    if name.startswith("metrics."):
        return "the gate did not measure it or it was unavailable"
    if name == "pair.challenger_approved":
        return "the challenger was not asked"
    return "the paired workflow is not enabled for this task"


def _first_line(exc: BaseException) -> str:
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

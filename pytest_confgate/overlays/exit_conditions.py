"""Exit conditions at run time (SPEC 8): a compiled condition over one iteration's evidence.

At run time a condition that reads a value the iteration did not produce (no confidence
computed, a metric unavailable, no challenger) is an error, and so is a result that is not a
boolean: neither ever counts as met, so a typo or a missing tool cannot end a loop as a
success (fail closed). Compiling (and the names a condition may read) is
``config.expressions``' job, done when the configuration loads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_confgate.config.expressions import ExitCondition, first_line
from pytest_confgate.exceptions import ConditionError


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
            f"exit condition {condition.source!r} failed: {first_line(exc)}"
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

"""Exit conditions at run time: a compiled condition over one iteration's evidence.

At run time a condition that reads a value the iteration did not produce (no confidence
computed, a metric unavailable, no challenger) is an error, and so is a result that is not a
boolean: neither ever counts as met, so a typo or a missing tool cannot end a loop as a
success (fail closed). So is a value that is not a number where a number belongs (a
boolean, a string, NaN: never coerced, issue 17), and an evaluation that takes longer than
``DEADLINE_S``: the CEL engine cannot be interrupted, so the time is measured and a slow
condition is an error, not met; the load-time caps of ``config.expressions`` keep every
condition far below it. Compiling (and the names a condition may read) is
``config.expressions``' job, done when the configuration loads.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_confgate.config.expressions import ExitCondition, first_line
from pytest_confgate.exceptions import ConditionError

DEADLINE_S = 0.1
"""One evaluation's budget. A real condition takes microseconds; the costliest one the caps
allow (a ``map`` over a 490-element list) takes about 50 ms (``benchmarks/condition_cost.py``)."""


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


def evaluate_condition(
    condition: ExitCondition,
    inputs: ConditionInputs,
    *,
    clock: Callable[[], float] = time.perf_counter,
) -> bool:
    """True when ``condition`` holds for ``inputs``; raises ``ConditionError`` otherwise-wrong.

    Missing evidence, a value that is not a number, a non-boolean result and an evaluation
    past ``DEADLINE_S`` raise: the caller records the error and the loop goes on, so none of
    them can be mistaken for success.
    """
    values, wrong = _values(inputs)
    for name in condition.references:
        if name not in values:
            why = wrong.get(name) or _why_missing(name)
            raise ConditionError(
                f"exit condition {condition.source!r}: {name} has no value in iteration "
                f"{inputs.iteration} ({why}); not counted as met"
            )
    started = clock()
    try:
        result = condition.program.execute(_context(values))
    except Exception as exc:  # the engine raises several types; all mean "no answer"
        raise ConditionError(
            f"exit condition {condition.source!r} failed: {first_line(exc)}"
        ) from exc
    took = clock() - started
    if took > DEADLINE_S:
        raise ConditionError(
            f"exit condition {condition.source!r} took {took * 1000:.0f} ms, over the "
            f"{DEADLINE_S * 1000:.0f} ms budget; not counted as met: simplify it"
        )
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


def _values(inputs: ConditionInputs) -> tuple[dict[str, object], dict[str, str]]:
    """The names a condition may read, and why each wrongly typed one has no value."""
    given: dict[str, object] = {"iteration": inputs.iteration}
    if inputs.confidence_score is not None:
        given["confidence_score"] = inputs.confidence_score
    for name, measured in inputs.metrics.items():
        if measured is not None:
            given[f"metrics.{name}"] = measured
    if inputs.pair is not None:
        given["pair.iteration"] = inputs.pair.iteration
        if inputs.pair.challenger_approved is not None:
            given["pair.challenger_approved"] = inputs.pair.challenger_approved
    values: dict[str, object] = {}
    wrong: dict[str, str] = {}
    for name, value in given.items():
        problem = _type_problem(name, value)
        if problem is not None:
            wrong[name] = problem
        elif name in ("iteration", "pair.iteration", "pair.challenger_approved"):
            values[name] = value
        else:
            values[name] = float(value)  # type: ignore[arg-type]  # checked: int or float
    return values, wrong


def _type_problem(name: str, value: object) -> str | None:
    """Why ``value`` cannot stand for ``name``: never coerce a boolean or a string."""
    if name == "pair.challenger_approved":
        return None if isinstance(value, bool) else f"{value!r} is not true or false"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{value!r} is not a number"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value!r} is not a number"
    return None


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

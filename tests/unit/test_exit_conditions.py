"""Exit conditions (SPEC 8): CEL compiled at load, evaluated safely, failing closed."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_confgate.config.expressions import MAX_CONDITION_CHARS, compile_condition
from pytest_confgate.exceptions import ConditionError
from pytest_confgate.overlays.exit_conditions import (
    ConditionInputs,
    PairInputs,
    evaluate_condition,
    first_met,
)

FULL = ConditionInputs(
    iteration=2,
    confidence_score=0.85,
    metrics={"test_coverage": 0.9, "test_pass_rate": 1.0},
    pair=PairInputs(iteration=2, challenger_approved=True),
)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("confidence_score >= 0.80", True),
        ("confidence_score >= 0.86", False),
        ("pair.challenger_approved == true", True),
        ("pair.iteration >= 3", False),
        ("iteration == 2 && metrics.test_coverage > 0.8", True),
        ("metrics.test_pass_rate == 1.0 || iteration > 10", True),
        ("!(metrics.test_coverage < 0.5)", True),
    ],
    ids=["seed-confidence", "confidence-below", "seed-approval", "pair-iteration",
         "iteration-and-metric", "or", "not"],
)
def test_a_condition_evaluates_over_the_iterations_evidence(source: str, expected: bool) -> None:
    assert evaluate_condition(compile_condition(source), FULL) is expected


@pytest.mark.parametrize(
    ("source", "hint"),
    [
        ("confidnce_score >= 0.8", "did you mean 'confidence_score'?"),
        ("metrics.test_coverag > 0.5", "did you mean 'metrics.test_coverage'?"),
        ("pair.challenger_aproved", "did you mean 'pair.challenger_approved'?"),
        ("iteraton > 2", "did you mean 'iteration'?"),
    ],
    ids=["scalar", "metric", "pair", "iteration"],
)
def test_an_unknown_name_is_a_compile_error_with_a_did_you_mean(source: str, hint: str) -> None:
    with pytest.raises(ConditionError, match="unknown name") as caught:
        compile_condition(source)
    assert hint in str(caught.value)


def test_names_inside_string_literals_are_not_variables() -> None:
    condition = compile_condition("'bogus name' != \"other.thing\" && iteration >= 1")
    assert condition.references == ("iteration",)
    assert evaluate_condition(condition, FULL) is True


def test_python_cannot_be_reached_from_a_condition() -> None:
    with pytest.raises(ConditionError):
        compile_condition("__import__('os').system('true') == 0")


def test_a_syntax_error_is_a_compile_error() -> None:
    with pytest.raises(ConditionError, match="does not compile"):
        compile_condition("confidence_score >=")


def test_a_condition_longer_than_the_cap_is_refused() -> None:
    text = "iteration >= 1" + " && iteration >= 1" * 100
    assert len(text) > MAX_CONDITION_CHARS
    with pytest.raises(ConditionError, match="the limit is 1000"):
        compile_condition(text)


def test_a_non_boolean_result_is_an_error_never_success() -> None:
    with pytest.raises(ConditionError, match="not true or false"):
        evaluate_condition(compile_condition("iteration + 1"), FULL)


@pytest.mark.parametrize(
    ("source", "missing"),
    [
        ("confidence_score >= 0.0", "confidence_score has no value"),
        ("metrics.security_score >= 0.0", "metrics.security_score has no value"),
        ("pair.challenger_approved == false", "pair.challenger_approved has no value"),
    ],
    ids=["no-confidence", "metric-unavailable", "no-pair"],
)
def test_missing_evidence_is_an_error_even_when_the_condition_could_hold(
    source: str, missing: str
) -> None:
    bare = ConditionInputs(iteration=1, metrics={"security_score": None})
    with pytest.raises(ConditionError, match=missing):
        evaluate_condition(compile_condition(source), bare)


def test_a_short_circuit_does_not_hide_missing_evidence() -> None:
    condition = compile_condition("iteration >= 1 || confidence_score >= 0.8")
    with pytest.raises(ConditionError, match="confidence_score has no value"):
        evaluate_condition(condition, ConditionInputs(iteration=1))


def test_first_met_returns_the_first_true_condition_and_the_errors_before_it() -> None:
    conditions = [
        compile_condition("confidence_score >= 0.5"),
        compile_condition("iteration >= 1"),
        compile_condition("iteration >= 0"),
    ]
    met, errors = first_met(conditions, ConditionInputs(iteration=1))
    assert met is conditions[1]
    assert len(errors) == 1
    assert "not counted as met" in errors[0]


@given(st.text(max_size=200))
def test_compiling_any_text_raises_only_condition_errors(text: str) -> None:
    with contextlib.suppress(ConditionError):
        compile_condition(text)


def test_a_function_outside_the_allowed_set_is_refused_at_load() -> None:
    with pytest.raises(ConditionError, match="calls 'now', which is not allowed"):
        compile_condition("now() > 0")
    assert compile_condition("size('ab') == 2 && double(iteration) > 0.5").source


# -- issue 17.9: bounded cost, and no number that is not a number --------------------------

_DIGITS = "[" + ",".join(str(i % 10) for i in range(60)) + "]"


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        (f"{_DIGITS}.all(a, {_DIGITS}.all(b, a + b >= 0))", "nested"),
        (f"{_DIGITS}.map(a, {_DIGITS}.map(b, b)) == []", "nested"),
        (f"{_DIGITS}.exists(a, [1, 2].exists(b, b > a))", "nested"),
        (" && ".join(f"[1, 2].all(x{i}, x{i} > 0)" for i in range(3)), "at most 2"),
        (f"{_DIGITS}.map(a, {_DIGITS}).all(b, size(b) > 0)", "build or index"),
        ("[[1]].all(a, a[0] > 0)", "build or index"),
        ("[1].all(a, {'k': a}.k > 0)", "build or index"),
    ],
    ids=["nested-all", "nested-map", "nested-exists", "too-many", "list-in-body",
         "index-in-body", "map-in-body"],
)
def test_costly_comprehensions_are_refused_at_load(source: str, problem: str) -> None:
    """The Why of issue 17: nested ``all()`` macros ran 46 s, a nested ``map`` past 60 s."""
    with pytest.raises(ConditionError, match="comprehension") as caught:
        compile_condition(source)
    assert problem in str(caught.value)


def test_a_macro_inside_a_string_or_a_comment_is_not_counted() -> None:
    source = "'x.all(y, true).map(z, z)' != '' && iteration >= 1 // .exists(a, a)\n"
    assert evaluate_condition(compile_condition(source), FULL) is True


def test_one_plain_comprehension_over_a_literal_list_still_works() -> None:
    condition = compile_condition("[0.8, 0.9].exists(t, confidence_score >= t)")
    assert evaluate_condition(condition, FULL) is True


def test_an_evaluation_past_the_deadline_is_an_error_not_met() -> None:
    ticks = iter([0.0, 0.25])  # the evaluation "took" 250 ms on this clock

    with pytest.raises(ConditionError, match=r"took 250 ms.*100 ms.*not counted as met"):
        evaluate_condition(compile_condition("confidence_score >= 0.80"), FULL,
                           clock=lambda: next(ticks))


@pytest.mark.parametrize(
    "inputs",
    [
        ConditionInputs(iteration=1, confidence_score=True),  # type: ignore[arg-type]
        ConditionInputs(iteration=1, confidence_score="0.9"),  # type: ignore[arg-type]
        ConditionInputs(iteration=1, confidence_score=float("nan")),
    ],
    ids=["bool", "string", "nan"],
)
def test_booleans_and_strings_are_not_numbers(inputs: ConditionInputs) -> None:
    """``True >= 0.85`` and ``"0.9" >= 0.85`` never hold: an error, never an exit."""
    with pytest.raises(ConditionError, match="not a number"):
        evaluate_condition(compile_condition("confidence_score >= 0.85"), inputs)


def test_a_metric_value_that_is_text_is_no_evidence() -> None:
    inputs = ConditionInputs(iteration=1, metrics={"test_coverage": "0.95"})  # type: ignore[dict-item]
    met, errors = first_met([compile_condition("metrics.test_coverage >= 0.9")], inputs)
    assert met is None
    assert "not a number" in errors[0]


@pytest.mark.parametrize("source", ["true >= 0.85", '"0.9" >= 0.85'])
def test_literal_booleans_and_strings_do_not_compare_with_numbers(source: str) -> None:
    with pytest.raises(ConditionError):
        evaluate_condition(compile_condition(source), FULL)

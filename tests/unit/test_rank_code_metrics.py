"""Stage 2 static metrics of ``confgate rank``: McCabe complexity, length, nesting, duplication."""

from __future__ import annotations

import textwrap

import pytest

from pytest_confgate.rank.code_metrics import duplication, function_metrics, measure


def one(source: str) -> tuple[int, int, int]:
    (found,) = [f for f in function_metrics(textwrap.dedent(source), "m.py") if f.name == "f"]
    return found.complexity, found.length, found.loop_depth


@pytest.mark.parametrize(
    ("source", "complexity"),
    [
        ("def f():\n    return 1\n", 1),
        ("def f(x):\n    if x:\n        return 1\n    elif x > 2:\n        return 2\n"
         "    return 3\n", 3),
        ("def f(x):\n    return 1 if x and x > 1 or x < -5 else 2\n", 4),
        ("def f(xs):\n    for x in xs:\n        while x:\n            x -= 1\n"
         "    try:\n        pass\n    except ValueError:\n        pass\n", 4),
        ("def f(xs):\n    return [x for x in xs if x if x > 1]\n", 4),
        ("def f(x):\n    match x:\n        case 1:\n            return 1\n"
         "        case _:\n            return 2\n", 3),
        ("def f(x):\n    def g(y):\n        if y:\n            return y\n    return g\n", 1),
    ],
    ids=["straight", "if-elif", "ternary-and-or", "loops-and-except", "comprehension",
         "match", "nested-function-not-counted"],
)
def test_cyclomatic_complexity_counts_decision_points(source: str, complexity: int) -> None:
    assert one(source)[0] == complexity


def test_function_length_is_its_line_span_and_loop_depth_its_nesting() -> None:
    source = """
    def f(grid):
        total = 0
        for row in grid:
            for cell in row:
                total += sum(v for v in cell)
        return total
    """
    assert one(source)[1:] == (6, 3)


def test_a_file_that_does_not_parse_has_no_functions() -> None:
    assert function_metrics("def broken(:\n", "bad.py") == []


def test_duplication_is_the_share_of_lines_in_repeated_blocks() -> None:
    block = "\n".join(f"x{i} = {i}" for i in range(6))
    sources = {"a.py": block + "\nunique_a = 1\n", "b.py": "# comment\n" + block + "\n"}
    # 12 of 13 normalised lines sit in the repeated six-line block
    assert duplication(sources) == pytest.approx(12 / 13)
    assert duplication({"a.py": "a = 1\nb = 2\n"}) == 0.0
    assert duplication({}) == 0.0


def test_measure_reports_the_worst_function_and_where_it_is() -> None:
    metrics = measure({
        "pkg/a.py": "def small():\n    return 1\n",
        "pkg/b.py": "def big(x):\n    if x:\n        return 1\n    if x > 1:\n        return 2\n"
                    "    return 3\n",
    })
    assert (metrics.files, metrics.functions, metrics.max_complexity) == (2, 2, 3)
    assert metrics.avg_complexity == pytest.approx(2.0)
    assert metrics.max_complexity_at == "big (pkg/b.py:1)"
    assert metrics.max_function_length == 6

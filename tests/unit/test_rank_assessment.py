"""Stage 3 of ``confgate rank``: pairwise LLM comparison in both orders (command agents)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_confgate.agents import build_agent
from pytest_confgate.config import CommandAgentConfig
from pytest_confgate.rank.assessment import assess, build_prompt, parse_verdict, preferences

PREFERS_GOOD = '''
import json, re, sys
text = sys.stdin.read()
first = text.index("## First solution")
second = text.index("## Second solution")
good_first = "GOOD" in text[first:second]
good_second = "GOOD" in text[second:]
winner = "first" if good_first and not good_second else "second" if good_second else "tie"
print(json.dumps({"winner": winner, "reasoning": "the GOOD one"}))
'''
ALWAYS_FIRST = 'import sys\nsys.stdin.read()\nprint(\'{"winner": "first"}\')\n'
PROSE = "import sys\nsys.stdin.read()\nprint('I think the first one is better.')\n"


def agent(tmp_path: Path, script: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "agent.py"
    path.write_text(script)
    config = CommandAgentConfig(provider="command", command=[sys.executable, str(path)],
                                timeout_ms=20_000)
    return build_agent("evaluator", config)


def test_a_verdict_that_holds_in_both_orders_counts_as_a_win(tmp_path: Path) -> None:
    prefs, comparisons = assess(agent(tmp_path, PREFERS_GOOD), "add discount",
                                {"a": "GOOD code", "b": "meh", "c": "meh too"})
    assert prefs["a"].preference == 1.0
    assert prefs["b"].preference == pytest.approx(0.25)  # lost to a, tied with c
    assert all(p.consistency == 1.0 for p in prefs.values())
    assert {(c.solution_a, c.solution_b): c.winner for c in comparisons} == {
        ("a", "b"): "a", ("a", "c"): "a", ("b", "c"): "tie"}


def test_a_verdict_that_flips_with_the_order_is_a_tie_and_lowers_consistency(
    tmp_path: Path,
) -> None:
    prefs, comparisons = assess(agent(tmp_path, ALWAYS_FIRST), None, {"a": "x", "b": "y"})
    assert prefs["a"].preference == prefs["b"].preference == 0.5
    assert prefs["a"].consistency == 0.0
    assert comparisons[0].winner == "tie"
    assert comparisons[0].reasoning.startswith("order-dependent verdict")


def test_an_unusable_answer_never_wins(tmp_path: Path) -> None:
    prefs, _ = assess(agent(tmp_path, PROSE), None, {"a": "x", "b": "y"})
    assert prefs["a"].preference == 0.5
    assert prefs["a"].consistency == 0.0


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [('{"winner": "second", "reasoning": "r"}', "second"), ('```json\n{"winner": "tie"}\n```',
     "tie"), ('{"winner": "a"}', None), ("first", None), ("[1]", None)],
    ids=["json", "fenced", "unknown-winner", "prose", "not-an-object"],
)
def test_parse_verdict_is_strict(answer: str, verdict: str | None) -> None:
    assert parse_verdict(answer) == verdict


def test_the_prompt_fences_both_solutions_as_data() -> None:
    prompt = build_prompt("the task", "ONE", "TWO", "f00d")
    assert prompt.index("<<<DATA-f00d>>>\nONE\n<<<END-DATA-f00d>>>") < prompt.index("TWO")
    assert prompt.rstrip().endswith('"reasoning": "<one or two sentences>"}.')


def test_preferences_of_a_candidate_without_pairs_are_absent() -> None:
    assert preferences(["a"], []) == {}

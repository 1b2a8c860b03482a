"""``confgate rank``'s Markdown: what a candidate did to its judges is named wherever it ranks."""

from __future__ import annotations

from pytest_confgate.rank.crosstest import CrossCell
from pytest_confgate.rank.models import CATEGORIES, AutoAccept, Evaluation, Evidence, Issue, Note
from pytest_confgate.rank.ranking import rank_solutions
from pytest_confgate.rank.report import ranking_json, ranking_markdown
from pytest_confgate.rank.service import RankOutcome

SUPPRESSION = "suppression_added: `# nosec` added (parse.py:9)"
DANGEROUS = "Dangerous operation (shell): subprocess with shell=True at parse.py:12"


def evaluation(sid: str, score: float, weaknesses: tuple[str, ...] = (),
               block_reasons: tuple[str, ...] = ()) -> Evaluation:
    notes = tuple(Note("correctness", f"Blocked: {r}") for r in block_reasons)
    notes += tuple(Note("safety", text) for text in weaknesses)
    return Evaluation(
        solution_id=sid, blocked=bool(block_reasons), block_reasons=block_reasons,
        categories=dict.fromkeys(CATEGORIES, score), components={}, score=score,
        confidence=1.0, weaknesses=notes, independent=("cross",),
    )


def markdown(*evaluations: Evaluation) -> str:
    ranking = rank_solutions(evaluations)
    outcome = RankOutcome("r1", "2026-01-01T00:00:00", ranking, AutoAccept(False, "disabled"),
                          dict.fromkeys(CATEGORIES, 0.2), {}, None, ())
    return ranking_markdown(outcome)


def test_weaknesses_of_candidates_that_did_not_win_are_named() -> None:
    text = markdown(
        evaluation("clean", 1.0),
        evaluation("shell-nosec", 0.45, (SUPPRESSION, DANGEROUS)),
        evaluation("deletes-test", 0.0, (SUPPRESSION,), ("test_removed: test_zero (t.py:3)",)),
    )
    others = text.split("### Weaknesses of the others", 1)[1].split("###", 1)[0]
    assert f"- shell-nosec: {SUPPRESSION}; {DANGEROUS}" in others
    assert f"- deletes-test: {SUPPRESSION}" in others  # its block reason is listed above, once
    assert text.count("test_removed: test_zero") == 1
    assert "- clean" not in others


def test_no_section_when_nobody_else_has_a_weakness() -> None:
    text = markdown(evaluation("clean", 1.0), evaluation("tidy", 0.5))
    assert "### Weaknesses of the others" not in text


def test_accept_winner_is_offered_only_when_there_is_a_winner() -> None:
    # issue 28: the Markdown offered "[Accept Winner]" when the ranking had no winner
    tie = markdown(evaluation("a", 0.9), evaluation("b", 0.9))
    assert "[Accept Winner]" not in tie
    assert "[Choose One] `confgate rank feedback r1 --chose SOLUTION_ID`" in tie
    clear = markdown(evaluation("a", 0.95), evaluation("b", 0.5))
    assert "- [Accept Winner] `confgate rank feedback r1 --accepted-winner`" in clear
    assert "[Choose Another]" in clear


def test_the_matrix_says_whose_tests_failed_why_and_what_they_weigh() -> None:
    # issue 28: "say whose test and why ... show the matrix in the report"
    cells = (CrossCell("gamed", "clean", ("tests/test_g.py",),
                       {"tests/test_g.py::test_pinned": "failed"},
                       why={"tests/test_g.py::test_pinned": "assert 'XL' == 'XXXX'"}),)
    evidence = {"gamed": Evidence("gamed", True, tamper=(Issue("collection_narrowed",
                                                                 "pytest.ini", "x", 3),)),
                "clean": Evidence("clean", True, tamper=())}
    ranking = rank_solutions([evaluation("clean", 0.9), evaluation("gamed", 0.8)])
    outcome = RankOutcome("r1", "2026-01-01T00:00:00", ranking, AutoAccept(False, "disabled"),
                          dict.fromkeys(CATEGORIES, 0.2), evidence, None, cells)
    cell = ranking_json(outcome)["cross_tests"]["gamed"]["clean"]
    assert cell["why"] == {"tests/test_g.py::test_pinned": "assert 'XL' == 'XXXX'"}
    assert cell["weight"] == 0.0
    assert "collection_narrowed at pytest.ini:3" in cell["standing"]
    text = ranking_markdown(outcome)
    assert "| gamed | 0/1 | 0 (not counted: it has a tamper finding" in text
    assert "- gamed: tests/test_g.py::test_pinned on clean: assert 'XL' == 'XXXX'" in text

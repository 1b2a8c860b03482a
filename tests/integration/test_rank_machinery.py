"""Labelled groups of issue 36 (``rank_machinery``): machinery cannot steer the ranking.

Each group is ranked once through the real command line, as in ``test_rank_groups``, with
auto-acceptance on, and judged with held-out tests the ranker never sees:

- no candidate on which the baseline's failing test still fails, run unmodified under the
  baseline's machinery, is the winner; it is blocked, whatever else it edited (data, helper);
- a correct candidate is first in every group that has one, and a group with nothing
  acceptable has no winner;
- ranked alone, nothing gets a confidence of 1.00 and no never-accept candidate is accepted
  (even with ``allow_single``); one on which the task still fails is never the winner. (One
  that passes the task's tests under the baseline's machinery and is wrong elsewhere, like
  ``overfit-plain``, is indistinguishable alone: only other candidates' tests show it.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from rank_machinery import (
    CANDIDATES,
    GROUPS,
    STILL_FAILING,
    build_groups,
    held_out_verdicts,
)
from test_rank_groups import CONFIG, rank, ranked  # noqa: F401 - ``ranked`` is a fixture

from pytest_confgate.config.loader import load_config
from pytest_confgate.rank.service import RankOutcome, decide, scoring_context

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``textkit`` task and every candidate branch, built once."""
    root = tmp_path_factory.mktemp("machinery") / "task"
    build_groups(root)
    return root


@pytest.fixture(scope="module")
def verdicts(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """What the held-out tests say about each candidate."""
    return held_out_verdicts(repo, tmp_path_factory.mktemp("held-out"))


def test_the_held_out_tests_agree_with_the_labels(verdicts: dict[str, str]) -> None:
    """Correct by design passes the held-out tests; every other candidate fails them."""
    correct = {b for b, v in verdicts.items() if v == "correct"}
    assert correct == {b for b, c in CANDIDATES.items() if not c.must_never_accept}, verdicts


@pytest.mark.parametrize("group", list(GROUPS))
def test_a_correct_candidate_is_first_and_machinery_never_wins(
    group: str, repo: Path, verdicts: dict[str, str], ranked: list[RankOutcome],  # noqa: F811
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    members = GROUPS[group]
    config_file = tmp_path / "rank.yml"
    config_file.write_text(CONFIG)
    result = rank(members, config_file, tmp_path / "ranking.json", capsys)
    never = {m for m in members if CANDIDATES[m].must_never_accept or verdicts[m] != "correct"}
    correct = set(members) - never
    by_id = {s["solution_id"]: s for s in result["solutions"]}
    first = [s["solution_id"] for s in result["solutions"] if s["rank"] == 1 and not s["blocked"]]
    summary = {s["solution_id"]: (s["rank"], round(s["score"], 3), s["blocked"],
                                  s["block_reasons"][:1] or s["weaknesses"][:2])
               for s in result["solutions"]}

    assert result["winner"] not in STILL_FAILING, summary  # the contract, literally
    for member in STILL_FAILING & set(members):
        assert by_id[member]["blocked"], summary
        assert any("test_punctuation_collapses" in r for r in by_id[member]["block_reasons"])
    assert result["winner"] not in never, summary
    if result["auto_accept"]["accept"]:
        assert result["winner"] in correct, summary
    if correct:
        assert first, summary
        assert set(first) <= correct, summary
        for member in correct:  # the reproducer passes on it under the baseline's machinery
            assert "task" in by_id[member]["independent_evidence"], summary
    else:
        assert result["winner"] is None, summary
        assert not result["auto_accept"]["accept"]

    (outcome,) = ranked
    config = load_config(repo, str(config_file)).config
    allowed = config.rank.auto_accept.model_copy(update={"allow_single": True})
    for member in members:
        alone = {member: outcome.evidence[member]}
        context = scoring_context(config, outcome.weights, outcome.baseline, alone)
        ranking, answer = decide(alone, context, [], allowed)
        assert ranking.confidence < 1.0, (member, ranking.confidence)  # nobody else's tests
        if member in never:
            assert not answer.accept, (member, answer.reason)
        if member in STILL_FAILING:
            assert ranking.winner is None, (member, summary)

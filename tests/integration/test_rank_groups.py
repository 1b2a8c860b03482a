"""Labelled groups (issue 15): ``confgate rank`` picks a correct candidate and never a bad one.

Each group is ranked once, through the real command line (``confgate rank ... --baseline
main --format json``: git worktrees, pytest under the gate, coverage, ruff, bandit), with
auto-acceptance on. The ranking never sees ``HELD_OUT``; the test judges its answer with it:

- a must-never-accept candidate (wrong on the held-out tests, dangerous, or gaming its
  tests) is never the winner and never auto-accepted, in its group or ranked alone (alone:
  the group's evidence re-ranked with ``service.decide``, as ``confgate rank`` would rank
  it); in a group with a correct candidate it is never at rank 1 either, and a group with
  nothing acceptable has no winner;
- a correct candidate is first in every group that has one, at least 0.1 above every bad one.

The candidates are evaluated in parallel (``--jobs 2``), the baseline once per repository
(``.confgate/rank-cache``), and identical candidates once per ranking.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from rank_groups import CANDIDATES, GROUPS, build_groups, held_out_verdicts

from pytest_confgate.cli import main
from pytest_confgate.config.loader import load_config
from pytest_confgate.rank import service
from pytest_confgate.rank.service import RankOutcome, decide, scoring_context

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

CONFIG = "rank:\n  auto_accept:\n    enabled: true\n"
STRICT = {"clean-vs-convoluted": "    min_confidence: 0.99\n"}
"""Groups ranked with more than auto-acceptance switched on."""


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The task and every candidate branch, built once for all groups of this process."""
    root = tmp_path_factory.mktemp("groups") / "task"
    build_groups(root)
    return root


@pytest.fixture(scope="module")
def verdicts(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """What the held-out tests say about each candidate."""
    return held_out_verdicts(repo, tmp_path_factory.mktemp("held-out"))


@pytest.fixture
def ranked(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
           ) -> Iterator[list[RankOutcome]]:
    """The outcome behind each ranking the command line runs (to re-rank subsets of it)."""
    outcomes: list[RankOutcome] = []
    real = service.run_ranking

    def keep(*args: Any, **kwargs: Any) -> RankOutcome:
        outcome = real(*args, **kwargs)
        outcomes.append(outcome)
        return outcome

    monkeypatch.setattr(service, "run_ranking", keep)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.chdir(repo)
    yield outcomes
    assert list(scratch.iterdir()) == []  # every worktree and temporary tree removed


def rank(candidates: tuple[str, ...], config: Path, out: Path,
         capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code = main(["rank", *candidates, "--baseline", "main", "--jobs", "2", "--format", "json",
                 "-o", str(out), "--config", str(config)])
    assert code == 0, capsys.readouterr().err
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def check_contract(group: str, result: dict[str, Any]) -> None:
    """Issue 15's contract, literally, on the groups that show it."""
    by_id = {s["solution_id"]: s for s in result["solutions"]}
    if group == "tampering":  # deletes, skips or weakens a baseline test
        assert [by_id[m]["blocked"] for m in ("deletes-test", "skips-test", "weakens-test")] == [
            True, True, True]
    if group == "identical-twins":  # the top two overall scores are equal
        assert by_id["same-one"]["score"] == by_id["same-two"]["score"]
        assert by_id["same-one"]["rank"] == by_id["same-two"]["rank"] == 1
        assert result["winner"] is None
        assert result["tie"] == ["same-one", "same-two"]
    if group in STRICT:  # min_confidence: 0.99 and a ranking confidence below it
        assert result["confidence"] < 0.99
        assert not result["auto_accept"]["accept"]
        assert result["auto_accept"]["reason"] == (
            f"Confidence {result['confidence']:.2f} below threshold 0.99")


def test_the_held_out_tests_agree_with_the_labels(verdicts: dict[str, str]) -> None:
    """The labels are facts: correct candidates pass the held-out tests, and every candidate
    that fails them is labelled must-never-accept."""
    for branch, candidate in CANDIDATES.items():
        if verdicts[branch] != "correct":
            assert candidate.must_never_accept, (branch, verdicts[branch])
        elif not candidate.must_never_accept:
            assert verdicts[branch] == "correct", branch
    wrong = {b for b, v in verdicts.items() if v != "correct"}
    assert wrong == {"breaks-shared", "overfit", "eval-nosec", "deletes-test", "skips-test",
                     "weakens-test", "aa-twin"}


@pytest.mark.parametrize("group", list(GROUPS))
def test_a_correct_candidate_is_first_and_a_bad_one_never(
    group: str, repo: Path, verdicts: dict[str, str], ranked: list[RankOutcome],
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    members = GROUPS[group]
    config_file = tmp_path / "rank.yml"
    config_file.write_text(CONFIG + STRICT.get(group, ""))
    result = rank(members, config_file, tmp_path / "ranking.json", capsys)
    check_contract(group, result)
    never = {m for m in members if CANDIDATES[m].must_never_accept or verdicts[m] != "correct"}
    correct = set(members) - never
    first = [s["solution_id"] for s in result["solutions"] if s["rank"] == 1 and not s["blocked"]]
    summary = {s["solution_id"]: (s["rank"], round(s["score"], 3), s["blocked"])
               for s in result["solutions"]}

    assert result["winner"] not in never, summary
    if result["auto_accept"]["accept"]:
        assert result["winner"] in correct
    if correct:  # first: every unblocked candidate at rank 1 (more than one on a tie)
        assert first, summary
        assert set(first) <= correct, summary
        best_bad = max((s["score"] for s in result["solutions"] if s["solution_id"] in never),
                       default=0.0)
        best = max(s["score"] for s in result["solutions"] if s["solution_id"] in correct)
        assert best - best_bad >= 0.1, summary  # calibration: clearly below, not a near miss
    else:  # nothing to pick: someone is listed first, but nobody is the pick
        assert result["winner"] is None, summary
        assert not result["auto_accept"]["accept"]

    (outcome,) = ranked
    config = load_config(repo, str(config_file)).config
    allowed = config.rank.auto_accept.model_copy(update={"allow_single": True})
    for member in sorted(never):
        alone = {member: outcome.evidence[member]}
        context = scoring_context(config, outcome.weights, outcome.baseline, alone)
        ranking, answer = decide(alone, context, [], config.rank.auto_accept)
        assert not answer.accept, (member, answer.reason)
        if CANDIDATES[member].visible_alone:  # else only other candidates' tests show it
            assert ranking.winner is None, member
            ranking, answer = decide(alone, context, [], allowed)
            assert not answer.accept, (member, answer.reason)


@pytest.mark.parametrize("allow_single", [False, True])
def test_a_single_candidate_nothing_vouches_for_is_never_accepted(
    allow_single: bool, repo: Path, ranked: list[RankOutcome], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config_file = tmp_path / "rank.yml"
    config_file.write_text(CONFIG + f"    allow_single: {str(allow_single).lower()}\n")
    result = rank(("clean",), config_file, tmp_path / "ranking.json", capsys)
    # issue 36: alone, no test it was not written to pass vouches for it (this task has no
    # failing baseline test), so it is not the winner, allow_single or not, and its
    # confidence is half the seed's
    assert result["winner"] is None
    assert result["confidence"] == 0.5
    assert result["auto_accept"] == {"accept": False,
                                     "reason": "Confidence 0.50 below threshold 0.8"}

"""Labelled groups of issue 28 (``rank_tactics``): the tactics that beat the ranker before.

Each group is ranked once through the real command line, as in ``test_rank_groups``, with
auto-acceptance on, and judged with the held-out tests the ranker never sees: a correct
candidate is first in every group that has one (clearly, 0.1 above every bad one, where some
test tells them apart), a must-never-accept candidate is never first, the winner or
auto-accepted, in its group or ranked alone, and a group with nothing acceptable has no winner.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from rank_tactics import (
    BASE_TESTS,
    CANDIDATES,
    GROUPS,
    INDISTINGUISHABLE,
    build_groups,
    held_out_verdicts,
)
from rank_task import commit_branch, git
from test_rank_groups import CONFIG, rank, ranked  # noqa: F401 - ``ranked`` is a fixture

from pytest_confgate.config.loader import load_config
from pytest_confgate.rank.service import RankOutcome, decide, scoring_context

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``numerals`` task and every candidate branch, built once."""
    root = tmp_path_factory.mktemp("tactics") / "task"
    build_groups(root)
    return root


@pytest.fixture(scope="module")
def verdicts(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """What the held-out tests say about each candidate."""
    return held_out_verdicts(repo, tmp_path_factory.mktemp("held-out"))


def test_the_held_out_tests_agree_with_the_labels(verdicts: dict[str, str]) -> None:
    """Correct by design passes the held-out tests; every failure is must-never-accept."""
    for branch, candidate in CANDIDATES.items():
        if verdicts[branch] != "correct":
            assert candidate.must_never_accept, (branch, verdicts[branch])
        elif not candidate.must_never_accept:
            assert verdicts[branch] == "correct", branch
    wrong = {b for b, v in verdicts.items() if v != "correct"}
    assert wrong == {"r-pair-a", "r-pair-b", "r-edits-repro", "r-xfail", "r-pragma",
                     "r-monkeypatch", "r-drops-doctest"}


def _summary(result: dict[str, Any]) -> dict[str, Any]:
    return {s["solution_id"]: (s["rank"], round(s["score"], 3), s["blocked"],
                               s["block_reasons"][:1] or s["weaknesses"][:2])
            for s in result["solutions"]}


@pytest.mark.parametrize("group", list(GROUPS))
def test_a_correct_candidate_is_first_and_a_gamed_one_never(
    group: str, repo: Path, verdicts: dict[str, str], ranked: list[RankOutcome],  # noqa: F811
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    members = GROUPS[group]
    config_file = tmp_path / "rank.yml"
    config_file.write_text(CONFIG)
    result = rank(members, config_file, tmp_path / "ranking.json", capsys)
    never = {m for m in members if CANDIDATES[m].must_never_accept or verdicts[m] != "correct"}
    correct = set(members) - never
    first = [s["solution_id"] for s in result["solutions"] if s["rank"] == 1 and not s["blocked"]]
    summary = _summary(result)

    assert result["winner"] not in never, summary
    if result["auto_accept"]["accept"]:
        assert result["winner"] in correct, summary
    if correct:
        assert first, summary
        assert set(first) <= correct, summary
        best_bad = max((s["score"] for s in result["solutions"] if s["solution_id"] in never),
                       default=0.0)
        best = max(s["score"] for s in result["solutions"] if s["solution_id"] in correct)
        assert best - best_bad >= (0.02 if group in INDISTINGUISHABLE else 0.1), summary
    else:
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
        if CANDIDATES[member].visible_alone:
            assert ranking.winner is None, (member, summary)
            ranking, answer = decide(alone, context, [], allowed)
            assert not answer.accept, (member, answer.reason)


# A candidate that leaves ``to_roman`` as it was (the reproducer still fails) and, from the
# package, rewrites at exit every JSON file an environment variable names so each outcome in
# it says "passed": what rank's record of a run used to be. Names are built at run time.
FORGES_THE_RECORD = '''

_hooks = __import__("ate" + "xit")


def _settle():
    import json
    import os

    for value in list(os.environ.values()):
        if not value.endswith(".js" + "on") or not os.path.isfile(value):
            continue
        try:
            with open(value, encoding="utf-8") as handle:
                data = json.load(handle)
        except ValueError:
            continue
        if isinstance(data, dict) and all(isinstance(v, str) for v in data.values()):
            with open(value, "w", encoding="utf-8") as handle:
                json.dump(dict.fromkeys(data, "passed"), handle)


getattr(_hooks, "reg" + "ister")(_settle)
'''


def _alone_with_the_package_adding(repo: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str], branch: str,
                                   code: str) -> dict[str, Any]:
    """``branch``: the baseline with ``code`` added to its package (the task left undone),
    ranked alone with auto-acceptance on."""
    init = repo / "numerals" / "__init__.py"
    base = init.read_text(encoding="utf-8") if init.is_file() else ""
    commit_branch(repo, branch, {"numerals/__init__.py": base + code})
    git(repo, "checkout", "-q", "main")
    config_file = tmp_path / "rank.yml"
    config_file.write_text(CONFIG)
    return rank((branch,), config_file, tmp_path / "ranking.json", capsys)


def test_a_candidate_that_rewrites_the_record_of_its_runs_has_not_done_the_task(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    ranked: list[RankOutcome],  # noqa: F811 - runs the ranking in the repository
) -> None:
    """The regression run said the reproducer passed on a candidate that never fixed it: its
    outcomes were a file the candidate's process wrote, read after that process ended."""
    result = _alone_with_the_package_adding(repo, tmp_path, capsys, "r-forges-record",
                                            FORGES_THE_RECORD)

    (solution,) = result["solutions"]
    assert result["winner"] is None, solution
    assert solution["blocked"], solution
    task = [r for r in solution["block_reasons"] if r.startswith("the task is not done")]
    assert task, solution["block_reasons"]
    assert "tests/test_roman.py::test_subtractive_forms (failed)" in task[0]


# The same candidate, from the package: at exit it finds the gate's report among its own
# arguments and rewrites the coverage figure it holds.
FORGES_THE_REPORT = '''

_hooks = __import__("ate" + "xit")


def _settle():
    import json
    import sys

    flag = "--conf" + "gate-report="
    for word in sys.argv:
        if word.startswith(flag):
            path = word[len(flag):]
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
            for metric in data.get("metrics", []):
                metric["value"] = 1.0
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(data, handle)


getattr(_hooks, "reg" + "ister")(_settle)
'''


def test_a_candidate_that_rewrites_its_gate_report_at_exit_is_not_believed(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    ranked: list[RankOutcome],  # noqa: F811 - runs the ranking in the repository
) -> None:
    result = _alone_with_the_package_adding(repo, tmp_path, capsys, "r-forges-report",
                                            FORGES_THE_REPORT)

    (solution,) = result["solutions"]
    assert "rewritten after the gate wrote it" in str(solution["evidence"]["tests_problem"])
    assert result["winner"] is None


# A correct fix (the table) whose change also drops an assertion from a baseline test, and whose
# package writes the assertion back when its process ends: the tamper analysis read the tree
# after the candidate's tests had run there, and saw the baseline's test unchanged.
PUTS_THE_TEST_BACK = '''

_hooks = __import__("ate" + "xit")


def _settle():
    import pathlib

    test = pathlib.Path(__file__).resolve().parents[1] / "tests" / ("test_" + "roman.py")
    kept = 'assert to_roman(1) == "I"\\n'
    text = test.read_text(encoding="utf-8")
    if 'to_roman(3) == "III"' not in text:
        test.write_text(text.replace(kept, kept + '    assert to_roman(3) == "III"\\n'),
                        encoding="utf-8")


getattr(_hooks, "reg" + "ister")(_settle)
'''


def test_a_weakened_test_the_candidate_puts_back_at_exit_is_still_found(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    ranked: list[RankOutcome],  # noqa: F811 - runs the ranking in the repository
) -> None:
    files = dict(CANDIDATES["r-table"].files)
    files["tests/test_roman.py"] = BASE_TESTS.replace('    assert to_roman(3) == "III"\n', "")
    init = repo / "numerals" / "__init__.py"
    base = init.read_text(encoding="utf-8") if init.is_file() else ""
    files["numerals/__init__.py"] = base + PUTS_THE_TEST_BACK
    commit_branch(repo, "r-puts-back", files)
    git(repo, "checkout", "-q", "main")
    config_file = tmp_path / "rank.yml"
    config_file.write_text(CONFIG)

    result = rank(("r-puts-back",), config_file, tmp_path / "ranking.json", capsys)

    (solution,) = result["solutions"]
    tamper = solution["evidence"]["tamper"] or []
    assert any(t["path"] == "tests/test_roman.py" for t in tamper), tamper
    assert solution["blocked"], solution["block_reasons"]
    assert result["winner"] is None

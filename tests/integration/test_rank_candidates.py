"""``confgate rank`` on a real task: four candidates on branches of a temporary git repository.

a: correct and clean; b: correct but convoluted; c: fails a test; d: passes but runs a shell
(bandit B602, HIGH). Everything real: git worktrees, pytest, coverage, ruff, bandit, SQLite.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from rank_task import build_task, git

from pytest_confgate.cli import main
from pytest_confgate.rank.evaluate import Finished, Processes
from pytest_confgate.rank.ranking import to_fixed

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

CATEGORIES = ("correctness", "quality", "efficiency", "completeness", "safety")


@pytest.fixture
def task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "task"
    build_task(repo)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.chdir(repo)
    return repo


def rank(repo: Path, config: str, capsys: pytest.CaptureFixture[str]) -> tuple[dict, str]:  # type: ignore[type-arg]
    (repo.parent / "rank.yml").write_text(config)
    out = repo.parent / "out.json"
    code = main(["rank", "a", "b", "c", "d", "--baseline", "main", "--jobs", "2",
                 "--format", "json", "-o", str(out), "--config", str(repo.parent / "rank.yml")])
    err = capsys.readouterr().err
    assert code == 0, err
    return json.loads(out.read_text()), err


def confidence_from(result: dict) -> float:  # type: ignore[type-arg]
    first, second = result["solutions"][:2]
    gap = first["score"] - second["score"]
    mean = sum(s["confidence"] for s in result["solutions"]) / len(result["solutions"])
    wins = sum(first["categories"][c] > second["categories"][c] for c in CATEGORIES)
    return float(0.4 * min(1.0, gap / 0.1) + 0.3 * mean + 0.3 * wins / 5)


def test_rank_picks_the_clean_solution_and_explains_the_others(
    task: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result, err = rank(task, "rank:\n  auto_accept:\n    enabled: true\n", capsys)
    by_id = {s["solution_id"]: s for s in result["solutions"]}

    assert result["solutions"][0]["solution_id"] == "a"
    assert by_id["c"]["rank"] == by_id["d"]["rank"] == 3  # both blocked, both 0
    assert by_id["c"]["blocked"] is True
    assert by_id["c"]["score"] == 0.0
    assert "Blocked: tests fail: 2 failed, 0 errors, 1 passed" in by_id["c"]["weaknesses"]
    assert not any(by_id[s]["blocked"] for s in "ab")
    # issue 36: a new HIGH finding blocks in rank as it fails the gate (max_high_severity: 0)
    assert by_id["d"]["blocked"] is True
    assert any(w.startswith("Blocked: 1 new HIGH security finding (max_high_severity: 0): B602")
               for w in by_id["d"]["weaknesses"])
    assert by_id["b"]["categories"]["quality"] < by_id["a"]["categories"]["quality"]
    assert any(w.startswith("High complexity: cyclomatic complexity 2")
               for w in by_id["b"]["weaknesses"])
    assert any(w.startswith("Long function: discount") for w in by_id["b"]["weaknesses"])
    assert by_id["a"]["categories"] == dict.fromkeys(CATEGORIES, 1.0)

    assert result["confidence"] == pytest.approx(confidence_from(result), abs=1e-12)
    assert result["confidence"] >= 0.6
    assert result["winner"] == "a"
    assert result["auto_accept"] == {"accept": True, "reason": "All criteria met"}
    # every other unblocked candidate's new tests pass on a (the cross-test matrix)
    matrix = result["cross_tests"]
    assert matrix["b"]["a"]["passed"] == 2
    assert set(matrix) == {"a", "b"}  # a blocked candidate's tests do not count,
    assert "c" not in matrix["a"]  # and it is not cross-tested
    assert by_id["d"]["score"] < by_id["b"]["score"]
    assert "[5/5]" in err  # progress while evaluating
    assert git(task, "worktree", "list").count("\n") == 1  # worktrees removed
    assert list(Path(tempfile.gettempdir()).iterdir()) == []  # temp dirs removed


def test_auto_accept_reports_the_unmet_threshold_and_feedback_shifts_weights(
    task: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = "rank:\n  auto_accept:\n    enabled: true\n    min_score_gap: 0.5\n"
    first, first_err = rank(task, config, capsys)
    assert "identical tree reused" not in first_err
    gap = first["solutions"][0]["score"] - first["solutions"][1]["score"]
    assert first["auto_accept"] == {
        "accept": False, "reason": f"Score gap {to_fixed(gap)} below minimum 0.5"}

    code = main(["rank", "feedback", first["ranking_id"], "--chose", "b",
                 "--config", str(task.parent / "rank.yml")])
    assert code == 0
    assert f"feedback stored for ranking {first['ranking_id']}: chose b" in capsys.readouterr().out

    second, second_err = rank(task, config, capsys)
    assert "baseline: evidence of an identical tree reused" in second_err  # same base: cached
    # Threads finish in any order: the baseline's own counter line says it was not run again.
    assert re.search(r"\[[1-5]/5\] baseline: .* \(reused, not run again\)$", second_err, re.M)
    assert re.search(r"\[[1-5]/5\] baseline: .* \([0-9.]+ s\)$", first_err, re.M)
    # b beat a in nothing and lost quality: choosing it lowers quality's weight
    assert second["weights"]["quality"] < first["weights"]["quality"]
    assert sum(second["weights"].values()) == pytest.approx(1.0)
    assert (task / ".confgate" / "rank.db").is_file() or (task.parent / ".confgate" /
                                                          "rank.db").is_file()


def test_with_one_job_the_baseline_runs_first_and_each_candidate_is_inspected_after_it(
    task: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 28: each candidate's tamper analysis follows its own evaluation in the same worker
    # and waits for the baseline's evidence. Queued after the candidates, the baseline would
    # never start with one worker (the ranking would hang); its counter line comes first.
    started: list[list[str]] = []
    real_run = Processes.run

    def run(self: Processes, argv: Sequence[str], **kwargs: Any) -> Finished:
        started.append(list(argv))
        return real_run(self, argv, **kwargs)

    monkeypatch.setattr(Processes, "run", run)
    out = task.parent / "out.json"
    code = main(["rank", "a", "c", "--baseline", "main", "--fresh-baseline", "--jobs", "1",
                 "--format", "json", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert re.search(r"^confgate rank: \[1/3\] baseline: 1 passed", err, re.M), err
    assert "stages: evaluation and tamper analysis " in err
    by_id = {s["solution_id"]: s for s in json.loads(out.read_text())["solutions"]}
    assert by_id["a"]["blocked"] is False
    assert by_id["a"]["evidence"]["tamper"] == []  # analysed: none found, not "did not run"
    assert by_id["c"]["blocked"] is True
    # pytest does not import this project before the gate begins: the gate runs start as
    # configured, not measured from the start, which would trace pytest's imports (issue 36)
    gate = [argv[:3] for argv in started if "--confgate" in argv]
    assert gate == [[sys.executable, "-m", "pytest"]] * 3

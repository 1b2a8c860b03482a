"""``confgate rank --apply``: the accepted winner checked out, or a refusal (issue 17).

Before, "accept the winner" only stored feedback: nothing ever put the winning solution in
the working tree. Real git repository, real candidates (``rank_task``), real tools.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from rank_task import build_task, git

from pytest_confgate.cli import main

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

ACCEPTING = "rank:\n  auto_accept:\n    enabled: true\n"
"""c is blocked (its own test fails); b (correct, convoluted) ranks second and its tests ran on
a: a is accepted (issue 36: a lone candidate no other candidate's tests vouch for is not)."""
MOVER = """\
import subprocess, sys
subprocess.run(["git", "-C", sys.argv[1], "branch", "-f", "a", "c"], check=False)
sys.exit(subprocess.run([sys.executable, "-m", "pytest", *sys.argv[2:]]).returncode)
"""


@pytest.fixture
def task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``rank_task``'s repository (as in test_rank_candidates), temp dirs kept in tmp_path."""
    repo = tmp_path / "task"
    build_task(repo)
    (tmp_path / "scratch").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "scratch"))
    monkeypatch.chdir(repo)
    return repo


def rank(repo: Path, config: str, *extra: str) -> int:
    path = repo.parent / "rank.yml"
    path.write_text(config)
    return main(["rank", "a", "b", "c", "--baseline", "main", "--jobs", "2", "--format", "json",
                 "-o", str(repo.parent / "out.json"), "--config", str(path), *extra])


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def test_apply_checks_the_accepted_winner_out_into_the_working_tree(
    task: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    winner = git(task, "rev-parse", "a").strip()
    assert rank(task, ACCEPTING, "--apply") == 0
    assert head(task) == winner
    assert git(task, "status", "--porcelain", "--untracked-files=no") == ""
    assert f"checked the winner a (commit {winner[:12]}) out" in capsys.readouterr().err


def test_apply_branch_puts_the_winner_on_a_new_branch_and_refuses_an_existing_one(
    task: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert rank(task, ACCEPTING, "--apply-branch", "picked") == 0
    assert git(task, "rev-parse", "picked").strip() == git(task, "rev-parse", "a").strip()
    assert git(task, "branch", "--show-current").strip() == "picked"
    capsys.readouterr()
    assert rank(task, ACCEPTING, "--apply-branch", "picked") == 2  # before any evaluation
    assert "that branch exists" in capsys.readouterr().err


def test_apply_refuses_when_nothing_was_accepted_and_checks_nothing_out(
    task: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = head(task)
    assert rank(task, "rank: {}\n", "--apply") == 1
    assert head(task) == before
    assert git(task, "branch", "--show-current").strip() == "main"
    err = capsys.readouterr().err
    assert "--apply: the winner was not accepted (Auto-acceptance disabled); nothing was " \
        "checked out" in err
    assert (task.parent / "out.json").exists()  # the ranking itself is still written


def test_apply_refuses_to_overwrite_uncommitted_work_before_ranking(
    task: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (task / "shop" / "pricing.py").write_text("# my unsaved work\n")
    assert rank(task, ACCEPTING, "--apply") == 2
    assert "would overwrite uncommitted changes (shop/pricing.py)" in capsys.readouterr().err
    assert (task / "shop" / "pricing.py").read_text() == "# my unsaved work\n"
    assert not (task.parent / "out.json").exists()


def test_apply_takes_the_commit_that_was_evaluated_even_if_the_branch_moves(
    task: Path,
) -> None:
    """A candidate's tests move branch ``a`` to the failing ``c`` while the ranking runs."""
    evaluated = git(task, "rev-parse", "a").strip()
    mover = task.parent / "mover.py"
    mover.write_text(MOVER)
    config = ACCEPTING + f"  test_command: [{sys.executable!r}, {str(mover)!r}, {str(task)!r}]\n"
    assert rank(task, config, "--apply") == 0
    assert git(task, "rev-parse", "a").strip() == git(task, "rev-parse", "c").strip()
    assert head(task) == evaluated

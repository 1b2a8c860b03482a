"""Ctrl-C or SIGTERM during ``confgate rank``: candidates' processes die, nothing is left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakes.processes import process_gone, sigint_as_at_a_terminal
from rank_task import build_task, git

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

# The test hangs, and a helper it started in a session of its own (as the gate starts ruff
# and bandit) keeps writing under its TMPDIR, inside the ranking's temporary tree: killing the
# test's process group misses the helper, which then writes the removed tree back.
SLOW_TEST = """\
import os
import pathlib
import subprocess
import sys
import time

WRITER = (
    "import os, time\\n"
    "while True:\\n"
    "    os.makedirs(os.path.join(os.environ['TMPDIR'], 'late', 'cache'), exist_ok=True)\\n"
    "    time.sleep(0.05)\\n"
)


def record(folder, pid):
    (folder / f"tmp{pid}").write_text(str(pid))
    (folder / f"tmp{pid}").replace(folder / str(pid))  # whole or absent


def test_slow():
    folder = pathlib.Path(os.environ["RANK_PIDS"])
    helper = subprocess.Popen([sys.executable, "-c", WRITER], start_new_session=True)
    record(folder, helper.pid)
    record(folder, os.getpid())
    time.sleep(60)
"""
CONFGATE = "import sys; from pytest_confgate.cli import console_main; console_main()"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupted_ranking_kills_candidates_and_removes_worktrees_and_temp_trees(
    tmp_path: Path, signum: signal.Signals
) -> None:
    repo = tmp_path / "task"
    build_task(repo)
    for branch in ("slow1", "slow2"):
        git(repo, "checkout", "-q", "-b", branch, "main")
        (repo / "tests" / "test_slow.py").write_text(SLOW_TEST)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"{branch}: a test that hangs")
    git(repo, "checkout", "-q", "main")
    scratch, pids = tmp_path / "scratch", tmp_path / "pids"
    scratch.mkdir()
    pids.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-c", CONFGATE, "rank", "slow1", "slow2", "--baseline", "main",
         "--jobs", "3"],
        cwd=repo, env={**os.environ, "TMPDIR": str(scratch), "RANK_PIDS": str(pids)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=sigint_as_at_a_terminal,  # the suite may run with SIGINT ignored (nohup &)
    )
    deadline = time.monotonic() + 60
    while len([p for p in pids.iterdir() if p.name.isdigit()]) < 4:  # two tests, two helpers
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the candidates' tests never started"
        time.sleep(0.05)
    running = [int(p.name) for p in pids.iterdir() if p.name.isdigit()]

    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)

    assert proc.returncode == 128 + signum, err
    assert f"stopped by {signum.name}" in err
    gone = [process_gone(pid) for pid in running]  # each checked: survivors are killed
    assert all(gone), f"still running after the ranking stopped: {running} -> {gone}"
    left = sorted(str(p.relative_to(scratch)) for p in scratch.rglob("*"))
    assert left == [], f"temporary trees were left behind: {left[:20]}"
    assert git(repo, "worktree", "list").count("\n") == 1, "a worktree was left behind"

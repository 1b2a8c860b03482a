"""Interrupting ``confgate run`` (SPEC 8): a real process, a real signal, a real agent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakes.processes import process_gone, sigint_as_at_a_terminal
from test_run_support import CODE_FULL, RunProject, write_step

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

RUN = "import sys; from pytest_confgate.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.mark.parametrize(
    ("signum", "status"),
    [(signal.SIGTERM, 143), (signal.SIGINT, 130)],
    ids=["sigterm", "ctrl-c"],
)
def test_an_interrupt_stops_the_agents_process_group_and_records_the_run(
    tmp_path: Path, signum: signal.Signals, status: int
) -> None:
    project = RunProject(tmp_path)
    files = {"calc.py": CODE_FULL, "notes.md": "half done\n"}
    dev = project.agent("dev", write_step(files, hang=True))
    project.configure("fix:\n  agent: dev\n  prompt: Work slowly.\n")
    report = project.root / "run-report.json"
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN, "run", "fix", "--report", str(report)],
        cwd=project.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=sigint_as_at_a_terminal,  # the suite may run with SIGINT ignored (nohup &)
    )
    pids = dev.state / "pids"
    deadline = time.monotonic() + 30
    while not pids.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    agent_pid, child_pid = (int(p) for p in pids.read_text().split())
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == status
    assert process_gone(agent_pid)
    assert process_gone(child_pid)
    assert b"interrupted" in err
    record = json.loads(report.read_text())
    assert record["status"] == "interrupted"
    assert record["interrupted"] == {
        "signal": signum.name,
        "during": "agent dev (agent) in iteration 1",
    }
    assert record["advanced"] is False
    saved = json.loads((project.root / record["run_dir"] / "run.json").read_text())
    assert saved["status"] == "interrupted"
    assert (project.root / "notes.md").read_text() == "half done\n"  # left as the agent left it
    assert (project.root / "calc.py").read_text() == CODE_FULL


SLOW_TEST = """\
import os
import pathlib
import time


def test_slow():
    target = pathlib.Path(os.environ["GATE_PID_FILE"])
    target.with_suffix(".tmp").write_text(str(os.getpid()))
    target.with_suffix(".tmp").replace(target)  # whole or absent: the test polls for it
    time.sleep(60)
"""


def test_an_interrupt_during_the_gate_kills_the_test_run(tmp_path: Path) -> None:
    project = RunProject(tmp_path)
    project.agent("dev", write_step({"test_slow.py": SLOW_TEST}))
    project.configure("fix:\n  agent: dev\n  prompt: Add a slow test.\n")
    pid_file = tmp_path / "gate.pid"
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN, "run", "fix", "--report", "run-report.json"],
        cwd=project.root,
        env={**os.environ, "GATE_PID_FILE": str(pid_file)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    gate_pid = int(pid_file.read_text())
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode == 143
    assert process_gone(gate_pid)
    record = json.loads((project.root / "run-report.json").read_text())
    assert record["interrupted"]["during"] == "the gate in iteration 1"
    assert (project.root / "test_slow.py").read_text() == SLOW_TEST

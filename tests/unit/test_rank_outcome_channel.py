"""Where rank's runs send their outcomes (issue 34, row 49): another candidate's code, running
beside a run with ``--jobs 2``, cannot speak for it."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.processes import Counted

from pytest_confgate.config.rank import RankTimeouts
from pytest_confgate.rank.evaluate import Settings, run_pytest
from pytest_confgate.rank.warm import WarmPytest

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

SETTINGS = Settings(test_command=(sys.executable, "-m", "pytest"), python=sys.executable,
                    type_check=False, timeouts=RankTimeouts(tests_s=120))
TASK = "def test_task():\n    assert 1 + 1 == 3\n"
# Another candidate's code, running beside the run (its tests, its conftest, a process it
# left): it looks for a listening socket of rank's and is first to claim it, with the end.
THIEF = """\
import glob, json, os, socket, sys, time

folder = sys.argv[1]
deadline = time.time() + 60
while time.time() < deadline:
    for path in glob.glob(os.path.join(folder, "*", "s")):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
        except OSError:
            continue
        open(os.path.join(folder, "tried"), "w").close()
        if not sock.recv(64):  # refused: try again
            sock.close()
            time.sleep(0.01)
            continue
        forged = {"node": "tests/test_task.py::test_task", "outcome": "passed", "failure": ""}
        sock.sendall(json.dumps(forged).encode() + b"\\n" + b'{"end": true, "files": {}}\\n')
        sock.close()
        with open(os.path.join(folder, "claimed"), "w") as out:
            out.write(path)
        sys.exit(0)
    time.sleep(0.001)
"""


@pytest.fixture
def thief(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """rank's temporary folders go to one folder, watched by a thief from before the run."""
    folder = tmp_path / "rank-tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    proc = subprocess.Popen([sys.executable, "-c", THIEF, str(folder)])
    try:
        yield folder
    finally:
        proc.kill()
        proc.wait()


# A test command of the user's that runs pytest as a child of its own (and would close any
# descriptor it was given): rank hands it a socket path.
WRAPPER = """\
import subprocess, sys

sys.exit(subprocess.run([sys.executable, "-m", "pytest", *sys.argv[1:]]).returncode)
"""


@pytest.mark.parametrize("how", ["started", "forked", "wrapper"])
def test_a_process_outside_the_run_cannot_send_its_outcomes(
    tmp_path: Path, thief: Path, how: str
) -> None:
    """The outcomes came from whoever connected first to a socket path in the temp folder,
    any process of the same user: the reproducer read as passed on a candidate where it fails.
    A run started as ``python -m pytest`` (or forked from the warm pytest) now inherits its
    end of a socket pair, which nothing outside the run can reach; a wrapper's socket takes a
    connection only from a process below the run's first one."""
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_task.py").write_text(TASK)
    settings = SETTINGS
    if how == "wrapper":
        wrapper = tmp_path / "wrapper.py"
        wrapper.write_text(WRAPPER)
        settings = dataclasses.replace(SETTINGS, test_command=(sys.executable, str(wrapper)))
    processes = Counted()
    warm = WarmPytest(settings, processes, tmp_path / "warm", ["tests"]) if how == "forked" \
        else None
    try:
        run = run_pytest(["-p", "no:cacheprovider", "tests/test_task.py"], tree,
                         tmp_path / "state", settings, processes,
                         warm=warm.run if warm is not None else None)
    finally:
        if warm is not None:
            warm.close()
        processes.kill_all()
    assert run.outcomes == {"tests/test_task.py::test_task": "failed"}, (run.why, run.problem)
    assert len(processes.started) == (0 if how == "forked" else 1)
    assert not (thief / "claimed").exists()
    # With a wrapper it found the path and was refused; otherwise there was no path to find.
    assert (thief / "tried").exists() == (how == "wrapper")

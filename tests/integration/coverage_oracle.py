"""coverage.py's own figures for a project: the oracle for the gate's coverage numbers.

``coverage run -m pytest`` (+ ``coverage combine`` when the run left parallel data files) +
``coverage json``, each in a real subprocess, so the expected numbers come from coverage.py itself
and never from a figure written in a test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SLOW = 300  # seconds: a loaded 2-core machine is slow to start pytest and child interpreters
KEYS = ("covered_lines", "num_statements", "covered_branches", "num_branches")
COVERAGE = [sys.executable, "-m", "coverage"]


def totals(figures: dict[str, Any]) -> dict[str, int]:
    """The compared figures of a coverage.py ``totals`` block or of the gate's coverage details."""
    return {key: figures.get(key, 0) for key in KEYS}


def coverage_py_totals(
    project: Path, *pytest_args: str, data_file: Path | None = None, environment: bool = False
) -> dict[str, int]:
    """coverage.py's totals for ``project`` under ``coverage run -m pytest -p no:confgate``.

    ``pytest_args`` follow (pass ``-q`` unless the run must match an unquiet one).
    ``data_file`` None keeps coverage.py's own data file setting (the project's ``data_file`` or
    ``.coverage``); otherwise the oracle's data goes there, named by ``--data-file``, or with
    ``environment`` by ``COVERAGE_FILE`` (multiprocessing children read only the environment).
    The data and report files are removed afterwards.
    """
    data = data_file if data_file is not None else project / ".coverage"
    out = data.parent / "coverage-oracle.json"
    env = dict(os.environ)
    option: list[str] = []
    if data_file is not None and environment:
        env["COVERAGE_FILE"] = str(data_file)
    elif data_file is not None:
        option = [f"--data-file={data_file}"]

    def coverage(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([*COVERAGE, *args], cwd=project, env=env, capture_output=True,
                              timeout=SLOW, check=False)

    done = coverage("run", *option, "-m", "pytest", "-p", "no:confgate", *pytest_args)
    assert done.returncode == 0, done.stdout.decode()[-2000:] + done.stderr.decode()
    if list(data.parent.glob(f"{data.name}.*")):
        done = coverage("combine", "-q", *option)
        assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    # Exit 2 is coverage.py's own fail_under verdict: the report is written all the same.
    done = coverage("json", "-q", *option, "-o", str(out))
    assert done.returncode in (0, 2), done.stdout.decode() + done.stderr.decode()
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    out.unlink()
    data.unlink(missing_ok=True)
    return totals(report["totals"])

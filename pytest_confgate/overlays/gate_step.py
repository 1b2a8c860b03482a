"""The gate on the working tree, as a subprocess: ``python -m pytest --confgate``.

A subprocess and not an in-process call: the agent has just rewritten the code under test,
and the gate must import it fresh, trace it with coverage from the start and decide exactly
as CI would. Its report is read back with the report writers' own loader.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from pytest_confgate.exceptions import ReportError
from pytest_confgate.models import GateReport
from pytest_confgate.processes import (
    INHERITED_PYTEST_STATE,
    STDERR_KEEP_BYTES,
    kill_process_group,
    tail,
)


@dataclass(frozen=True)
class GateOutcome:
    """One gate run: its report, or why there is none (an error blocks, fail closed)."""

    report: GateReport | None
    exit_code: int
    error: str | None = None

    @property
    def decision(self) -> str:
        return "error" if self.report is None else self.report.decision.value


def gate_command(
    report_path: Path, config_path: Path | None, task: str | None = None
) -> list[str]:
    """The argv of one gate run; the config is the one ``confgate run`` itself loaded, and
    ``task`` makes the gate collect what that task's confidence loop scores (issue 17)."""
    argv = [sys.executable, "-m", "pytest", "--confgate", f"--confgate-report={report_path}"]
    if config_path is not None:
        argv.append(f"--confgate-config={config_path}")
    if task is not None:
        argv.append(f"--confgate-task={task}")
    return argv


def run_gate(
    root: Path,
    config_path: Path | None,
    report_path: Path,
    log_path: Path,
    task: str | None = None,
) -> GateOutcome:
    """Run the gate in ``root``; its output goes to ``log_path``, its report to ``report_path``.

    The run has its own process group: an interrupt (Ctrl-C, SIGTERM) kills the whole group
    and re-raises, so no test process outlives ``confgate run``.
    """
    env = {k: v for k, v in os.environ.items() if k not in INHERITED_PYTEST_STATE}
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("wb") as log:
        proc = subprocess.Popen(  # an argv list, never a shell
            gate_command(report_path, config_path, task),
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            code = proc.wait()
        except BaseException:
            kill_process_group(proc)
            proc.wait()
            raise
    return _outcome(code, report_path, log_path)


def _outcome(code: int, report_path: Path, log_path: Path) -> GateOutcome:
    from pytest_confgate.report.writers import load_report

    if not report_path.is_file():  # a fresh path per run: a file there is this run's
        output = _log_tail(log_path)
        return GateOutcome(
            None,
            code,
            f"the gate run exited with status {code} and wrote no usable report; "
            f"its output ends with:\n{tail(output)}",
        )
    try:
        return GateOutcome(load_report(report_path), code)
    except ReportError as exc:
        return GateOutcome(None, code, str(exc))


def _log_tail(path: Path, size: int = STDERR_KEEP_BYTES) -> str:
    """The end of the gate's log, read without reading a log of any size whole."""
    with path.open("rb") as log:
        log.seek(max(log.seek(0, os.SEEK_END) - size, 0))
        return log.read().decode("utf-8", errors="replace")

"""Run an external program safely: an argv list, never a shell, with a deadline.

Every child the package starts (ruff, bandit, git, a command agent, the gate under an overlay,
a candidate's checks) goes through here or ``kill_process_group``: it gets its own session, so
a timeout kills the whole process group, children included. Leaf: it imports only the error
tree. Collectors turn ``ToolMissing`` and ``ToolTimeout`` into ``unavailable``/``error``
metrics (SPEC 4): a tool that is missing or hangs fails the gate closed, never crashes the run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_confgate.exceptions import EvidenceError

_STDERR_TAIL_LINES = 12
_STDERR_TAIL_CHARS = 1500


class ToolMissing(EvidenceError):
    """The tool's executable does not exist or cannot be executed."""


class ToolTimeout(EvidenceError):
    """The tool ran past its deadline and was killed with its whole process group."""


@dataclass(frozen=True)
class ToolResult:
    """What one finished tool run printed, decoded leniently so garbage never raises."""

    returncode: int
    stdout: str
    stderr: str
    duration_s: float

    def stderr_tail(self) -> str:
        """The last lines of stderr, where tools put the actual error."""
        return tail(self.stderr)


def tail(text: str) -> str:
    """The last few non-blank lines of ``text``, short enough to quote in a reason."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[-_STDERR_TAIL_LINES:])[-_STDERR_TAIL_CHARS:]


def run_tool(argv: Sequence[str], *, cwd: Path, timeout_s: float) -> ToolResult:
    """Run ``argv`` in ``cwd``; raise ``ToolMissing`` or ``ToolTimeout`` instead of hanging.

    The tool gets its own session so that on timeout the whole process group is killed,
    including children it started (a wrapper script's real tool, a pool of workers).
    """
    if not cwd.is_dir():
        raise EvidenceError(f"cannot run {argv[0]}: directory {cwd} does not exist")
    started = time.perf_counter()
    try:
        proc = subprocess.Popen(  # an argv list, never a shell (S603 is ignored project-wide)
            list(argv),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise ToolMissing(f"{argv[0]} was not found") from exc
    except PermissionError as exc:
        raise ToolMissing(f"{argv[0]} is not executable") from exc
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        _kill_group(proc)
        message = f"{argv[0]} did not finish within {timeout_s:g} s and was killed"
        raise ToolTimeout(message) from exc
    return ToolResult(
        returncode=proc.returncode,
        stdout=out.decode("utf-8", errors="replace"),
        stderr=err.decode("utf-8", errors="replace"),
        duration_s=time.perf_counter() - started,
    )


def kill_process_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL ``proc``'s whole process group (start it with ``start_new_session=True``).

    Shared with the command agent (``agents/command.py``): a hung tool or agent must not leave
    its children behind. The caller still reaps ``proc``.
    """
    killpg = getattr(os, "killpg", None)  # POSIX only; elsewhere kill the process itself
    try:
        if killpg is not None:
            killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except ProcessLookupError:
        pass  # it finished between the timeout and the kill


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    kill_process_group(proc)
    try:
        # Reap it; a grandchild that escaped the group may still hold the pipes open.
        proc.communicate(timeout=5.0)
    except subprocess.TimeoutExpired:
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        proc.wait()

"""Run an external program safely: an argv list, never a shell, with a deadline and a cap.

Every child the package starts (ruff, bandit, git, a command agent, the gate under an overlay,
a candidate's checks) goes through here or ``kill_process_group``: it gets its own process
group (in our session: ``subreaper.end_descendants`` spares what ``confgate gate`` started
itself), so a timeout kills the whole group, children included. What a program prints is read
while it runs into a bounded buffer (``exchange``): stdout past its cap kills the group and is
an error, stderr keeps only its tail, so a tool that prints gigabytes costs the gate a few
megabytes, never its memory. Leaf: it imports only the error tree. Collectors turn
``ToolMissing``, ``ToolTimeout`` and ``ToolOutputTooLarge`` into ``unavailable``/``error``
metrics: a tool that is missing, hangs or floods fails the gate closed, never
crashes the run.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

from pytest_confgate.exceptions import EvidenceError

_STDERR_TAIL_LINES = 12
_STDERR_TAIL_CHARS = 1500
_CHUNK = 64 * 1024
DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024 * 1024
"""What a tool may print on stdout before it is killed (64 MiB; ``max_output_bytes``)."""
INHERITED_PYTEST_STATE = frozenset({
    "PYTEST_CURRENT_TEST",
    "PYTEST_XDIST_WORKER",
    "PYTEST_XDIST_WORKER_COUNT",
    "PYTEST_XDIST_TESTRUNUID",
})
"""An enclosing pytest's own bookkeeping, never passed to a gate run started inside it: a
child that saw ``PYTEST_XDIST_WORKER`` would take itself for an xdist worker."""

STDERR_KEEP_BYTES = 64 * 1024
"""How much of the end of stderr is kept: where tools put the actual error."""


def installed_module(module: str, *args: str) -> list[str]:
    """``python -I -m MODULE ARGS``: our own code or a tool of ours (bandit), as installed.

    ``python -m`` puts the working directory first on ``sys.path``, and the working directory
    is the change under judgement: a folder named ``pytest_confgate`` or ``bandit`` in it would
    run instead of ours. ``-I`` leaves it (and ``PYTHONPATH``, the user's site) out. Only for
    processes that run none of the project's code; the tests' own process runs as pytest would.
    """
    return [os.path.normpath(sys.executable), "-I", "-m", module, *args]


class ToolMissing(EvidenceError):
    """The tool's executable does not exist or cannot be executed."""


class ToolTimeout(EvidenceError):
    """The tool ran past its deadline and was killed with its whole process group."""


class ToolOutputTooLarge(EvidenceError):
    """The tool printed more than its cap on stdout and was killed with its process group."""


class PastDeadline(Exception):
    """``exchange``: the deadline passed before the program closed its output and exited."""


class PastOutputCap(Exception):
    """``exchange``: the program printed more than ``max_stdout`` bytes on stdout."""


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


def describe_bytes(count: int) -> str:
    """``67108864`` -> ``64 MiB``: a cap as people read it, exact when it is whole."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size and count % size == 0:
            return f"{count // size} {unit}"
    return f"{count} bytes"


def run_tool(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout_s: float,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    errors: str = "replace",
    env: Mapping[str, str] | None = None,
    pass_fds: Sequence[int] = (),
) -> ToolResult:
    """Run ``argv`` in ``cwd``; raise ``ToolMissing``, ``ToolTimeout`` or ``ToolOutputTooLarge``
    instead of hanging or reading without end.

    The tool gets its own process group so that on timeout, or once stdout passes
    ``max_output_bytes``, the whole process group is killed, including children it started
    (a wrapper script's real tool, a pool of workers). ``errors`` decodes stdout:
    ``surrogateescape`` where it lists file names (``git ... -z``), so a name that is not
    UTF-8 still names the file on disk. ``env``: the environment (default: this process's).
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
            process_group=0,
            env=dict(env) if env is not None else None,
            pass_fds=tuple(pass_fds),
        )
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise ToolMissing(f"{argv[0]} was not found") from exc
    except PermissionError as exc:
        raise ToolMissing(f"{argv[0]} is not executable") from exc
    except OSError as exc:  # E2BIG (argument list too long), ENOMEM, EAGAIN: never a crash
        raise EvidenceError(f"{argv[0]} could not be started: {exc.strerror}") from exc
    try:
        out, err = exchange(proc, deadline=started + timeout_s, max_stdout=max_output_bytes)
    except PastDeadline:
        _kill_group(proc)
        message = f"{argv[0]} did not finish within {timeout_s:g} s and was killed"
        raise ToolTimeout(message) from None
    except PastOutputCap:
        _kill_group(proc)
        raise ToolOutputTooLarge(
            f"{argv[0]} printed more than the output cap of {describe_bytes(max_output_bytes)} "
            "(max_output_bytes) on stdout and was killed; half an output is never read as a "
            "result. Raise the metric's max_output_bytes if that much output is right"
        ) from None
    except BaseException:
        _kill_group(proc)  # Ctrl-C or a bug: in its own group, it would outlive us
        raise
    return ToolResult(
        returncode=proc.returncode,
        stdout=out.decode("utf-8", errors=errors),
        stderr=err.decode("utf-8", errors="replace"),
        duration_s=time.perf_counter() - started,
    )


def exchange(
    proc: subprocess.Popen[bytes],
    *,
    deadline: float,
    max_stdout: int,
    data: bytes = b"",
    stderr_keep: int = STDERR_KEEP_BYTES,
) -> tuple[bytearray, bytearray]:
    """Feed ``data`` to stdin (when it is a pipe) while reading stdout and stderr, until the
    program exits; raise ``PastDeadline`` or ``PastOutputCap``, leaving the kill to the caller.

    One thread with a selector (as ``Popen.communicate`` does on POSIX), so that output is
    capped while it arrives and no reader thread outlives a killed program. ``deadline`` is a
    ``time.perf_counter()`` value; only the last ``stderr_keep`` bytes of stderr are kept.
    """
    try:
        return _exchange(proc, deadline, max_stdout, data, stderr_keep)
    finally:  # at end of file, on a kill or an error: no pipe is left for the collector
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def _exchange(proc: subprocess.Popen[bytes], deadline: float, max_stdout: int, data: bytes,
              stderr_keep: int) -> tuple[bytearray, bytearray]:
    out, err = bytearray(), bytearray()
    pending = memoryview(data)
    with selectors.DefaultSelector() as selector:
        stdin = proc.stdin
        if stdin is not None and pending:
            os.set_blocking(stdin.fileno(), False)
            selector.register(stdin, selectors.EVENT_WRITE)
        elif stdin is not None:
            stdin.close()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                selector.register(stream, selectors.EVENT_READ)
        while selector.get_map():
            for key, _ in selector.select(_remaining(deadline)):
                stream = cast("IO[bytes]", key.fileobj)
                if stream is stdin:
                    pending = _write_some(stream, pending)
                    if not pending:
                        selector.unregister(stream)
                        stream.close()
                    continue
                chunk = os.read(key.fd, _CHUNK)
                if not chunk:
                    selector.unregister(stream)
                elif stream is proc.stdout:
                    out += chunk
                    if len(out) > max_stdout:
                        raise PastOutputCap
                else:
                    err += chunk
                    del err[: max(len(err) - stderr_keep, 0)]
    try:
        proc.wait(_remaining(deadline))
    except subprocess.TimeoutExpired:
        raise PastDeadline from None  # it closed its output but kept running
    return out, err


def _remaining(deadline: float) -> float:
    left = deadline - time.perf_counter()
    if left <= 0:
        raise PastDeadline
    return left


def _write_some(stdin: IO[bytes], pending: memoryview) -> memoryview:
    try:
        written = os.write(stdin.fileno(), pending[:_CHUNK])
    except BlockingIOError:
        return pending
    except BrokenPipeError:  # the program stopped reading: what it has read is its input
        return pending[:0]
    return pending[written:]


def kill_process_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL ``proc``'s whole process group (start it with ``process_group=0``).

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
    """Kill the group and reap ``proc`` without reading more: a grandchild that escaped the
    group may still hold the pipes open, and whatever it prints is no longer ours to read."""
    kill_process_group(proc)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    proc.wait()

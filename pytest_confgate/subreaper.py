"""Run a program so that every process it starts can be killed, even after ``setsid``.

A process group is not enough: a grandchild that calls ``setsid`` (a daemonising agent, a
``nohup``'d helper) leaves the group, survives ``killpg`` and is orphaned to init, where it
keeps running and may keep the answer's pipe open. Linux can hand orphans to a *subreaper*
instead of init (``prctl(PR_SET_CHILD_SUBREAPER)``), so a subreaper sees every descendant.

The subreaper is a small intermediary process, not the gate itself: a subreaper inherits
*every* orphan below it, so making the gate (or pytest, and every test it runs) one would
collect other tools' orphans as unreaped zombies and change what they see. The intermediary
(``python -I -S subreaper.py PROGRAM ARGS...``; standard library only, so it starts in
milliseconds) becomes a subreaper, runs the program with its own stdin/stdout/stderr, and
when the program exits, or on SIGTERM from the caller, SIGKILLs every process left below
it, reaps them and exits with the program's status. It also asks the kernel for SIGTERM
when the caller dies, so a killed gate leaves nothing behind.

Caller side: ``contained(argv)`` is the argv to start (in a new session, as before), and
``stop(proc)`` ends it: SIGTERM to the intermediary (which cleans up), then SIGKILL to the
process group as a fallback. Elsewhere than Linux, ``contained`` returns ``argv`` unchanged
and only the process group is killed. Leaf: imports nothing of the package.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import NamedTuple

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_CLEANUP_S = 10.0
"""How long the intermediary keeps killing before it gives up (processes stuck in the kernel)."""
STOP_GRACE_S = 5.0
"""How long ``stop`` waits for the intermediary's own cleanup before killing its group."""


def supported() -> bool:
    """Whether descendants can be tracked here: Linux, with ``/proc``."""
    return sys.platform.startswith("linux") and os.path.isdir("/proc/self")


def contained(argv: Sequence[str], pass_fds: Sequence[int] = ()) -> list[str]:
    """The argv that runs ``argv`` under the intermediary (unchanged where unsupported).

    ``pass_fds``: descriptors the program inherits through the intermediary (which closes its
    own copies once the program started); the caller passes them to the intermediary too."""
    if not supported():
        return list(argv)
    passed = [arg for fd in pass_fds for arg in ("--pass-fd", str(fd))]
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), *passed, "--", *argv]


def stop(proc: subprocess.Popen[bytes], grace_s: float = STOP_GRACE_S) -> None:
    """End a program started with ``contained`` (in its own session) and all it started."""
    if supported() and proc.poll() is None:
        try:
            proc.send_signal(signal.SIGTERM)  # the intermediary kills everything below it
            proc.wait(grace_s)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    # Imported here: the intermediary runs this file without the package on its path.
    from pytest_confgate.processes import kill_process_group

    kill_process_group(proc)  # whatever is left of the group: the fallback, and elsewhere
    proc.wait()


# --- the intermediary ------------------------------------------------------------------------


class _Stop(Exception):
    """The caller asked us to stop (SIGTERM, SIGINT, SIGHUP) or died."""


def _main(argv: list[str]) -> int:
    fds: list[int] = []
    while argv[:1] == ["--pass-fd"] and len(argv) > 1 and argv[1].isdigit():
        fds.append(int(argv[1]))
        argv = argv[2:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        sys.stderr.write("usage: subreaper.py -- PROGRAM [ARGS...]\n")
        return 2
    parent = os.getppid()
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, _raise_stop)
    try:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the caller died before we asked to be told
            raise _Stop
        status = _run(argv, fds)
    except _Stop:
        _kill_descendants()
        return 128 + signal.SIGTERM
    _kill_descendants()
    return _exit_code(status)


def _raise_stop(_signum: int, _frame: object) -> None:
    raise _Stop


def _run(argv: list[str], fds: Sequence[int] = ()) -> int:
    """Start the program on our stdin/stdout/stderr, wait for it, reap orphans meanwhile."""
    try:
        child = subprocess.Popen(argv, pass_fds=fds)  # the caller's argv list, never a shell
    except OSError as exc:
        sys.stderr.write(f"cannot run {argv[0]!r}: {exc.strerror or exc}\n")
        return 127 << 8  # a wait status: exited with 127, as a shell says "not found"
    finally:
        for fd in fds:  # the program's end only: its closing it must reach the caller
            with contextlib.suppress(OSError):
                os.close(fd)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)  # the answer's pipe must close when the program closes it
    os.dup2(devnull, 1)
    while True:
        pid, status = os.waitpid(-1, 0)  # orphans handed to us are reaped here too
        if pid == child.pid:
            return status


def _kill_descendants() -> None:
    """SIGKILL everything below us until nothing is left (or ``_CLEANUP_S`` passes)."""
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)  # a second SIGTERM must not cut the cleanup short
    end_descendants()


def become_subreaper() -> bool:
    """Make this process the subreaper of everything below it (Linux); whether it is one.

    For a process that starts nothing but the program it supervises (``confgate gate``): an
    orphan whose parent was killed comes to us instead of init, so ``end_descendants`` finds
    it even when the intermediary itself was killed."""
    if not supported():
        return False
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    return True


def end_descendants(limit_s: float = _CLEANUP_S, *, sparing_our_session: bool = False) -> None:
    """SIGKILL and reap every process below this one until none is left (or ``limit_s``).

    As a subreaper we inherit the orphans of the processes we kill, so looping until we
    have no children left also catches those that forked while we were killing.

    ``sparing_our_session``: leave alone every process in this process's own session, and
    all below it (``confgate gate``: its own helpers, ruff, bandit, git, started with
    ``process_group=0``, a group of our session; the test process runs in a session of its
    own and nothing it starts can join ours, so what is spared is the supervisor's, not the
    run's). Only the
    processes killed are reaped: a spared child's exit status stays its ``Popen``'s.
    """
    if not supported():
        return
    spared = os.getsid(0) if sparing_our_session else None
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        processes = _processes()
        found = _descendants(os.getpid(), processes, spared)
        if not found:
            return
        for pid in found:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        reaped = False
        for pid in found:
            if processes[pid].parent == os.getpid():
                with contextlib.suppress(ChildProcessError):
                    reaped |= os.waitpid(pid, os.WNOHANG)[0] != 0
        if not reaped:
            time.sleep(0.01)


class _Process(NamedTuple):
    parent: int
    session: int


def _processes() -> dict[int, _Process]:
    """Every process's parent and session, from ``/proc``."""
    found: dict[int, _Process] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            found[int(entry)] = _Process(int(fields[1]), int(fields[3]))
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
    return found


def _descendants(root: int, processes: dict[int, _Process], spared: int | None = None
                 ) -> list[int]:
    """Every process below ``root``; none in session ``spared``, nor any below one that is."""
    children: dict[int, list[int]] = {}
    for pid, process in processes.items():
        if process.session != spared:
            children.setdefault(process.parent, []).append(pid)
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _exit_code(status: int) -> int:
    """Our exit as the program's: its code, or death by the same signal."""
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        try:
            import resource  # only here: no core dump of the intermediary

            _, hard = resource.getrlimit(resource.RLIMIT_CORE)
            resource.setrlimit(resource.RLIMIT_CORE, (0, hard))
            signal.signal(signum, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
        os.kill(os.getpid(), signum)
        return 128 + signum
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1


def _prctl(option: int, value: int) -> None:
    import ctypes  # only in the intermediary, on Linux

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(option, value, 0, 0, 0)


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

"""Cross-test runs forked from a warm pytest (``warm_server``) instead of started cold.

A cross-test run exists only when several candidates are ranked, and most of its cost was
Python starting and pytest importing: 4 runs on iniconfig paid about 0.7 of a ranking's extra
CPU seconds for it (issue 36, item 5). ``WarmPytest`` starts one server per ranking with the
candidates' Python, before any candidate's code runs, and ``run`` has it fork each run; the
run's output, exit status and outcomes (``outcomes.OutcomeReceiver``, as before) come back as
they do from ``Processes.run``, with the same timeout, output cap and interruption.

A run is forked only where a fresh process would load the same code: the test command is
``PYTHON -m pytest ...``, the run's environment differs from the server's only in what each
run sets for itself (``RUN_KEYS``: ``PYTHONPATH``, the state and temp folders, the outcome
socket; nothing Python reads when it starts), and neither the run's folder nor its
``PYTHONPATH`` provides a module the server has loaded. Any other run, and every run once the
server is gone, starts as a process of its own (``run`` returns None).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import select
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, cast

from pytest_confgate import subreaper
from pytest_confgate.outcomes import ENV_SOCKET
from pytest_confgate.processes import (
    DEFAULT_MAX_OUTPUT_BYTES,
    PastDeadline,
    PastOutputCap,
    describe_bytes,
    exchange,
)
from pytest_confgate.rank.evaluate import (
    Finished,
    Processes,
    Settings,
    candidate_env,
    runs_pytest_itself,
)

RUN_KEYS = frozenset({"PYTHONPATH", "COVERAGE_FILE", "TMPDIR", "TMP", "TEMP", "RUFF_CACHE_DIR",
                      "MYPY_CACHE_DIR", "XDG_CACHE_HOME", ENV_SOCKET})
"""What ``evaluate.candidate_env`` and the outcome receiver set per run: applied in the forked
child. Every other variable must be the server's own (Python reads some when it starts)."""
_READY_S = 60.0
"""How long a run waits for the server to have loaded pytest before starting cold."""
_STOP_S = 5.0
"""How long a stopped run's intermediary gets to kill what the run left."""
_SERVER = Path(__file__).with_name("warm_server.py")
_MAX_REQUEST = 1 << 20
"""The largest request the server reads (``warm_server._MAX_MESSAGE``)."""
_MAX_PASSED = 1
"""Descriptors a run may keep beside its pipes (``warm_server._MAX_PASSED``)."""


def provided_names(folders: Iterable[Path]) -> set[str]:
    """Top-level names a folder on ``sys.path`` could provide: every entry's name up to its
    first dot (packages, modules, extension modules, namespace folders; more is harmless)."""
    found: set[str] = set()
    for folder in folders:
        with contextlib.suppress(OSError):
            found.update(name.partition(".")[0] for name in os.listdir(folder))
    found.discard("")
    return found


def search_folders(tree: Path) -> list[Path]:
    """What a run in ``tree`` has first on ``sys.path`` (``evaluate.candidate_env``)."""
    return [tree, tree / "src"]


class WarmPytest:
    """One warm pytest server for a ranking's cross-test runs; ``run`` is ``Processes.run``
    for a pytest argv, or None where the run must start as a process of its own."""

    def __init__(self, settings: Settings, processes: Processes, workdir: Path,
                 blocked: Iterable[str]) -> None:
        """Start the server in ``workdir``; it loads pytest without any name in ``blocked``
        (what the ranked trees provide). Start it before any candidate's code runs."""
        self._processes = processes
        self._prefix = tuple(settings.test_command[:3])
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._loaded: frozenset[str] | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        workdir.mkdir(parents=True, exist_ok=True)
        env = candidate_env(settings, workdir, workdir / "state")
        env.pop("PYTHONPATH", None)
        self._env = {key: value for key, value in env.items() if key not in RUN_KEYS}
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._control: socket.socket | None = ours
        try:
            with theirs, (workdir / "server.log").open("wb") as log:
                argv = [self._prefix[0], str(_SERVER), str(theirs.fileno())]
                self._proc = processes.start(argv, cwd=workdir, env=env, output=log,
                                             pass_fds=(theirs.fileno(),))
            ours.send(json.dumps({"blocked": sorted(blocked)}).encode())
        except (OSError, TimeoutError):
            self.close()

    @staticmethod
    def usable(settings: Settings) -> bool:
        """Whether this ranking's runs can be forked at all: Linux, ``PYTHON -m pytest``."""
        return (subreaper.supported() and hasattr(os, "fork") and hasattr(socket, "send_fds")
                and runs_pytest_itself(settings.test_command))

    def run(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout_s: float,
            pass_fds: Sequence[int] = ()) -> Finished | None:
        """``argv`` forked from the server in ``cwd`` with ``env``; None: start it cold.
        ``TimeoutError`` after ``timeout_s`` (or once the ranking is interrupted), ``OSError``
        past the output cap, as ``Processes.run``. ``pass_fds``: descriptors the run keeps
        open (its outcome socket), sent to the server with its pipes."""
        if self._processes.cancelled:
            raise TimeoutError("the ranking was interrupted")
        if not self._fits(argv, cwd, env) or len(pass_fds) > _MAX_PASSED:
            return None
        key = str(next(self._ids))
        request = json.dumps({"id": key, "args": list(argv[3:]), "cwd": str(cwd),
                              "env": dict(env)}).encode()
        if len(request) > _MAX_REQUEST:
            return None
        pipes = [os.pipe() for _ in range(3)]
        try:
            with self._lock:
                if self._processes.cancelled:
                    raise TimeoutError("the ranking was interrupted")
                if self._control is None:
                    return None
                socket.send_fds(self._control, [request],
                                [*(write for _, write in pipes), *pass_fds])
        except OSError:  # the server is gone: this run and the next start cold
            self.close()
            for read, _ in pipes:
                os.close(read)
            return None
        finally:
            for _, write in pipes:
                os.close(write)
        started = _Started(*(read for read, _ in pipes))
        try:
            return self._finish(argv, key, started, timeout_s)
        finally:
            started.close()

    def _finish(self, argv: Sequence[str], key: str, started: _Started, timeout_s: float
                ) -> Finished:
        try:
            out, err = exchange(cast("subprocess.Popen[bytes]", started),
                                deadline=time.perf_counter() + timeout_s,
                                max_stdout=DEFAULT_MAX_OUTPUT_BYTES)
        except PastDeadline:
            self._stop(key, started)
            raise TimeoutError(f"{argv[0]} did not finish within {timeout_s:g} s") from None
        except PastOutputCap:
            self._stop(key, started)
            cap = describe_bytes(DEFAULT_MAX_OUTPUT_BYTES)
            raise OSError(f"{argv[0]} printed more than {cap} on stdout and was killed") from None
        text = (out.decode("utf-8", errors="replace"), err.decode("utf-8", errors="replace"))
        return Finished(started.wait(0.0), *text)

    def close(self, wait: bool = True) -> None:
        """End the server (it stops the runs still going); with ``wait``, wait for it to be
        gone and forget it (once its runs are done, it ends at once)."""
        with self._lock:
            control, self._control = self._control, None
        if control is not None:
            control.close()
        if not wait:
            return
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                proc.wait(_STOP_S)
            except subprocess.TimeoutExpired:
                subreaper.stop(proc)
            self._processes.forget(proc)

    def _fits(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> bool:
        if tuple(argv[:3]) != self._prefix or self._ready() is None:
            return False
        if {k: v for k, v in env.items() if k not in RUN_KEYS} != self._env:
            return False
        path = [Path(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        loaded = self._ready() or frozenset()
        return not provided_names([cwd, *path]) & loaded

    def _ready(self) -> frozenset[str] | None:
        """The top-level names the server loaded, once it is ready; None: it is not usable."""
        with self._lock:
            if self._loaded is not None or self._control is None:
                return self._loaded
            ready, _, _ = select.select([self._control], [], [], _READY_S)
            answer = self._control.recv(1 << 20) if ready else b""
            if not answer:
                control, self._control = self._control, None
                control.close()
                return None
            self._loaded = frozenset(json.loads(answer)["loaded"])
            return self._loaded

    def _stop(self, key: str, started: _Started) -> None:
        """Ask the server to stop run ``key`` (its intermediary kills all below it), and wait
        for that a while: nothing it started may still write once we return."""
        with self._lock, contextlib.suppress(OSError):
            if self._control is not None:
                self._control.send(json.dumps({"stop": key}).encode())
        with contextlib.suppress(subprocess.TimeoutExpired):
            started.wait(_STOP_S)
        started.close()


class _Started:
    """A forked run as ``processes.exchange`` reads a ``Popen``: its output pipes, and an exit
    status its intermediary writes on a third pipe when all below it are gone."""

    def __init__(self, stdout: int, stderr: int, status: int) -> None:
        self.stdin: IO[bytes] | None = None
        self.stdout: IO[bytes] | None = os.fdopen(stdout, "rb", buffering=0)
        self.stderr: IO[bytes] | None = os.fdopen(stderr, "rb", buffering=0)
        self._status = os.fdopen(status, "rb", buffering=0)
        self.returncode = -signal.SIGKILL
        """Its exit code (negative: killed by that signal); ``-SIGKILL`` when the status
        never came (its intermediary was killed with the server)."""

    def wait(self, timeout: float | None = None) -> int:
        """The exit code, once the intermediary wrote it (or died): ``TimeoutExpired`` after
        ``timeout``."""
        if self._status.closed:
            return self.returncode
        ready, _, _ = select.select([self._status], [], [], timeout)
        if not ready:
            raise subprocess.TimeoutExpired("pytest", timeout or 0.0)
        text = self._status.read(64).decode("ascii", errors="replace").strip()
        if text.lstrip("-").isdigit():
            self.returncode = int(text)
        self._status.close()
        return self.returncode

    def close(self) -> None:
        """Close what is left of the pipes."""
        for stream in (self.stdout, self.stderr, self._status):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

"""A test's outcome from pytest's phase reports, and the channel a run we start sends them on.

``rank/outcomes_plugin`` (a candidate's tests), ``collect/tamper/replay_plugin`` (the base's
version of edited tests) and the differential run's base tests (``OutcomeStream``) all name
outcomes with ``phase_outcome``, so a ranking, a replay and a differential run never disagree
on what a run did. Outcomes are ``passed``, ``failed``, ``error`` (setup or teardown failed),
``skipped``, ``xfailed`` and ``xpassed``.

The differential run's outcomes come back (issue 34) on an inherited socket. The gate starts
the base's tests as a plain ``python -m pytest MODULE...``: no option, environment variable or
plugin name of ours on it. It hands the child one end of a Unix socket pair (an inherited file
descriptor) with ``MAGIC`` waiting in it. ``plugin.py`` is loaded in every pytest run through
its ordinary entry point; at startup, before any conftest is imported, ``claim`` looks at the
process's inherited sockets and, only on one whose pending bytes are ``MAGIC`` (peeked, so
nothing else's data is consumed), ``OutcomeStream`` streams each outcome as a JSON line:
``{"node": id, "outcome": ..., "failure": text}``, then ``{"end": true}``. Any other run finds
no such socket and this costs a few ``fstat`` calls.

Every run of ours that executes code under judgement and needs its outcomes reads them this way
(``OutcomeReceiver``): the differential run, the replay, and ``confgate rank``'s regression
and cross-test runs. A file the process wrote at its end could be rewritten by that code after
pytest's session ended (an ``atexit`` handler that marks every outcome in any JSON file named in
the environment "passed" did so to rank's record); a stream is read as it happens, and nothing
sent after the session's end counts.

A leaf: takes pytest's reports as plain objects and imports nothing of pytest's or ours, so a
plugin that uses it stays light.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import stat
import struct
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any


def phase_outcome(report: Any, recorded: str | None) -> str | None:
    """The outcome to record for ``report``'s test after this phase, or None to keep
    ``recorded``: worst phase first, so a failing setup or teardown is an error that the call
    phase never overwrites, and a passing setup or teardown says nothing."""
    expected_failure = hasattr(report, "wasxfail")
    if report.when == "call":
        if recorded == "error":
            return None
        if report.passed:
            return "xpassed" if expected_failure else "passed"
        if report.skipped:
            return "xfailed" if expected_failure else "skipped"
        return "failed"
    if report.failed:
        return "error"
    if report.skipped and report.when == "setup":
        return "xfailed" if expected_failure else "skipped"
    return None


MAGIC = b"confgate-outcomes-1\n"
DESELECTED = "deselected"
ENV_SOCKET = "CONFGATE_OUTCOMES_SOCKET"
"""A listening socket's path, for a run started through a command that may not pass a
descriptor on (``confgate rank``'s ``test_command``: a wrapper script, ``tox``): the first
connection from the run's own processes (``OutcomeReceiver.started``) is the run's, and none
is accepted after it."""
_CONNECT_TIMEOUT_S = 10.0
GRACE_S = 10.0
"""How long a process a run left behind may hold its stream open after the run ended."""
_POLL_S = 0.05
_FAILURE_CHARS = 4000
_MAX_FD = 256


def claim() -> socket.socket | None:
    """The inherited socket that carries ``MAGIC``, its greeting consumed; else a connection to
    the listening socket ``ENV_SOCKET`` names (taken out of the environment, so what the run
    starts does not try it too); None elsewhere."""
    inherited = _inherited()
    if inherited is not None:
        return inherited
    path = os.environ.pop(ENV_SOCKET, None)
    if not path:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(_CONNECT_TIMEOUT_S)
        sock.connect(path)
        if sock.recv(len(MAGIC), socket.MSG_WAITALL) == MAGIC:
            sock.settimeout(None)
            return sock
    except OSError:
        pass
    sock.close()
    return None


def _inherited() -> socket.socket | None:
    for fd in _open_fds():
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
            sock = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue
        try:
            if sock.family == socket.AF_UNIX and sock.recv(
                    len(MAGIC), socket.MSG_PEEK | socket.MSG_DONTWAIT) == MAGIC:
                sock.recv(len(MAGIC))
                sock.setblocking(True)
                os.close(fd)  # the inherited descriptor: code under test finds no second way in
                return sock
        except OSError:
            pass
        sock.close()
    return None


def _open_fds() -> list[int]:
    try:
        return sorted(int(n) for n in os.listdir("/proc/self/fd") if int(n) > 2)
    except OSError:
        return list(range(3, _MAX_FD))


class OutcomeStream:
    """pytest hooks (plain arguments) that send each test's final outcome over the socket."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._outcomes: dict[str, str] = {}
        self._held = False
        self._finished = False

    def hold_end(self) -> None:
        """The gate runs in this process: its report is written after pytest's session ends,
        so the end waits for ``finish``, which names the report's digest with it."""
        self._held = True

    def finish(self, files: dict[str, str]) -> None:
        """The end, with the sha256 of each file written for the reader (``{"report": ...}``),
        of the bytes as written: a rewrite after this (an ``atexit`` handler) shows."""
        if self._finished:
            return
        self._finished = True
        self._send({"end": True, "files": files})
        with contextlib.suppress(OSError):
            self._sock.close()

    def _send(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):
            self._sock.sendall(json.dumps(message).encode() + b"\n")

    def _record(self, nodeid: str, outcome: str, report: Any) -> None:
        self._outcomes[nodeid] = outcome
        text = str(getattr(report, "longreprtext", "") or "")
        self._send({"node": nodeid, "outcome": outcome, "failure": text[-_FAILURE_CHARS:]})

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self._record(report.nodeid, "error", report)

    def pytest_runtest_logreport(self, report: Any) -> None:
        outcome = phase_outcome(report, self._outcomes.get(report.nodeid))
        if outcome is not None:
            self._record(report.nodeid, outcome, report)

    def pytest_deselected(self, items: Any) -> None:
        """Tests an option or a hook deselected never run: said, so a reader can tell them
        from tests that were never collected."""
        for item in items:
            if item.nodeid not in self._outcomes:
                self._record(item.nodeid, DESELECTED, None)

    def pytest_sessionfinish(self, session: Any) -> None:
        if not self._held:
            self.finish({})


@dataclass
class Received:
    """What a run sent before its session ended."""

    results: dict[str, dict[str, str]] = field(default_factory=dict)
    """Node id -> ``{"outcome": ..., "failure": text}``."""
    ended: bool = False
    """The session's end was sent: without it the results may be missing tests."""
    late: int = 0
    """Messages sent after the end (never counted: only code after pytest's session sends them)."""
    files: dict[str, str] = field(default_factory=dict)
    """The sha256 of each file the run wrote for the reader, sent with the end (the gate's
    ``report``)."""


class OutcomeReceiver:
    """Our end of the stream a run's ``OutcomeStream`` writes to, read in a thread.

    Start the process with ``child_fd`` passed on (``pass_fds``), or, with ``listen``, with
    ``environ`` in its environment; then ``close`` gives what it sent before its session's
    end."""

    def __init__(self, *, listen: bool = False) -> None:
        self._received = Received()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._ours: socket.socket | None = None
        self._theirs: socket.socket | None = None
        self._listener: socket.socket | None = None
        self._folder: str | None = None
        self._run_pid: int | None = None
        self._run_started = threading.Event()
        if listen:
            self._folder = tempfile.mkdtemp(prefix="confgate-")
            self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._listener.bind(os.path.join(self._folder, "s"))
            self._listener.listen(1)
        else:
            self._ours, self._theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            self._ours.sendall(MAGIC)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    @property
    def child_fd(self) -> int:
        if self._theirs is None:
            raise ValueError("a listening receiver passes no descriptor: use its environ")
        return self._theirs.fileno()

    @property
    def environ(self) -> dict[str, str]:
        """What a run started through a command of the user's needs in its environment."""
        if self._folder is None:
            return {}
        return {ENV_SOCKET: os.path.join(self._folder, "s")}

    def started(self, pid: int) -> None:
        """The run's first process: a listening receiver takes a connection only from it or
        a process below it (Linux: the peer's pid, from the kernel), never from another
        process of the same user that found the path first (another candidate's code)."""
        self._run_pid = pid
        self._run_started.set()

    def close(self, grace_s: float = GRACE_S) -> Received:
        """Wait up to ``grace_s`` for the stream's end (a process the run left behind may hold
        it open), then stop reading."""
        if self._theirs is not None:
            self._theirs.close()
        self._closing.set()
        self._thread.join(grace_s)
        with self._lock:
            ours = self._ours
        if ours is not None:
            with contextlib.suppress(OSError):
                ours.shutdown(socket.SHUT_RDWR)
        self._thread.join(grace_s)
        for sock in (ours, self._listener):
            if sock is not None:
                sock.close()
        if self._folder is not None:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self._folder, "s"))
            with contextlib.suppress(OSError):
                os.rmdir(self._folder)
        with self._lock:
            got = self._received
            return Received(dict(got.results), got.ended, got.late, dict(got.files))

    def _accept(self, listener: socket.socket) -> socket.socket | None:
        """The first connection from the run (none after it), or None once closing with none."""
        while not self._closing.is_set():
            ready, _, _ = select.select([listener], [], [], _POLL_S)
            if ready:
                with contextlib.suppress(OSError):
                    conn, _ = listener.accept()
                    if not self._from_the_run(conn):
                        conn.close()  # not the run's: refused, and the run can still come
                        continue
                    listener.close()  # one run, one stream: a later connection is refused
                    conn.sendall(MAGIC)
                    return conn
        return None

    def _from_the_run(self, conn: socket.socket) -> bool:
        """Whether the peer is the process ``started`` named or one below it. Where the kernel
        does not name the peer (not Linux), the first connection is taken, as before."""
        option = getattr(socket, "SO_PEERCRED", None)
        if option is None:
            return True
        pid, _, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option,
                                                        struct.calcsize("3i")))
        while not self._run_started.wait(_POLL_S):  # a peer can come before Popen returns
            if self._closing.is_set():
                return False
        return self._run_pid is not None and _below(pid, self._run_pid)

    def _read(self) -> None:
        ours = self._ours
        if ours is None and self._listener is not None:
            ours = self._accept(self._listener)
            with self._lock:
                self._ours = ours
        if ours is None:
            return
        buffer = b""
        with contextlib.suppress(OSError):
            while chunk := ours.recv(65536):
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    self._take(line)

    def _take(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        with self._lock:
            got = self._received
            if got.ended:
                got.late += 1
            elif message.get("end") is True:
                got.ended = True
                files = message.get("files")
                if isinstance(files, dict):
                    got.files = {str(k): str(v) for k, v in files.items()}
            elif isinstance(message.get("node"), str):
                got.results[message["node"]] = {"outcome": str(message.get("outcome")),
                                                "failure": str(message.get("failure", ""))}


def _below(pid: int, root: int) -> bool:
    """Whether ``pid`` is ``root`` or a process below it, by the parent pids in ``/proc``."""
    for _ in range(_MAX_DEPTH):
        if pid == root:
            return True
        if pid <= 1:
            return False
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat_file:
                pid = int(stat_file.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            return False
    return False


_MAX_DEPTH = 64
"""How far up ``_below`` looks: a run's processes are a few levels below its first."""

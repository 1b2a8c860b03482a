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

A leaf: takes pytest's reports as plain objects and imports nothing of pytest's or ours, so a
plugin that uses it stays light.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
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
_FAILURE_CHARS = 4000
_MAX_FD = 256


def claim() -> socket.socket | None:
    """The inherited socket that carries ``MAGIC``, its greeting consumed; None elsewhere."""
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

    def pytest_sessionfinish(self, session: Any) -> None:
        self._send({"end": True})
        with contextlib.suppress(OSError):
            self._sock.close()

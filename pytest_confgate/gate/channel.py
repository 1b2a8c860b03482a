"""The test outcomes, streamed from the test process to ``confgate gate`` as they happen.

``confgate gate`` (``gate.supervisor``) opens a pipe before the test process exists and hands
its write end down by number (``ENV_FD``). The plugin takes it before any conftest is imported
(``Channel.take``), forgets the variable and makes the descriptor non-inheritable, then writes
one JSON line per event: ``start``; ``collect_error`` for each module that failed to collect;
``collected`` with the number of tests to run (not under xdist, whose controller collects none);
``report`` for each test report, with the category pytest's summary gives it, its phase and
outcome (the supervisor keeps each test's outcome by id); ``finding`` for each run-time audit
finding at the moment the hook records it (``Channel.finding`` is the recorder's
``on_finding``), with every project frame of its stack and no filter applied (an xdist
worker, which inherits no descriptor, opens the same pipe through ``/proc``: ``reopen``);
``end`` when the session ends. The supervisor keeps the read end and tallies
(``StreamTally``): what the change's code does after a report or a finding was sent (rewrite
the report file, empty the recorder, print a digest, ``os._exit``) cannot take it back.

``os.write`` is bound when this module is imported, before the change's code runs, so a
wrapper the change puts on ``os.write`` later does not see the channel's bytes; one lock keeps
the lines of two threads whole. Leaf: imports only ``collect.tests`` (the same tally
``pytest --confgate`` keeps), ``collect.runtime_audit`` (the finding's shape) and
``gate.child``.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field

from pytest_confgate.collect.plugin_audit import counted_category
from pytest_confgate.collect.runtime_audit import MAX_FINDINGS, RuntimeFinding
from pytest_confgate.collect.tests import TestTally
from pytest_confgate.gate.child import ENV_FD

UNSEEN_FAILURE = "pytest counted a failed test, but the channel reported none failed"
"""The test process exited 1 with no failure sent: a report hidden, or a plugin that fails the
session itself (pytest-cov below its floor)."""
MAX_CHANNEL_BYTES = 64 * 1024 * 1024
"""More than any real suite sends (about 200 bytes per report): past it the channel was flooded."""
_write = os.write
MAX_STREAMED_FINDINGS = 50 * MAX_FINDINGS
"""The audit keeps at most ``MAX_FINDINGS`` per process (the controller and each xdist
worker): past this many, findings the audit never recorded were sent (flooded)."""
_MAX_TEXT = 4096
_MAX_SENT = 1024
_MAX_FRAMES = 12
_lock = threading.RLock()
"""One line at a time: a finding recorded in another thread must not split a report's line.
Re-entrant: a signal handler that records a finding in the middle of a send cannot deadlock."""


def _new_lock() -> None:
    """A process forked while another thread held the lock gets one nobody holds."""
    global _lock
    _lock = threading.RLock()


os.register_at_fork(after_in_child=_new_lock)

_TESTS_FAILED = 1
"""pytest's exit status when a test failed (``pytest.ExitCode.TESTS_FAILED``)."""
_PHASES = frozenset({"setup", "call", "teardown"})
_OUTCOMES = frozenset({"passed", "failed", "skipped"})


class _Phase:
    """A phase report as the channel carried it, for ``outcomes.phase_outcome``."""

    def __init__(self, when: str, outcome: str, expected_failure: bool) -> None:
        self.when = when
        self.passed = outcome == "passed"
        self.failed = outcome == "failed"
        self.skipped = outcome == "skipped"
        if expected_failure:
            self.wasxfail = ""


class Channel:
    """The test process's end: one JSON line per event, written straight to the pipe."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self.broken = False

    @classmethod
    def take(cls, environ: MutableMapping[str, str]) -> Channel | None:
        """The channel ``confgate gate`` opened, if any; the variable is removed, so a nested
        pytest (a test's own ``pytester`` run) never writes to it. An xdist worker has no
        channel: the controller sends its reports."""
        text = environ.pop(ENV_FD, None)
        if text is None or environ.get("PYTEST_XDIST_WORKER") or not text.isdigit():
            return None
        fd = int(text)
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                return None
            os.set_inheritable(fd, False)
        except OSError:
            return None
        return cls(fd)

    def send(self, event: str, **fields: object) -> None:
        """Write one event; a closed pipe ends the channel (the supervisor says so)."""
        if self.broken:
            return
        line = json.dumps({"e": event, **fields}, separators=(",", ":")).encode() + b"\n"
        with _lock:
            try:
                while line:
                    line = line[_write(self._fd, line):]
            except OSError:
                self.broken = True

    def finding(self, found: RuntimeFinding) -> None:
        """``Recorder.on_finding``: one run-time audit finding, out of this process as soon as
        it is recorded, whatever becomes of the recorder or the report later. Unfiltered: the
        supervisor places it against the change's files it settled itself. The message is
        capped so the line stays one atomic write beside an xdist worker's."""
        fields = found.as_dict()
        fields["message"] = str(fields["message"])[:_MAX_SENT]
        self.send("finding", **fields)

    def for_workers(self) -> list[object]:
        """Where an xdist worker of this process opens the same pipe (``reopen``), and the
        pipe's inode: workers are started with no inherited descriptor, so they reach it
        through ``/proc``."""
        return [f"/proc/{os.getpid()}/fd/{self._fd}", os.fstat(self._fd).st_ino]

    @classmethod
    def reopen(cls, where: object) -> Channel | None:
        """An xdist worker's own write end of its controller's channel (``for_workers``);
        None where ``/proc`` does not give that very pipe (a remote worker, no ``/proc``):
        the controller then forwards the worker's findings when it ends."""
        if not (isinstance(where, list | tuple) and len(where) == 2
                and isinstance(where[0], str) and isinstance(where[1], int)):
            return None
        try:
            fd = os.open(where[0], os.O_WRONLY | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            found = os.fstat(fd)
            if not stat.S_ISFIFO(found.st_mode) or found.st_ino != where[1]:
                raise OSError(where[0])
            os.set_blocking(fd, True)
        except OSError:
            os.close(fd)
            return None
        return cls(fd)


@dataclass
class StreamTally:
    """The supervisor's end: events parsed as bytes arrive; O(bytes), nothing kept but counts
    and each test's outcome (``tally.by_test``, for the differential run)."""

    tally: TestTally = field(default_factory=TestTally)
    started: bool = False
    ended: bool = False
    exitstatus: int | None = None
    handed_over: dict[str, str] = field(default_factory=dict)
    """sha256 of each file the test process left for the supervisor (``report``,
    ``coverage``), as its session end named them: what is read later must match."""
    received: int = 0
    duration_s: float = 0.0
    collected: int | None = None
    set_up: set[str] = field(default_factory=set)
    """Node ids with a setup report: each test pytest ran has one, skipped or not."""
    problems: list[str] = field(default_factory=list)
    findings: list[RuntimeFinding] = field(default_factory=list)
    """The run-time audit's findings as they were sent, in order (``Channel.finding``)."""
    _pending: bytes = b""

    def feed(self, data: bytes) -> bool:
        """Take bytes from the pipe; False once the channel is flooded (stop reading)."""
        self.received += len(data)
        if self.received > MAX_CHANNEL_BYTES:
            self._problem(f"the test process sent more than {MAX_CHANNEL_BYTES} bytes on the "
                          "channel (flooded): its outcomes are not counted")
            return False
        lines = (self._pending + data).split(b"\n")
        self._pending = lines.pop()
        for line in lines:
            self._event(line)
        return True

    def close(self) -> None:
        """The pipe reached end of file: a half line or a missing session end is a finding."""
        if self._pending:
            self._problem("the channel ended in the middle of an event")
        if not self.started:
            self._problem("the test process never opened the channel (did pytest start with "
                          "the confgate plugin?)")
        elif not self.ended:
            self._problem("the test process ended without its own session end (os._exit, a "
                          "signal or a crash before pytest finished): the outcomes are partial")
        elif self.exitstatus == _TESTS_FAILED and not self._failures():
            self._problem(f"{UNSEEN_FAILURE} (a report dropped or relabelled before it was "
                          "sent)")
        elif self.collected is not None and len(self.set_up) < self.collected:
            self._problem(f"{self.collected - len(self.set_up)} of the {self.collected} tests "
                          "collected never reported (the session ended before they ran: "
                          "pytest.exit, -x, or an end that was not pytest's)")

    def _event(self, line: bytes) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            event = None
        if not isinstance(event, dict) or not isinstance(event.get("e"), str):
            self._problem("the channel carried a line that is not an event")
            return
        kind = event["e"]
        if kind == "finding":  # whenever sent (a process forked by a test, after the end):
            self._finding(event)  # a finding only ever adds evidence
        elif kind == "start":
            if self.started:
                self._problem("the channel was started twice")
            self.started = True
        elif not self.started:
            self._problem(f"the channel sent {kind!r} before it started")
        elif self.ended:
            self._problem(f"the channel sent {kind!r} after the session ended")
        elif kind == "collect_error":
            nodeid = event.get("nodeid")
            self.tally.add_collection_error(nodeid if isinstance(nodeid, str) else None)
        elif kind == "collected":
            count = event.get("n")
            self.collected = count if isinstance(count, int) else None
        elif kind == "report":
            self._report(event)
        elif kind == "end":
            self.ended = True
            status = event.get("exitstatus")
            self.exitstatus = status if isinstance(status, int) else None
            self.handed_over = {name: digest for name in ("report", "coverage")
                                if isinstance(digest := event.get(name), str)}
        else:
            self._problem(f"the channel sent an unknown event {kind!r}")

    def _report(self, event: Mapping[str, object]) -> None:
        category, nodeid, ids = event.get("cat"), event.get("nodeid"), event.get("links")
        if not isinstance(category, str) or not isinstance(nodeid, str):
            self._problem("the channel sent a test report without its category or node id")
            return
        when, outcome = event.get("when"), event.get("o")
        if event.get("passed") is False and outcome == "failed" and event.get("xf") is not True:
            category = counted_category(True, str(when), category)  # failed is failed
        self.tally.add_category(category)
        if when in _PHASES and outcome in _OUTCOMES:
            self.tally.add_phase(nodeid, _Phase(str(when), str(outcome), event.get("xf") is True))
        if when == "setup":
            self.set_up.add(nodeid)
        if isinstance(ids, list) and ids:
            self.tally.add_requirement_link([str(i) for i in ids], nodeid,
                                            event.get("passed") is True)

    def _finding(self, event: Mapping[str, object]) -> None:
        found = _runtime_finding(event)
        if found is None:
            self._problem("the channel sent a run-time finding that is not one")
        elif len(self.findings) >= MAX_STREAMED_FINDINGS:
            self._problem(f"the test process sent more than {MAX_STREAMED_FINDINGS} run-time "
                          "findings (flooded): the run-time audit records far fewer")
        else:
            self.findings.append(found)

    def _failures(self) -> int:
        counted = self.tally.outcomes(0.0)
        return counted.failed + counted.errors

    def _problem(self, message: str) -> None:
        if message not in self.problems:
            self.problems.append(message)


def _runtime_finding(event: Mapping[str, object]) -> RuntimeFinding | None:
    """A ``finding`` event read strictly: each text capped, at most ``_MAX_FRAMES`` frames."""
    rule, message, test, stack = (event.get(k) for k in ("rule", "message", "test", "stack"))
    if (not isinstance(rule, str) or not rule.startswith("runtime_") or len(rule) > 64
            or not isinstance(message, str) or not isinstance(stack, list)
            or not (test is None or isinstance(test, str))):
        return None
    frames: list[tuple[str, int]] = []
    for frame in stack[:_MAX_FRAMES]:
        if (not isinstance(frame, list) or len(frame) != 2 or not isinstance(frame[0], str)
                or not isinstance(frame[1], int) or isinstance(frame[1], bool)):
            return None
        frames.append((frame[0][:_MAX_TEXT], frame[1]))
    return RuntimeFinding(rule, message[:_MAX_TEXT], tuple(frames),
                          None if test is None else test[:_MAX_TEXT])

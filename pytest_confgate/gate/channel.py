"""The test outcomes, streamed from the test process to ``confgate gate`` as they happen.

``confgate gate`` (``gate.supervisor``) opens a pipe before the test process exists and hands
its write end down by number (``ENV_FD``). The plugin takes it before any conftest is imported
(``Channel.take``), forgets the variable and makes the descriptor non-inheritable, then writes
one JSON line per event: ``start``; ``collect_error`` for each module that failed to collect;
``collected`` with the number of tests to run (not under xdist, whose controller collects none);
``report`` for each test report, with the category pytest's summary gives it, its phase and
outcome (the supervisor keeps each test's outcome by id); ``end`` when the session ends.
The supervisor keeps the read end and tallies (``StreamTally``): what the change's code does
after a report was sent (rewrite the report file, print a digest, ``os._exit``) cannot take
the report back.

``os.write`` is bound when this module is imported, before the change's code runs, so a
wrapper the change puts on ``os.write`` later does not see the channel's bytes. Leaf: imports
only ``collect.tests`` (the same tally ``pytest --confgate`` keeps) and ``gate.child``.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field

from pytest_confgate.collect.plugin_audit import counted_category
from pytest_confgate.collect.tests import TestTally
from pytest_confgate.gate.child import ENV_FD

MAX_CHANNEL_BYTES = 64 * 1024 * 1024
"""More than any real suite sends (about 200 bytes per report): past it the channel was flooded."""
_write = os.write


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
        try:
            while line:
                line = line[_write(self._fd, line):]
        except OSError:
            self.broken = True


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
            self._problem("pytest counted a failed test, but the channel reported none failed "
                          "(a report dropped or relabelled before it was sent)")
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
        if kind == "start":
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

    def _failures(self) -> int:
        counted = self.tally.outcomes(0.0)
        return counted.failed + counted.errors

    def _problem(self, message: str) -> None:
        if message not in self.problems:
            self.problems.append(message)

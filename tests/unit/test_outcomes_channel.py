"""The differential run's outcome channel (issue 34): only the socket with the greeting."""

from __future__ import annotations

import json
import os
import socket

import pytest

from pytest_confgate.outcomes import MAGIC, OutcomeStream, claim


class _Report:
    def __init__(self, nodeid: str, when: str, outcome: str, text: str = "") -> None:
        self.nodeid, self.when, self.longreprtext = nodeid, when, text
        self.passed, self.failed = outcome == "passed", outcome == "failed"
        self.skipped = outcome == "skipped"


def test_a_socket_without_the_greeting_is_left_alone_and_keeps_its_data() -> None:
    other, other_peer = socket.socketpair()
    other_peer.sendall(b"someone else's bytes")
    try:
        assert claim() is None
        assert other.recv(100) == b"someone else's bytes"  # peeked, never consumed
    finally:
        other.close()
        other_peer.close()


def test_the_greeted_socket_is_claimed_and_carries_each_outcome() -> None:
    ours, theirs = socket.socketpair()
    ours.sendall(MAGIC)
    try:
        channel = claim()
        assert channel is not None
        stream = OutcomeStream(channel)
        stream.pytest_runtest_logreport(_Report("t.py::test_a", "call", "passed"))
        failed = _Report("t.py::test_b", "call", "failed", "E assert 4 == 3")
        stream.pytest_runtest_logreport(failed)
        stream.pytest_sessionfinish(None)
        # the inherited descriptor was closed once claimed: the code under test finds no
        # second way in, and the stream ends with the plugin's own end
        with pytest.raises(OSError, match="Bad file descriptor"):
            os.fstat(theirs.detach())
        received = b""
        while chunk := ours.recv(4096):
            received += chunk
        lines = [json.loads(line) for line in received.splitlines()]
        assert lines == [
            {"node": "t.py::test_a", "outcome": "passed", "failure": ""},
            {"node": "t.py::test_b", "outcome": "failed", "failure": "E assert 4 == 3"},
            {"end": True, "files": {}},
        ]
    finally:
        ours.close()
        theirs.close()

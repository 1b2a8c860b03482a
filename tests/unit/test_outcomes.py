"""The outcome stream the runs we start report on (rank's, the tamper replay, the differential
run): one classification, read as it happens, nothing counted after the session's end."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from pytest_confgate.outcomes import ENV_SOCKET, MAGIC, OutcomeReceiver, Received

EVERY_KIND = """\
import pytest


@pytest.fixture
def broken():
    raise RuntimeError("setup")


@pytest.fixture
def bad_teardown():
    yield
    raise RuntimeError("teardown")


def test_passes():
    pass


def test_fails():
    assert 1 == 2


def test_setup_errors(broken):
    pass


def test_teardown_errors(bad_teardown):
    pass


@pytest.mark.skip(reason="no")
def test_skipped():
    pass


@pytest.mark.xfail
def test_xfails():
    assert False


@pytest.mark.xfail
def test_xpasses():
    pass


@pytest.mark.xfail(strict=True)
def test_xpasses_strictly():
    pass
"""


def _streamed(pytester: pytest.Pytester, *args: str) -> Received:
    receiver = OutcomeReceiver()
    subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                   cwd=pytester.path, pass_fds=(receiver.child_fd,), capture_output=True,
                   check=False, timeout=120)
    return receiver.close(10.0)


def test_the_stream_names_every_outcome_as_phase_outcome_does(pytester: pytest.Pytester) -> None:
    """Every run we start that executes code under judgement (rank's, the replay, the
    differential run) reads its outcomes from this one stream."""
    pytester.makepyfile(test_kinds=EVERY_KIND)

    received = _streamed(pytester, "--deselect", "test_kinds.py::test_passes")

    assert received.ended
    assert {name.split("::")[1]: r["outcome"] for name, r in received.results.items()} == {
        "test_passes": "deselected", "test_fails": "failed", "test_setup_errors": "error",
        "test_teardown_errors": "error", "test_skipped": "skipped", "test_xfails": "xfailed",
        "test_xpasses": "xpassed", "test_xpasses_strictly": "failed",
    }
    assert "assert 1 == 2" in received.results["test_kinds.py::test_fails"]["failure"]


# What a change that only wants green does at exit: every inherited socket it can find gets
# a "passed" for the failing test, once pytest's session has ended.
LATE_WORD = """import atexit
import json
import os
import socket
import stat


def _say_passed():
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
            sock = socket.socket(fileno=os.dup(fd))
            sock.sendall(json.dumps({"node": "test_late.py::test_fails",
                                     "outcome": "passed"}).encode() + b"\\n")
        except OSError:
            pass


atexit.register(_say_passed)


def test_fails():
    assert 1 == 2
"""


def test_nothing_sent_after_the_session_ends_counts(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_late=LATE_WORD)

    received = _streamed(pytester)

    assert received.ended
    assert received.results["test_late.py::test_fails"]["outcome"] == "failed"


def test_a_message_after_the_end_is_counted_late_never_as_an_outcome() -> None:
    receiver = OutcomeReceiver()
    theirs = socket.socket(fileno=os.dup(receiver.child_fd))
    theirs.recv(len(MAGIC))
    for message in ({"node": "t.py::a", "outcome": "failed"}, {"end": True},
                    {"node": "t.py::a", "outcome": "passed"}, {"node": "t.py::b",
                                                                "outcome": "passed"}):
        theirs.sendall(json.dumps(message).encode() + b"\n")
    theirs.close()

    received = receiver.close(10.0)

    assert received.results == {"t.py::a": {"outcome": "failed", "failure": ""}}
    assert (received.ended, received.late) == (True, 2)


def test_a_listening_receiver_takes_one_connection_and_refuses_the_next() -> None:
    """``confgate rank``'s runs go through the user's test command, which may not pass a
    descriptor on: the socket's path goes in the environment, and only the first connection
    (the gate's plugin, before any conftest) is read."""
    receiver = OutcomeReceiver(listen=True)
    receiver.started(os.getpid())  # this process is the run
    path = receiver.environ[ENV_SOCKET]
    first = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    first.connect(path)
    assert first.recv(len(MAGIC), socket.MSG_WAITALL) == MAGIC
    first.sendall(b'{"node": "t.py::a", "outcome": "failed"}\n')
    second = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with pytest.raises(ConnectionRefusedError):  # closed before the greeting was sent
        second.connect(path)
    second.close()
    first.sendall(b'{"end": true}\n')
    first.close()

    received = receiver.close(10.0)

    assert received.results == {"t.py::a": {"outcome": "failed", "failure": ""}}
    assert received.ended
    assert not os.path.exists(path)


def test_a_gate_run_that_starts_again_measured_still_streams_its_outcomes(
    pytester: pytest.Pytester,
) -> None:
    """A ``-p`` plugin of the measured package makes ``pytest --confgate`` replace itself,
    measured from the start: the stream was claimed, and its connection lost, before that."""
    pytester.mkpydir("calc").joinpath("plug.py").write_text("", encoding="utf-8")
    pytester.makepyprojecttoml('[tool.coverage.run]\nsource = ["calc"]\n')
    pytester.makepyfile(test_calc="def test_passes():\n    pass\n")
    receiver = OutcomeReceiver(listen=True)
    with subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "calc.plug", "--confgate", "-p", "no:cacheprovider",
         "--confgate-report=report.json"],
        cwd=pytester.path, env={**os.environ, **receiver.environ, "PYTHONPATH": os.pathsep.join(
            [str(pytester.path), *filter(None, [os.environ.get("PYTHONPATH")])])},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        receiver.started(proc.pid)
        output, _ = proc.communicate(timeout=120)

    received = receiver.close(10.0)

    assert received.ended, output
    assert received.results["test_calc.py::test_passes"]["outcome"] == "passed"


def test_rank_s_runs_stream_their_outcomes_with_plugin_autoloading_switched_off(
    pytester: pytest.Pytester,
) -> None:
    """The gate's plugin is an entry point, which ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` keeps out;
    rank loads its own run plugin with ``-p``, and that one claims the stream then."""
    pytester.makepyfile(test_one="def test_passes():\n    pass\n")
    receiver = OutcomeReceiver(listen=True)
    with subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "pytest_confgate.rank.outcomes_plugin",
         "-p", "no:cacheprovider"],
        cwd=pytester.path, env={**os.environ, **receiver.environ,
                                "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:
        receiver.started(proc.pid)
        proc.wait(120)

    received = receiver.close(10.0)

    assert received.ended
    assert received.results["test_one.py::test_passes"]["outcome"] == "passed"

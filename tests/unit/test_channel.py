"""``gate.channel``: the test outcomes the test process streams to ``confgate gate``."""

from __future__ import annotations

import json
import os

import pytest

from pytest_confgate.collect.runtime_audit import RuntimeFinding
from pytest_confgate.collect.tests import TestTally
from pytest_confgate.gate import channel
from pytest_confgate.gate.channel import ENV_FD, Channel, StreamTally


def line(event: str, **fields: object) -> bytes:
    return json.dumps({"e": event, **fields}).encode() + b"\n"


def report(category: str, nodeid: str = "t.py::t", when: str = "call",
           **fields: object) -> bytes:
    return line("report", cat=category, nodeid=nodeid, when=when, **fields)


def test_a_whole_session_is_tallied_as_the_plugin_tallies_it() -> None:
    events = [line("start"), line("collect_error", nodeid="bad.py"), line("collected", n=2),
              report("", when="setup"), report("", "r.py::t", when="setup"), report("passed"),
              report(""), report("failed"), report("skipped"), report("xfailed"),
              report("passed", nodeid="r.py::t", passed=True, links=["REQ-1"]),
              line("end", exitstatus=1)]
    stream = StreamTally()
    data = b"".join(events)
    for start in range(0, len(data), 7):  # bytes arrive in any pieces
        assert stream.feed(data[start:start + 7])
    stream.close()
    expected = TestTally()
    for category in ("", "", "passed", "", "failed", "skipped", "xfailed", "passed"):
        expected.add_category(category)
    expected.add_collection_error()
    expected.add_requirement_link(["REQ-1"], "r.py::t", True)
    assert stream.problems == []
    assert stream.tally.counts == expected.counts
    assert stream.tally.links == expected.links
    assert stream.exitstatus == 1


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (line("start") + report("passed"), "ended without its own session end"),
        (report("passed"), "never opened the channel"),
        (line("start") + b"not json\n" + line("end"), "a line that is not an event"),
        (line("start") + line("end") + report("passed"), "'report' after the session ended"),
        (line("start") + line("end") + b'{"e": "end"', "in the middle of an event"),
        (line("start") + line("start") + line("end"), "started twice"),
        (line("start") + line("report") + line("end"), "without its category"),
        (line("start") + line("collected", n=3) + report("", when="setup") + line("end"),
         "2 of the 3 tests collected never reported"),
    ],
    ids=["no-end", "no-start", "garbage", "after-end", "half-line", "twice", "no-category",
         "ended-early"],
)
def test_a_stream_that_is_not_a_whole_session_is_a_problem(data: bytes, problem: str) -> None:
    stream = StreamTally()
    stream.feed(data)
    stream.close()
    assert any(problem in text for text in stream.problems), stream.problems


def test_a_flooded_channel_stops_being_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(channel, "MAX_CHANNEL_BYTES", 100)
    stream = StreamTally()
    assert stream.feed(line("start"))
    assert not stream.feed(report("passed") * 10)
    assert "flooded" in stream.problems[0]


def test_the_test_process_takes_the_pipe_once_and_hides_it_from_what_it_starts() -> None:
    read_end, write_end = os.pipe()
    try:
        os.set_inheritable(write_end, True)
        environ = {ENV_FD: str(write_end)}
        taken = Channel.take(environ)
        assert taken is not None
        assert ENV_FD not in environ  # a nested pytest never finds it
        assert not os.get_inheritable(write_end)
        taken.send("start")
        assert os.read(read_end, 100) == b'{"e":"start"}\n'
        os.close(read_end)
        taken.send("end", exitstatus=0)  # the reader is gone: no error, the channel ends
        assert taken.broken
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "environ",
    [{}, {ENV_FD: "x"}, {ENV_FD: "0", "PYTEST_XDIST_WORKER": "gw0"}, {ENV_FD: "999"}],
    ids=["unset", "not-a-number", "xdist-worker", "closed"],
)
def test_no_channel_without_a_pipe_from_the_supervisor(environ: dict[str, str]) -> None:
    assert Channel.take(environ) is None


def test_each_tests_outcome_is_kept_by_id_as_outcomes_names_it() -> None:
    """The differential run compares test by test: the supervisor keeps what each test did."""
    events = [line("start"), line("collect_error", nodeid="bad.py"),
              report("", "a.py::ok", when="setup", o="passed"),
              report("passed", "a.py::ok", o="passed"),
              report("", "a.py::ok", when="teardown", o="passed"),
              report("failed", "a.py::no", o="failed"),
              report("error", "a.py::no", when="teardown", o="failed"),
              report("error", "a.py::setup", when="setup", o="failed"),
              report("xfailed", "a.py::xf", o="skipped", xf=True),
              report("xpassed", "a.py::xp", o="passed", xf=True),
              report("skipped", "a.py::skip", when="setup", o="skipped"),
              line("end", exitstatus=1)]
    stream = StreamTally()
    assert stream.feed(b"".join(events))
    stream.close()
    assert stream.tally.by_test == {
        "bad.py": "error", "a.py::ok": "passed", "a.py::no": "error", "a.py::setup": "error",
        "a.py::xf": "xfailed", "a.py::xp": "xpassed", "a.py::skip": "skipped",
    }


def _streamed(*events: bytes) -> StreamTally:
    stream = StreamTally()
    assert stream.feed(b"".join(events))
    stream.close()
    return stream


def test_a_failed_report_in_a_passing_category_counts_as_failed() -> None:
    """A plugin's ``pytest_report_teststatus`` may call a failure "passed": the outcome wins."""
    stream = _streamed(line("start"), line("collected", n=1),
                       report("", when="setup", passed=True, o="passed"),
                       report("passed", passed=False, o="failed"), line("end", exitstatus=1))
    assert stream.tally.outcomes(0.0).failed == 1
    assert stream.problems == []


def test_pytest_counting_a_failure_the_channel_never_sent_is_a_problem() -> None:
    stream = _streamed(line("start"), line("collected", n=1),
                       report("", when="setup", passed=True, o="passed"),
                       report("passed", passed=True, o="passed"), line("end", exitstatus=1))
    assert stream.tally.outcomes(0.0).failed == 0
    assert any("pytest counted a failed test" in p for p in stream.problems), stream.problems


def test_the_session_end_names_the_files_it_leaves() -> None:
    stream = _streamed(line("start"), line("end", exitstatus=0, report="ab" * 32, coverage=7))
    assert stream.handed_over == {"report": "ab" * 32}  # a digest is a string or nothing


def test_a_finding_sent_as_recorded_comes_out_as_the_audit_recorded_it() -> None:
    """Every project frame goes with it (the supervisor places it against the change's files),
    and a finding is kept whenever it comes: after the end too (a process a test forked)."""
    read_end, write_end = os.pipe()
    sender = Channel(write_end)
    found = RuntimeFinding("runtime_gc_scan", "gc.get_objects()",
                           (("tests/test_x.py", 5), ("calc/core.py", 9)), "tests/test_x.py::t")
    try:
        sender.send("start")
        sender.finding(found)
        sender.send("end", exitstatus=0)
        sender.finding(found)
        data = os.read(read_end, 65536)
    finally:
        os.close(read_end)
        os.close(write_end)
    stream = _streamed(data)
    assert stream.findings == [found, found]
    assert stream.problems == []


@pytest.mark.parametrize(
    "fields",
    [{"rule": "behaviour_change", "message": "m", "stack": []},
     {"rule": "runtime_gc_scan", "message": 3, "stack": []},
     {"rule": "runtime_gc_scan", "message": "m", "stack": [["a.py", "5"]]},
     {"rule": "runtime_gc_scan", "message": "m", "stack": "a.py"},
     {"rule": "runtime_gc_scan", "message": "m", "stack": [], "test": 1}],
    ids=["not-runtime", "message", "line", "stack", "test"],
)
def test_a_finding_that_is_not_one_is_a_problem(fields: dict[str, object]) -> None:
    stream = _streamed(line("start"), line("finding", **fields), line("end", exitstatus=0))
    assert stream.findings == []
    assert any("run-time finding that is not one" in p for p in stream.problems)


def test_a_flood_of_findings_is_a_problem_and_only_so_many_are_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(channel, "MAX_STREAMED_FINDINGS", 3)
    sent = [line("finding", rule="runtime_gc_scan", message="m" * 10_000, test=None,
                 stack=[[f"t{n}.py", n]] * 40) for n in range(5)]
    stream = _streamed(line("start"), *sent, line("end", exitstatus=0))
    assert len(stream.findings) == 3
    assert len(stream.findings[0].message) == 4096
    assert len(stream.findings[0].stack) == 12
    assert any("run-time findings (flooded)" in p for p in stream.problems), stream.problems


def test_an_xdist_worker_reopens_its_controllers_pipe_through_proc() -> None:
    """Workers inherit no descriptor: they open the controller's write end by its ``/proc``
    path, and their findings arrive on the same pipe, each line whole."""
    read_end, write_end = os.pipe()
    try:
        os.set_inheritable(write_end, True)
        controller = Channel.take({ENV_FD: str(write_end)})
        assert controller is not None
        worker = Channel.reopen(controller.for_workers())
        assert worker is not None
        worker.finding(RuntimeFinding("runtime_gc_scan", "x" * 9000, (("t.py", 1),)))
        controller.send("start")
        data = os.read(read_end, 65536)
        os.close(worker._fd)
    finally:
        os.close(read_end)
        os.close(write_end)
    stream = _streamed(data)
    assert [len(f.message) for f in stream.findings] == [1024]


def test_a_worker_writes_to_no_pipe_but_its_controllers() -> None:
    """A remote worker's ``/proc`` path names some other process's descriptor, if any."""
    read_end, write_end = os.pipe()
    other_read, other_write = os.pipe()
    try:
        path, _ = Channel(write_end).for_workers()
        _, other = Channel(other_write).for_workers()
        assert Channel.reopen([path, other]) is None
        assert Channel.reopen(["/nonexistent/fd/3", 1]) is None
        assert Channel.reopen(path) is None
    finally:
        for fd in (read_end, write_end, other_read, other_write):
            os.close(fd)

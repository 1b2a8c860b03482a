"""The ``command`` provider with real programs: the prompt on stdin, the answer on stdout."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fakes.processes import process_gone

from pytest_confgate.agents import Agent, build_agent
from pytest_confgate.config import CommandAgentConfig
from pytest_confgate.exceptions import AgentError

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter


def _agent(*command: str, **fields: Any) -> Agent:
    config = CommandAgentConfig(provider="command", command=list(command), **fields)
    return build_agent("dev", config)


def _python(code: str, **fields: Any) -> Agent:
    return _agent(sys.executable, "-c", code, **fields)


def test_the_prompt_goes_to_stdin_and_stdout_is_the_answer() -> None:
    agent = _python("import sys; sys.stdout.write(sys.stdin.read().upper())")

    started = time.perf_counter()
    reply = agent.ask("fix the bug", system="be brief")
    waited = time.perf_counter() - started

    assert reply.text == "BE BRIEF\n\nFIX THE BUG"
    assert reply.attempts == 1
    assert (reply.input_tokens, reply.output_tokens, reply.model) == (None, None, None)
    assert 0 < reply.latency_s <= waited


def test_a_large_prompt_and_answer_stream_through_without_deadlock() -> None:
    prompt = "x" * (3 * 1024 * 1024)  # far beyond a pipe buffer, both ways at once

    reply = _agent("cat", max_output_bytes=4 * 1024 * 1024, timeout_ms=5000).ask(prompt)

    assert reply.text == prompt


def test_a_program_that_ignores_its_stdin_still_answers() -> None:
    reply = _python("print('done')").ask("y" * (1024 * 1024))

    assert reply.text == "done\n"


def test_the_environment_given_is_the_programs_environment() -> None:
    environ = {"PATH": os.environ.get("PATH", ""), "GREETING": "hello from the gate"}
    agent = build_agent(
        "dev",
        CommandAgentConfig(
            provider="command",
            command=[sys.executable, "-c", "import os; print(os.environ['GREETING'])"],
        ),
        environ=environ,
    )

    assert agent.ask("").text == "hello from the gate\n"


def test_a_non_zero_exit_is_an_error_quoting_the_end_of_stderr() -> None:
    code = "import sys; sys.stderr.write('noise ' * 2000 + 'the real cause'); sys.exit(3)"

    with pytest.raises(AgentError) as caught:
        _python(code).ask("hello")

    message = str(caught.value)
    assert message.startswith(f"agent 'dev': command {sys.executable!r} exited with status 3;")
    assert message.endswith("noise the real cause")
    assert len(message) < 2300  # the tail, not 12 000 characters of noise


def test_a_program_killed_by_a_signal_says_which() -> None:
    code = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"

    with pytest.raises(AgentError, match="was killed by signal 15"):
        _python(code).ask("hello")


def test_invalid_utf8_in_the_answer_is_replaced_not_fatal() -> None:
    reply = _python(r"import sys; sys.stdout.buffer.write(b'ok \xff\xfe end')").ask("hello")

    assert reply.text == "ok \ufffd\ufffd end"


def test_output_up_to_the_cap_is_accepted() -> None:
    reply = _python("print('a' * 999)", max_output_bytes=1000).ask("")

    assert len(reply.text) == 1000


def test_output_past_the_cap_is_an_error() -> None:
    with pytest.raises(AgentError, match=r"printed more than max_output_bytes \(1000 bytes\)"):
        _python("print('a' * 1000)", max_output_bytes=1000).ask("")


def test_endless_output_is_cut_off_by_the_cap_not_the_timeout() -> None:
    code = "import sys\nwhile True: sys.stdout.write('x' * 65536)"

    with pytest.raises(AgentError, match="max_output_bytes") as caught:
        _python(code, max_output_bytes=200_000, timeout_ms=60_000).ask("")

    assert caught.value.kind == "output_cap"


def test_a_slow_program_is_cut_short_at_its_timeout() -> None:
    started = time.perf_counter()
    with pytest.raises(AgentError, match=r"did not answer within 0\.3 s \(timeout_ms\)"):
        _agent("sleep", "120", timeout_ms=300).ask("hello")

    assert time.perf_counter() - started < 60  # killed, not waited for: however busy the host


def test_a_program_that_closes_stdout_but_keeps_running_times_out() -> None:
    code = "import os, time; os.close(1); time.sleep(30)"

    with pytest.raises(AgentError, match="did not answer within"):
        _python(code, timeout_ms=500).ask("hello")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states in /proc")
def test_a_timeout_kills_the_programs_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    script = tmp_path / "spawner"
    script.write_text(f'#!/bin/sh\nsleep 30 &\necho $! > "{pidfile}"\nwait\n')
    script.chmod(0o755)

    # 2 s: long enough for a loaded machine to start the grandchild and write its pid first.
    with pytest.raises(AgentError, match="killed with its process group"):
        _agent(str(script), timeout_ms=2000).ask("hello")

    assert process_gone(int(pidfile.read_text()))


def test_a_missing_program_is_an_error_saying_what_to_do() -> None:
    with pytest.raises(AgentError, match="'no-such-agent-program' was not found on PATH; install"):
        _agent("no-such-agent-program").ask("hello")


def test_a_file_that_is_not_executable_is_an_error(tmp_path: Path) -> None:
    program = tmp_path / "agent"
    program.write_text("#!/bin/sh\necho hi\n")

    with pytest.raises(AgentError, match="is not executable"):
        _agent(str(program)).ask("hello")


# A program that forks a grandchild which leaves the process group with setsid() and writes
# its pid (whole, by rename); then the program either hangs or answers and exits.
ESCAPING = """\
import os, sys, time
pidfile, then = sys.argv[1], sys.argv[2]
if os.fork() == 0:
    os.setsid()
    with open(pidfile + ".tmp", "w") as out:
        out.write(str(os.getpid()))
    os.rename(pidfile + ".tmp", pidfile)
    time.sleep(120)
    os._exit(0)
while not os.path.exists(pidfile):
    time.sleep(0.01)
if then == "hang":
    time.sleep(120)
print("the answer")
"""


def _escaping(tmp_path: Path, then: str, **fields: Any) -> tuple[Agent, Path]:
    script = tmp_path / "escaping.py"
    script.write_text(ESCAPING, encoding="utf-8")
    pidfile = tmp_path / "grandchild.pid"
    return _agent(sys.executable, str(script), str(pidfile), then, **fields), pidfile


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states in /proc")
def test_a_timeout_also_kills_a_grandchild_that_left_the_group_with_setsid(
    tmp_path: Path,
) -> None:
    agent, pidfile = _escaping(tmp_path, "hang", timeout_ms=4000)

    with pytest.raises(AgentError, match="did not answer within") as caught:
        agent.ask("hello")

    assert process_gone(int(pidfile.read_text()))
    assert (caught.value.attempts, caught.value.kind) == (1, "timeout")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states in /proc")
def test_a_daemon_left_behind_is_killed_and_cannot_hold_the_answer_open(tmp_path: Path) -> None:
    # The daemon inherited stdout: unless it is killed, the answer never reaches its end.
    agent, pidfile = _escaping(tmp_path, "answer", timeout_ms=30_000)

    reply = agent.ask("hello")

    assert reply.text == "the answer\n"
    assert process_gone(int(pidfile.read_text()))


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states in /proc")
def test_a_killed_caller_leaves_no_process_of_its_agent_behind(tmp_path: Path) -> None:
    """SIGKILL on the gate itself: the agent's intermediary is told and kills what it ran."""
    script = tmp_path / "escaping.py"
    script.write_text(ESCAPING, encoding="utf-8")
    pidfile = tmp_path / "grandchild.pid"
    caller = tmp_path / "caller.py"
    caller.write_text(
        "import sys\n"
        "from pytest_confgate.agents import build_agent\n"
        "from pytest_confgate.config import CommandAgentConfig\n"
        f"command = [sys.executable, {str(script)!r}, {str(pidfile)!r}, 'hang']\n"
        "config = CommandAgentConfig(provider='command', command=command, timeout_ms=120000)\n"
        "build_agent('dev', config).ask('hello')\n",
        encoding="utf-8",
    )
    proc = subprocess.Popen([sys.executable, str(caller)])
    try:
        deadline = time.monotonic() + 60
        while not pidfile.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pidfile.exists(), "the agent's grandchild never started"
    finally:
        proc.kill()
        proc.wait()

    assert process_gone(int(pidfile.read_text()))


def test_a_failed_call_counts_its_attempt_and_names_its_kind(tmp_path: Path) -> None:
    with pytest.raises(AgentError) as caught:
        _python("import sys; sys.exit(3)").ask("hello")

    assert (caught.value.attempts, caught.value.kind) == (1, "exit_status")


def test_a_program_that_could_not_start_made_no_attempt() -> None:
    with pytest.raises(AgentError) as caught:
        _agent("no-such-agent-program").ask("hello")

    assert (caught.value.attempts, caught.value.kind) == (0, "not_found")

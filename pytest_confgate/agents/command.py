"""Provider ``command``: an agent that is a program.

The prompt goes to stdin (after the ``system`` text and a blank line, when there is one:
a command-line agent has no other place for it) and the answer is stdout. The program gets
an argv list, never a shell, and its own process group, under a small intermediary that tracks
every process it starts (``subreaper``): when the program exits or times out, whatever it
left behind is killed, also processes that called ``setsid`` to leave its process group.

Output past ``max_output_bytes`` is an error, not a truncated answer: the program is killed
and the call fails, because a judge parsing half an answer could pass a change it never read.
Invalid UTF-8 in the answer is replaced (U+FFFD), never fatal.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Mapping

from pytest_confgate import subreaper
from pytest_confgate.agents import AgentReply
from pytest_confgate.config import CommandAgentConfig
from pytest_confgate.exceptions import AgentError
from pytest_confgate.processes import PastDeadline, PastOutputCap, exchange

STDERR_TAIL_CHARS = 2000


class CommandAgent:
    """Runs ``config.command`` once per ``ask``; ``environ`` (default: ours) is its environment."""

    def __init__(
        self, name: str, config: CommandAgentConfig, environ: Mapping[str, str] | None = None
    ) -> None:
        self.name = name
        self._config = config
        self._env = dict(environ) if environ is not None else None

    def __repr__(self) -> str:
        return f"CommandAgent(name={self.name!r}, command={self._config.command!r})"

    def ask(self, prompt: str, *, system: str | None = None) -> AgentReply:
        """Run the program with the prompt on stdin; its stdout is the answer."""
        text = f"{system}\n\n{prompt}" if system else prompt
        timeout_s = self._config.timeout_ms / 1000
        started = time.perf_counter()
        proc = self._start()
        try:
            out, err = exchange(
                proc,
                deadline=started + timeout_s,
                max_stdout=self._config.max_output_bytes,
                data=text.encode("utf-8", errors="replace"),  # a lone surrogate must not crash
                stderr_keep=STDERR_TAIL_CHARS * 4,  # enough for the tail we quote
            )
        except (PastDeadline, PastOutputCap) as stop:
            subreaper.stop(proc)
            kind = "output_cap" if isinstance(stop, PastOutputCap) else "timeout"
            raise AgentError(self._stop_message(stop), attempts=1, kind=kind) from None
        except BaseException:
            subreaper.stop(proc)  # Ctrl-C or a bug: in its own group, it would outlive us
            raise
        latency_s = time.perf_counter() - started
        if proc.returncode != 0:
            kind = "killed_by_signal" if proc.returncode < 0 else "exit_status"
            raise AgentError(self._exit_message(proc.returncode, err), attempts=1, kind=kind)
        return AgentReply(
            text=out.decode("utf-8", errors="replace"),
            latency_s=latency_s,
            input_tokens=None,
            output_tokens=None,
            model=None,
            attempts=1,
        )

    @property
    def _program(self) -> str:
        return repr(self._config.command[0])

    def _start(self) -> subprocess.Popen[bytes]:
        self._check_program()  # the intermediary starts whatever the program is: check first
        try:
            return subprocess.Popen(  # an argv list, never a shell (S603 is ignored project-wide)
                subreaper.contained(self._config.command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self._env,
                process_group=0,  # its own process group, killed whole on timeout
            )
        except (FileNotFoundError, NotADirectoryError) as exc:
            problem = "was not found on PATH"
            raise AgentError(self._start_message(problem), kind="not_found") from exc
        except PermissionError as exc:
            message = self._start_message("is not executable")
            raise AgentError(message, kind="not_executable") from exc

    def _check_program(self) -> None:
        program = self._config.command[0]
        if os.sep in program or (os.altsep and os.altsep in program):
            if not os.path.exists(program):
                raise AgentError(self._start_message("was not found"), kind="not_found")
            if os.path.isdir(program) or not os.access(program, os.X_OK):
                raise AgentError(self._start_message("is not executable"), kind="not_executable")
            return
        env = self._env if self._env is not None else os.environ
        if shutil.which(program, path=env.get("PATH", os.defpath)) is None:
            raise AgentError(self._start_message("was not found on PATH"), kind="not_found")

    def _start_message(self, problem: str) -> str:
        return (
            f"agent {self.name!r}: command {self._program} {problem}; install it or give its"
            f" full path in agents.{self.name}.command"
        )

    def _stop_message(self, stop: Exception) -> str:
        config = self._config
        if isinstance(stop, PastOutputCap):
            what = f"printed more than max_output_bytes ({config.max_output_bytes} bytes)"
            advice = f"raise agents.{self.name}.max_output_bytes if that much output is right"
        else:
            what = f"did not answer within {config.timeout_ms / 1000:g} s (timeout_ms)"
            advice = f"raise agents.{self.name}.timeout_ms or make the program faster"
        return (
            f"agent {self.name!r}: command {self._program} {what} and was killed with its"
            f" process group; {advice}"
        )

    def _exit_message(self, returncode: int, err: bytes | bytearray) -> str:
        how = f"exited with status {returncode}"
        if returncode < 0:
            how = f"was killed by signal {-returncode}"
        stderr = err.decode("utf-8", errors="replace").strip()
        tail = f"; stderr ends with:\n{stderr[-STDERR_TAIL_CHARS:]}" if stderr else ""
        return f"agent {self.name!r}: command {self._program} {how}{tail}"

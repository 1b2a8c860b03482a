"""Process checks shared by the tests that kill process groups (tools, command agents), and
rank's processes, counted."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from pytest_confgate.rank.evaluate import Finished, Processes


def process_gone(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie waiting for init to reap it counts as gone)."""
    for _ in range(200):  # SIGKILL is asynchronous: give the kernel a moment, not a deadline
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)  # do not leave it behind if the assertion fails
    return False


def sigint_as_at_a_terminal() -> None:
    """``preexec_fn`` for a child a test sends Ctrl-C (SIGINT): its default disposition back.

    A shell starts background jobs (``cmd &``, ``nohup cmd &``) with SIGINT ignored, and every
    child inherits that; Python then installs no ``KeyboardInterrupt`` handler, so the signal
    the test sends would never arrive and the test would wait out its timeout. Ctrl-C at a
    terminal reaches a foreground program whose SIGINT is the default: that is what is tested.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Counted(Processes):
    """rank's real processes, each argv it started counted."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[Sequence[str]] = []

    def run(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout_s: float,
            pass_fds: Sequence[int] = (), started: Callable[[int], None] | None = None
            ) -> Finished:
        self.started.append(argv)
        return super().run(argv, cwd=cwd, env=env, timeout_s=timeout_s, pass_fds=pass_fds,
                           started=started)

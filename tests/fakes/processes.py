"""Process checks shared by the tests that kill process groups (tools, command agents)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


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

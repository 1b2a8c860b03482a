"""Exit statuses of the ``confgate`` command: a contract, shared by the CLI and the overlays."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Exit statuses of the ``confgate`` command (``confgate run`` adds 128 + signal)."""

    OK = 0
    GATE_FAILED = 1
    USAGE_ERROR = 2
    ESCALATED = 3

"""Exit statuses of the ``confgate`` command, shared by every command group."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Exit statuses of the ``confgate`` command."""

    OK = 0
    GATE_FAILED = 1
    USAGE_ERROR = 2
    ESCALATED = 3

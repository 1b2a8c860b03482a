"""Exit statuses of the ``confgate`` command, and the one way its commands report bad input."""

from __future__ import annotations

import sys
from enum import IntEnum

from pytest_confgate.exceptions import ConfgateError, ConfigError


class ExitCode(IntEnum):
    """Exit statuses of the ``confgate`` command."""

    OK = 0
    GATE_FAILED = 1
    USAGE_ERROR = 2
    ESCALATED = 3


def usage_error(command: str, exc: ConfgateError) -> ExitCode:
    """Print ``exc`` the way every command does and return ``USAGE_ERROR``.

    A ``ConfigError`` prints its ``FILE:LINE: key: message`` lines as they are, one per
    problem; any other error is one line prefixed with the command.
    """
    if isinstance(exc, ConfigError):
        for problem in exc.problems:
            print(problem, file=sys.stderr)
    else:
        print(f"{command}: {exc}", file=sys.stderr)
    return ExitCode.USAGE_ERROR

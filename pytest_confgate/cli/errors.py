"""The one way ``confgate`` commands report bad input."""

from __future__ import annotations

import sys

from pytest_confgate.exceptions import ConfgateError, ConfigError
from pytest_confgate.exit_codes import ExitCode


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

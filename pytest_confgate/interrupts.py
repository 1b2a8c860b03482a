"""SIGTERM as an exception, like Ctrl-C: every ``finally`` runs, process groups die, temp goes.

Python's default SIGTERM ends the process on the spot: temporary trees, git worktrees and the
process groups of candidates or agents (each its own group, not the foreground one: a Ctrl-C does
not reach them) would all be left behind. Long-running commands wrap their work in
``sigterm_raises()`` and report ``128 + signum`` as shells do.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Interrupted(BaseException):
    """The user or the system stopped a command (SIGINT or SIGTERM)."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


@contextmanager
def sigterm_raises(
    raise_as: Callable[[int], BaseException] = Interrupted,
) -> Iterator[None]:
    """Inside the block, SIGTERM raises ``raise_as(signum)``; the old handler comes back after."""

    def terminate(signum: int, _frame: object) -> None:
        raise raise_as(signum)

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)

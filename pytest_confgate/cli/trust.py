"""``confgate trust``: record review outcomes and score agents (SPEC 9)."""

from __future__ import annotations

import argparse
from typing import Any


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    """Add this group's subcommands to the ``confgate`` parser."""

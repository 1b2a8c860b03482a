"""Read a user's text file (configuration, requirements) safely, or say exactly why not.

A leaf module: at most ``limit + 1`` bytes are read (a huge file or a FIFO never stalls the
run), and an unreadable, oversized or non-UTF-8 file becomes one ``ConfigError`` line naming
the file, the line and what to do.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pytest_confgate.exceptions import ConfigError

__all__ = ["read_text_file", "tomllib"]


def read_text_file(path: Path, limit: int, what: str, fix: str) -> str:
    """The file's text; ``what`` names it in messages ("configuration file"), ``fix`` says how."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(limit + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: the {what} cannot be read ({exc.strerror}); {fix}") from None
    if len(raw) > limit:
        raise ConfigError(
            f"{path}:1: the {what} is over the {limit} byte limit; is this the right file?"
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}:{line}: the {what} is not valid UTF-8 (byte 0x{raw[exc.start]:02x}); "
            "save it as UTF-8"
        ) from None

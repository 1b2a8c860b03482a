"""coverage.py's settings that choose what is measured, read and set alike on every
coverage.py the gate supports (``source_dirs`` exists from 7.8 on)."""

from __future__ import annotations

from typing import Any

SELECTION = ("run:source", "run:source_pkgs", "run:source_dirs", "run:include")
"""coverage.py settings that choose what is measured; the gate's ``source:`` replaces them
(``source_dirs``: coverage.py 7.8 and later)."""


def option(cov: Any, name: str) -> list[str]:
    """A list setting of ``cov``'s, empty where this coverage.py does not have it."""
    from coverage.exceptions import ConfigError

    try:
        value = cov.get_option(name)
    except ConfigError:  # an older coverage.py: no such setting, so the project set none
        return []
    return [str(item) for item in value] if isinstance(value, list | tuple) else []


def set_selection(cov: Any, values: dict[str, list[str]]) -> None:
    """Set each of ``SELECTION`` to its value in ``values`` (empty if absent), skipping one
    this coverage.py does not have."""
    from coverage.exceptions import ConfigError

    for name in SELECTION:
        try:
            cov.set_option(name, values.get(name, []))
        except ConfigError:
            if values.get(name):
                raise

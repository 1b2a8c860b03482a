"""How a key's place in the configuration is written in messages (``gate.metrics[0].min``)."""

from __future__ import annotations

Path_ = tuple[str | int, ...]
"""Keys and list indexes from the top of the configuration down to one value."""

TOO_DEEP = "the values are nested too deeply; flatten the configuration"


def dotted(parts: Path_) -> str:
    text = ""
    for part in parts:
        if isinstance(part, str) and not part.isprintable():
            part = repr(part)  # one problem, one line: no raw newlines from a key
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


__all__ = ["TOO_DEEP", "Path_", "dotted"]

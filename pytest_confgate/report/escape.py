"""Untrusted text made inert for Markdown: a leaf, so every writer (the report, the comparison
with a base, the run report) escapes alike without importing each other."""

from __future__ import annotations

import re

MAX_CELL = 300
_MD_SPECIAL = re.compile(r"([\\`*\[\]{}|~#!])")
_EMPHASIS_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
"""An underscore that could open or close emphasis (``__init__``); one between letters or
digits (``test_pass_rate``) cannot, and stays as it is."""
_NEWLINES = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")


def escape_markdown(text: object, limit: int = MAX_CELL) -> str:
    """Inline, inert Markdown: one line, no HTML, no table breaks, links, code or mentions."""
    value = _CONTROL.sub("", _NEWLINES.sub(" ", str(text))).strip()
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    value = _MD_SPECIAL.sub(r"\\\1", value)
    value = _EMPHASIS_UNDERSCORE.sub(r"\\_", value)
    return value.replace("@", "@\u2060")  # a word joiner: no @mention, no ping


_LONG_TOKEN = re.compile(r"\S{30,}")
_BREAK_AFTER = re.compile(r"(::|(?<!;)/|\.(?=[A-Za-z])|(?<![\\_])_(?=[A-Za-z0-9]))")


def with_break_points(escaped: str, *, markdown: bool = False) -> str:
    """Already escaped text with ``<wbr>`` after ``/``, ``::``, ``.`` and ``_`` inside long
    tokens (a test id, a path), so a table cell wraps there instead of widening the table past
    the page (GitHub's tables then scroll) or cutting a word in two; GitHub keeps ``<wbr>``.
    In Markdown such an underscore is escaped first: before a tag it could close emphasis."""

    def breaks(match: re.Match[str]) -> str:
        mark = match.group(0)
        return ("\\_" if markdown and mark == "_" else mark) + "<wbr>"

    return _LONG_TOKEN.sub(lambda m: _BREAK_AFTER.sub(breaks, m.group(0)), escaped)

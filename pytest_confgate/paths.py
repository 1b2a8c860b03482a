"""Repository paths as the gate compares them: normalized POSIX paths and globs.

A leaf module (no imports from the rest of the package): git changes, risk rules, waivers and
per-path floors all match paths the same way. Globs: ``**`` spans directories (``**/x.py``
also matches ``x.py``), ``*`` and ``?`` never cross ``/``, a pattern must match the whole path.

A file name that is not UTF-8 (``bad\xffname.py``) is held as the OS hands it over, with
surrogate escapes, so it still opens the file; ``printable`` spells it for people and for
every report format, which must hold valid Unicode.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def normalize_path(path: str) -> str:
    """One spelling per path: ``/`` separators, no ``.``/empty parts, ``..`` folded in.

    Lexical only; symlinks are resolved where the disk is (``collect.changes``). A leading
    ``/`` and leading ``..`` parts are kept: they name places outside the repository and must
    not collapse into it. ``""`` stands for the repository root itself.
    """
    absolute = path.startswith(("/", "\\"))
    parts: list[str] = []
    for part in path.replace("\\", "/").split("/"):
        if part in ("", "."):
            continue
        if part == ".." and parts and parts[-1] != "..":
            parts.pop()
        elif not (part == ".." and absolute):  # "/.." is "/"
            parts.append(part)
    joined = "/".join(parts)
    return "/" + joined if absolute else joined


def glob_match(pattern: str, path: str) -> bool:
    """Whether normalized ``path`` matches ``pattern`` exactly (case-sensitive)."""
    return _glob_regex(pattern).fullmatch(normalize_path(path)) is not None


@lru_cache(maxsize=2048)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    # A leading "/" anchors at the repository root, where every pattern is anchored anyway.
    segments = normalize_path(pattern).lstrip("/").split("/")
    regex, previous = "", ""
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            if previous != "**":  # a/**/**/b is a/**/b, without the backtracking
                regex += ".+" if last else "(?:[^/]+/)*"
            elif last:
                regex += ".+"
        else:
            regex += _segment_regex(segment) + ("" if last else "/")
        previous = segment
    try:
        return re.compile(regex)
    except re.error:  # e.g. a reversed range [z-a]: match the text literally, never crash
        return re.compile(re.escape(normalize_path(pattern)))


def _segment_regex(segment: str) -> str:
    out, i = "", 0
    while i < len(segment):
        char = segment[i]
        if char == "*":
            out += "[^/]*"
            while i + 1 < len(segment) and segment[i + 1] == "*":
                i += 1
        elif char == "?":
            out += "[^/]"
        elif char == "[" and (end := _class_end(segment, i)) > 0:
            body = segment[i + 1 : end]
            negate = body[:1] in ("!", "^")
            members = "".join(c if c == "-" else re.escape(c) for c in body[negate:])
            out += f"[^/{members}]" if negate else f"[{members}]"
            i = end
        else:
            out += re.escape(char)
        i += 1
    return out


def _class_end(segment: str, start: int) -> int:
    j = start + 1
    if j < len(segment) and segment[j] in "!^":
        j += 1
    if j < len(segment) and segment[j] == "]":  # a leading ] is a member, as in fnmatch
        j += 1
    end = segment.find("]", j)
    return end  # -1: no closing bracket, so "[" is literal


def printable(text: str) -> str:
    r"""``text`` without lone surrogates: an undecodable byte of a file name (``os.fsdecode``'s
    ``\udcff``) is spelled ``\xff``, any other lone surrogate ``\ud800``."""
    if not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(_spelled, text)


def _spelled(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def printable_data(value: Any) -> Any:
    """``value`` (dicts, lists, tuples, strings, numbers) with every string ``printable``,
    keys included; the same object when nothing needed a change."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        items = [(printable_data(k), printable_data(v)) for k, v in value.items()]
        pairs = zip(items, value.items(), strict=True)
        return value if all(k is k0 and v is v0 for (k, v), (k0, v0) in pairs) else dict(items)
    if isinstance(value, (list, tuple)):
        cleaned = [printable_data(item) for item in value]
        if all(a is b for a, b in zip(cleaned, value, strict=True)):
            return value
        return cleaned if isinstance(value, list) else tuple(cleaned)
    return value

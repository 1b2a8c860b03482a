"""What pytest collects, as a project's settings say: a candidate must not collect less (pure).

A candidate that drops ``--doctest-modules`` (or a ``--doctest-glob``, or a ``-p`` plugin)
from ``addopts`` stops its doctests from running in its own run: nothing fails, nothing is
deleted, the judge just looks at less (issue 28). ``dropped_options`` compares the options
that widen collection in the baseline's settings with the candidate's and names each one that
is gone; ``rank.tampering`` reports them as ``collection_narrowed``. The settings are read
from the first file pytest would read (``pytest.ini``, ``.pytest.ini``, ``pyproject.toml``,
``tox.ini``, ``setup.cfg``); a file that does not parse counts as holding no option, so a
candidate breaking it is a narrowing too.
"""

from __future__ import annotations

import configparser
import shlex
from collections.abc import Mapping

from pytest_confgate.config.textfile import tomllib
from pytest_confgate.rank.models import Issue

COLLECTION_NARROWED = "collection_narrowed"
_SECTIONS = {"pytest.ini": "pytest", ".pytest.ini": "pytest", "tox.ini": "pytest",
             "setup.cfg": "tool:pytest"}
_ORDER = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
_WIDENING = ("--doctest-modules", "--doctest-glob", "-p")


SETTINGS_FILES = _ORDER


def settings_file(files: Mapping[str, str]) -> str | None:
    """The root file pytest takes its settings from, or None."""
    for name in _ORDER:
        text = files.get(name)
        if text is None:
            continue
        if name in (".pytest.ini", "pytest.ini"):
            return name
        if name == "pyproject.toml" and ("[tool.pytest.ini_options]" in text
                                         or "[tool.pytest]" in text):
            return name
        if name in _SECTIONS and f"[{_SECTIONS[name]}]" in text:
            return name
    return None


def addopts(files: Mapping[str, str]) -> list[str]:
    """The ``addopts`` words of the settings file ([] without one, or when it does not parse)."""
    name = settings_file(files)
    if name is None:
        return []
    text = files[name]
    try:
        if name == "pyproject.toml":
            table = tomllib.loads(text).get("tool", {}).get("pytest", {})
            options = table.get("ini_options", table)
            raw = options.get("addopts", "")
            return list(raw) if isinstance(raw, list) else shlex.split(str(raw))
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string(text)
        return shlex.split(parser.get(_SECTIONS[name], "addopts", fallback=""))
    except (ValueError, configparser.Error, AttributeError):
        return []


def widening_options(words: list[str]) -> set[str]:
    """``--doctest-modules``, ``--doctest-glob=PATTERN`` and ``-p PLUGIN`` among ``words``."""
    found: set[str] = set()
    for index, word in enumerate(words):
        name, _, value = word.partition("=")
        if name == "--doctest-modules":
            found.add(name)
        elif name in _WIDENING:
            following = words[index + 1] if index + 1 < len(words) else ""
            value = value or following
            if name == "-p" and value.startswith("no:"):
                continue
            found.add(f"{name} {value}")
        elif word.startswith("-p") and len(word) > 2 and not word[2:].startswith("no:"):
            found.add(f"-p {word[2:]}")
    return found


def dropped_options(baseline: Mapping[str, str], candidate: Mapping[str, str]) -> list[Issue]:
    """A ``collection_narrowed`` finding per collection option the candidate no longer has."""
    before = widening_options(addopts(baseline))
    after = widening_options(addopts(candidate))
    where = settings_file(candidate) or settings_file(baseline) or "pytest settings"
    return [
        Issue(COLLECTION_NARROWED, where,
              f"`{option}` was dropped from addopts: pytest collects less than the baseline "
              "collects (the regression suite runs with the baseline's settings)")
        for option in sorted(before - after)
    ]

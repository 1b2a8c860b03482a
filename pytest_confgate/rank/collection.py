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

from collections.abc import Mapping

from pytest_confgate.collect.pytest_settings import SETTINGS_FILES, addopts, settings_file
from pytest_confgate.rank.models import Issue

__all__ = ["COLLECTION_NARROWED", "SETTINGS_FILES", "addopts", "dropped_options", "settings_file",
           "widening_options"]

COLLECTION_NARROWED = "collection_narrowed"
_WIDENING = ("--doctest-modules", "--doctest-glob", "-p")


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

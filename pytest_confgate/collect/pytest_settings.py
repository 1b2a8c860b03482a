"""pytest's own options for a run, read from its settings file and command line (pure).

What pytest will be told, worked out without running pytest: ``confgate gate`` needs it before
the test process starts, because a value read back from that process is a value the change's
code could have set (a fixture that lowers ``config.option.cov_fail_under`` would lower the
coverage floor). ``rank`` reads the baseline's and a candidate's ``addopts`` the same way.

pytest puts its words together as: the settings file's ``addopts``, then ``PYTEST_ADDOPTS``,
then the command line; for an option given twice, the last one counts.
"""

from __future__ import annotations

import configparser
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_confgate.config.textfile import tomllib

SETTINGS_FILES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
"""The root files pytest may take its settings from, in the order it looks."""
_SECTIONS = {"pytest.ini": "pytest", ".pytest.ini": "pytest", "tox.ini": "pytest",
             "setup.cfg": "tool:pytest"}


def settings_file(files: Mapping[str, str]) -> str | None:
    """The root file pytest takes its settings from, or None."""
    for name in SETTINGS_FILES:
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


def run_words(files: Mapping[str, str], environ: Mapping[str, str],
              args: Sequence[str]) -> list[str]:
    """Every word pytest parses, in its order: ``addopts``, ``PYTEST_ADDOPTS``, the command line."""
    try:
        from_env = shlex.split(environ.get("PYTEST_ADDOPTS", ""))
    except ValueError:
        from_env = []
    return [*addopts(files), *from_env, *args]


@dataclass(frozen=True)
class PytestCov:
    """What pytest-cov is told to measure, as it parses its options (``--cov`` is argparse's
    ``append`` with an optional value: ``--cov SRC`` takes ``SRC`` unless it starts with ``-``)."""

    sources: tuple[str, ...] | None
    """``--cov=SRC`` values, or None when a ``--cov`` was bare (coverage.py's selection)."""
    branch: bool
    """``--cov-branch``: branches measured whatever coverage.py's configuration says."""
    config: str | None
    """``--cov-config``: the coverage.py configuration file (None: coverage.py's own search)."""


def pytest_cov(words: Sequence[str]) -> PytestCov | None:
    """pytest-cov's measurement among ``words``, or None when it does not measure the run (no
    ``--cov``, or a ``--no-cov``)."""
    sources: list[str] = []
    bare = branch = disabled = False
    config: str | None = None
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            break
        name, equals, value = word.partition("=")
        if name == "--no-cov":
            disabled = True
        elif name == "--cov-reset":
            sources, bare = [], False
        elif name == "--cov-branch":
            branch = True
        elif name == "--cov-config":
            if not equals and index < len(words):
                value, index = words[index], index + 1
            config = value
        elif name == "--cov":
            if not equals and index < len(words) and not words[index].startswith("-"):
                value, equals, index = words[index], "=", index + 1
            if equals:
                sources.append(value)
            else:
                bare = True
    if disabled or not (sources or bare):
        return None
    # pytest-cov's own rule: one bare ``--cov`` among named ones leaves the choice to coverage.py.
    return PytestCov(sources=None if bare else tuple(sources), branch=branch,
                     config=None if config in (None, ".coveragerc") else config)


def no_cov(words: Sequence[str]) -> bool:
    """Whether ``--no-cov`` is among ``words``: pytest-cov off, its floor with it."""
    return "--no-cov" in _options(words)


def _options(words: Sequence[str]) -> list[str]:
    """``words`` up to a ``--`` (what follows is positional)."""
    return list(words[:words.index("--")]) if "--" in words else list(words)


def cov_fail_under(words: Sequence[str]) -> float | None:
    """pytest-cov's ``--cov-fail-under`` among ``words`` (the last one), or None.

    A value pytest-cov would refuse is None too: pytest then stops before any test runs."""
    found: str | None = None
    for index, word in enumerate(words):
        if word == "--":
            break
        name, equals, value = word.partition("=")
        if name != "--cov-fail-under":
            continue
        if not equals:
            value = words[index + 1] if index + 1 < len(words) else ""
        found = value
    try:
        return float(found) if found is not None else None
    except ValueError:
        return None

"""The gate's own machinery (issue 14): files whose edit changes how evidence is made.

A ``conftest.py`` runs inside the gate's process; pytest's, coverage.py's, ruff's and bandit's
configuration decides what is run, measured and reported; a workflow decides whether the gate
runs at all. A change to any of them is judged like a change to confgate's own configuration:
at tier T2 or higher, with a reason naming the file (and section). Files that mix machinery
with project data (``pyproject.toml``, ``setup.cfg``, ``tox.ini``) count only when a
machinery section differs: a new dependency under ``[project]`` is not machinery.

Pure: the caller (``gate.change``) reads the base and head texts. A text that cannot be parsed
counts as changed everywhere: the safe side of not knowing.
"""

from __future__ import annotations

import configparser
import fnmatch
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_confgate.config.textfile import tomllib
from pytest_confgate.paths import glob_match, normalize_path

MACHINERY_FILES = (
    "**/conftest.py",
    "**/pytest.ini",
    "**/.pytest.ini",
    "**/pytest.toml",
    "**/.pytest.toml",
    "**/.coveragerc",
    "**/ruff.toml",
    "**/.ruff.toml",
    "**/.bandit",
    ".github/workflows/**",
    ".github/actions/**",
    "**/.confgate/**",
)
"""Whole files that are machinery, wherever they are (ruff and pytest read nested ones too).

``.confgate/`` is the gate's own state (caches keyed by content): a change that commits
anything there is trying to hand the gate its evidence."""

TOML_SECTIONS = (
    "tool.pytest",
    "tool.coverage",
    "tool.ruff",
    "tool.bandit",
    "tool.tox",
    "project.entry-points.pytest11",
)
"""Dotted tables of ``pyproject.toml`` that are machinery (with every table below them)."""

INI_SECTIONS = {
    "setup.cfg": ("tool:pytest", "coverage:*", "options.entry_points"),
    "tox.ini": ("pytest", "coverage:*", "tox", "testenv", "testenv:*"),
}
"""Sections of the INI files that are machinery (``fnmatch`` patterns)."""

SECTIONED_FILES = ("pyproject.toml", *INI_SECTIONS)
"""File names whose base and head texts the caller must supply when they change."""

Texts = Mapping[str, "tuple[str | None, str | None]"]
"""Changed sectioned file -> (text at the base, text in the change); None: absent there."""


def is_sectioned(path: str) -> bool:
    """Whether ``path`` is a file whose machinery is only some of its sections."""
    return posixpath.basename(normalize_path(path)) in SECTIONED_FILES


def machinery_changes(
    changed: Iterable[str], texts: Texts, protected: Sequence[str] = ()
) -> list[str]:
    """One phrase per machinery change, sorted: ``tests/conftest.py``, ``pyproject.toml
    [tool.coverage.run]``, ``scripts/x.sh matched gate.protected_paths (scripts/**)``."""
    found: set[str] = set()
    for path in {normalize_path(p) for p in changed} - {""}:
        if any(glob_match(pattern, path) for pattern in MACHINERY_FILES):
            found.add(path)
        hit = next((p for p in protected if glob_match(p, path)), None)
        if hit is not None:
            found.add(f"{path} matched gate.protected_paths ({hit})")
    for path, (before, after) in texts.items():
        found.update(f"{path} {section}" for section in changed_sections(path, before, after))
    return sorted(found)


def changed_sections(path: str, before: str | None, after: str | None) -> list[str]:
    """The machinery sections of ``path`` that differ, as ``[name]``; ``[?]`` when unparsable."""
    name = posixpath.basename(normalize_path(path))
    if name == "pyproject.toml":
        return _toml_sections(before, after)
    if name in INI_SECTIONS:
        return _ini_sections(before, after, INI_SECTIONS[name])
    return []


def _toml_sections(before: str | None, after: str | None) -> list[str]:
    try:
        old, new = _toml(before), _toml(after)
    except (tomllib.TOMLDecodeError, ValueError):
        return ["(cannot be parsed, so every section counts)"]
    found: list[str] = []
    for dotted in TOML_SECTIONS:
        keys = dotted.split(".")
        tables = _differing_tables(keys, _table(_at(old, keys)), _table(_at(new, keys)))
        found += [f"[{'.'.join(table)}]" for table in tables]
    return sorted(set(found))


def _toml(text: str | None) -> dict[str, Any]:
    return tomllib.loads(text) if text else {}


def _at(data: Any, keys: list[str]) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _table(value: Any) -> Any:
    return {} if value is None else value  # an absent table compares as an empty one


def _differing_tables(at: list[str], old: Any, new: Any) -> list[list[str]]:
    """The deepest tables under ``at`` whose own values differ (a table's path is its name)."""
    if old == new:
        return []
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return [at]
    found: list[list[str]] = []
    own = False
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, dict) or isinstance(b, dict):
            found += _differing_tables([*at, key], _table(a), _table(b))
        else:
            own = True
    return [at, *found] if own else found


def _ini_sections(before: str | None, after: str | None, patterns: Sequence[str]) -> list[str]:
    try:
        old, new = _ini(before), _ini(after)
    except configparser.Error:
        return ["(cannot be parsed, so every section counts)"]
    names = {s for s in set(old) | set(new) if any(fnmatch.fnmatchcase(s, p) for p in patterns)}
    return sorted(f"[{s}]" for s in names if old.get(s) != new.get(s))


def _ini(text: str | None) -> dict[str, dict[str, str]]:
    parser = configparser.RawConfigParser(strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys as written
    parser.read_string(text or "")
    return {name: dict(parser.items(name)) for name in parser.sections()}

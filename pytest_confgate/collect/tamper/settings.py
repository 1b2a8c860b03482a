"""Tool configuration that hides findings or tests, compared base vs head (issue 15).

A change can silence a tool without touching a line of code: a new per-file ignore, an
exclude, a coverage ``omit``, a bandit ``skips`` entry, a rule dropped from ``select``; or keep
tests from running: ``--deselect``/``-k``/``-m``/``--ignore`` in ``addopts``, narrower
``python_files``/``python_functions``/``testpaths``, wider ``norecursedirs``. Each setting is
read into entries (``tests/**: S101``) on both sides and the entries that widen what is hidden
are reported. The formats: ``pyproject.toml``, ``ruff.toml``/``.ruff.toml``, ``setup.cfg``,
``tox.ini``, ``.flake8``, ``.coveragerc``, ``.bandit``, ``pytest.ini``/``.pytest.ini``,
``mypy.ini``. The same reading gives pytest's collection settings. Pure.
"""

from __future__ import annotations

import configparser
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_confgate.collect.tamper.shapes import DEFAULT_NORECURSE, Collection
from pytest_confgate.config.textfile import tomllib

CONFIG_NAMES = frozenset(
    {
        "pyproject.toml", "ruff.toml", ".ruff.toml", "setup.cfg", "tox.ini", ".flake8",
        ".coveragerc", ".bandit", "pytest.ini", ".pytest.ini", "mypy.ini",
    }
)
PYTEST_FILES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
"""Where pytest looks for its settings in the rootdir, in its order."""

_LINT_KEYS = ("exclude", "extend-exclude", "per-file-ignores", "extend-per-file-ignores",
              "ignore", "extend-ignore")
_NARROWED = {"select", "extend-select"}
_WATCHED: dict[str, tuple[str, ...]] = {
    "ruff": (*_LINT_KEYS, *_NARROWED),
    "ruff.lint": (*_LINT_KEYS, *_NARROWED),
    "flake8": (*_LINT_KEYS, *_NARROWED),
    "coverage.run": ("omit",),
    "coverage.report": ("omit", "exclude-lines", "exclude-also"),
    "bandit": ("skips", "exclude", "exclude-dirs", "tests"),
    "mypy": ("exclude", "disable-error-code", "ignore-errors"),
    "pytest": ("addopts", "python-files", "python-classes", "python-functions", "testpaths",
               "norecursedirs"),
}
# Settings whose *removed* entries hide something (the rest hide by added entries).
_HIDE_BY_REMOVAL = {"select", "extend-select", "tests", "python-files", "python-classes",
                    "python-functions", "testpaths"}
_INI_SECTIONS = {
    "setup.cfg": {"flake8": "flake8", "coverage:run": "coverage.run",
                  "coverage:report": "coverage.report", "tool:pytest": "pytest", "mypy": "mypy"},
    "tox.ini": {"flake8": "flake8", "coverage:run": "coverage.run",
                "coverage:report": "coverage.report", "pytest": "pytest"},
    ".flake8": {"flake8": "flake8"},
    ".coveragerc": {"run": "coverage.run", "report": "coverage.report"},
    ".bandit": {"bandit": "bandit"},
    "pytest.ini": {"pytest": "pytest"},
    ".pytest.ini": {"pytest": "pytest"},
    "mypy.ini": {"mypy": "mypy"},
}
_VALUED_OPTIONS = {"--deselect", "-k", "-m", "--ignore", "--ignore-glob", "-p", "-c",
                   "--rootdir", "--confcutdir"}
_NARROWING_OPTIONS = {"--deselect", "-k", "-m", "--ignore", "--ignore-glob", "--lf",
                      "--last-failed", "--sw", "--stepwise"}

_REGEX_LISTS = {"exclude-lines", "exclude-also"}
_PYTEST_ARGS = {"python-files", "python-classes", "python-functions", "testpaths", "norecursedirs"}
_PYTEST_DEFAULTS = {
    "python-files": Collection().files,
    "python-classes": Collection().classes,
    "python-functions": Collection().functions,
}
Settings = dict[str, list[str]]
"""``"ruff.lint.per-file-ignores"`` -> its entries, for the watched settings only."""


@dataclass(frozen=True)
class ConfigChange:
    """One entry that now hides findings or tests."""

    rule: str
    setting: str
    entry: str
    line: int
    text: str
    message: str
    removed: bool = False
    """The entry was removed (``select``, ``testpaths``), not added."""


def config_changes(path: str, base: str | None, head: str | None) -> list[ConfigChange]:
    """What ``head`` hides that ``base`` did not, for the config file at ``path``."""
    if head is None:
        return []
    name = path.rsplit("/", 1)[-1]
    old, new = read_settings(name, base or ""), read_settings(name, head)
    if "/" in path:  # pytest reads its settings only from the rootdir
        old, new = _without_pytest(old), _without_pytest(new)
    changes: list[ConfigChange] = []
    for setting in sorted(set(old) | set(new)):
        key = setting.rsplit(".", 1)[-1]
        hidden, removed = _hidden(key, old.get(setting, []), new.get(setting))
        changes += [_change(path, setting, entry, head, removed) for entry in hidden]
    return changes


def _without_pytest(settings: Settings) -> Settings:
    return {key: value for key, value in settings.items() if not key.startswith("pytest.")}


def _hidden(key: str, before: list[str], after: list[str] | None) -> tuple[list[str], bool]:
    """The entries that hide more than before, and whether they were removed (or added)."""
    before = before or list(_PYTEST_DEFAULTS.get(key, ()))
    now = after or list(_PYTEST_DEFAULTS.get(key, ()))
    if key == "addopts":
        added = [e for e in now if e not in before and e.split()[0] in _NARROWING_OPTIONS]
        return added, False
    if key == "testpaths":
        if not now:
            return [], False  # no testpaths: pytest searches everywhere
        if not before:
            return list(now), False
        return [e for e in before if e not in now], True
    if key in _HIDE_BY_REMOVAL:
        return [e for e in before if e not in now], True
    return [e for e in now if e not in before], False


def _change(path: str, setting: str, entry: str, head: str, removed: bool) -> ConfigChange:
    pytest_setting = setting.startswith("pytest.")
    rule = "collection_narrowed" if pytest_setting else "tool_ignore_added"
    line = _line_of(head, setting.rsplit(".", 1)[-1], entry, removed=removed)
    verb = "no longer has" if removed else "adds"
    what = "so fewer tests run" if pytest_setting else "so the tool reports less"
    text = head.split("\n")[line - 1].strip() if 0 < line <= head.count("\n") + 1 else ""
    message = f"{setting} {verb} `{entry}` ({what})"
    return ConfigChange(rule, setting, entry, line, text, message, removed)


def read_settings(name: str, text: str) -> Settings:
    """The watched settings of config file ``name``; an unreadable file has none."""
    if name.endswith(".toml"):
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return {}
        if name == "pyproject.toml":
            tool = data.get("tool", {})
            tables = {
                "ruff": _get(tool, "ruff"), "ruff.lint": _get(tool, "ruff", "lint"),
                "coverage.run": _get(tool, "coverage", "run"),
                "coverage.report": _get(tool, "coverage", "report"),
                "bandit": _get(tool, "bandit"), "mypy": _get(tool, "mypy"),
                "pytest": _get(tool, "pytest", "ini_options"),
            }
        else:
            tables = {"ruff": data, "ruff.lint": _get(data, "lint")}
        return _settings(tables, ini=False)
    sections = _INI_SECTIONS.get(name)
    if sections is None:
        return {}
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return {}
    tables = {label: dict(parser[s]) for s, label in sections.items() if parser.has_section(s)}
    return _settings(tables, ini=True)


def _get(data: Any, *keys: str) -> dict[str, Any]:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def _settings(tables: Mapping[str, Mapping[str, Any]], *, ini: bool) -> Settings:
    settings: Settings = {}
    for label, table in tables.items():
        watched = _WATCHED[label]
        for raw_key, value in table.items():
            key = raw_key.replace("_", "-")
            if key in watched:
                settings[f"{label}.{key}"] = _entries(key, value, ini)
        if label == "mypy":
            settings.update(_mypy_overrides(table.get("overrides")))
    return settings


def _entries(key: str, value: Any, ini: bool) -> list[str]:
    if key == "addopts":
        return _option_units(value)
    if isinstance(value, dict):
        return [f"{glob}: {code}" for glob, codes in value.items() for code in _words(codes)]
    if isinstance(value, bool):
        return [str(value).lower()]
    if ini and "per-file-ignores" in key:
        pairs = [line.split(":", 1) for line in str(value).splitlines() if ":" in line]
        return [f"{glob.strip()}: {code}" for glob, codes in pairs for code in _words(codes)]
    if ini and key == "ignore-errors":
        return [str(value).strip().lower()]
    if key in _REGEX_LISTS:
        return _words(value, separators="")  # one regex a line; commas and spaces are its own
    return _words(value, separators=" " if key in _PYTEST_ARGS else ", ")


def _words(value: Any, separators: str = ", ") -> list[str]:
    """A list, or an INI string split at newlines and ``separators``."""
    if isinstance(value, list | tuple):
        return [str(item).strip() for item in value if str(item).strip()]
    text = str(value)
    for separator in separators:
        text = text.replace(separator, "\n")
    return [word.strip() for word in text.splitlines() if word.strip()]


def _option_units(value: Any) -> list[str]:
    """``["-m", "not slow"]`` or ``"-m 'not slow' --deselect x"`` -> ``["-m not slow", ...]``."""
    try:
        tokens = [str(t) for t in value] if isinstance(value, list) else shlex.split(str(value))
    except ValueError:
        tokens = str(value).split()
    units: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        option, equals, attached = token.partition("=")
        if equals and option in _VALUED_OPTIONS:
            units.append(f"{option} {attached}")
        elif token in _VALUED_OPTIONS and index + 1 < len(tokens):
            units.append(f"{token} {tokens[index + 1]}")
            index += 1
        elif token[:2] in ("-k", "-m", "-p") and len(token) > 2 and not token.startswith("--"):
            units.append(f"{token[:2]} {token[2:]}")
        else:
            units.append(token)
        index += 1
    return units


def _mypy_overrides(overrides: Any) -> Settings:
    found: list[str] = []
    for table in overrides if isinstance(overrides, list) else []:
        if not isinstance(table, dict):
            continue
        module = table.get("module")
        modules = ",".join(module) if isinstance(module, list) else str(module)
        if table.get("ignore_errors") is True:
            found.append(f"{modules}: ignore_errors")
        found += [f"{modules}: {code}" for code in _words(table.get("disable_error_code", []))]
    return {"mypy.overrides": found} if found else {}


def _line_of(text: str, key: str, entry: str, *, removed: bool) -> int:
    """The head line that most likely holds ``entry`` of ``key`` (1 when nothing matches)."""
    lines = text.split("\n")
    spellings = {key, key.replace("-", "_")}
    start = next((i for i, line in enumerate(lines) if any(s in line for s in spellings)), 0)
    if removed:
        return start + 1  # the entry is gone: point at its setting
    needles = entry.split(": ", 1) if ": " in entry else entry.split(" ", 1)
    if key == "overrides":
        needles = [entry.split(": ")[-1]]
    position = start
    for needle in needles:
        hit = next((i for i in range(position, len(lines)) if needle in lines[i]), None)
        if hit is None:
            break
        position = hit
    return position + 1


def collection_of(texts: Mapping[str, str | None]) -> Collection:
    """pytest's collection settings from the rootdir's config files (``PYTEST_FILES``)."""
    for name in PYTEST_FILES:
        text = texts.get(name)
        if text is None:
            continue
        settings = {k.rsplit(".", 1)[-1]: v for k, v in read_settings(name, text).items()
                    if k.startswith("pytest.")}
        if name in ("pyproject.toml", "tox.ini", "setup.cfg") and not _has_pytest(name, text):
            continue
        defaults = Collection()
        return Collection(
            files=tuple(settings.get("python-files") or defaults.files),
            classes=tuple(settings.get("python-classes") or defaults.classes),
            functions=tuple(settings.get("python-functions") or defaults.functions),
            testpaths=tuple(settings.get("testpaths") or ()),
            norecurse=tuple(settings.get("norecursedirs") or DEFAULT_NORECURSE),
        )
    return Collection()


def _has_pytest(name: str, text: str) -> bool:
    if name == "pyproject.toml":
        try:
            return bool(_get(tomllib.loads(text), "tool", "pytest", "ini_options"))
        except tomllib.TOMLDecodeError:
            return False
    section = "[pytest]" if name == "tox.ini" else "[tool:pytest]"
    return any(line.strip() == section for line in text.splitlines())

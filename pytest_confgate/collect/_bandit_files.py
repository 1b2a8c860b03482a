"""Which files ``bandit -r PATHS`` scans, found without starting bandit.

The content cache must know the files before deciding whether bandit runs at all, and bandit's
Python start-up is its whole cost on a warm run. This mirrors bandit 1.x's own discovery
(``cli.main`` + ``core.manager.discover_files``), quirks included: include globs are
``*.py``/``*.pyw`` without a config file but only ``*.py`` (or the config's ``include``) with
one; excluded paths match by ``fnmatch`` *or substring*, and a default exclusion naming a
directory that exists in the cwd becomes ``dir/*``. Paths are spelled as bandit spells them so
that, passed back explicitly, they meet the same exclusion checks. A configuration this does
not model gives None and the collector scans without the cache.
"""

from __future__ import annotations

import configparser
import fnmatch
import os
from pathlib import Path
from typing import Any

from pytest_confgate.config.textfile import tomllib

# bandit.core.constants.EXCLUDE (a test keeps them equal): importing bandit costs its start-up.
BANDIT_DEFAULT_EXCLUDE = (
    *(".svn", "CVS", ".bzr", ".hg", ".git", "__pycache__", ".tox", ".eggs", "*.egg"),
)


def bandit_targets(root: Path, paths: list[Path], config_args: list[str]) -> list[str] | None:
    """The files bandit would scan for ``bandit CONFIG_ARGS -r PATHS`` run in ``root``.

    None when bandit would read settings this does not model (a ``.bandit`` found inside the
    scanned folders, an ini ``configfile``, a malformed ``include``/``exclude_dirs``).
    """
    globs = _config_globs(root, "-c" in config_args)
    ini = _ini_options(root / ".bandit") if "--ini" in config_args else {}
    if globs is None or ini is None or ("configfile" in ini and "-c" not in config_args):
        return None
    include, excluded = globs
    cli_excluded = ini.get("exclude") or ",".join(BANDIT_DEFAULT_EXCLUDE)
    excluded = [*excluded, *_cli_excludes(root, cli_excluded)]
    found: set[str] = set()
    for path in paths:
        target = os.fspath(path)
        full = os.path.join(root, target)
        if not os.path.isdir(full):
            if _included(target, include, excluded, enforce_glob=False):
                found.add(os.path.join(".", target))
            continue
        for dirpath, _, filenames in os.walk(full):
            if ".bandit" in filenames and "--ini" not in config_args:
                return None  # bandit would pick this ini up by itself
            spelled = target + dirpath[len(full) :]
            for filename in filenames:
                candidate = os.path.join(spelled, filename)
                if _included(candidate, include, excluded, enforce_glob=True):
                    found.add(candidate)
    return sorted(found)


def _config_globs(root: Path, with_config: bool) -> tuple[list[str], list[str]] | None:
    if not with_config:
        return ["*.py", "*.pyw"], []
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    tool: Any = data.get("tool", {})
    table: Any = tool.get("bandit", {}) if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        return None
    include = table.get("include") or ["*.py"]
    exclude_dirs = table.get("exclude_dirs") or []
    if not (_strings(include) and _strings(exclude_dirs)):
        return None
    return list(include), list(exclude_dirs)


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _ini_options(path: Path) -> dict[str, str] | None:
    """bandit's ``parse_ini_file``: a broken or sectionless ini is ignored with a warning."""
    parser = configparser.ConfigParser()
    try:
        parser.read(path)
        return dict(parser.items("bandit"))
    except (configparser.Error, KeyError, TypeError):
        return {}
    except (OSError, UnicodeDecodeError):
        return None


def _cli_excludes(root: Path, excluded: str) -> list[str]:
    """``--exclude``'s value as bandit expands it: an existing directory becomes ``dir/*``."""
    spelled = []
    for path in excluded.split(","):
        if path and os.path.isdir(os.path.join(root, path)):
            path = os.path.join(path, "*")
        spelled.append(path)
    return spelled


def _included(path: str, include: list[str], excluded: list[str], *, enforce_glob: bool) -> bool:
    if enforce_glob and not any(fnmatch.fnmatch(path, glob) for glob in include):
        return False
    return not any(fnmatch.fnmatch(path, glob) or glob in path for glob in excluded)

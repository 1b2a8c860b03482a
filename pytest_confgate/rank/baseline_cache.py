"""The baseline's evidence, kept by content: agent workflows rank against the same base again.

A ranking round re-evaluates the baseline only to learn its lint findings, test count and
coverage; those depend on nothing but its files, how trees are evaluated and the tools. The key
hashes every file of the checked-out tree (bytes, or a link's target), the settings, this
package's version and the Python running it, so any change there is a miss. Only complete
evidence (it built and its tests, lint and security ran) is kept; a damaged entry is a miss.

Beside the evidence, ``<key>.tools`` keeps the baseline run's own per-file caches (the gate's
``.confgate/cache``; ruff and bandit no longer run in a gate run of rank's, ``lint_copy``).
Every candidate's tree starts with a private copy (``seed_tools``), so the files a candidate
did not change are not analysed again (issue 28: work repeated per candidate). Only the baseline's
run writes it: a candidate's tests could write into their own copy, never into another
candidate's. The line probes' compiled code is not kept: it is keyed by the file's absolute
path too (the path is in the code object), and no candidate's tree is where the baseline's was.
coverage.py's analysis of each file (``probes/analysis``) is keyed by content alone and kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from pytest_confgate.collect.coverage.analysis import ANALYSES
from pytest_confgate.rank.candidates import IGNORED_NAMES
from pytest_confgate.rank.evaluate import Settings
from pytest_confgate.rank.models import Evidence
from pytest_confgate.rank.trees import RANK_STATE
from pytest_confgate.report.json_report import write_text_atomic

_EVIDENCE = TypeAdapter(Evidence)
_FORMAT = 2  # 2: outcomes by test id (the regression suite compares them)


def baseline_key(tree: Path, settings: Settings) -> str:
    """sha256 over the tree's files and everything else the evidence depends on."""
    digest = hashlib.sha256()
    for folder, dirs, names in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_NAMES and d != RANK_STATE)
        for name in sorted(names):
            path = Path(folder, name)
            if name.endswith((".pyc", ".pyo")):
                continue
            data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            digest.update(path.relative_to(tree).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(data).digest())
    digest.update(json.dumps(_settings(settings), sort_keys=True).encode())
    return digest.hexdigest()


def _settings(settings: Settings) -> dict[str, object]:
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("pytest-confgate")
    except PackageNotFoundError:
        ours = "0+unknown"
    return {
        "format": _FORMAT,
        "confgate": ours,
        "python": sys.version,
        "test_command": list(settings.test_command),
        "interpreter": settings.python,
        "type_check": settings.type_check,
        "timeouts": settings.timeouts.model_dump(),
        "sources": list(settings.sources) if settings.sources else None,
    }


TOOL_CACHE = Path(".confgate") / "cache"
"""Where the gate keeps its per-file caches, in the tree it runs in."""


def save_tools(folder: Path, key: str, tree: Path) -> bool:
    """Keep the baseline run's per-file caches under ``<key>.tools``; True when kept."""
    source = tree / TOOL_CACHE
    if not source.is_dir():
        return False
    target = folder / f"{key}.tools"
    try:
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target, symlinks=False, ignore=_path_bound(source))
    except (OSError, shutil.Error):
        shutil.rmtree(target, ignore_errors=True)  # half a cache is only a slower next run
        return False
    return True


def _path_bound(root: Path) -> Callable[[str, list[str]], set[str]]:
    """Leave out the probes' compiled code under ``root``: its entries hold only where they
    were made. coverage.py's analyses beside it are keyed by content alone, and travel."""
    probes = root / PROBES
    return lambda folder, names: set(names) - {ANALYSES} if Path(folder) == probes else set()


PROBES = "probes"


def seed_tools(folder: Path | None, key: str | None, tree: Path) -> bool:
    """Give ``tree`` a private copy of the baseline's per-file caches; True when seeded."""
    if folder is None or key is None:
        return False
    source = folder / f"{key}.tools"
    if not source.is_dir():
        return False
    try:
        shutil.copytree(source, tree / TOOL_CACHE, symlinks=False, dirs_exist_ok=True,
                        ignore=_path_bound(source))  # kept by an earlier version
    except (OSError, shutil.Error):
        return False
    return True


def load_baseline(folder: Path, key: str) -> Evidence | None:
    """The evidence stored under ``key``, or None (missing, unreadable or from another model)."""
    try:
        return _EVIDENCE.validate_json((folder / f"{key}.json").read_bytes())
    except (OSError, ValueError, ValidationError):
        return None


def save_baseline(folder: Path, key: str, evidence: Evidence) -> bool:
    """Keep complete evidence; True when it was written (a full disk only costs the cache)."""
    complete = (
        evidence.builds
        and evidence.tests is not None
        and evidence.lint is not None
        and evidence.security is not None
    )
    if not complete:
        return False
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_text_atomic(_EVIDENCE.dump_json(evidence).decode(), folder / f"{key}.json")
    except OSError:
        return False
    return True

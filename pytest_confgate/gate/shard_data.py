"""The coverage.py data files of CI shards (``confgate merge --coverage``), checked first.

A shard's data file that is missing, empty, not a coverage.py database or holds no measured
file is refused by name: merged silently, any of them would shrink the covered lines (a
0-byte shard once merged into a PASS). coverage.py writes its tables into an empty or foreign
file it opens, so it only ever opens a private copy: the inputs are never changed.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_confgate.exceptions import EvidenceError


def read_coverage_data(paths: Sequence[str]) -> dict[str, bytes]:
    """coverage.py data files serialized as the xdist path expects them, or one
    ``EvidenceError`` naming every bad file."""
    parts: dict[str, bytes] = {}
    problems: list[str] = []
    for name in paths:
        data, problem = _coverage_shard(name)
        if problem is not None:
            problems.append(f"--coverage {name}: {problem}")
        elif data is not None:
            parts[name] = data
    if problems:
        raise EvidenceError("\n".join(problems))
    return parts


_SQLITE_HEADER = b"SQLite format 3\x00"
_SHARD_ADVICE = "pass the .coverage file the shard's test run wrote (pytest --cov, coverage run)"


def _coverage_shard(name: str) -> tuple[bytes | None, str | None]:
    """One shard's serialized data, or what is wrong with it."""
    path = Path(name)
    try:
        if not path.is_file():
            return None, "no such file; pass each shard's .coverage file"
        with path.open("rb") as handle:
            header = handle.read(len(_SQLITE_HEADER))
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror}); check the path"
    if not header:
        return None, f"not coverage.py data: the file is empty (0 bytes); {_SHARD_ADVICE}"
    if header != _SQLITE_HEADER:
        return None, f"not coverage.py data: not an SQLite database; {_SHARD_ADVICE}"
    return _read_copy(path)


def _read_copy(path: Path) -> tuple[bytes | None, str | None]:
    from coverage import CoverageData

    with tempfile.TemporaryDirectory(prefix="confgate-merge-") as folder:
        copy = Path(folder) / ".coverage"
        try:
            shutil.copyfile(path, copy)
            data = _coverage_data(CoverageData, copy)
            data.read()
            measured = data.measured_files()
            serialized: bytes = data.dumps()
        except OSError as exc:
            return None, f"cannot be read ({exc.strerror}); check the path"
        except Exception as exc:  # coverage.py raises its own plain exceptions for bad files
            why = str(exc).replace(str(copy), str(path))
            return None, f"not coverage.py data ({why}); {_SHARD_ADVICE}"
    if not measured:
        return None, (
            "holds no measured file: coverage.py recorded nothing in this shard (its tests "
            "never ran the measured code, or the data was erased); re-run the shard with "
            "coverage on"
        )
    return serialized, None


def _coverage_data(factory: Any, path: Path) -> Any:
    """Read-only where coverage.py offers it: a foreign database is then refused as such
    instead of being given coverage.py's tables (and read as "no measured file")."""
    try:
        return factory(basename=str(path), read_only=True)
    except TypeError:
        return factory(basename=str(path))

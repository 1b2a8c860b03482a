"""Decide what coverage, ruff and bandit measure when ``source:`` is not configured.

Looks at the project the way a newcomer would: a ``src/`` layout, then top-level packages,
then top-level modules; tests, docs, examples and build output are never "the source".
"""

from __future__ import annotations

from pathlib import Path

from pytest_confgate.exceptions import ConfigError
from pytest_confgate.paths import printable

_NOT_SOURCE = {
    "test",
    "tests",
    "testing",
    "doc",
    "docs",
    "example",
    "examples",
    "benchmarks",
    "bench",
    "build",
    "dist",
    "site-packages",
    "node_modules",
    "venv",
    "env",
    "scripts",
    "tools",
}
_NOT_SOURCE_FILES = {"setup.py", "conftest.py", "noxfile.py", "tasks.py", "fabfile.py"}


def resolve_sources(root: Path, configured: list[str] | None) -> list[Path]:
    """The directories and files to measure, absolute; configured paths must exist."""
    if configured is not None:
        paths = [(root / entry).resolve() for entry in configured]
        pairs = zip(configured, paths, strict=True)
        missing = [entry for entry, path in pairs if not path.exists()]
        if missing:
            raise ConfigError(
                f"source: {', '.join(missing)} does not exist under {root}; "
                "list the directories of the code you want measured"
            )
        return paths
    return detect_sources(root)


def detect_sources(root: Path) -> list[Path]:
    """Best guess of the project's own code; empty when there is none to find."""
    src = root / "src"
    if src.is_dir():
        found = _packages_and_modules(src)
        if found:
            return found
    return _packages_and_modules(root)


def _packages_and_modules(folder: Path) -> list[Path]:
    found = []
    for entry in sorted(folder.iterdir()):
        name = entry.name
        if name.startswith((".", "_")) or name in _NOT_SOURCE:
            continue
        is_package = entry.is_dir() and (entry / "__init__.py").is_file()
        is_module = entry.is_file() and entry.suffix == ".py" and not _is_test_file(name)
        if is_package or is_module:
            found.append(entry.resolve())
    return found


def _is_test_file(name: str) -> bool:
    return name in _NOT_SOURCE_FILES or name.startswith("test_") or name.endswith("_test.py")


def undecodable_names(root: Path, sources: list[Path], limit: int = 5) -> list[str]:
    """Python files under ``sources`` whose names are not UTF-8 (``bad\\xffname.py``),
    relative to ``root`` and spelled for people: tools that store names as text cannot
    record them, so the evidence names them instead of failing without a name."""
    found: list[str] = []
    for source in (root / entry for entry in sources):  # an absolute entry stays as it is
        candidates = source.rglob("*.py") if source.is_dir() else [source]
        for path in candidates:
            if not _is_utf8(str(path)):
                found.append(printable(_relative(path, root)))
                if len(found) >= limit:
                    return found
    return found


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _relative(path: Path, root: Path) -> str:
    for base in (root, root.resolve()):
        if path.is_relative_to(base):
            return path.relative_to(base).as_posix()
    return path.as_posix()

"""Decide what coverage, ruff and bandit measure when ``source:`` is not configured.

Looks at the project the way a newcomer would: a ``src/`` layout, then top-level packages,
then top-level modules; tests, docs, examples and build output are never "the source".
"""

from __future__ import annotations

from pathlib import Path

from pytest_confgate.exceptions import ConfigError

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

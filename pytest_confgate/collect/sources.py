"""Decide what coverage, ruff and bandit measure when ``source:`` is not configured.

Looks at the project the way a newcomer would: a ``src/`` layout, then top-level packages,
then top-level modules; tests, docs, examples and build output are never "the source".
Tests kept inside a package (``calc/tests/``, ``calc/test_core.py``, ``calc/conftest.py``)
are left out too: ``without_tests`` lists what ruff and bandit check, and
``tests_omit_patterns`` what coverage.py omits under the detected packages.
"""

from __future__ import annotations

import tokenize
from collections.abc import Iterable
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
_TEST_DIRS = ("test", "tests", "testing")


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
    folders = []
    for entry in sorted(folder.iterdir()):
        name = entry.name
        if name.startswith((".", "_")) or name in _NOT_SOURCE:
            continue
        is_package = entry.is_dir() and (entry / "__init__.py").is_file()
        is_module = entry.is_file() and entry.suffix == ".py" and not _is_test_file(name)
        if is_package or is_module:
            found.append(entry.resolve())
        elif entry.is_dir() and name.isidentifier():
            folders.append(entry)
    # No regular package: namespace packages (PEP 420: no ``__init__.py``), folders whose
    # modules are not tests.
    return found or [entry.resolve() for entry in folders if _namespace_package(entry)]


def _namespace_package(folder: Path) -> bool:
    """Whether ``folder`` holds a Python module (not a test) at some depth, through folders
    that could be its subpackages."""
    for path in folder.rglob("*.py"):
        parts = path.relative_to(folder).parts
        if (all(part.isidentifier() and part not in _NOT_SOURCE for part in parts[:-1])
                and not _is_test_file(path.name)):
            return True
    return False


def _is_test_file(name: str) -> bool:
    return name in _NOT_SOURCE_FILES or name.startswith("test_") or name.endswith("_test.py")


def tests_omit_patterns(sources: list[Path]) -> list[str]:
    """coverage.py ``omit`` globs for the tests ``without_tests`` leaves out of ``sources``.

    Anchored at each source folder: a checkout that itself lies under ``tests/`` or a folder
    named ``test_x`` must not omit everything.
    """
    patterns: list[str] = []
    for folder in (s for s in sources if s.is_dir()):
        base = folder.as_posix()
        patterns += [f"{base}/**/test_*.py", f"{base}/**/*_test.py", f"{base}/**/conftest.py"]
        patterns += [f"{base}/**/{name}/**" for name in _TEST_DIRS]
    return patterns


def is_test_path(path: Path) -> bool:
    """A test file or folder by pytest's conventions: ``test_*.py``, ``*_test.py``, ``tests/``."""
    if path.is_dir():
        return path.name in _TEST_DIRS
    name = path.name
    return name == "conftest.py" or (
        path.suffix == ".py" and (name.startswith("test_") or name.endswith("_test.py"))
    )


def without_tests(paths: list[Path]) -> list[Path]:
    """``paths`` with the tests inside them left out, for tools that take files and folders.

    A folder holding no test is kept whole (so the tools' own excludes still apply inside it);
    one that holds tests is replaced by its other entries, recursively.
    """
    kept: list[Path] = []
    for path in paths:
        if path.is_dir() and _holds_tests(path):
            hidden = (".", "__pycache__")
            children = sorted(p for p in path.iterdir() if not p.name.startswith(hidden))
            kept.extend(without_tests([p for p in children if not is_test_path(p)]))
        elif not is_test_path(path) and (path.is_dir() or path.suffix in (".py", ".pyw")):
            kept.append(path)
    return kept


def _holds_tests(folder: Path) -> bool:
    return any(is_test_path(p) for p in folder.rglob("*") if "__pycache__" not in p.parts)


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


def undecodable_sources(
    root: Path, sources: list[Path], measured: Iterable[str] = (), limit: int = 5
) -> list[str]:
    """Python files Python cannot decode (Latin-1 bytes and no coding line, say), each
    ``path (why)`` relative to ``root``: the measured files and every file under ``sources``.

    Run only once a tool has failed on such a file without naming it (coverage.py raises a
    bare ``SyntaxError: invalid or missing encoding declaration``).
    """
    seen: set[Path] = set()
    found: list[str] = []
    candidates = [Path(name) for name in measured]
    for source in (root / entry for entry in sources):
        candidates.extend(source.rglob("*.py") if source.is_dir() else [source])
    for path in candidates:
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        why = _decode_error(path)
        if why is not None:
            found.append(f"{printable(_relative(path, root))} ({why})")
            if len(found) >= limit:
                break
    return found


def _decode_error(path: Path) -> str | None:
    """Why Python cannot read ``path`` as source text, or ``None`` when it can."""
    try:
        with path.open("rb") as handle:
            encoding, _ = tokenize.detect_encoding(handle.readline)
            handle.seek(0)
            handle.read().decode(encoding)
    except SyntaxError as exc:  # no coding line and not UTF-8, or an unknown coding
        return f"{exc.msg.split(' for ')[0]}: not UTF-8 and no coding line"
    except UnicodeDecodeError as exc:
        return f"not valid {exc.encoding}, as its coding line says"
    except OSError:
        return None
    return None


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

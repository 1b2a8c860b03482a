"""Stage 1's "Build Success" for one tree: every Python file compiles and the packages import.

Compiling is memoised by content for the ranking process: the files candidates share with
the baseline or each other compile once (issue 28).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from pytest_confgate.rank.trees import RANK_STATE, is_source_file

ImportRun = Callable[[list[str]], tuple[int, str]]
"""Runs the import check's argv in the tree: its exit status and stderr; raises ``OSError``
when it cannot start and ``TimeoutError`` past its deadline (the caller's processes)."""

_SCRIPTS = frozenset({"tasks.py", "fabfile.py", "manage.py", "setup.py", "noxfile.py"})
_IMPORT_CHECK = (
    "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
)


def build_check(tree: Path, python: str, run: ImportRun) -> str | None:
    """The "Build Success": every Python file compiles and the packages import."""
    for path in sorted(tree.rglob("*.py")):
        rel = path.relative_to(tree).as_posix()
        if RANK_STATE in rel.split("/") or any(p.startswith(".") for p in rel.split("/")[:-1]):
            continue
        try:
            problem = _compiles(rel, path.read_bytes())
        except OSError:
            continue
        if problem is not None:
            return problem
    modules = top_level_modules(tree)
    if not modules:
        return None
    try:
        returncode, stderr = run([python, "-c", _IMPORT_CHECK, *modules])
    except (OSError, TimeoutError) as exc:
        return f"import check could not run: {exc}"
    if returncode != 0:
        last = (stderr.strip().splitlines() or ["no message"])[-1]
        return f"importing {', '.join(modules)} failed: {last}"
    return None


_COMPILED: dict[tuple[str, bytes], str | None] = {}
"""(path, sha256 of the source) -> why it does not compile, or None: each file the candidates
share with the baseline or each other is compiled once per ranking process (issue 28)."""


def _compiles(rel: str, source: bytes) -> str | None:
    key = (rel, hashlib.sha256(source).digest())
    if key not in _COMPILED:
        try:
            compile(source, rel, "exec", dont_inherit=True)
            _COMPILED[key] = None
        except (SyntaxError, ValueError) as exc:
            _COMPILED[key] = f"{rel} does not compile: {exc}"
    return _COMPILED[key]


def top_level_modules(tree: Path) -> list[str]:
    root = tree / "src" if (tree / "src").is_dir() else tree
    found = []
    for child in sorted(root.iterdir()):
        package = child.is_dir() and (child / "__init__.py").is_file()
        if package and child.name.isidentifier() and is_source_file(f"{child.name}/__init__.py"):
            found.append(child.name)
        elif _is_module(child):
            found.append(child.stem)
    return found


def _is_module(path: Path) -> bool:
    name = path.name
    return path.suffix == ".py" and path.stem.isidentifier() and name not in _SCRIPTS and (
        is_source_file(name)
    )

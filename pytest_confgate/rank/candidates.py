"""Candidates as isolated trees: a directory is copied, a git ref is checked out.

Every tree lives in a temporary directory that belongs to one candidate, so no candidate can
write into another's tree or the caller's. A ref becomes ``git worktree add --detach`` in
that directory and is removed again (``git worktree remove --force``, then ``prune``) when
the ``checked_out`` context ends: normally, on an error and on Ctrl-C.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pytest_confgate.exceptions import CandidateError, EvidenceError
from pytest_confgate.processes import run_tool

IGNORED_NAMES = frozenset({
    ".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".tox", ".nox", "node_modules",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", ".confgate", ".eggs",
})
"""Never copied: version control, environments and caches belong to the original tree."""
_GIT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class CandidateSource:
    """Where a candidate comes from; ``solution_id`` is the directory name or the ref as given."""

    solution_id: str
    kind: Literal["dir", "ref"]
    location: Path | str
    """The absolute directory, or the commit the ref names."""
    repo: Path | None = None


def resolve(spec: str, cwd: Path) -> CandidateSource:
    """A directory if ``spec`` is one, else a git ref of the repository at ``cwd``."""
    path = (cwd / spec).resolve()
    if path.is_dir():
        return CandidateSource(solution_id=path.name, kind="dir", location=path)
    if spec.startswith("-") or not spec.strip():
        raise CandidateError(f"candidate {spec!r}: not a directory, and not a valid git ref")
    repo = _git_top(cwd, spec)
    commit = _git(["rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}"], repo)
    if commit is None:
        raise CandidateError(
            f"candidate {spec!r}: no such directory under {cwd} and no such git ref in {repo}; "
            "give a directory or a branch, tag or commit"
        )
    return CandidateSource(solution_id=spec, kind="ref", location=commit, repo=repo)


def resolve_all(specs: Sequence[str], cwd: Path) -> list[CandidateSource]:
    """Every candidate resolved; two candidates with one solution id are an error."""
    sources = [resolve(spec, cwd) for spec in specs]
    seen: dict[str, str] = {}
    for spec, source in zip(specs, sources, strict=True):
        if source.solution_id in seen:
            raise CandidateError(
                f"candidates {seen[source.solution_id]!r} and {spec!r} both have the id "
                f"{source.solution_id!r}; rename a directory so each id is unique"
            )
        seen[source.solution_id] = spec
    return sources


@contextmanager
def checked_out(source: CandidateSource, workdir: Path) -> Iterator[Path]:
    """The candidate's tree at ``workdir/tree``, removed (worktree) when the context ends."""
    tree = workdir / "tree"
    if source.kind == "dir":
        shutil.copytree(Path(source.location), tree, ignore=_ignore, symlinks=True)
        yield tree
        return
    assert source.repo is not None  # noqa: S101 - resolve() sets it for every ref
    try:
        added = _git(["worktree", "add", "--detach", str(tree), str(source.location)], source.repo)
        if added is None:
            raise CandidateError(f"candidate {source.solution_id!r}: git worktree add failed")
        yield tree
    finally:
        _git(["worktree", "remove", "--force", str(tree)], source.repo)
        shutil.rmtree(tree, ignore_errors=True)
        _git(["worktree", "prune"], source.repo)


def _ignore(directory: str, names: list[str]) -> set[str]:
    return {name for name in names if name in IGNORED_NAMES or name.endswith((".pyc", ".pyo"))}


def _git_top(cwd: Path, spec: str) -> Path:
    top = _git(["rev-parse", "--show-toplevel"], cwd)
    if top is None:
        raise CandidateError(
            f"candidate {spec!r}: no such directory under {cwd}, and {cwd} is not in a git "
            "repository where it could be a ref"
        )
    return Path(top)


def _git(args: list[str], cwd: Path) -> str | None:
    """``git args`` in ``cwd``: its stdout stripped, or None when git fails or is missing."""
    try:
        result = run_tool(["git", *args], cwd=cwd, timeout_s=_GIT_TIMEOUT_S)
    except EvidenceError:
        return None
    return result.stdout.strip() if result.returncode == 0 else None

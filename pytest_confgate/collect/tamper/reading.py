"""The tamper analysis's front doors: what it reads from git and from checkouts.

- the gate: ``ChangeAnalysis(root, changes).report()`` reads the base through git (the merge
  base of the ``ChangeSet``) and the head from the working tree, once, thread-safely;
- ``confgate rank``: ``analyse_directories(baseline, candidate, base_outcomes=...,
  head_outcomes=...)`` compares two checkouts, with pytest outcomes by node id when known.

Both hand the texts to the pure core, ``core.find_tampering``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pytest_confgate.collect.tamper.comments import WATCHED
from pytest_confgate.collect.tamper.core import TamperReport, find_tampering
from pytest_confgate.collect.tamper.settings import CONFIG_NAMES, PYTEST_FILES
from pytest_confgate.collect.tamper.shapes import FileVersions
from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.models import ChangeSet

MAX_FILE_BYTES = 2_000_000
"""Larger files (generated code, data) are not analysed; the report names them."""
_SKIPPED_DIRS = frozenset(
    {"node_modules", "__pycache__", "venv", "env", "build", "dist", "site-packages"}
)


def _relevant(path: str) -> bool:
    return path.endswith(".py") or path.rsplit("/", 1)[-1] in CONFIG_NAMES


class _Unreadable(Exception):
    """The file is there but is not analysed: a symlink, too large, or unreadable."""


def _read_text(path: Path) -> str | None:
    """The file's text, None when there is no such file; raises ``_Unreadable``.

    A symlink is never followed: a change could point one at a file outside the repository.
    """
    try:
        if path.is_symlink() or path.stat().st_size > MAX_FILE_BYTES:
            raise _Unreadable(path)
        return path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _Unreadable(path) from exc


def _from_disk(path: str, base: Path | None, head: Path | None) -> FileVersions:
    """Both sides read from files (None: absent on that side)."""
    try:
        before = _read_text(base) if base is not None else None
        after = _read_text(head) if head is not None else None
    except _Unreadable:
        return FileVersions(path, None, None, skipped=True)
    return FileVersions(path, before, after)


def versions_from_directories(base: Path, head: Path) -> list[FileVersions]:
    """The Python and tool-config files that differ between two checkouts (for ``rank``).

    Hidden folders, virtual environments, caches and build output are not compared.
    """
    old, new = _tree_files(base), _tree_files(head)
    versions = []
    for path in sorted(old | new):
        version = _from_disk(
            path, base / path if path in old else None, head / path if path in new else None
        )
        if version.skipped or version.base != version.head or path in PYTEST_FILES:
            versions.append(version)
    return versions


def versions_as_submitted(base: Path, head: Path, submitted: Mapping[str, str]
                          ) -> list[FileVersions]:
    """``versions_from_directories``, the head read as ``submitted`` has it (``rank``: the
    candidate's files as read before any of its code ran; its tests ran in ``head`` since, and
    a test file they weakened and put back, or a module they rewrote, is read as submitted).

    A path ``submitted`` leaves out (a symlink, a large or binary file, or one the run created)
    keeps its reading from ``head``."""
    found = {v.path: v for v in versions_from_directories(base, head)}
    for path, text in submitted.items():
        if not _relevant(path) or _hidden(path):
            continue
        version = found.get(path)
        if version is None:
            try:
                before = _read_text(base / path)
            except _Unreadable:
                continue
            version = FileVersions(path, before, None)
        if version.skipped or version.head == text:
            continue
        found[path] = FileVersions(path, version.base, text)
    return [found[path] for path in sorted(found)
            if found[path].skipped or found[path].base != found[path].head
            or path in PYTEST_FILES]


def _hidden(path: str) -> bool:
    """In a folder ``_tree_files`` does not walk."""
    folders = path.split("/")[:-1]
    return any(d.startswith(".") or d in _SKIPPED_DIRS or d.endswith(".egg-info")
               for d in folders)


def _tree_files(root: Path) -> set[str]:
    found: set[str] = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [
            d for d in dirs
            if not d.startswith(".") and d not in _SKIPPED_DIRS and not d.endswith(".egg-info")
        ]
        relative = Path(folder).relative_to(root).as_posix()
        for name in files:
            path = name if relative == "." else f"{relative}/{name}"
            if _relevant(path):
                found.add(path)
    return found


def analyse_directories(
    base: Path,
    head: Path,
    *,
    base_outcomes: Mapping[str, str] | None = None,
    head_outcomes: Mapping[str, str] | None = None,
    watch: Iterable[str] = WATCHED,
) -> TamperReport:
    """``find_tampering`` between a baseline checkout and a candidate checkout."""
    versions = versions_from_directories(base, head)
    return find_tampering(
        versions, base_outcomes=base_outcomes, head_outcomes=head_outcomes, watch=watch
    )


class GitTree:
    """The files of one commit, read through git (argv only, no checkout, no shell)."""

    def __init__(self, root: Path, commit: str) -> None:
        self.root, self.commit = root, commit
        self.skipped: set[str] = set()
        """Paths present at the commit but not read: symlinks and files too large."""

    def read_many(self, paths: Iterable[str]) -> dict[str, str | None]:
        """Root-relative path -> text at the commit (None: absent, not a file, or skipped).

        Each object is checked against its name (``collect.git_objects``): the run may have
        rewritten ``.git`` since the commit was named."""
        from pytest_confgate.collect.git_objects import VerifiedObjects, prefix_of

        wanted = sorted(set(paths))
        texts: dict[str, str | None] = dict.fromkeys(wanted)
        if not wanted:
            return texts
        store = VerifiedObjects(self.root)
        prefix = prefix_of(self.root)
        files = store.files(self.commit, only=[prefix + path for path in wanted])
        chosen: dict[str, str] = {}
        for path in wanted:
            entry = files.get(prefix + path)
            if entry is None:
                continue
            if entry.mode == "120000":
                self.skipped.add(path)
            elif entry.regular:
                chosen[path] = entry.name
        blobs = store.read(chosen.values())
        for path, name in chosen.items():
            data = blobs[name][1]
            if len(data) > MAX_FILE_BYTES:
                self.skipped.add(path)
                continue
            texts[path] = data.decode("utf-8", errors="replace")
        return texts


def versions_from_change(root: Path, changes: ChangeSet) -> list[FileVersions]:
    """Base (the merge base, through git) and head (the working tree) of a gate's change.

    ``changes`` has root-relative paths (``ChangeSet.rooted()``).
    """
    wanted = [c for c in changes.files if not c.binary and _relevant(c.path)]
    base_paths = [c.old_path or c.path for c in wanted if c.status != "added"]
    configs = [name for name in PYTEST_FILES if changes.get(name) is None]
    tree = GitTree(root, changes.merge_base)
    texts = tree.read_many(base_paths)
    heads = _heads(root, changes, [c.path for c in wanted if c.status != "deleted"])
    versions = []
    for change in wanted:
        old = change.old_path or change.path
        new = change.status in ("added", "copied")  # a copy is a new file; its source stays
        renamed = change.old_path if change.status == "renamed" else None
        try:
            head = None if change.status == "deleted" else heads(change.path)
        except _Unreadable:
            head, skipped = None, True
        else:
            skipped = not new and old in tree.skipped
        base = None if new else texts.get(old)
        versions.append(FileVersions(change.path, base, head, renamed, skipped=skipped))
    for name in configs:  # unchanged, so the same on both sides
        versions.append(_from_disk(name, root / name, root / name))
    return [v for v in versions if v.skipped or v.base is not None or v.head is not None]


def _heads(root: Path, changes: ChangeSet, paths: list[str]) -> Callable[[str], str | None]:
    """How the head of a changed file is read: from the snapshot taken when the change was
    read (``ChangeSet.head_tree``), so a run that rewrote the file since changes nothing here;
    from disk only for what the snapshot cannot hold (no snapshot, a path seen through a
    symlink, a file too large)."""
    if changes.head_tree is None:
        return lambda path: _read_text(root / path)
    snapshot = GitTree(root, changes.head_tree)
    texts = snapshot.read_many(paths)

    def head(path: str) -> str | None:
        text = texts.get(path)
        if text is None and path not in snapshot.skipped and path in texts:
            return _read_text(root / path)  # under a symlinked folder: not in the tree
        if path in snapshot.skipped:
            raise _Unreadable(path)
        return text

    return head


@dataclass
class ChangeAnalysis:
    """The gate's tamper analysis: computed once, on first use, from any thread.

    Lint and security (in background threads) need the suppressions the change added, and
    ``test_integrity`` needs the findings; the first caller computes, the others wait.
    ``changes`` is None when git could not say what changed (``error`` says why).
    """

    root: Path
    changes: ChangeSet | None
    error: str | None = None
    watch: tuple[str, ...] = WATCHED
    duration_s: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _report: TamperReport | None = field(default=None, repr=False)
    _failure: str | None = field(default=None, repr=False)
    _versions: tuple[FileVersions, ...] = field(default=(), repr=False)

    def report(self) -> TamperReport:
        """The analysis; raises ``EvidenceError`` when the change or its base cannot be read."""
        with self._lock:
            if self._report is None and self._failure is None:
                started = time.perf_counter()
                try:
                    self._report = self._analyse()
                except EvidenceError as exc:
                    self._failure = str(exc)
                self.duration_s = round(time.perf_counter() - started, 6)
            if self._report is None:
                raise EvidenceError(self._failure or "the change could not be analysed")
            return self._report

    def _analyse(self) -> TamperReport:
        if self.changes is None:
            raise EvidenceError(self.error or "the change is not known")
        self._versions = tuple(versions_from_change(self.root, self.changes))
        own = project_packages(self.root) - _added_packages(self._versions)
        return find_tampering(self._versions, watch=self.watch, own_packages=own)

    def versions(self) -> dict[str, FileVersions]:
        """The files compared, by head path and (renamed) base path; after ``report()``."""
        self.report()
        found = {v.old_path: v for v in self._versions}
        found.update((v.path, v) for v in self._versions)
        return found


def _added_packages(versions: Iterable[FileVersions]) -> frozenset[str]:
    """Top-level packages and modules the change adds (in the root or ``src/``): the base did
    not have them, so they do not make patching that name the project's own business."""
    names = set()
    for version in versions:
        if version.base is not None and version.old_path == version.path:
            continue
        parts = version.path.removeprefix("src/").split("/")
        if len(parts) == 1 and parts[0].endswith(".py"):
            names.add(parts[0].removesuffix(".py"))
        elif parts[1:] == ["__init__.py"]:
            names.add(parts[0])
    return frozenset(names)


def project_packages(root: Path) -> frozenset[str]:
    """The top-level import names the project defines (packages and modules in ``root`` and
    ``root/src``): its own tests may patch them even when it is pytest or pluggy."""
    names: set[str] = set()
    for folder in (root, root / "src"):
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or entry.is_symlink():
                continue
            if entry.is_dir() and (entry / "__init__.py").is_file() and entry.name.isidentifier():
                names.add(entry.name)
            elif entry.suffix == ".py" and entry.stem.isidentifier():
                names.add(entry.stem)
    return frozenset(names)

"""Git objects read with their bytes checked against their names.

After a run, the analyses read the change's snapshot and its base from git objects (the tamper
analysis, the differential run, what the run rewrote). Those objects lie in ``.git``, which the
change's code can write while it runs, and git does not check an object's bytes against its
name when it reads it: a rewritten loose object, or a rewritten pack, would be read as the
change. Here every object is hashed as git names objects (sha1 or sha256, the repository's
format) and compared with the name it was asked for, starting from a commit or tree name kept
outside the repository (in memory since before the run): a rewritten object is an error, never
evidence.

Leaf: the standard library, ``processes`` and ``exceptions``.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.processes import ToolMissing, run_tool, tail

_TIMEOUT_S = 300.0
REGULAR_MODES = frozenset({"100644", "100755"})
"""Files; ``120000`` is a symlink, ``160000`` a submodule's commit, ``40000`` a tree."""


@dataclass(frozen=True)
class Entry:
    """One file of a tree: its mode and its object's name."""

    mode: str
    name: str

    @property
    def regular(self) -> bool:
        return self.mode in REGULAR_MODES


class VerifiedObjects:
    """The objects of the repository at ``cwd``, each checked against its name as it is read."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        found = _git(cwd, "rev-parse", "--show-object-format")
        self.algorithm = found.strip() if found.strip() in ("sha1", "sha256") else "sha1"

    def read(self, names: Iterable[str]) -> dict[str, tuple[str, bytes]]:
        """Object name -> (type, bytes); raises ``EvidenceError`` for one missing or whose
        bytes do not hash to its name."""
        wanted = sorted(set(names))
        if not wanted:
            return {}
        git = shutil.which("git")
        if git is None:
            raise EvidenceError("git is needed to read the change's files: it is not on PATH")
        try:
            done = subprocess.run(
                [git, "cat-file", "--batch"], cwd=self.cwd, check=False, capture_output=True,
                input=("\n".join(wanted) + "\n").encode(), timeout=_TIMEOUT_S,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise EvidenceError(f"git cat-file could not read the objects in {self.cwd}: "
                                f"{exc}") from exc
        if done.returncode != 0:
            raise EvidenceError(f"git cat-file failed in {self.cwd}: "
                                f"{tail(done.stderr.decode(errors='replace'))}")
        return self._parse(done.stdout, wanted)

    def _parse(self, out: bytes, wanted: list[str]) -> dict[str, tuple[str, bytes]]:
        found: dict[str, tuple[str, bytes]] = {}
        at = 0
        for name in wanted:
            end = out.find(b"\n", at)
            header = out[at:end].decode(errors="replace").split()
            if len(header) != 3 or header[0] != name or not header[2].isdigit():
                raise EvidenceError(f"git object {name} is not in the repository at "
                                    f"{self.cwd}: fetch it, or it was removed during the run")
            kind, size = header[1], int(header[2])
            data = out[end + 1:end + 1 + size]
            at = end + 1 + size + 1
            digest = hashlib.new(self.algorithm, f"{kind} {size}\0".encode() + data).hexdigest()
            if digest != name or len(data) != size:
                raise EvidenceError(
                    f"git object {name} in {self.cwd} no longer holds what its name says: "
                    "the repository was rewritten during the run")
            found[name] = (kind, data)
        return found

    def tree_of(self, name: str) -> str:
        """The tree a commit (or a tree) names."""
        kind, data = self.read([name])[name]
        if kind == "tree":
            return name
        if kind == "commit" and data.startswith(b"tree "):
            return data[5:data.index(b"\n")].decode()
        raise EvidenceError(f"git object {name} is a {kind}, not a commit or a tree")

    def files(self, name: str, only: Iterable[str] | None = None) -> dict[str, Entry]:
        """The files of the tree a commit or tree names: top-level-relative path -> entry;
        ``only``: just these paths (the folders that hold none are not read)."""
        width = 20 if self.algorithm == "sha1" else 32
        wanted = None if only is None else set(only)
        folders = None if wanted is None else {
            path[:i + 1] for path in wanted for i, char in enumerate(path) if char == "/"}
        found: dict[str, Entry] = {}
        level = {self.tree_of(name): ""}
        while level:
            objects = self.read(level)
            following: dict[str, str] = {}
            for tree, prefix in level.items():
                kind, data = objects[tree]
                if kind != "tree":
                    raise EvidenceError(f"git object {tree} is a {kind}, not a tree")
                for mode, entry, child in _entries(data, width):
                    path = prefix + entry
                    if mode == "40000":
                        if folders is None or path + "/" in folders:
                            following[child] = path + "/"
                    elif wanted is None or path in wanted:
                        found[path] = Entry(mode, child)
            level = following
        return found


def prefix_of(cwd: Path) -> str:
    """``cwd`` relative to the repository's top level, ending in ``/`` (``""`` at the top)."""
    return _git(cwd, "rev-parse", "--show-prefix").strip()


def _entries(data: bytes, width: int) -> Iterable[tuple[str, str, str]]:
    """A tree object's entries: (mode, name, object name)."""
    at = 0
    while at < len(data):
        space = data.index(b" ", at)
        nul = data.index(b"\0", space)
        raw = data[nul + 1:nul + 1 + width]
        yield (data[at:space].decode(), data[space + 1:nul].decode("utf-8", "surrogateescape"),
               raw.hex())
        at = nul + 1 + width


def _git(cwd: Path, *args: str) -> str:
    try:
        result = run_tool(["git", *args], cwd=cwd, timeout_s=_TIMEOUT_S)
    except ToolMissing as exc:
        raise EvidenceError(f"git is needed to read the change's files: {exc}") from exc
    if result.returncode != 0:
        raise EvidenceError(f"git {args[0]} failed in {cwd}: {tail(result.stderr)}")
    return result.stdout

"""Symlinks seen through: a change to a link's target is a change under the link's path too.

``src/auth/policy.py -> ../pkg/policy_impl.py``: editing ``policy_impl.py`` changes what
``src/auth/policy.py`` loads, so a risk rule over ``src/auth/**`` must see it (issue 14). Links
come from both trees, the base commit's (``git ls-tree``) and the index's (``git ls-files``),
so adding or dropping the link in the same change does not hide the target. A link to a folder
maps every changed file below it; chains of links are followed. Link text is resolved as git
stores it (relative to the link's folder); a link out of the repository names nothing of ours.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterable
from pathlib import Path

from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.models import ChangeStatus, FileChange
from pytest_confgate.processes import ToolResult, tail

LINK_MODE = "120000"
MAX_ALIASES = 10_000
"""Paths seen through links beyond this are an error, not a longer walk."""
Git = Callable[..., ToolResult]
"""``git(cwd, *args)``: how ``collect.changes`` runs git."""


def symlinks(top: Path, merge_base: str, git: Git) -> set[tuple[str, str]]:
    """``(link, target)`` pairs of repo-relative paths, from the base tree and the index."""
    index = _entries(_listing(git(top, "ls-files", "-s", "-z"), "ls-files"), sha_field=1)
    base = _entries(
        _listing(git(top, "ls-tree", "-r", "-z", "--full-tree", merge_base), "ls-tree"),
        sha_field=2,
    )
    pairs: set[tuple[str, str]] = set()
    for link, sha in index.items():
        text = _read_link(top / link)
        pairs.update(_pair(link, text if text is not None else _blob(top, sha, git)))
    for link, sha in base.items():
        if index.get(link) == sha:
            continue  # the same link in both trees: already read
        pairs.update(_pair(link, _blob(top, sha, git)))
    return pairs


def link_aliases(changes: Iterable[FileChange], links: set[tuple[str, str]]) -> list[FileChange]:
    """The changes again under every link path that reaches them (``symlink_target`` = the
    path that really changed); none for paths that are changes already.

    A path is never reached through the same link twice: a link to a folder above itself
    (``src/pkg/sub -> ../pkg``) names each file once below it, not ``sub/sub/...`` forever.
    More than ``MAX_ALIASES`` paths (links into each other by the thousand) is an error that
    names the count, so the gate fails closed instead of walking on."""
    by_target: dict[str, list[str]] = {}
    for link, target in links:
        by_target.setdefault(target, []).append(link)
    names = {link for link, _ in links}  # a link is not seen through itself
    pending = [(c, frozenset({c.path} & names)) for c in changes]
    seen = {c.path for c, _ in pending}
    aliases: list[FileChange] = []
    while pending:
        change, through = pending.pop()
        for name in {change.path, change.old_path} - {None}:
            for link, alias in _aliases_of(str(name), by_target):
                if alias in seen or link in through:
                    continue
                seen.add(alias)
                found = FileChange(
                    alias, None, _status(change), change.binary, change.added_lines, change.path
                )
                aliases.append(found)
                if len(aliases) > MAX_ALIASES:
                    raise EvidenceError(
                        f"symlinks reach the changed files by more than {MAX_ALIASES} paths "
                        f"(e.g. {alias!r} via {link!r}): links into each other's folders "
                        "cannot be seen through; replace some of them with real files"
                    )
                pending.append((found, through | {link}))
    return aliases


def _aliases_of(path: str, by_target: dict[str, list[str]]) -> list[tuple[str, str]]:
    """``(link, alias)`` for each link path by which ``path`` is reached: the file itself, or
    a folder above it."""
    found: list[tuple[str, str]] = []
    folder, rest = path, ""
    while folder:
        for link in by_target.get(folder, ()):
            found.append((link, link + rest))
        folder, _, name = folder.rpartition("/")
        rest = f"/{name}{rest}"
    return found


def _status(change: FileChange) -> ChangeStatus:
    return change.status if change.status in ("added", "modified", "deleted") else "modified"


def _listing(result: ToolResult, what: str) -> str:
    if result.returncode != 0:
        raise EvidenceError(f"git {what} failed while listing symlinks: {tail(result.stderr)}")
    return result.stdout


def _entries(listing: str, *, sha_field: int) -> dict[str, str]:
    """Symlink entries of ``git ls-files -s -z`` / ``git ls-tree -r -z``: path -> blob id."""
    links: dict[str, str] = {}
    for record in listing.split("\0"):
        meta, tab, path = record.partition("\t")
        fields = meta.split(" ")
        if tab and fields[0] == LINK_MODE and len(fields) > sha_field:
            links[path] = fields[sha_field]
    return links


def _read_link(path: Path) -> str | None:
    try:
        return os.readlink(path) if path.is_symlink() else None
    except OSError:
        return None


def _blob(top: Path, sha: str, git: Git) -> str | None:
    result = git(top, "cat-file", "blob", sha)
    return result.stdout if result.returncode == 0 else None


def _pair(link: str, text: str | None) -> set[tuple[str, str]]:
    """``{(link, target)}``, or nothing when the link leaves the repository or names nothing."""
    if not text or text.startswith("/") or "\0" in text:
        return set()
    target = posixpath.normpath(posixpath.join(posixpath.dirname(link), text))
    if target in (".", "..") or target.startswith("../") or target == link:
        return set()
    return {(link, target)}

"""Per-file lint and security results cached by content, so an unchanged file is never scanned
twice (a warm re-run costs <= 10% of a cold one).

Layout: one JSON document per tool, ``CACHE_DIR/<tool>.json``::

    {"schema": 1, "tool": "ruff", "entries": {"src/pkg/mod.py": {"key": "<sha256>",
                                                                "findings": [Finding, ...]}}}

One document per tool rather than one file per key because a run needs every entry anyway
(one read, one write instead of thousands of small files), because keying entries by path keeps
exactly one entry per file (an edit replaces the old key, so the size stays bounded by the
project's file count without a sweep), and because pruning deleted files is a dict filter.

Key: sha256 over (schema, tool, tool version, config digest, path, sha256 of the file's bytes).
The path is part of it because findings carry it and rules can depend on it (per-file ignores).

Nothing read back is trusted: a document that cannot be read or parsed, or an entry of the
wrong shape, is a miss and gets rebuilt; nor is one changed while the project's code could run
that the gate did not write (``cache_trust``). Writes go to a temp file and ``os.replace``; the
read-merge-write is serialised with ``flock`` where available, so two concurrent pytest runs
can at worst lose each other's new entries (a later miss), never corrupt the document.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from pytest_confgate.collect import cache_trust
from pytest_confgate.models import Finding

SCHEMA = 1
_FINDINGS = TypeAdapter(list[Finding])
_CHUNK_CHARS = 100_000  # keeps an argv of explicit files far below the OS limit


class CacheMiss(Exception):
    """A collector asked to answer from its cache alone met a file it has no entry for."""


def sha256_file(path: Path) -> str | None:
    """The sha256 of the file's bytes, or None when it cannot be read (never cached then)."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def sha256_json(value: object) -> str:
    """A stable digest of JSON-able data (config contents, key parts)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def digest_files(paths: Sequence[Path]) -> list[tuple[str, str | None]]:
    """(path, sha256 of its bytes or None) for config files, in a stable order."""
    return [(path.as_posix(), sha256_file(path)) for path in sorted(set(paths))]


def chunked(names: Sequence[str]) -> Iterator[list[str]]:
    """Split explicit file arguments into argv-sized batches."""
    batch: list[str] = []
    size = 0
    for name in names:
        if batch and size + len(name) > _CHUNK_CHARS:
            yield batch
            batch, size = [], 0
        batch.append(name)
        size += len(name) + 1
    if batch:
        yield batch


class ToolCache:
    """The cache of one tool for one configuration; counts its hits and misses for details."""

    def __init__(
        self, cache_dir: Path, root: Path, tool: str, version: str, config_digest: str
    ) -> None:
        self.path = cache_dir / f"{tool}.json"
        self.root = root
        self.tool = tool
        self._salt = [SCHEMA, tool, version, config_digest]
        self._entries = _read_entries(self.path, tool)
        self._fresh: dict[str, dict[str, Any]] = {}
        self.hits = 0
        self.misses = 0

    def key(self, name: str, content_digest: str) -> str:
        """The key of file ``name`` (a display path) whose bytes hash to ``content_digest``."""
        return sha256_json([*self._salt, name, content_digest])

    def lookup(self, name: str, content_digest: str | None) -> list[Finding] | None:
        """The cached findings of ``name``, or None (a miss) unless a valid entry matches."""
        findings = None
        if content_digest is not None:
            findings = self._valid(name, self._entries.get(name), self.key(name, content_digest))
        if findings is None:
            self.misses += 1
        else:
            self.hits += 1
        return findings

    def store(self, name: str, content_digest: str | None, findings: Sequence[Finding]) -> None:
        """Remember ``findings`` for ``name``; an unreadable file (no digest) is not cached."""
        if content_digest is None:
            return
        self._fresh[name] = {
            "key": self.key(name, content_digest),
            "findings": [finding.model_dump(mode="json") for finding in findings],
        }

    def stats(self) -> dict[str, int]:
        """``{"hits": n, "misses": n}`` for the metric's details."""
        return {"hits": self.hits, "misses": self.misses}

    def save(self) -> None:
        """Merge new entries into the document on disk, drop deleted files, replace atomically.

        A cache that cannot be written only costs speed, so IO errors are swallowed here.
        """
        if not self._fresh:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with _locked(self.path.with_suffix(".lock")):
                entries = _read_entries(self.path, self.tool)  # what another run just wrote
                entries.update(self._fresh)
                kept = {name: entry for name, entry in entries.items() if self._exists(name)}
                document = {"schema": SCHEMA, "tool": self.tool, "entries": kept}
                _write_atomically(self.path, json.dumps(document, separators=(",", ":")))
        except OSError:
            return

    def _exists(self, name: str) -> bool:
        return (self.root / name).is_file()

    def _valid(self, name: str, entry: object, key: str) -> list[Finding] | None:
        if not isinstance(entry, dict) or entry.get("key") != key:
            return None
        try:
            findings = _FINDINGS.validate_python(entry.get("findings"))
        except ValidationError:
            return None
        if any(finding.tool != self.tool or finding.file != name for finding in findings):
            return None
        return findings


def _read_entries(path: Path, tool: str) -> dict[str, Any]:
    """The entries of a well-formed document, else none: a broken cache is an empty cache."""
    data = cache_trust.read_bytes(path)
    try:
        document = json.loads(data) if data is not None else None
    except ValueError:
        return {}
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        return {}
    entries = document.get("entries")
    if document.get("tool") != tool or not isinstance(entries, dict):
        return {}
    return {
        name: entry
        for name, entry in entries.items()
        if isinstance(entry, Mapping) and isinstance(entry.get("key"), str)
    }


def _write_atomically(path: Path, text: str) -> None:
    if not cache_trust.write_bytes(path, text.encode("utf-8")):
        raise OSError(f"cannot write {path}")


@contextlib.contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    """Serialise read-merge-write between processes; atomic replace alone keeps it valid."""
    if sys.platform == "win32":  # pragma: no cover -- no flock; os.replace still atomic
        yield
        return
    import fcntl

    with lock_path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def cached_tool_version(
    argv: Sequence[str], cache_dir: Path, ask: Callable[[Sequence[str]], str | None]
) -> str | None:
    """``ask(argv)``'s answer, remembered while the executable's file stays the same.

    Starting ``ruff --version`` costs a process on every warm run, more than the cached lint
    itself. Only a lone executable path is remembered, keyed by its resolved path, size and
    mtime (a reinstall changes them); a launcher such as ``uvx ruff`` may pick another version
    each time, so it is always asked.
    """
    if len(argv) != 2 or not os.path.isabs(argv[0]):
        return ask(argv)
    try:
        real = os.path.realpath(argv[0])
        info = os.stat(real)
    except OSError:
        return ask(argv)
    key = sha256_json([SCHEMA, real, info.st_size, info.st_mtime_ns, info.st_ino, list(argv)])
    path = cache_dir / "versions.json"
    known = _read_versions(path)
    if isinstance(known.get(key), str):
        return str(known[key])
    version = ask(argv)
    if version is not None:
        with contextlib.suppress(OSError):
            cache_dir.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError), _locked(path.with_suffix(".lock")):
            known = _read_versions(path)
            known[key] = version
            # A handful of tools; drop the oldest entries so reinstalls cannot grow the file.
            _write_atomically(path, json.dumps(dict(list(known.items())[-32:])))
    return version


def _read_versions(path: Path) -> dict[str, Any]:
    raw = cache_trust.read_bytes(path)
    try:
        data = json.loads(raw) if raw is not None else None
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}

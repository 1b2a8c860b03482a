"""Locked artifacts: approval records a content hash; a later change is reported.

Locks live in ``.confgate/locks.json`` beside the runs, one entry per task: the artifact's
path, its sha256 and the run that locked it. Every ``confgate run`` compares them with the
files as they are now, before any agent starts.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_confgate.report.json_report import write_json_atomic

LOCKS_FILE = "locks.json"


@dataclass(frozen=True)
class LockChange:
    """A locked artifact whose content is no longer what was approved."""

    task: str
    artifact: str
    locked_sha256: str
    current_sha256: str | None
    """None when the file is gone."""
    run_id: str

    def message(self) -> str:
        now = "was deleted" if self.current_sha256 is None else f"now {self.current_sha256[:12]}"
        return (
            f"locked artifact {self.artifact} of task {self.task!r} changed since run "
            f"{self.run_id} locked it (sha256 {self.locked_sha256[:12]}, {now})"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "artifact": self.artifact,
            "locked_sha256": self.locked_sha256,
            "current_sha256": self.current_sha256,
            "run_id": self.run_id,
        }


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str | None:
    """The file's sha256, or None when it does not exist or cannot be read."""
    try:
        return sha256_bytes(path.read_bytes())
    except OSError:
        return None


def record_lock(state_dir: Path, task: str, artifact: Path, root: Path, run_id: str) -> str | None:
    """Lock ``artifact`` for ``task``: its hash now, written to the locks file; None if absent."""
    digest = file_sha256(artifact)
    if digest is None:
        return None
    locks = _read(state_dir)
    locks[task] = {"artifact": _shown(artifact, root), "sha256": digest, "run_id": run_id}
    write_json_atomic(locks, state_dir / LOCKS_FILE)
    return digest


def changed_locks(state_dir: Path, root: Path) -> list[LockChange]:
    """Every locked artifact whose content differs from its recorded hash."""
    changes: list[LockChange] = []
    for task, entry in sorted(_read(state_dir).items()):
        if not isinstance(entry, dict):
            continue
        artifact, locked = str(entry.get("artifact", "")), str(entry.get("sha256", ""))
        if not artifact or not locked:
            continue
        current = file_sha256(root / artifact)
        if current != locked:
            run_id = str(entry.get("run_id", "?"))
            changes.append(LockChange(task, artifact, locked, current, run_id))
    return changes


def _read(state_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((state_dir / LOCKS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)

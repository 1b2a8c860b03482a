"""The spool (SPEC 9): events a write could not store wait here for the next successful write.

One JSON file per event, named by its event id, written to a temporary name and renamed, so a
reader sees whole files only, concurrent spoolers never interleave, and the same event spooled
twice is one file. The first folder is ``<db>.spool/`` beside the database; when that cannot be
written (read-only or missing folder) a per-database folder under ``CONFGATE_SPOOL_DIR``, else
``$XDG_CACHE_HOME/confgate/spool`` (``~/.cache``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

from pytest_confgate.exceptions import ConfgateError
from pytest_confgate.trust.events import TrustEvent


class Spool:
    """The spool folders of one database, first choice first."""

    def __init__(self, db: Path, fallback: Path | None = None) -> None:
        self.primary = db.with_name(db.name + ".spool")
        self._db = db
        self._fallback = fallback

    @property
    def fallback(self) -> Path:
        """Worked out only when needed: it reads the environment and resolves the path."""
        if self._fallback is None:
            self._fallback = default_fallback(self._db)
        return self._fallback

    def folders(self) -> tuple[Path, Path]:
        return self.primary, self.fallback

    def put(self, events: Sequence[TrustEvent]) -> Path | None:
        """Keep ``events``; the folder used, or ``None`` when no folder can be written."""
        if not events:
            return None
        for folder in self.folders():
            try:
                folder.mkdir(parents=True, exist_ok=True)
                for event in events:
                    _write_atomic(folder / f"{event.event_id}.json", json.dumps(event.to_json()))
            except OSError:
                continue
            return folder
        return None

    def pending(self) -> list[tuple[Path, TrustEvent]]:
        """Every spooled event with its file; an unreadable file is renamed ``.bad`` and left."""
        found = []
        for folder in self.folders():
            for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
                try:
                    event = TrustEvent.from_json(json.loads(path.read_text(encoding="utf-8")))
                except (OSError, ValueError, ConfgateError):
                    with contextlib.suppress(OSError):
                        path.rename(path.with_suffix(".bad"))
                    continue
                found.append((path, event))
        return found

    def count(self) -> int:
        """Events waiting for the next successful write."""
        return sum(
            len(list(folder.glob("*.json"))) for folder in self.folders() if folder.is_dir()
        )


def default_fallback(db: Path) -> Path:
    """Where events go when the database's own folder cannot be written (one per database)."""
    base = os.environ.get("CONFGATE_SPOOL_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "confgate", "spool"
    )
    digest = hashlib.sha256(str(db.resolve()).encode("utf-8")).hexdigest()[:16]
    return Path(base) / digest


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)

"""The spool: events a write could not store wait here for the next successful write.

One JSON file per event, named by its event id, written to a temporary name and renamed, so a
reader sees whole files only, concurrent spoolers never interleave, and the same event spooled
twice is one file. For an SQLite store the first folder is ``<db>.spool/`` beside the database;
when that cannot be written (read-only or missing folder), and always for a PostgreSQL store,
a per-store folder under ``CONFGATE_SPOOL_DIR``, else ``$XDG_CACHE_HOME/confgate/spool``
(``~/.cache``).

A file that cannot be read back is renamed ``.bad`` so replay goes on without it, and stays
listed by ``problems`` (reported by every ``record`` and ``report``) until someone fixes or
deletes it: nothing is dropped without a word (issue 18).
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

SET_ASIDE = ".bad"


class Spool:
    """The spool folders of one store, first choice first."""

    def __init__(self, primary: Path | None, key: str, fallback: Path | None = None) -> None:
        self.primary = primary
        """``<db>.spool`` for a file store; ``None`` for a server (its spool is the fallback)."""
        self._key = key
        self._fallback = fallback

    @property
    def fallback(self) -> Path:
        """Worked out only when needed: it reads the environment."""
        if self._fallback is None:
            self._fallback = default_fallback(self._key)
        return self._fallback

    def folders(self) -> tuple[Path, ...]:
        if self.primary is None:
            return (self.fallback,)
        return self.primary, self.fallback

    def describe(self) -> str:
        """The folders, for messages."""
        return " or ".join(str(folder) for folder in self.folders())

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
        """Every readable spooled event with its file; an unreadable one is set aside."""
        found = []
        for path in self._files("*.json"):
            try:
                found.append((path, _read(path)))
            except (OSError, ValueError, ConfgateError):
                with contextlib.suppress(OSError):
                    path.rename(path.with_suffix(SET_ASIDE))
        return found

    def count(self) -> int:
        """Events waiting for the next successful write."""
        return len(self._files("*.json"))

    def problems(self) -> list[str]:
        """One line per spool file that cannot be replayed: its path and why."""
        lines = []
        for path in self._files("*.json") + self._files(f"*{SET_ASIDE}"):
            try:
                _read(path)
            except (OSError, ValueError, ConfgateError) as exc:
                lines.append(f"{path}: {exc}")
            else:
                if path.suffix == SET_ASIDE:
                    lines.append(f"{path}: readable now; rename it to .json to replay it")
        return lines

    def _files(self, pattern: str) -> list[Path]:
        return [
            path
            for folder in self.folders()
            if folder.is_dir()
            for path in sorted(folder.glob(pattern))
        ]


def default_fallback(key: str) -> Path:
    """Where events go when the database's own folder cannot be written (one per store)."""
    base = os.environ.get("CONFGATE_SPOOL_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "confgate", "spool"
    )
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    return Path(base) / digest


def _read(path: Path) -> TrustEvent:
    return TrustEvent.from_json(json.loads(path.read_text(encoding="utf-8")))


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)

"""Writes to the files ruff and bandit read, while they read them (Linux ``inotify``).

``confgate gate`` runs ruff and bandit beside the tests, on the working tree. A test that
rewrote a module (or the tools' settings) for the second they read it and put it back before
the end would leave no trace in the files: their digests after the run equal the ones before.
The interpreter's site-packages are watched too: a ``.pth`` file written there runs in every
Python process started later, bandit's among them (``-I`` leaves out only the user's site).
The watch is armed before any code of the change runs and listens until the tools are done;
any write, creation, removal or rename of a watched file in that time is named, and the
supervisor fails the run on it. Where ``inotify`` is not available (not Linux, or its limits
reached) there is no watch, and ``docs/security.md`` says what that leaves open.
"""

from __future__ import annotations

import contextlib
import os
import select
import struct
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

_IN_MODIFY = 0x002
_IN_CLOSE_WRITE = 0x008
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_MASK = _IN_MODIFY | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE
_EVENT = struct.Struct("iIII")
_POLL_S = 0.05
_SETTINGS = frozenset({"pyproject.toml", "ruff.toml", ".ruff.toml", "setup.cfg", "tox.ini",
                       ".bandit"})
"""The tools' settings at the root: a change to them during the run changes what they report."""


class SourceWatch:
    """The armed watch; ``until`` listens in a thread, ``stop`` names what was written."""

    def __init__(self, fd: int, folders: dict[int, Path], watched: set[Path], root: Path,
                 anywhere: frozenset[Path] = frozenset()) -> None:
        self._fd = fd
        self._folders = folders
        self._watched = watched
        self._root = root
        self._anywhere = anywhere
        self._files: dict[int, Path] = {}
        """Watches on the files themselves (their events carry no name)."""
        self._written: set[Path] = set()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def arm(cls, root: Path, files: Iterable[Path],
            anywhere: Iterable[Path] = ()) -> SourceWatch | None:
        """Watch ``files``, the tools' settings at ``root`` and any name in the ``anywhere``
        folders that exist (the interpreter's site-packages: a ``.pth`` file planted there runs
        in every Python process that starts later, bandit's among them); None where that
        cannot be."""
        if not sys.platform.startswith("linux"):
            return None
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, AttributeError):
            return None
        if fd < 0:
            return None
        watched = {path.resolve() for path in files} | {root.resolve() / n for n in _SETTINGS}
        open_folders = frozenset(path.resolve() for path in anywhere if path.is_dir())
        folders: dict[int, Path] = {}
        for folder in sorted({path.parent for path in watched} | open_folders):
            wd = libc.inotify_add_watch(fd, os.fsencode(folder), _MASK)
            if wd < 0:  # a limit reached, or the folder gone: no partial watch
                os.close(fd)
                return None
            folders[wd] = folder
        watch = cls(fd, folders, watched, root, open_folders)
        for path in sorted(watched):  # the file itself too: a write through a hard link made
            if not path.is_file():    # elsewhere reaches its folder's watch under no name
                continue
            wd = libc.inotify_add_watch(fd, os.fsencode(path), _IN_MODIFY | _IN_CLOSE_WRITE)
            if wd < 0:  # the watch limit: the folders still see writes through their names
                break
            watch._files[wd] = path
        return watch

    def until(self, done: Callable[[], bool]) -> None:
        """Listen in a thread until ``done()`` (the tools finished) or ``stop``."""

        def listen() -> None:
            while not self._done.is_set():
                finished = done()  # asked first: a write before the tools ended still counts
                ready, _, _ = select.select([self._fd], [], [], 0 if finished else _POLL_S)
                if ready:
                    self._drain()
                if finished:
                    break
            self._close()  # what the run writes after the tools read is the digests' business

        self._thread = threading.Thread(target=listen, name="confgate-source-watch",
                                        daemon=True)
        self._thread.start()

    def join(self) -> None:
        """Wait until the listener stopped on its own (the tools finished)."""
        if self._thread is not None:
            self._thread.join()

    def stop(self) -> list[str]:
        """Stop listening; the watched files written meanwhile, relative to the root."""
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        else:
            self._close()
        return sorted(_shown(path, self._root) for path in self._written)

    def _close(self) -> None:
        with contextlib.suppress(OSError):
            self._drain()
            os.close(self._fd)

    def _drain(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while data := os.read(self._fd, 65536):
                offset = 0
                while offset + _EVENT.size <= len(data):
                    wd, _mask, _cookie, length = _EVENT.unpack_from(data, offset)
                    raw = data[offset + _EVENT.size: offset + _EVENT.size + length]
                    offset += _EVENT.size + length
                    folder = self._folders.get(wd)
                    name = os.fsdecode(raw.rstrip(b"\0"))
                    if wd in self._files and not name:
                        self._written.add(self._files[wd])
                    if folder is None or not name:
                        continue
                    if folder / name in self._watched or (
                            folder in self._anywhere and name != "__pycache__"):
                        self._written.add(folder / name)


def _shown(path: Path, root: Path) -> str:
    resolved = root.resolve()
    return str(path.relative_to(resolved)) if path.is_relative_to(resolved) else str(path)


"""Cache files nothing but the gate can plant (issue 34): every cache read and write goes here.

The gate's caches (``.confgate/cache``: instrumented code, coverage.py's analyses, the tools'
findings) live where the project's code can write too, and that code runs in the very process
that reads them. So, once a gate session has begun (``begin``):

- an entry whose ``st_ctime`` is at or after the moment project code could first run in this
  process (``project_code_since_ns``: the process's start, a worker's parent's start under xdist,
  never later than ``begin``) is read only if this process wrote exactly those bytes itself
  (path and sha256 kept in memory, never on disk). The kernel sets ``ctime`` on every write,
  rename or ``utime``; user code cannot set it back. The file is ``fstat``-ed before and after
  the read, so a rewrite while it is read is a miss too;
- ``sweep`` deletes, at the end of the run, every entry changed since then that the gate did
  not write (or that changed after it wrote it), so a planted entry never reaches a later run;
- ``unpickle`` restores only the classes a cache holds (``find_class`` allow-list): a
  ``__reduce__`` payload raises, and the entry is a miss, never code run.

A miss only ever costs speed. Writes from the gate's helper process and from xdist workers
reach the deciding process's memory through their own channels (``trust``), not through disk.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import pickle
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

_MARGIN_NS = 200_000_000
"""The kernel stamps ctime with a coarse clock (a tick behind); process start times are in
ticks too. Earlier is only more cautious: an entry written just before counts as planted."""
_written: dict[str, str] = {}
"""Absolute path -> sha256 of the bytes this process (or a helper it vouches for) wrote."""
_threshold_ns: int | None = None
"""While a gate session runs: entries changed at or after this need to be our own."""

ALLOWED_CLASSES = frozenset({
    ("coverage.parser", "PythonParser"),
    ("collections", "defaultdict"),
    ("builtins", "list"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "dict"),
    ("builtins", "tuple"),
})
"""Everything a pickled coverage.py ``PythonParser`` refers to (``coverage.analysis``)."""


def project_code_since_ns(*, parent_too: bool = False) -> int:
    """The earliest moment project code can have run in this process, in ``time.time_ns``.

    On Linux the process's start (``/proc``), and its parent's when ``parent_too`` (an xdist
    worker: the controller imported the conftests first); elsewhere now. Minus a margin.
    """
    now = time.time_ns()
    starts = [now, _process_start_ns(os.getpid(), now)]
    if parent_too:
        starts.append(_process_start_ns(os.getppid(), now))
    return min(starts) - _MARGIN_NS


def _process_start_ns(pid: int, now: int) -> int:
    clock = getattr(time, "CLOCK_BOOTTIME", None)
    if clock is None:
        return now
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rpartition(b")")[2].split()
        ticks = int(fields[19])  # field 22 of stat(5): starttime, in ticks since boot
        hertz = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return now
    since_start = time.clock_gettime_ns(clock) - ticks * 1_000_000_000 // hertz
    return now - max(0, since_start)


def begin(threshold_ns: int | None = None) -> int:
    """A gate session starts: from now on the ctime rule applies. Returns the threshold."""
    global _threshold_ns
    found = project_code_since_ns() if threshold_ns is None else threshold_ns
    _threshold_ns = found if _threshold_ns is None else min(_threshold_ns, found)
    return _threshold_ns


def end() -> None:
    """The session is over (what it wrote stays trusted in this process)."""
    global _threshold_ns
    _threshold_ns = None


def threshold() -> int | None:
    return _threshold_ns


def read_bytes(path: Path) -> bytes | None:
    """The entry's bytes, or None: absent, unreadable, or changed since project code could run
    and not written so by this process (then it is left for ``sweep``)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        before = os.fstat(fd)
        with io.FileIO(fd, "rb", closefd=False) as handle:
            data = handle.readall()
        after = os.fstat(fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    if (before.st_ctime_ns, before.st_size) != (after.st_ctime_ns, after.st_size):
        return None  # rewritten while we read it
    limit = _threshold_ns
    ours = _written.get(_key(path))
    if limit is not None and after.st_ctime_ns >= limit and ours != _sha256(data):
        return None
    return data


def write_bytes(path: Path, data: bytes) -> bool:
    """Write atomically (temp file, ``os.replace``) and remember the bytes as ours."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError:
        return False
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        _written[_key(path)] = _sha256(data)
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        return False
    return True


def written() -> list[tuple[str, str]]:
    """(path, sha256) of every entry this process wrote: a helper hands them to the gate."""
    return sorted(_written.items())


def trust(entries: Iterable[object]) -> None:
    """Vouch for entries our own helper process or xdist worker wrote (from its channel)."""
    for entry in entries:
        if (isinstance(entry, list | tuple) and len(entry) == 2
                and all(isinstance(part, str) for part in entry)):
            _written[str(entry[0])] = str(entry[1])


def sweep(folder: Path) -> list[str]:
    """Delete what changed under ``folder`` (or the file ``folder``) since project code could
    run and is not ours.

    Returns the deleted paths. Lock files hold no data and are kept (a concurrent run's lock).
    """
    limit = _threshold_ns
    if limit is None:
        return []
    removed = []
    for path in _files(folder):
        try:
            info = path.stat()
            if info.st_ctime_ns < limit or path.suffix == ".lock":
                continue
            ours = _written.get(_key(path))
            if ours is not None and ours == _digest(path):
                continue
            path.unlink()
        except OSError:
            continue
        removed.append(str(path))
    return removed


class _Restricted(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in ALLOWED_CLASSES:
            raise pickle.UnpicklingError(f"{module}.{name} is not a class the cache holds")
        return super().find_class(module, name)


def unpickle(data: bytes) -> Any:
    """``data`` unpickled with only ``ALLOWED_CLASSES``; None for anything else or garbage."""
    try:
        return _Restricted(io.BytesIO(data)).load()
    except Exception:  # any surprise in a cache entry is a miss, never an error of the run
        return None


def _files(folder: Path) -> Iterable[Path]:
    if folder.is_file():  # one entry (a tool's cache file)
        yield folder
        return
    for dirpath, _dirs, names in os.walk(folder):
        for name in names:
            yield Path(dirpath, name)


def _digest(path: Path) -> str | None:
    try:
        return _sha256(path.read_bytes())
    except OSError:
        return None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _key(path: Path) -> str:
    return os.path.abspath(path)


__all__ = [
    "ALLOWED_CLASSES",
    "begin",
    "end",
    "project_code_since_ns",
    "read_bytes",
    "sweep",
    "threshold",
    "trust",
    "unpickle",
    "write_bytes",
    "written",
]

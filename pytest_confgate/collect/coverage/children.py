"""Code run in child processes, measured as coverage.py's own ``patch`` and ``concurrency`` do.

The gate's engines (probes, ``sys.monitoring``) live in the pytest process. A project that
sets ``[run] patch = ["subprocess"]`` (``execv``, ``_exit`` ride along in the child's
configuration; ``execv`` alone hands it only to an ``execve``'s environment, as coverage.py's
patch does) or ``concurrency = ["multiprocessing"]`` expects code its tests run in child
processes to count, as it does under ``coverage run``. So each child is measured by coverage.py
itself, started by coverage.py's own start-up hooks: its ``.pth`` file reading
``COVERAGE_PROCESS_CONFIG`` (the gate's configuration, serialized by coverage.py), and its
multiprocessing patch. The children write their data into a private folder, never the
project's ``.coverage*`` files, and the gate combines that folder into its own data and removes
it; data files the user keeps are neither read nor removed.
"""

from __future__ import annotations

import contextlib
import copy
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from pytest_confgate.collect.coverage.data_copy import subset

CHILD_PATCHES = frozenset({"subprocess", "execv", "_exit"})
"""coverage.py ``patch`` values that concern processes other than the pytest one."""
FORK = "fork"
"""coverage.py's ``patch = ["fork"]`` restarts measuring in a forked child: the frames running
at the fork go unmeasured there. The gate's engines measure them on, as without it."""
_GATES_OWN = CHILD_PATCHES | {FORK}
"""The ``patch`` values no coverage.py object the gate starts may apply itself."""
CHILDREN = "coverage.py (child processes)"
"""The engine that measured the children, as ``details.child_processes`` names it."""
_ENV = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_FILE", "COVERAGE_RCFILE")


def leave_children_to_the_gate(cov: Any) -> None:
    """Take the child-process ``patch`` values off a coverage.py object the gate starts in the
    pytest process: ``ChildProcesses`` applies them, its children writing to the gate's
    private folder. Started with them, coverage.py would point the children back at the
    project's own data file (``COVERAGE_PROCESS_CONFIG``), where nothing combines them; and
    with ``fork`` it would stop the gate's tracer in a forked child (the probes measure on)."""
    patches = list(cov.get_option("run:patch") or ())
    if set(patches) & _GATES_OWN:
        cov.set_option("run:patch", [name for name in patches if name not in _GATES_OWN])


class ChildProcesses:
    """Child processes measured by coverage.py into a private folder: ``start``, ``stop``,
    ``combine``."""

    def __init__(self, cov: Any, patches: set[str], multiprocessing: bool) -> None:
        self._cov = cov
        self.patches = patches
        self.multiprocessing = multiprocessing
        self._folder: Path | None = None
        self._saved_env: dict[str, str | None] = {}
        self._undo: list[Callable[[], None]] = []
        self.data_files = 0
        """How many children's data files were combined."""
        self.unreadable: list[str] = []
        """Why each data file coverage.py could not use was left out (its own words)."""

    @classmethod
    def for_run(cls, cov: Any) -> ChildProcesses | None:
        """What ``cov``'s configuration asks for children, or ``None`` when nothing."""
        patches = set(cov.get_option("run:patch") or ()) & CHILD_PATCHES
        multiprocessing = "multiprocessing" in (cov.get_option("run:concurrency") or ())
        if not patches and not multiprocessing:
            return None
        return cls(cov, patches, multiprocessing)

    def start(self, save: Callable[[str], None]) -> None:
        """Children started from now on are measured (the environment is theirs to inherit).

        ``save(path)`` writes this process's data: with ``patch = ["_exit"]`` a child forked
        from the pytest process that ends with ``os._exit`` saves its part first.
        """
        self._folder = Path(tempfile.mkdtemp(prefix="confgate-children-"))
        data_file = str(self._folder / ".coverage")
        self._saved_env = {name: os.environ.get(name) for name in _ENV}
        os.environ["COVERAGE_FILE"] = data_file
        config = copy.deepcopy(self._cov.config)
        config.data_file = data_file
        config.parallel = True
        serialized = config.serialize()
        if "subprocess" in self.patches:  # every child Python inherits it
            os.environ["COVERAGE_PROCESS_CONFIG"] = serialized
        undo: list[Callable[[], None] | None] = []
        if "execv" in self.patches and self._parallel():
            # As coverage.py's execv patch: the process saves before it is replaced, and an
            # `execve` hands the configuration on in its environment argument. Without
            # parallel data files both land in the one data file the pytest process rewrites
            # at its end, so under `coverage run` neither counts: nothing to do here either.
            undo.append(_patch_execv(save, data_file, serialized))
        if self.multiprocessing:
            undo.append(_patch_multiprocessing(self._cov.config))
        if "_exit" in self.patches and self._parallel():
            # Without parallel data files, coverage.py's forked child writes the parent's
            # file, which the parent then overwrites: its lines do not count there either.
            undo.append(_patch_exit(save, data_file))
        self._undo = [step for step in undo if step is not None]

    def _parallel(self) -> bool:
        """Whether coverage.py would write one data file per process (and combine them)."""
        implied = self.multiprocessing or "subprocess" in self.patches
        return implied or bool(self._cov.get_option("run:parallel"))

    def stop(self) -> None:
        """Children started from now on are not measured; the environment is given back."""
        for step in reversed(self._undo):
            step()
        self._undo = []
        for name, value in self._saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved_env = {}

    def combine(self, data: Any, wants: Callable[[str], bool] | None = None,
                map_path: Callable[[str], str] | None = None) -> str | None:
        """Add every child's data to ``data`` (a ``CoverageData``) and remove the folder.

        ``wants`` keeps only the files the pytest process measures (a multiprocessing child
        reads the project's own configuration, not the gate's); ``map_path`` names each file
        as ``coverage combine`` does (``[paths]``, and with ``relative_files`` relative to
        here: a child started in another folder recorded absolute names). Returns why the
        children's data could not be combined, if so.
        """

        self.stop()
        folder, self._folder = self._folder, None
        if folder is None:
            return None
        try:
            for path in sorted(folder.glob(".coverage.*")):
                part = _read(path)
                if isinstance(part, str):  # as `coverage combine`: said, and left out
                    self.unreadable.append(part)
                    continue
                if wants is not None:
                    part = _only(part, wants)
                data.update(part, map_path=map_path)
                self.data_files += 1
        except Exception as exc:  # coverage.py raises plain exceptions (sqlite, data kinds)
            return f"the child processes' coverage data could not be combined: {exc}"
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return None

    def note(self) -> dict[str, Any]:
        """What ``details.child_processes`` says."""
        settings = sorted(f"patch={name}" for name in self.patches)
        if self.multiprocessing:
            settings.append("concurrency=multiprocessing")
        return {"engine": CHILDREN, "settings": settings, "data_files": self.data_files}


def merged_notes(notes: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What ``details.child_processes`` says for children measured in other processes (xdist
    workers, ``confgate gate``'s test process), from each one's ``note``."""
    if not notes:
        return None
    settings = sorted({str(name) for note in notes for name in note.get("settings") or []})
    files = sum(int(note.get("data_files") or 0) for note in notes)
    return {"engine": CHILDREN, "settings": settings, "data_files": files}


def _read(path: Path) -> Any:
    """A child's data file, or why coverage.py cannot use it (a child killed while it
    started leaves an empty one). Read only: opening it to write would make an empty file a
    data file of no kind, which then clashes with the run's branch data."""
    from coverage import CoverageData
    from coverage.exceptions import CoverageException

    try:
        try:
            part = CoverageData(basename=str(path), read_only=True)
        except TypeError:  # coverage.py before read_only
            part = CoverageData(basename=str(path))
        part.read()
        part.measured_files()
    except CoverageException as exc:
        return str(exc)
    return part


def _only(part: Any, wants: Callable[[str], bool]) -> Any:
    names = [name for name in part.measured_files() if wants(name)]
    return subset(part, names, arcs=part.has_arcs())


def _patch_exit(save: Callable[[str], None], data_file: str) -> Callable[[], None]:
    """``os._exit`` in a child forked from this process saves the child's data first."""
    parent = os.getpid()
    original = os._exit

    def exit_saving(status: int) -> NoReturn:
        if os.getpid() != parent:
            with contextlib.suppress(Exception):
                save(f"{data_file}.fork.{os.getpid()}")
        original(status)

    os._exit = exit_saving

    def undo() -> None:
        if os._exit is exit_saving:
            os._exit = original

    return undo


def _patch_execv(save: Callable[[str], None], data_file: str, serialized: str
                 ) -> Callable[[], None]:
    """coverage.py's ``execv`` patch, writing to the gate's folder: a child forked from this
    process saves what it measured before an exec replaces it (``save``), and ``execve``'s new
    environment carries the configuration, so the program it starts is measured by coverage.py's
    start-up hook."""
    parent = os.getpid()
    execv, execve = os.execv, os.execve

    def saved_first() -> None:
        if os.getpid() != parent:
            with contextlib.suppress(Exception):
                save(f"{data_file}.exec.{os.getpid()}")

    def execv_saving(*args: Any, **kwargs: Any) -> Any:
        saved_first()
        return execv(*args, **kwargs)

    def execve_saving(*args: Any, **kwargs: Any) -> Any:
        saved_first()
        with contextlib.suppress(Exception):  # coverage.py: the environment is the last argument
            args[-1]["COVERAGE_PROCESS_CONFIG"] = serialized
        return execve(*args, **kwargs)

    os.execv, os.execve = execv_saving, execve_saving

    def undo() -> None:
        if os.execv is execv_saving:
            os.execv = execv
        if os.execve is execve_saving:
            os.execve = execve

    return undo


def _patch_multiprocessing(config: Any) -> Callable[[], None] | None:
    """coverage.py's multiprocessing patch, undone when the run ends (pytest lives on).

    Already applied (the gate itself runs under ``coverage run``): left as it is.
    """
    import multiprocessing
    from multiprocessing import spawn

    from coverage import multiproc

    rcfile = getattr(config, "config_file", None)
    if not rcfile or hasattr(multiprocessing, multiproc.PATCHED_MARKER):
        return None
    bootstrap = multiproc.OriginalProcess._bootstrap  # type: ignore[attr-defined]
    preparation = spawn.get_preparation_data
    multiproc.patch_multiprocessing(rcfile=rcfile)

    def undo() -> None:
        multiproc.OriginalProcess._bootstrap = bootstrap  # type: ignore[attr-defined]
        spawn.get_preparation_data = preparation
        if hasattr(multiprocessing, multiproc.PATCHED_MARKER):
            delattr(multiprocessing, multiproc.PATCHED_MARKER)

    return undo

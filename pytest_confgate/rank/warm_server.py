"""A warm pytest for cross-test runs: one process with pytest imported, forked once per run.

Each cross-test run is a short pytest process, and most of its cost is Python starting and
pytest importing (iniconfig: about 0.17 of 0.24 CPU seconds). With 4 candidates, that start
was paid 4 times, only on the side that ranks several candidates (issue 36, item 5). This
server is started by rank (``warm.WarmPytest``) with the candidates' Python, in an empty
folder, before any candidate's code runs; it imports pytest and then forks one child per run
rank asks for, which behaves as ``python -m pytest ARGS`` started in the run's folder with the
run's environment would.

Nothing of a tree is imported here: names that any ranked tree provides at its root or under
``src`` (``blocked``) cannot be imported while pytest is preloaded (an import that asks for one
is undone whole), so a tree that is also one of pytest's dependencies (iniconfig) gets its own
copy imported by the child, as a fresh process would. Rank refuses a run whose folder or
``PYTHONPATH`` provides a module this server has loaded (``ready``'s ``loaded``) and starts it
as before.

Per run (``_run``): a forked intermediary in a session of its own becomes the subreaper of
everything below it, as ``subreaper.py`` does for every other process of rank's; it forks the
pytest child, waits for it, kills and reaps whatever is left below it, and writes the child's
exit status on the run's status pipe. The child gets the run's stdout and stderr pipes, no
other descriptor of ours, the run's folder, environment and ``sys.path`` (its folder, then its
``PYTHONPATH``, then this interpreter's own), fresh random state and temp folder, and runs
pytest's ``__main__`` as ``-m`` does. The server ends when rank closes its socket; rank's
``Processes.kill_all`` ends it, and everything it started, through its own intermediary.

Runs with ``python FILE`` (the candidates' interpreter, not ours): a leaf that imports nothing
of the package but ``subreaper.py``, loaded by its path.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import os
import select
import signal
import socket
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
_PR_SET_DUMPABLE = 4
_MAX_MESSAGE = 1 << 20
"""The largest request (a run's argv and environment) rank sends in one datagram."""
_PIPES = 3
"""Each run's stdout, stderr and status pipes come first with its request ..."""
_MAX_PASSED = 1
"""... then what the run keeps open as it is (its outcome socket)."""
_FALLBACK_PRELOAD = (
    "pluggy", "argparse", "dataclasses", "inspect", "importlib.metadata", "email.message",
    "_pytest._io", "_pytest._code", "_pytest.outcomes", "_pytest.compat", "_pytest.pathlib",
)
"""What is still worth loading when pytest itself needs a name a tree provides."""


class _Blocker:
    """A meta-path finder that refuses (and remembers) names the ranked trees provide."""

    def __init__(self, blocked: Iterable[str]) -> None:
        self.blocked = frozenset(blocked)
        self.asked: list[str] = []

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.partition(".")[0] in self.blocked:
            self.asked.append(name)
            raise ImportError(f"{name} is provided by a ranked tree")


def preload(blocked: Iterable[str]) -> list[str]:
    """Import pytest (else ``_FALLBACK_PRELOAD``) without any name in ``blocked``; an import
    that asked for one is undone whole, even if it caught the error. Returns the top-level
    names now loaded from files (what a run's folder must not provide)."""
    blocker = _Blocker(blocked)
    sys.meta_path.insert(0, blocker)
    try:
        if _needs_blocked("pytest", blocker.blocked) or not _load("pytest", blocker):
            for name in _FALLBACK_PRELOAD:
                _load(name, blocker)
    finally:
        sys.meta_path.remove(blocker)
    return sorted({name.partition(".")[0] for name, module in list(sys.modules.items())
                   if getattr(module, "__file__", None) or getattr(module, "__path__", None)})


def _needs_blocked(distribution: str, blocked: frozenset[str]) -> bool:
    """Whether ``distribution`` requires one of the ``blocked`` names (by its metadata, as
    an import name is spelled): importing it to find out, and undoing that, costs as much."""
    import importlib.metadata
    import re

    try:
        requires = importlib.metadata.requires(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        return False
    needed = [r for r in requires if "extra" not in r.partition(";")[2]]  # not extras
    names = {re.sub(r"[-.]", "_", match.group(0)).lower()
             for match in (re.match(r"[A-Za-z0-9._-]+", r) for r in needed) if match}
    return bool(names & {name.lower() for name in blocked})


def _load(name: str, blocker: _Blocker) -> bool:
    before = set(sys.modules)
    blocker.asked.clear()
    with contextlib.suppress(Exception):
        importlib.import_module(name)
    if not blocker.asked and name in sys.modules:
        return True
    for added in set(sys.modules) - before:
        del sys.modules[added]
    return False


def serve(control: socket.socket, subreaper: Any) -> dict[str, Any]:
    """Answer rank's requests until it closes ``control`` (then exit). Returns in a forked
    pytest child only: the run it is to become."""
    runs: dict[str, int] = {}
    while True:
        ready, _, _ = select.select([control], [], [], 0.05)
        _reap(runs)
        if not ready:
            continue
        data, fds, _, _ = socket.recv_fds(control, _MAX_MESSAGE, _PIPES + _MAX_PASSED)
        if not data:  # rank is done: stop what is left, and end at once (nothing to tidy)
            for pid in runs.values():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
            os._exit(0)
        try:
            request = json.loads(data)
        except ValueError:
            request = {}
        if "stop" in request:
            stopped = runs.get(request["stop"])
            if stopped is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(stopped, signal.SIGTERM)
            continue
        if len(fds) < _PIPES or not isinstance(request.get("id"), str):
            for fd in fds:  # not a run: its end of the pipes closes, rank sees no status
                os.close(fd)
            continue
        pid = os.fork()
        if pid == 0:
            try:  # never back into this loop: the intermediary exits, the child runs pytest
                control.close()
                run = _run(request, fds, subreaper)
            except BaseException:
                os._exit(70)
            return run
        runs[request["id"]] = pid
        for fd in fds:
            os.close(fd)


def _reap(runs: dict[str, int]) -> None:
    for key, pid in list(runs.items()):
        with contextlib.suppress(ChildProcessError):
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done == 0:
                continue
        del runs[key]


class _Stop(Exception):
    """Rank asked this run to stop, or the server died."""


def _run(request: dict[str, Any], fds: list[int], subreaper: Any) -> dict[str, Any]:
    """The run's intermediary: its own session, the subreaper of all below it; returns only
    in the pytest child it forks."""
    out, err, status, *passed = fds
    os.setsid()
    server = os.getppid()
    handlers = {signum: signal.getsignal(signum)
                for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    subreaper._prctl(subreaper._PR_SET_CHILD_SUBREAPER, 1)
    for signum in handlers:
        signal.signal(signum, _raise_stop)
    code = 128 + signal.SIGTERM
    try:
        subreaper._prctl(subreaper._PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != server:
            raise _Stop
        child = os.fork()
        if child == 0:
            for signum, handler in handlers.items():
                signal.signal(signum, handler)
            _become(request, out, err, passed, subreaper)
            return request
        for fd in (out, err, *passed):
            os.close(fd)
        while True:
            pid, wait_status = os.waitpid(-1, 0)  # orphans handed to us are reaped here too
            if pid == child:
                code = os.waitstatus_to_exitcode(wait_status)
                break
    except _Stop:
        pass
    for signum in handlers:
        signal.signal(signum, signal.SIG_IGN)
    subreaper.end_descendants()
    with contextlib.suppress(OSError):
        os.write(status, f"{code}\n".encode())
    os._exit(0)


def _raise_stop(_signum: int, _frame: object) -> None:
    raise _Stop


def _become(request: dict[str, Any], out: int, err: int, passed: list[int], subreaper: Any
            ) -> None:
    """This process as a fresh ``python -m pytest`` in the run's folder would be, with the
    descriptors ``passed`` kept as a started process inherits them."""
    subreaper._prctl(_PR_SET_DUMPABLE, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    for name in os.listdir("/proc/self/fd"):  # what is open, not every possible number
        if int(name) > 2 and int(name) not in passed:
            with contextlib.suppress(OSError):
                os.close(int(name))
    cwd = request["cwd"]
    os.chdir(cwd)
    env: dict[str, str] = request["env"]
    os.environ.clear()
    os.environ.update(env)
    path: dict[str, str] = {}  # site makes them absolute and drops repeats as it starts,
    for entry in [*env.get("PYTHONPATH", "").split(os.pathsep), *_BASE_PATH]:
        if entry:
            absolute = os.path.abspath(entry)
            path.setdefault(os.path.normcase(absolute), absolute)
    sys.path[:] = [os.getcwd(), *path.values()]  # then -m puts the folder first
    sys.path_importer_cache.clear()
    importlib.invalidate_caches()
    if "tempfile" in sys.modules:  # it keeps the temp folder it found first
        sys.modules["tempfile"].tempdir = None  # type: ignore[attr-defined]
    if "random" in sys.modules:
        sys.modules["random"].seed()


_BASE_PATH: list[str] = []


def _main() -> int:
    # Our own folder first on sys.path would let rank's modules shadow what pytest imports.
    del sys.path[0]
    _BASE_PATH.extend(sys.path)
    spec = importlib.util.spec_from_file_location("_confgate_subreaper",
                                                  _HERE.parent / "subreaper.py")
    if spec is None or spec.loader is None:
        return 70
    subreaper = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(subreaper)
    # Not dumpable: a candidate's code, forked from here, cannot attach to the server (ptrace)
    # to change what later runs start from; each run is made dumpable again (``_become``).
    subreaper._prctl(_PR_SET_DUMPABLE, 0)
    control = socket.socket(fileno=int(sys.argv[1]))
    first, _, _, _ = socket.recv_fds(control, _MAX_MESSAGE, 0)
    if not first:
        return 0
    loaded = preload(json.loads(first)["blocked"])
    control.send(json.dumps({"ready": True, "loaded": loaded}).encode())
    run = serve(control, subreaper)
    import runpy

    sys.argv = ["pytest", *run["args"]]
    runpy.run_module("pytest", run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main())

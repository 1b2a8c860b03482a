"""``pytest --confgate`` began after a measured module ran: start once more, measured.

pytest imports its plugins before the gate's plugin runs. A project that is itself a pytest
plugin (pluggy, typeguard, pytest-mock), that pytest depends on (iniconfig), or that loads one
of its modules with ``-p`` has run import-time lines nobody measured, where ``coverage run -m
pytest`` counts them. When this process is pytest's own command line and such a module is
imported already, the process replaces itself (``os.execve``: same pid, same output, the
environment and one variable) with ``python -m pytest_confgate`` and the same arguments, which
measures from the first line (``early_start``) and then runs pytest as it was started
(``RESTARTED_AS``): the tests see bare pytest's ``sys.argv[0]`` and ``__main__``; only
``sys.orig_argv`` tells. Nothing of the project has run by then but those imports: no conftest,
no test, no output. It costs one more interpreter start, only on such projects.

Not restarted, and the modules are named instead (``imported_before_start``): pytest started
in-process (``pytest.main`` from a script, pytester), an xdist worker, a process that already
measures from its start (``python -m pytest_confgate``, ``confgate gate``'s test process), or
``CONFGATE_RESTART=0`` in the environment.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_confgate.collect.namespaces import module_file

ENV_OFF = "CONFGATE_RESTART"
"""``CONFGATE_RESTART=0``: never restart; modules imported too early are named instead."""

_PYTEST_SCRIPTS = frozenset({"pytest", "py.test", "pytest.exe", "py.test.exe"})
_WITH_VALUE = frozenset({"-W", "-X", "--check-hash-based-pycs"})
"""Interpreter options whose value may be the next argument."""


RESTARTED_AS = "CONFGATE_RESTARTED_AS"
"""Set for the restarted process only: the entry it was started as (``pytest``, or the script's
path), which ``python -m pytest_confgate`` takes out of the environment and runs as it was run,
so the tests see the ``sys.argv[0]`` and ``__main__`` of bare pytest (click names a program in
its usage text from them)."""


def command(orig_argv: Sequence[str], argv: Sequence[str]) -> list[str] | None:
    """``python [its options] -m pytest_confgate ARGS`` for a process started as pytest's own
    command line (``pytest ARGS``, ``python -m pytest ARGS``), else None."""
    found = _started_as(orig_argv)
    if found is None:
        return None
    return [sys.executable, *found[0], "-m", "pytest_confgate", *argv[1:]]


def entry(orig_argv: Sequence[str]) -> str | None:
    """How pytest was started: the module (``pytest``) or the script's path as given."""
    found = _started_as(orig_argv)
    return found[1] if found is not None else None


def pytest_entry(name: str) -> bool:
    """Whether ``name`` (``RESTARTED_AS``'s value) is one of pytest's own entries: its module,
    or a Python script named like pytest's (a native launcher is started another way)."""
    if name in ("pytest", "py.test"):
        return True
    path = Path(name)
    if path.name not in _PYTEST_SCRIPTS:
        return False
    try:
        with path.open("rb") as script:
            return b"\0" not in script.read(4096)
    except OSError:
        return False


def _started_as(orig_argv: Sequence[str]) -> tuple[list[str], str] | None:
    """The interpreter's options and pytest's entry (module name or script path), or None
    when this process is not pytest's own command line."""
    options: list[str] = []
    rest = list(orig_argv[1:])
    while rest:
        token = rest.pop(0)
        if token.startswith("-c") or token == "-":  # noqa: S105 - an argument, not a secret
            return None  # code given on the command line, or read from stdin
        if token.startswith("-m"):
            module = token[2:] or (rest.pop(0) if rest else "")
            if module not in ("pytest", "py.test"):
                return None
            return options, module
        if not token.startswith("-"):
            if Path(token).name not in _PYTEST_SCRIPTS:
                return None  # a script of the user's that calls pytest.main()
            return options, token
        options.append(token)
        if token in _WITH_VALUE and rest:
            options.append(rest.pop(0))
    return None


def imported_too_early(root: Path) -> list[str]:
    """Modules under ``root`` (not installed into a ``site-packages`` there) imported already
    that coverage.py, on this project's configuration, would measure."""
    base = os.path.realpath(root) + os.sep
    candidates = {
        name: os.path.realpath(filename)
        for name, module in list(sys.modules.items())
        if (filename := module_file(module)) is not None
        and filename.endswith((".py", ".pyw"))
    }
    under = {
        name: filename for name, filename in candidates.items()
        if filename.startswith(base) and not _installed(filename[len(base):])
        and not name.startswith("pytest_confgate")
    }
    if not under:
        return []
    measured = _measured(under)
    return sorted(measured)


def _installed(relative: str) -> bool:
    parts = relative.split(os.sep)
    return any(part in ("site-packages", "dist-packages") for part in parts)


def _measured(under: dict[str, str]) -> list[str]:
    """Which of ``under`` (module name -> file) coverage.py's own selection keeps."""
    import warnings

    from pytest_confgate.collect.coverage.files import FileSelection

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            import coverage

            selection = FileSelection.build(coverage.Coverage(data_file=None))
        except Exception:  # a broken configuration: the gate's own start reports it
            return []
    if isinstance(selection, str):
        return sorted(under.values())  # the tracer measures those files: they count too
    return sorted(filename for name, filename in under.items()
                  if selection.wants(filename, name))


def needed(config: Any) -> list[str] | None:
    """The restart command when this run should start again, measured; else None."""
    from pytest_confgate.collect.coverage import early_start

    if os.environ.get(ENV_OFF, "").strip() == "0" or early_start.owned():
        return None
    if hasattr(config, "workerinput"):  # an xdist worker (started as `python -c`, see below)
        return None
    invocation = getattr(config, "invocation_params", None)
    if invocation is None or tuple(invocation.args) != tuple(sys.argv[1:]):
        return None  # pytest.main() called in-process: not ours to replace
    restart = command(getattr(sys, "orig_argv", []), sys.argv)
    if restart is None or not imported_too_early(Path(config.rootpath)):
        return None
    return restart


def restart(config: Any, argv: list[str]) -> None:
    """Replace this process with ``argv``, giving back the terminal pytest's capture took."""
    capture = config.pluginmanager.get_plugin("capturemanager")
    if capture is not None:
        capture.stop_global_capturing()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed stream has nothing to lose
            stream.flush()
    environment = dict(os.environ)
    started_as = entry(getattr(sys, "orig_argv", []))
    if started_as is not None:
        environment[RESTARTED_AS] = started_as
    os.execve(argv[0], argv, environment)  # noqa: S606 - this interpreter, pytest's arguments

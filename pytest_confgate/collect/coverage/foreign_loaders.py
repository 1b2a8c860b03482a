"""Module bodies seen as they start, whatever loader runs them: for the probes (Python 3.11)
and for the early measurement's start (``early_start``).

Line probes reach a module only through the gate's finder. An import hook placed ahead of it
(typeguard's ``--typeguard-packages``, ``beartype.claw``, a project's own loader), or code
compiled and executed by hand (``runpy.run_path``), runs a measured file the probes never saw:
without this, its lines would silently not count. Every such execution passes through the
builtin ``exec``, which raises the ``exec`` audit event with the code object, whatever loader
compiled it. One audit hook per process (audit hooks cannot be removed) hands module code to
the engines watching; the probe engine then has coverage.py's tracer measure it (and names the
file), as coverage.py would have. ``early_start`` starts coverage.py's tracer as the first
measured module starts, through whichever finder found it.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from sys import _getframe  # bound once: a test may delete sys._getframe
from types import CodeType, FrameType

from pytest_confgate.collect.namespaces import namespace

Handler = Callable[[CodeType, str, str], None]
"""``handler(code, module name, loader name)`` for the code of a module about to run."""

_handlers: list[Handler] = []
_busy = threading.local()
_installed = False


def watch(handler: Handler) -> None:
    """Call ``handler`` for every module body executed from now on, until ``unwatch``."""
    global _installed
    if not _installed:
        sys.addaudithook(_audit)
        _installed = True
    _handlers.append(handler)


def unwatch(handler: Handler) -> None:
    if handler in _handlers:
        _handlers.remove(handler)


def _audit(event: str, args: tuple[object, ...]) -> None:
    if event != "exec" or not _handlers or getattr(_busy, "on", False):
        return
    code = args[0] if args else None
    if not isinstance(code, CodeType) or code.co_name != "<module>":
        return
    if code.co_filename.startswith("<"):
        # Code made from text (a dataclass's ``__init__``, attrs', a template): no file
        # coverage.py measures, and one per parametrized test on some suites (34,000 on
        # click's), each of which walked the stack here and again in the run-time audit.
        return
    _busy.on = True
    try:
        module, loader = _importing(_getframe(1))
        for handler in list(_handlers):
            handler(code, module, loader)
    finally:
        _busy.on = False


def _importing(frame: FrameType | None) -> tuple[str, str]:
    """The module being executed and its loader's class, from the loader's ``exec_module``."""
    for _ in range(4):
        if frame is None:
            break
        found = namespace(frame.f_locals.get("module"))  # the program's object: only read
        if found is not None:
            loader = frame.f_locals.get("self")
            name = found.get("__name__")
            return (name if type(name) is str else "",
                    type(loader).__name__ if loader is not None else "exec")
        frame = frame.f_back
    return "", "exec"

"""What the plugin compares rather than hears (issue 34, beside ``runtime_audit``'s hook):
module attributes and the real output streams raise no audit event when they change.

- ``snapshot_modules``/``replaced``: the identity of every function, class and method of
  ``_pytest``, ``pluggy``, ``coverage`` and ``pytest_confgate``, and of every class and builtin
  function in ``builtins`` (``AssertionError`` swapped for a subclass of pytest's skip
  exception turns every failed ``assert`` into a skip), taken at the session's start and
  compared at its end: ``runtime_gate_patched``;
- ``output_identity``/``saved_stderr``: where pytest's real stdout and stderr go, compared
  after each test: ``runtime_output_redirect``.
"""

from __future__ import annotations

import builtins
import os
import sys
import types
from collections.abc import Mapping

from pytest_confgate.collect.runtime_audit import watched_module


def snapshot_modules(modules: Mapping[str, object]) -> dict[tuple[str, str], object]:
    """Identity of every function and class the watched modules define, and of each class's
    own attributes: taken before any conftest, compared at the session's end."""
    taken: dict[tuple[str, str], object] = {}
    for name, module in list(modules.items()):
        if name == "builtins" and module is builtins:
            taken.update(_builtins())
            continue
        if not watched_module(name) or not isinstance(module, types.ModuleType):
            continue
        for attr, value in list(vars(module).items()):
            if getattr(value, "__module__", None) != name:
                continue
            if isinstance(value, types.FunctionType | type):
                taken[(name, attr)] = value
            if isinstance(value, type):
                members = vars(value)
                taken[(name, f"{attr} (its methods)")] = frozenset(
                    inner for inner, member in members.items() if callable(member)
                    or isinstance(member, classmethod | staticmethod | property)
                )
                for inner, member in list(members.items()):
                    if isinstance(member, types.FunctionType | classmethod | staticmethod
                                  | property):
                        taken[(name, f"{attr}.{inner}")] = member
    return taken


def _builtins() -> dict[tuple[str, str], object]:
    """The interpreter's own classes and functions, by identity only: those bound to their
    own name (the gate's line probes, bound methods under other names, are left out)."""
    return {("builtins", attr): value for attr, value in list(vars(builtins).items())
            if isinstance(value, type | types.BuiltinFunctionType)
            and getattr(value, "__name__", None) == attr}


def replaced(before: Mapping[tuple[str, str], object], modules: Mapping[str, object]) -> list[str]:
    """``module.name`` of each snapshotted function or class that is no longer the same."""
    now = snapshot_modules({name: modules.get(name) for name, _ in before})
    return sorted(f"{m}.{a}" for (m, a), was in before.items() if not _same(now.get((m, a)), was))


def _same(now: object, was: object) -> bool:
    return now is was or (isinstance(was, frozenset) and now == was)


def output_identity(capture: object, terminal_file: object) -> tuple[object, ...]:
    """Where the real stdout and stderr go, as pytest saved them: its saved streams and file
    descriptors (or the live ones without capture), and the terminal's file."""
    global_capture = getattr(capture, "_global_capturing", None)
    parts: list[object] = [terminal_file]
    for index, name in ((1, "out"), (2, "err")):
        saved = getattr(global_capture, name, None)
        fd = getattr(saved, "targetfd_save", index)
        stream = getattr(getattr(saved, "syscapture", saved), "_old", None)
        parts += [_fd_identity(fd if isinstance(fd, int) else index), stream]
    parts += [sys.__stdout__, sys.__stderr__]
    return tuple(parts)


def saved_stderr(capture: object) -> int:
    """The descriptor of the real stderr while pytest captures fd 2 (else 2 itself)."""
    saved = getattr(getattr(capture, "_global_capturing", None), "err", None)
    fd = getattr(saved, "targetfd_save", 2)
    return fd if isinstance(fd, int) else 2


def _fd_identity(fd: int) -> tuple[int, int] | None:
    try:
        info = os.fstat(fd)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


__all__ = ["output_identity", "replaced", "saved_stderr", "snapshot_modules"]

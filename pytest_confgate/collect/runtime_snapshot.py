"""What the plugin compares rather than hears (issue 34, beside ``runtime_audit``'s hook):
module attributes and the real output streams raise no audit event when they change.

- ``snapshot_modules``/``replaced``: the identity of every function, class and method of
  ``_pytest``, ``pluggy``, ``coverage`` and ``pytest_confgate``, and of every class and builtin
  function in ``builtins`` (``AssertionError`` swapped for a subclass of pytest's skip
  exception turns every failed ``assert`` into a skip), taken at the session's start and
  compared at its end: ``runtime_gate_patched``;
- ``output_identity``/``saved_stderr``: where pytest's real stdout and stderr go, compared
  after each test: ``runtime_output_redirect``.

The snapshot also keeps each watched module's and class's namespace as it was (keys and
values by identity), each class member's type and callability and each function's and class's
``__module__``: at the end, a module whose namespace, functions and classes are all exactly so
cannot give a different snapshot (a function or class keeps its kind, and only the entries
the first snapshot took are compared), and only the other modules are snapshotted again and
compared entry by entry (issue 35: the comparison was a second full snapshot, twice a run).
"""

from __future__ import annotations

import builtins
import operator
import os
import sys
import types
from collections.abc import Callable, Mapping

from pytest_confgate.collect.runtime_audit import watched_module


class Snapshot(dict[tuple[str, str], object]):
    """``(module, name) -> object`` as ``snapshot_modules`` took it, plus each module's
    namespaces as they were (``_shapes``), which let ``replaced`` skip unchanged modules."""

    _shapes: dict[str, tuple[tuple[object, ...], tuple[object, ...]]]
    """Per module: its functions and classes, and ``_shape`` of it when the snapshot was
    taken."""


def snapshot_modules(modules: Mapping[str, object]) -> Snapshot:
    """Identity of every function and class the watched modules define, and of each class's
    own attributes: taken before any conftest, compared at the session's end."""
    taken = Snapshot()
    taken._shapes = {}
    for name, module in list(modules.items()):
        if name == "builtins" and module is builtins:
            taken.update(_builtins())
            continue
        if not watched_module(name) or not isinstance(module, types.ModuleType):
            continue
        own: list[object] = []  # its functions, then its classes
        classes: list[type] = []
        for attr, value in list(vars(module).items()):
            if getattr(value, "__module__", None) != name:
                continue
            if isinstance(value, types.FunctionType | type):
                taken[(name, attr)] = value
            if isinstance(value, types.FunctionType):
                own.append(value)
            if isinstance(value, type):
                classes.append(value)
                members = vars(value)
                taken[(name, f"{attr} (its methods)")] = frozenset(
                    inner for inner, member in members.items() if callable(member)
                    or isinstance(member, classmethod | staticmethod | property)
                )
                for inner, member in list(members.items()):
                    if isinstance(member, types.FunctionType | classmethod | staticmethod
                                  | property):
                        taken[(name, f"{attr}.{inner}")] = member
        own += classes
        shape = _shape(module, own)
        if shape is not None:
            taken._shapes[name] = (tuple(own), shape)
    return taken


def _shape(module: types.ModuleType, own: tuple[object, ...] | list[object]
           ) -> tuple[object, ...] | None:
    """What the snapshot of ``module`` depends on: the module object, its namespace (keys and
    values), the ``__module__`` of its functions and classes (``own``), and each class's
    namespace with each member's type and callability. Equal shapes (``_same_shape``) give the same
    snapshot for every entry the first one took; None when one cannot be read (the module is
    then snapshotted again)."""
    try:
        names = vars(module)
        parts: list[object] = [module, tuple(names), tuple(names.values()),
                               tuple(map(_MODULE_OF, own))]
        for cls in own:
            if isinstance(cls, type):
                members = vars(cls)
                inner = tuple(members.values())
                parts += [tuple(members), inner, tuple(map(type, inner)),
                          tuple(map(callable, inner))]
    except Exception:  # a deleted __module__, a class that refuses to be read: no shortcut
        return None
    return tuple(parts)


_MODULE_OF = operator.attrgetter("__module__")


def _same_shape(was: tuple[object, ...], now: tuple[object, ...] | None) -> bool:
    """Every part the same object, or (the tuples of parts) of the same objects in order."""
    if now is None or len(was) != len(now):
        return False
    for before, after in zip(was, now, strict=True):
        if before is after:
            continue
        if not (isinstance(before, tuple) and isinstance(after, tuple)
                and len(before) == len(after) and all(map(operator.is_, before, after))):
            return False
    return True


def _builtins() -> dict[tuple[str, str], object]:
    """The interpreter's own classes and functions, by identity only: those bound to their
    own name (the gate's line probes, bound methods under other names, are left out)."""
    return {("builtins", attr): value for attr, value in list(vars(builtins).items())
            if isinstance(value, type | types.BuiltinFunctionType)
            and getattr(value, "__name__", None) == attr}


def replaced(before: Mapping[tuple[str, str], object], modules: Mapping[str, object],
             leave_out: Callable[[str], bool] | None = None) -> list[str]:
    """``module.name`` of each snapshotted function or class that is no longer the same;
    ``leave_out``: modules (by name) not compared."""
    shapes: dict[str, tuple[tuple[object, ...], tuple[object, ...]]] = getattr(
        before, "_shapes", {}
    )
    names = {name for name, _ in before if leave_out is None or not leave_out(name)}
    again = {}
    for name in names:
        module = modules.get(name)
        own, was = shapes.get(name, ((), ()))
        if was and isinstance(module, types.ModuleType) and _same_shape(
            was, _shape(module, own)
        ):
            continue  # nothing the snapshot read has changed: neither has the snapshot
        again[name] = module
    now = snapshot_modules(again)
    return sorted(f"{m}.{a}" for (m, a), was in before.items()
                  if m in again and not _same(now.get((m, a)), was))


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


__all__ = ["Snapshot", "output_identity", "replaced", "saved_stderr", "snapshot_modules"]

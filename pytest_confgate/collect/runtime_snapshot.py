"""What the plugin compares rather than hears (issue 34, beside ``runtime_audit``'s hook):
module attributes and the real output streams raise no audit event when they change.

- ``snapshot_modules``/``replaced``: the identity of every function, class and method of
  ``_pytest``, ``pluggy``, ``coverage`` and ``pytest_confgate``, and of every class and builtin
  function in ``builtins`` (``AssertionError`` swapped for a subclass of pytest's skip
  exception turns every failed ``assert`` into a skip), taken at the session's start and
  compared at its end: ``runtime_gate_patched``;
- ``output_identity``/``saved_stderr``: where pytest's real stdout and stderr go, compared
  after each test: ``runtime_output_redirect``.

The snapshot is taken as each watched module's namespace and its classes' namespaces (keys
and values by identity, with what the entries depend on: each function's and class's
``__module__``, each class member's callability and kind), cheap tuples built in C; its
``(module, name) -> object`` entries are spelled out from them only where they are read. At
the end a module whose namespaces are all exactly so cannot give different entries, and only
the other modules are compared entry by entry (issue 35: the snapshot spelled out every entry
at the session's start, and the comparison was a second full snapshot, twice a run).
"""

from __future__ import annotations

import builtins
import os
import sys
import types
from collections.abc import Callable, Iterator, Mapping
from itertools import repeat
from operator import attrgetter, is_
from typing import Any, cast

from pytest_confgate.collect.runtime_audit import watched_module

_METHOD_LIKE: tuple[type, ...] = (classmethod, staticmethod, property)
"""Members named among a class's methods though not callable themselves."""
_RECORDED: tuple[type, ...] = (types.FunctionType, classmethod, staticmethod, property)
"""Members whose identity is recorded one by one."""
_MODULE_OF = attrgetter("__module__")

Shape = tuple[object, ...]
"""``_shape``: a module's namespace and its classes', as the snapshot depends on them."""


class Snapshot(Mapping[tuple[str, str], object]):
    """``(module, name) -> object``: every function and class the watched modules define, and
    each class's methods, as they were; kept as each module's ``Shape`` (or, where one could
    not be taken, as the entries themselves) and spelled out when read."""

    def __init__(self) -> None:
        self._shapes: dict[str, tuple[tuple[object, ...], Shape]] = {}
        """Per module: its own functions and classes, in namespace order, and its shape."""
        self._entries: dict[tuple[str, str], object] = {}
        """The builtins' entries, and those of a module whose shape could not be taken."""
        self._all: dict[tuple[str, str], object] | None = None

    def module_names(self) -> set[str]:
        return set(self._shapes) | {name for name, _ in self._entries}

    def of_module(self, name: str) -> dict[tuple[str, str], object]:
        if name in self._shapes:
            return _entries_from_shape(name, *self._shapes[name])
        return {key: value for key, value in self._entries.items() if key[0] == name}

    def _spelled(self) -> dict[tuple[str, str], object]:
        if self._all is None:
            found = dict(self._entries)
            for name in self._shapes:
                found.update(self.of_module(name))
            self._all = found
        return self._all

    def __getitem__(self, key: tuple[str, str]) -> object:
        return self._spelled()[key]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._spelled())

    def __len__(self) -> int:
        return len(self._spelled())


def snapshot_modules(modules: Mapping[str, object]) -> Snapshot:
    """Identity of every function and class the watched modules define, and of each class's
    own attributes: taken before any conftest, compared at the session's end."""
    taken = Snapshot()
    for name, module in list(modules.items()):
        if name == "builtins" and module is builtins:
            taken._entries.update(_builtins())
            continue
        if not watched_module(name) or not isinstance(module, types.ModuleType):
            continue
        own = _own(name, module)
        shape = _shape(module, own)
        if shape is None:
            taken._entries.update(_module_entries(name, module))
        else:
            taken._shapes[name] = (own, shape)
    return taken


def _own(name: str, module: types.ModuleType) -> tuple[object, ...]:
    """The functions and classes ``module`` defines (its namespace's values whose
    ``__module__`` is its name), in namespace order."""
    return tuple(value for value in list(vars(module).values())
                 if getattr(value, "__module__", None) == name
                 and isinstance(value, types.FunctionType | type))


def _shape(module: types.ModuleType, own: tuple[object, ...]) -> Shape | None:
    """What the snapshot of ``module`` depends on: the module object, its namespace (keys and
    values), the ``__module__`` of its own functions and classes, and each class's namespace
    with each member's callability and kind. Equal shapes (``_same_shape``) give the same
    entries for every entry the first one gave; None when one cannot be read."""
    try:
        names = vars(module)
        parts: list[object] = [module, tuple(names), tuple(names.values()),
                               tuple(map(_MODULE_OF, own))]
        for cls in own:
            if isinstance(cls, type):
                members = vars(cls)
                inner = tuple(members.values())
                parts += [tuple(members), inner, tuple(map(callable, inner)),
                          tuple(map(isinstance, inner, repeat(_METHOD_LIKE))),
                          tuple(map(isinstance, inner, repeat(_RECORDED)))]
    except Exception:  # a deleted __module__, a class that refuses to be read: no shortcut
        return None
    return tuple(parts)


def _entries_from_shape(name: str, own: tuple[object, ...], shape: Shape
                        ) -> dict[tuple[str, str], object]:
    """The entries ``_module_entries`` gave when ``shape`` was taken, from the shape alone."""
    parts = cast(tuple[tuple[Any, ...], ...], shape[1:])  # the module object aside
    keys, values = parts[0], parts[1]
    classes: dict[int, tuple[tuple[Any, ...], ...]] = {}
    index = 3
    for cls in own:
        if isinstance(cls, type):
            classes[id(cls)] = parts[index:index + 5]
            index += 5
    mine = {id(value) for value in own}
    taken: dict[tuple[str, str], object] = {}
    for attr, value in zip(keys, values, strict=True):
        if id(value) not in mine:
            continue
        taken[(name, attr)] = value
        if not isinstance(value, type):
            continue
        inner_names, inner, can_call, method_like, recorded = classes[id(value)]
        taken[(name, f"{attr} (its methods)")] = frozenset(
            inner_name
            for inner_name, called, like in zip(inner_names, can_call, method_like, strict=True)
            if called or like
        )
        for inner_name, member, kept in zip(inner_names, inner, recorded, strict=True):
            if kept:
                taken[(name, f"{attr}.{inner_name}")] = member
    return taken


def _module_entries(name: str, module: types.ModuleType) -> dict[tuple[str, str], object]:
    """Identity of every function and class ``module`` defines, and of each class's own
    methods, read now."""
    taken: dict[tuple[str, str], object] = {}
    for attr, value in list(vars(module).items()):
        if getattr(value, "__module__", None) != name:
            continue
        if isinstance(value, types.FunctionType | type):
            taken[(name, attr)] = value
        if isinstance(value, type):
            members = vars(value)
            taken[(name, f"{attr} (its methods)")] = frozenset(
                inner for inner, member in members.items() if callable(member)
                or isinstance(member, _METHOD_LIKE)
            )
            for inner, member in list(members.items()):
                if isinstance(member, _RECORDED):
                    taken[(name, f"{attr}.{inner}")] = member
    return taken


def _same_shape(was: Shape, now: Shape | None) -> bool:
    """Every part the same object, or (the tuples of parts) of the same objects in order."""
    if now is None or len(was) != len(now):
        return False
    for before, after in zip(was, now, strict=True):
        if before is after:
            continue
        if not (isinstance(before, tuple) and isinstance(after, tuple)
                and len(before) == len(after) and all(map(is_, before, after))):
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
    if not isinstance(before, Snapshot):  # entries alone: compare them all
        snapshot = Snapshot()
        snapshot._entries.update(before)
        before = snapshot
    found: list[str] = []
    for name in before.module_names():
        if leave_out is not None and leave_out(name):
            continue
        module = modules.get(name)
        if name in before._shapes and isinstance(module, types.ModuleType):
            own, was = before._shapes[name]
            if _same_shape(was, _shape(module, own)):
                continue  # nothing the entries were read from has changed
        now = snapshot_modules({name: module})
        found += [f"{m}.{a}" for (m, a), was in before.of_module(name).items()
                  if not _same(now.get((m, a)), was)]
    return sorted(found)


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

"""``runtime_snapshot``: the end-of-session comparison snapshots again only the modules whose
namespaces changed (issue 35), and finds exactly what a full second snapshot finds."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Mapping

import pytest

from pytest_confgate.collect import runtime_snapshot
from pytest_confgate.collect.runtime_audit import watched_module
from pytest_confgate.collect.runtime_snapshot import Snapshot, replaced, snapshot_modules

NAME = "pytest_confgate._snapshot_probe"
"""A module name the audit watches (our own package), never imported: built per test."""


def _module() -> types.ModuleType:
    module = types.ModuleType(NAME)
    source = (
        "class Described(property):\n    pass\n\n"
        "class Plain:\n    pass\n\n"
        "class Target:\n"
        "    limit = 3\n"
        "    helper = Plain()\n"
        "    def run(self):\n        return 1\n"
        "    @classmethod\n    def make(cls):\n        return cls()\n"
        "    @Described\n    def size(self):\n        return 2\n\n"
        "def check():\n    return True\n\n"
        "setting = 1\n"
    )
    exec(compile(source, f"<{NAME}>", "exec"), vars(module))  # noqa: S102 - our own text
    return module


def _as_before(modules: Mapping[str, object]) -> dict[tuple[str, str], object]:
    """The snapshot as it was spelled out before issue 35 (the reference)."""
    import builtins

    taken: dict[tuple[str, str], object] = {}
    for name, module in list(modules.items()):
        if name == "builtins" and module is builtins:
            taken.update(runtime_snapshot._builtins())
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


def test_the_entries_are_those_the_snapshot_spelled_out_before() -> None:
    """Over this process's real modules (pytest's, pluggy's, coverage's, ours, builtins):
    the entries kept as shapes are, once spelled out, exactly the entries taken before."""
    modules = dict(sys.modules)
    assert dict(snapshot_modules(modules)) == _as_before(modules)
    probe = _module()
    assert dict(snapshot_modules({NAME: probe})) == _as_before({NAME: probe})


def _fully(before: Mapping[tuple[str, str], object], modules: Mapping[str, object]) -> list[str]:
    """What the comparison found before issue 35: a whole second snapshot."""
    now = _as_before({name: modules.get(name) for name, _ in before})
    return sorted(f"{m}.{a}" for (m, a), was in before.items()
                  if not runtime_snapshot._same(now.get((m, a)), was))


def _replacement() -> object:
    def run(self: object) -> int:
        return 1
    return run


CHANGES: dict[str, tuple[Callable[[types.ModuleType], None], list[str]]] = {
    "nothing": (lambda m: None, []),
    "a module value the snapshot ignores": (lambda m: setattr(m, "setting", 2), []),
    "a class value the snapshot ignores": (lambda m: setattr(m.Target, "limit", 4), []),
    "a function rebound": (lambda m: setattr(m, "check", lambda: False), [f"{NAME}.check"]),
    "a method replaced": (lambda m: setattr(m.Target, "run", _replacement()),
                          [f"{NAME}.Target.run"]),
    "a method deleted": (lambda m: delattr(m.Target, "run"),
                         [f"{NAME}.Target (its methods)", f"{NAME}.Target.run"]),
    "a function's __module__ rewritten": (lambda m: setattr(m.check, "__module__", "x"),
                                          [f"{NAME}.check"]),
    "a member made callable through its class": (
        lambda m: setattr(m.Plain, "__call__", lambda self: None),
        [f"{NAME}.Plain (its methods)", f"{NAME}.Target (its methods)"],
    ),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_the_shortcut_finds_what_a_full_snapshot_finds(change: str) -> None:
    module = _module()
    before = snapshot_modules({NAME: module})
    apply, expected = CHANGES[change]
    apply(module)
    found = replaced(before, {NAME: module})
    assert found == _fully(before, {NAME: module}) == expected


def test_a_module_imported_again_is_compared_entry_by_entry() -> None:
    before = snapshot_modules({NAME: _module()})
    modules: dict[str, object] = {NAME: _module()}
    found = replaced(before, modules)
    assert found == _fully(before, modules)
    assert f"{NAME}.check" in found
    assert f"{NAME}.Target.run" in found


def test_an_unchanged_module_is_not_snapshotted_again(monkeypatch: pytest.MonkeyPatch) -> None:
    module, other = _module(), types.ModuleType(f"{NAME}_other")
    exec("def f():\n    return 0\n", vars(other))  # noqa: S102 - our own text
    before = snapshot_modules({NAME: module, other.__name__: other})
    again: list[list[str]] = []
    full = runtime_snapshot.snapshot_modules

    def spy(modules: Mapping[str, object]) -> Snapshot:
        again.append(sorted(modules))
        return full(modules)

    monkeypatch.setattr(runtime_snapshot, "snapshot_modules", spy)
    modules = {NAME: module, other.__name__: other}
    assert replaced(before, modules) == []
    setattr(module, "setting", 5)  # noqa: B010 - a module built at run time
    assert replaced(before, modules) == []
    assert replaced(before, modules, leave_out=lambda name: name == NAME) == []
    assert again == [[NAME]]  # one module changed; the other was not read again


def test_a_module_missing_at_the_end_is_named_as_before() -> None:
    module = _module()
    before = snapshot_modules({NAME: module})
    assert replaced(before, {}) == _fully(before, {})
    assert f"{NAME}.check" in replaced(before, {})

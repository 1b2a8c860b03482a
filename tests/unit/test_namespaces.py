"""Reading what ``sys.modules`` holds runs none of the program's code."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

from pytest_confgate.collect.namespaces import module_file, namespace


def _lazy(tmp_path: Path, name: str) -> types.ModuleType:
    path = tmp_path / f"{name}.py"
    path.write_text("LOADED = True\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_lazy_module_is_read_without_being_loaded(tmp_path: Path) -> None:
    """``getattr(module, "__file__")`` loads a ``LazyLoader`` module: the gate looking at
    ``sys.modules`` would run its code then, not when the program first uses it."""
    module = _lazy(tmp_path, "lazy_read")
    assert module_file(module) == str(tmp_path / "lazy_read.py")
    names = namespace(module)
    assert names is not None
    assert "LOADED" not in names
    assert type(module) is not types.ModuleType  # still lazy: nothing loaded it
    assert module.LOADED is True  # the program's own first use loads it
    assert "LOADED" in (namespace(module) or {})


def test_an_object_that_is_not_a_module_is_not_asked_anything() -> None:
    """``isinstance`` asks a foreign object for its ``__class__``: code of the program's."""
    asked: list[str] = []

    class Nosy:
        def __getattribute__(self, name: str) -> object:
            asked.append(name)
            return object.__getattribute__(self, name)

    sys.modules["confgate_test_nosy"] = Nosy()  # type: ignore[assignment]
    try:
        assert namespace(sys.modules["confgate_test_nosy"]) is None
        assert module_file(sys.modules["confgate_test_nosy"]) is None
    finally:
        del sys.modules["confgate_test_nosy"]
    assert asked == []

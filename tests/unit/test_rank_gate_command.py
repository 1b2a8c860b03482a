"""The gate run of ``confgate rank`` starts as the gate's pytest would restart itself, where
pytest imports the project before the gate begins."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_confgate.rank.evaluate import measured_from_start, pytest_imports_first


@pytest.mark.parametrize(("command", "expected"), [
    (("py", "-m", "pytest"), ("py", "-m", "pytest_confgate")),
    (("py", "-m", "pytest", "-x", "tests"), ("py", "-m", "pytest_confgate", "-x", "tests")),
    (("py", "-I", "-X", "dev", "-Wdefault", "-m", "pytest", "-q"),
     ("py", "-I", "-X", "dev", "-Wdefault", "-m", "pytest_confgate", "-q")),
])
def test_python_dash_m_pytest_starts_as_the_gate_measured_from_the_start(
    command: tuple[str, ...], expected: tuple[str, ...]
) -> None:
    assert measured_from_start(command) == expected


@pytest.mark.parametrize("command", [
    ("pytest", "-x"),
    ("py", "/venv/bin/pytest"),
    ("py", "-c", "import pytest; pytest.main()", "-m", "pytest"),
    ("py", "-mpytest"),
    ("py", "-m", "pytest_xdist_runner"),
    ("tox", "-e", "py", "--", "-m", "pytest"),
    ("py", "-m"),
])
def test_any_other_command_is_left_as_given(command: tuple[str, ...]) -> None:
    assert measured_from_start(command) == command


def package(tmp_path: Path, name: str, *, src: bool = False) -> Path:
    tree = tmp_path / name
    where = tree / "src" if src else tree
    (where / name).mkdir(parents=True)
    (where / name / "__init__.py").write_text("")
    return tree


def test_a_project_pytest_requires_is_measured_from_the_start(tmp_path: Path) -> None:
    # pytest imports iniconfig and pluggy at its start, before the gate's plugin runs
    assert pytest_imports_first(package(tmp_path, "iniconfig", src=True), sys.executable)
    assert pytest_imports_first(package(tmp_path, "pluggy"), sys.executable)


def test_a_project_pytest_does_not_import_starts_as_configured(tmp_path: Path) -> None:
    tree = package(tmp_path, "clamp_task")
    assert not pytest_imports_first(tree, sys.executable)
    # the gate's own plugin package: its pytest never starts again for it
    assert not pytest_imports_first(package(tmp_path, "pytest_confgate"), sys.executable)
    # another interpreter's packages are not visible from here
    assert not pytest_imports_first(package(tmp_path, "pluggy"), "/elsewhere/bin/python")

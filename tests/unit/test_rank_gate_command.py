"""The gate run of ``confgate rank`` starts as the gate's pytest would restart itself (the
real run: ``test_rank_candidates``)."""

from __future__ import annotations

import pytest

from pytest_confgate.rank.evaluate import measured_from_start


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

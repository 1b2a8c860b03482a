"""Which command lines ``pytest --confgate`` may start again, measured from the first line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_confgate.collect.coverage import early_restart


@pytest.mark.parametrize(
    ("orig_argv", "argv", "expected"),
    [
        (["/v/bin/python", "/v/bin/pytest", "--confgate", "-q"],
         ["/v/bin/pytest", "--confgate", "-q"], ["-m", "pytest_confgate", "--confgate", "-q"]),
        (["python", "-m", "pytest", "--confgate"], ["/x/pytest/__main__.py", "--confgate"],
         ["-m", "pytest_confgate", "--confgate"]),
        (["python", "-mpytest", "-x"], ["/x/pytest/__main__.py", "-x"],
         ["-m", "pytest_confgate", "-x"]),
        (["python", "-X", "dev", "-W", "error", "-b", "-m", "pytest", "t"], ["m", "t"],
         ["-X", "dev", "-W", "error", "-b", "-m", "pytest_confgate", "t"]),
    ],
)
def test_pytests_own_command_lines_start_again_as_the_module_entry(
    orig_argv: list[str], argv: list[str], expected: list[str]
) -> None:
    assert early_restart.command(orig_argv, argv) == [sys.executable, *expected]


@pytest.mark.parametrize(
    "orig_argv",
    [
        ["python", "run_tests.py", "--confgate"],  # a script of the user's calls pytest.main()
        ["python", "-c", "import pytest; pytest.main()"],  # an xdist worker starts like this
        ["python", "-m", "tox"],
        ["python", "-"],
        ["python"],
    ],
)
def test_other_command_lines_are_never_replaced(orig_argv: list[str]) -> None:
    assert early_restart.command(orig_argv, ["x", "--confgate"]) is None


def test_only_modules_under_the_root_that_coverage_py_measures_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "early_pkg_x"
    package.mkdir()
    (package / "__init__.py").write_text("VALUE = 1\n", encoding="utf-8")
    installed = tmp_path / "venv" / "lib" / "site-packages" / "early_dep_x"
    installed.mkdir(parents=True)
    (installed / "__init__.py").write_text("VALUE = 2\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(installed.parent))
    assert early_restart.imported_too_early(tmp_path) == []
    import early_dep_x  # noqa: F401
    import early_pkg_x  # noqa: F401

    try:
        assert early_restart.imported_too_early(tmp_path) == [str(package / "__init__.py")]
    finally:
        del sys.modules["early_pkg_x"], sys.modules["early_dep_x"]


@pytest.mark.parametrize(
    ("orig_argv", "expected"),
    [
        (["/v/bin/python", "/v/bin/pytest", "--confgate"], "/v/bin/pytest"),
        (["python", "-X", "dev", "-m", "pytest", "t"], "pytest"),
        (["python", "-mpy.test"], "py.test"),
        (["python", "run_tests.py"], None),
        (["python", "-c", "import pytest"], None),
    ],
)
def test_the_entry_a_restart_runs_is_the_one_pytest_was_started_by(
    orig_argv: list[str], expected: str | None
) -> None:
    assert early_restart.entry(orig_argv) == expected


def test_only_pytests_own_entries_are_run_again(tmp_path: Path) -> None:
    """What the restarted process runs comes from its environment: nothing but pytest's own
    module or a script named like pytest's is ever run from there."""
    script = tmp_path / "pytest"
    script.write_text("", encoding="utf-8")
    assert early_restart.pytest_entry("pytest")
    assert early_restart.pytest_entry(str(script))
    assert not early_restart.pytest_entry(str(tmp_path / "evil.py"))
    assert not early_restart.pytest_entry(str(tmp_path / "missing" / "pytest"))
    assert not early_restart.pytest_entry("os")
    launcher = tmp_path / "bin" / "pytest"
    launcher.parent.mkdir()
    launcher.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00")
    assert not early_restart.pytest_entry(str(launcher))

"""What the gate measures when `source:` is not set."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_confgate.collect.sources import detect_sources, resolve_sources
from pytest_confgate.exceptions import ConfigError


def _touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", encoding="utf-8")


def test_a_src_layout_measures_the_packages_under_src(tmp_path: Path) -> None:
    _touch(tmp_path, "src/app/__init__.py", "src/app/core.py", "tests/test_app.py", "setup.py")
    assert detect_sources(tmp_path) == [(tmp_path / "src/app").resolve()]


def test_a_flat_layout_measures_packages_and_modules_but_not_tests(tmp_path: Path) -> None:
    _touch(
        tmp_path,
        "app/__init__.py",
        "tool.py",
        "conftest.py",
        "test_tool.py",
        "tests/__init__.py",
        "docs/__init__.py",
        "notpkg/readme.txt",
    )
    assert detect_sources(tmp_path) == [
        (tmp_path / "app").resolve(),
        (tmp_path / "tool.py").resolve(),
    ]


@pytest.mark.parametrize("prefix", ["", "src/"], ids=["flat", "src"])
def test_namespace_packages_are_the_source_when_there_is_no_regular_one(
    tmp_path: Path, prefix: str
) -> None:
    """PEP 420 packages have no ``__init__.py``: ruff and bandit found "no source code" and the
    gate failed a project whose tests and coverage were fine. Folders of tests, docs or data
    are still not the source."""
    _touch(tmp_path, f"{prefix}corp/billing/invoice.py", f"{prefix}corp/billing/tax.py",
           "tests/test_invoice.py", "docs/conf.py", "data/readme.txt", "scripts/run.py",
           "fixtures/test_only.py", "my-tool/helper.py")
    assert detect_sources(tmp_path) == [(tmp_path / prefix / "corp").resolve()]


def test_a_regular_package_wins_over_a_folder_of_modules(tmp_path: Path) -> None:
    _touch(tmp_path, "app/__init__.py", "helpers/extra.py")
    assert detect_sources(tmp_path) == [(tmp_path / "app").resolve()]


def test_a_project_without_code_finds_nothing(tmp_path: Path) -> None:
    _touch(tmp_path, "tests/test_x.py")
    assert detect_sources(tmp_path) == []


def test_configured_sources_must_exist(tmp_path: Path) -> None:
    _touch(tmp_path, "lib/__init__.py")
    assert resolve_sources(tmp_path, ["lib"]) == [(tmp_path / "lib").resolve()]
    with pytest.raises(ConfigError, match="source: nope does not exist"):
        resolve_sources(tmp_path, ["lib", "nope"])

"""The watch on what ruff and bandit read: writes while they read are named, later ones not."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from pytest_confgate.gate.source_watch import SourceWatch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def _tree(tmp_path: Path) -> list[Path]:
    (tmp_path / "pkg").mkdir()
    files = [tmp_path / "pkg" / "a.py", tmp_path / "pkg" / "b.py"]
    for path in files:
        path.write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    return files


def test_writes_while_the_tools_read_are_named_and_later_ones_are_not(tmp_path: Path) -> None:
    a, b = _tree(tmp_path)
    watch = SourceWatch.arm(tmp_path, [a, b])
    assert watch is not None
    done = threading.Event()
    watch.until(done.is_set)
    a.write_text("x = 2\n", encoding="utf-8")  # and put back: the digest would not tell
    a.write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\n", encoding="utf-8")
    (tmp_path / "pkg" / "notes.txt").write_text("not read by the tools", encoding="utf-8")
    done.set()
    watch.join()  # the tools are done: it stops listening
    b.write_text("x = 3\n", encoding="utf-8")  # after the tools: the digests judge it
    assert watch.stop() == ["pkg/a.py", "pyproject.toml"]


def test_a_run_that_writes_nothing_is_named_nothing(tmp_path: Path) -> None:
    files = _tree(tmp_path)
    watch = SourceWatch.arm(tmp_path, files)
    assert watch is not None
    watch.until(lambda: True)
    assert watch.stop() == []


def test_any_new_name_in_site_packages_is_named_but_a_bytecode_folder(tmp_path: Path) -> None:
    files = _tree(tmp_path)
    site = tmp_path / "site-packages"
    site.mkdir()
    watch = SourceWatch.arm(tmp_path, files, [site, tmp_path / "absent"])
    assert watch is not None
    (site / "__pycache__").mkdir()  # Python's own bytecode for a top-level module
    (site / "zz.pth").write_text("import os\n", encoding="utf-8")
    watch.until(lambda: True)
    watch.join()
    assert watch.stop() == ["site-packages/zz.pth"]  # shown from the root, as it is under it


def test_a_write_through_a_hard_link_made_elsewhere_is_named(tmp_path: Path) -> None:
    """A folder's watch sees writes under the names in it; one through a link in another
    folder reaches only a watch on the file itself."""
    a, b = _tree(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "alias").hardlink_to(a)
    watch = SourceWatch.arm(tmp_path, [a, b])
    assert watch is not None
    (elsewhere / "alias").write_text("x = 2\n", encoding="utf-8")
    (elsewhere / "alias").write_text("x = 1\n", encoding="utf-8")
    watch.until(lambda: True)
    watch.join()
    assert watch.stop() == ["pkg/a.py"]

"""The package root's public API: sorted, lazily imported, every name reachable."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import pytest_confgate


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert pytest_confgate.__all__ == sorted(pytest_confgate.__all__)
    for name in pytest_confgate.__all__:
        assert getattr(pytest_confgate, name) is not None, name


def test_importing_the_package_imports_no_store_or_core_module() -> None:
    code = (
        "import sys, pytest_confgate\n"
        "heavy = [m for m in ('sqlite3', 'pytest_confgate.trust', 'pytest_confgate.gate.engine',"
        " 'pydantic') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == ""


def test_trust_score_is_neutral_without_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert pytest_confgate.trust_score("reviewer", "demo") == 1.0

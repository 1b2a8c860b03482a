"""Fixtures for the command-line tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def trust_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder as the working directory, with its own fallback spool folder
    (never the user's ``~/.cache``) and no debug output or actor from the environment."""
    project = tmp_path / "my-service"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("CONFGATE_SPOOL_DIR", str(tmp_path / "fallback-spool"))
    monkeypatch.delenv("CONFGATE_DEBUG", raising=False)
    monkeypatch.delenv("GITHUB_ACTOR", raising=False)
    return project

"""What the collectors share about the tools they run: versions and one spelling per file.

Running the programs themselves is ``pytest_confgate.processes``' job.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.processes import run_tool


def tool_version(argv: Sequence[str], *, cwd: Path, timeout_s: float = 10.0) -> str | None:
    """The last word of the first line ``argv`` prints (``ruff 0.4.1`` -> ``0.4.1``), or None.

    A version is for the report only: a tool that cannot say it is not an error by itself.
    """
    try:
        result = run_tool(argv, cwd=cwd, timeout_s=timeout_s)
    except EvidenceError:
        return None
    if result.returncode != 0:
        return None
    for line in result.stdout.splitlines():
        if line.strip():
            return line.split()[-1]
    return None


def display_path(filename: str, root: Path) -> str:
    """``filename`` as a posix path relative to ``root``; absolute when it lies outside root.

    Tools print absolute (ruff) or cwd-relative (bandit: ``./pkg/mod.py``) names; reports and
    the content cache need one spelling per file.
    """
    if not filename:
        return ""
    path = Path(os.path.normpath(root / filename))  # an absolute filename replaces root
    for base in (root, root.resolve()):
        try:
            return path.relative_to(base).as_posix()
        except ValueError:
            pass
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return path.as_posix()

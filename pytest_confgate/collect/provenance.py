"""What a report is bound to (issue 14): the commit it judged, a clean tree or not, the run.

Taken when the gate starts, before any test runs, so a test that commits, checks out or
writes files cannot move it. ``confgate github publish`` refuses a report whose commit is not
the pull request's head, or whose run is not the current workflow run: a report committed to
the repository, or left over from an earlier run, is never published as this run's verdict.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Mapping
from pathlib import Path

from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.models import Provenance
from pytest_confgate.processes import run_tool

GIT_TIMEOUT_S = 60.0


def collect_provenance(root: Path, environ: Mapping[str, str], now: dt.datetime) -> Provenance:
    """The head commit, whether the tree has uncommitted changes, this run's id and ``now``."""
    return Provenance(
        head_sha=_git_line(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"),
        dirty=bool(_git_line(root, "status", "--porcelain", "--untracked-files=normal")),
        run_id=run_identity(environ),
        started_at=now.astimezone(dt.UTC).isoformat(timespec="seconds"),
    )


def run_identity(environ: Mapping[str, str]) -> str:
    """``GITHUB_RUN_ID-GITHUB_RUN_ATTEMPT`` in GitHub Actions; a random ``local-...`` elsewhere."""
    run = environ.get("GITHUB_RUN_ID", "").strip()
    if not run:
        return f"local-{secrets.token_hex(8)}"
    return f"{run}-{environ.get('GITHUB_RUN_ATTEMPT', '').strip() or '1'}"


def _git_line(root: Path, *args: str) -> str | None:
    """git's stripped output, or None when git is missing or says no (not a repository)."""
    try:
        result = run_tool(["git", *args], cwd=root, timeout_s=GIT_TIMEOUT_S)
    except EvidenceError:  # git missing, hung, or run outside any directory
        return None
    return (result.stdout.strip() or None) if result.returncode == 0 else None

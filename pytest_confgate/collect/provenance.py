"""What a report is bound to (issue 14): the commit it judged, a clean tree or not, the run.

Taken when the gate starts, before any test runs, so a test that commits, checks out or
writes files cannot move it. ``confgate github publish`` refuses a report whose commit is not
the pull request's head, or whose run is not the current workflow run: a report committed to
the repository, or left over from an earlier run, is never published as this run's verdict.

git is asked in threads (``GitFacts``, first thing in the plugin's start-up): its two
processes run beside each other and beside the imports that follow (issue 35), and are waited
for where the provenance is taken, still before any test runs.
"""

from __future__ import annotations

import datetime as dt
import secrets
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.processes import run_tool

if TYPE_CHECKING:  # the report models (pydantic) are imported when the provenance is taken
    from pytest_confgate.models import Provenance

GIT_TIMEOUT_S = 60.0


_HEAD = ("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
_STATUS = ("status", "--porcelain", "--untracked-files=normal")


class GitFacts:
    """The head commit and whether the tree is dirty, asked of git at once, each in a thread
    of its own (the threads only wait for git); ``result`` waits for both answers."""

    def __init__(self, root: Path) -> None:
        self._answers: dict[str, str | None] = {}
        self._failures: list[BaseException] = []
        self._threads = [
            threading.Thread(target=self._ask, args=(name, root, args), daemon=True,
                             name=f"confgate-git-{name}")
            for name, args in (("head", _HEAD), ("status", _STATUS))
        ]
        for thread in self._threads:
            thread.start()

    def _ask(self, name: str, root: Path, args: tuple[str, ...]) -> None:
        try:
            self._answers[name] = _git_line(root, *args)
        except BaseException as exc:  # raised again by ``result``, in the caller's thread
            self._failures.append(exc)

    def result(self) -> tuple[str | None, bool]:
        """``(head_sha, dirty)``, once both processes have ended."""
        for thread in self._threads:
            thread.join()
        if self._failures:
            raise self._failures[0]
        return self._answers["head"], bool(self._answers["status"])


def collect_provenance(
    root: Path, environ: Mapping[str, str], now: dt.datetime, git: GitFacts | None = None
) -> Provenance:
    """The head commit, whether the tree has uncommitted changes, this run's id and ``now``;
    ``git``: the answers asked for earlier in this start-up (else asked now)."""
    from pytest_confgate.models import Provenance

    head_sha, dirty = (git or GitFacts(root)).result()
    return Provenance(
        head_sha=head_sha,
        dirty=dirty,
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

"""``confgate rank --apply``: check the accepted winner out, or refuse (issue 17).

Only an accepted winner is applied (auto-acceptance enabled and every threshold met), and
only the commit that was evaluated: the ranking resolved each ref once, so a branch pushed
to while it ran cannot slip an unevaluated commit in. Without ``--apply-branch`` the winner's
commit is checked out detached into the working tree; with it, onto a new branch of that
name. Nothing is overwritten: uncommitted changes to tracked files, an invalid or existing
branch name, or a directory candidate (not a git ref) are refused with what to do instead.
"""

from __future__ import annotations

from pathlib import Path

from pytest_confgate.exceptions import CandidateError, EvidenceError
from pytest_confgate.processes import ToolResult, run_tool
from pytest_confgate.rank.service import RankOutcome

_GIT_TIMEOUT_S = 120.0


def apply_problem(cwd: Path, branch: str | None) -> str | None:
    """Why ``--apply`` could not check a winner out at ``cwd``, or None (asked before and
    again after ranking, so a long ranking is not wasted on a tree that cannot take it)."""
    if _git(["rev-parse", "--show-toplevel"], cwd).returncode != 0:
        return f"--apply checks the winner out with git, and {cwd} is not in a git repository"
    if branch is not None:
        if branch.startswith("-") or _git(["check-ref-format", "--branch", branch], cwd).returncode:
            return f"--apply-branch {branch!r}: not a valid branch name"
        if _git(["rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"], cwd).returncode == 0:
            return f"--apply-branch {branch!r}: that branch exists; give a new name"
    dirty = _git(["status", "--porcelain", "--untracked-files=no"], cwd).stdout.splitlines()
    if dirty:
        shown = ", ".join(line[3:] for line in dirty[:3]) + (" ..." if len(dirty) > 3 else "")
        return (
            f"--apply would overwrite uncommitted changes ({shown}); commit or stash them first"
        )
    return None


def not_accepted(outcome: RankOutcome) -> str | None:
    """Why there is nothing to apply, or None when a winner was accepted."""
    if outcome.ranking.winner is None:
        return "the ranking has no winner"
    if not outcome.auto_accept.accept:
        return f"the winner was not accepted ({outcome.auto_accept.reason})"
    return None


def apply_winner(outcome: RankOutcome, cwd: Path, branch: str | None) -> str:
    """Check the accepted winner out; returns what was done. ``CandidateError`` otherwise."""
    why = not_accepted(outcome) or apply_problem(cwd, branch)
    if why:
        raise CandidateError(f"--apply: {why}; nothing was checked out")
    assert outcome.ranking.winner is not None  # noqa: S101 - not_accepted() checked it
    name = outcome.ranking.winner.solution_id
    source = outcome.sources.get(name)
    if source is None or source.kind != "ref":
        raise CandidateError(
            f"--apply: the winner {name!r} is a directory, not a git ref; copy it yourself "
            "(--apply checks out refs)"
        )
    commit = str(source.location)
    argv = ["switch", "-c", branch, commit] if branch else ["checkout", "--detach", commit]
    done = _git(argv, cwd)
    if done.returncode != 0:
        raise CandidateError(f"--apply: git {' '.join(argv)} failed: {done.stderr_tail()}")
    where = f"onto the new branch {branch}" if branch else "into the working tree (detached)"
    return f"checked the winner {name} (commit {commit[:12]}) out {where}"


def _git(args: list[str], cwd: Path) -> ToolResult:
    try:
        return run_tool(["git", *args], cwd=cwd, timeout_s=_GIT_TIMEOUT_S)
    except EvidenceError as exc:
        return ToolResult(127, "", str(exc), 0.0)

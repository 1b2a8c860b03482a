"""Which files and lines a change touches, from git (``scope: changed``, tiers).

Locally the change is everything between the merge base of ``base_ref`` and HEAD **plus the
working tree**: staged and unstaged edits count, and untracked files that git does not ignore
count as added files, so a developer running ``pytest --confgate`` before committing is judged
on what they are about to push; the gate's own reports (``GATE_OUTPUTS``) never count. In CI
(``committed_only``) the change is what was committed, ``merge-base..HEAD``: what the job's
build wrote into the checkout (``src/x.egg-info/``, a generated file) is no part of it.

git runs as argv lists, never through a shell, with ``-z`` output so that names with spaces,
quotes or non-ASCII characters arrive verbatim. Paths are repo-relative POSIX paths from the git
top-level (``ChangeSet.rooted`` re-expresses them relative to the pytest rootdir). Symlinks
are seen through both ways (``collect.symlinks``): a changed link names the file it points to,
and a changed file (or a file in a changed folder) that a link of the base or the head tree
points to is changed under the link's path too, so risk rules and scopes see it there.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from pytest_confgate.collect.symlinks import link_aliases, symlinks
from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.models import ChangeSet, ChangeStatus, FileChange
from pytest_confgate.paths import normalize_path, printable
from pytest_confgate.processes import ToolMissing, ToolResult, run_tool, tail

GIT_TIMEOUT_S = 120.0
# T (file <-> symlink) and U (unmerged) are still edits of that path.
_STATUS: dict[str, ChangeStatus] = dict(
    A="added", M="modified", T="modified", U="modified", D="deleted", R="renamed", C="copied"
)
_HUNK = re.compile(r"@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
GATE_OUTPUTS = frozenset(
    {"confgate-report.json", "confgate-report.md", "confgate-report.html", "confgate.sarif"}
)
"""File names the gate and the Action write; untracked, they are never part of a change."""
_SHALLOW_ADVICE = (
    "this is a shallow clone: use `fetch-depth: 0` in actions/checkout "
    "(or run `git fetch --unshallow`)"
)


def github_base_ref(environ: Mapping[str, str], root: Path | None = None) -> str | None:
    """The ref ``GITHUB_BASE_REF`` names, or None when it is unset or blank.

    GitHub Actions sets ``GITHUB_BASE_REF`` to a bare branch name (``main``) while
    actions/checkout creates only remote-tracking refs, so ``origin/main`` is tried first and
    ``main`` second. Without ``root`` (no repository to ask) the answer is ``origin/<name>``;
    when neither ref exists it is also ``origin/<name>``, whose "unknown ref" error says what to
    fetch. Which source wins over which is ``gate.anchor``'s job.
    """
    branch = environ.get("GITHUB_BASE_REF", "").strip()
    if not branch:
        return None
    candidates = [f"origin/{branch}", branch]
    if root is not None:
        try:
            top = _top_level(root)
        except EvidenceError:
            return candidates[0]
        for candidate in candidates:
            if _commit_of(top, candidate) is not None:
                return candidate
    return candidates[0]


def commit_of(root: Path, ref: str) -> str | None:
    """The full commit id ``ref`` names in ROOT's repository, or None when it names none."""
    try:
        return _commit_of(_top_level(root), ref)
    except EvidenceError:
        return None


def is_ancestor(root: Path, older: str, newer: str) -> bool | None:
    """Whether commit ``older`` is reachable from ``newer``; None when git cannot tell."""
    top = _top_level(root)
    if _commit_of(top, older) is None or _commit_of(top, newer) is None:
        return None
    result = _git(top, "merge-base", "--is-ancestor", older, newer)
    return {0: True, 1: False}.get(result.returncode)


def collect_changes(root: Path, base_ref: str, *, committed_only: bool = False) -> ChangeSet:
    """Files and lines changed since the merge base of ``base_ref``: up to HEAD with
    ``committed_only`` (CI), else the working tree included.

    Raises ``EvidenceError`` saying what to do when git is missing, ROOT is not in a
    repository, the ref is unknown or a shallow clone lacks the merge base.
    """
    top = _top_level(root)
    if _commit_of(top, base_ref) is None:
        raise EvidenceError(_unknown_ref_message(top, base_ref))
    if _commit_of(top, "HEAD") is None:
        raise EvidenceError(f"the git repository at {top} has no commits yet: commit first")
    merge_base = _merge_base(top, base_ref)
    if committed_only:
        changes = _tracked_changes(top, merge_base, "HEAD")
    else:
        changes = [*_tracked_changes(top, merge_base), *_untracked_files(top)]
    changes = [_see_through(top, c) for c in changes]
    changes += link_aliases(changes, symlinks(top, merge_base, _git))
    files = tuple(sorted(changes, key=lambda c: c.path))
    head = _tree_of(top, "HEAD") if committed_only else _snapshot(top)
    return ChangeSet(base_ref, merge_base, files, _prefix(root, top), head)


def _tree_of(top: Path, commit: str) -> str | None:
    found = _git(top, "rev-parse", "--verify", "--quiet", f"{commit}^{{tree}}")
    return found.stdout.strip() or None if found.returncode == 0 else None


def _snapshot(top: Path) -> str | None:
    """The working tree of TOP as a git tree object (tracked and untracked files, ignored ones
    left out), written through a private copy of the index: the real index and the files stay
    untouched. None when git cannot write it.

    Taken before a test or conftest runs, it is what the analyses after the run read, so code
    of the change that rewrites files during the run (and puts them back, or not) cannot choose
    what they see."""
    found = _git(top, "rev-parse", "--absolute-git-dir")
    if found.returncode != 0:
        return None
    index = Path(found.stdout.rstrip("\n")) / "index"
    with tempfile.TemporaryDirectory(prefix="confgate-snapshot-") as folder:
        private = Path(folder) / "index"
        try:
            shutil.copyfile(index, private)  # its stat cache: only changed files are hashed
        except FileNotFoundError:
            pass  # no index yet: every file is hashed
        except OSError:
            return None
        env = {**os.environ, "GIT_INDEX_FILE": str(private)}
        added = _git(top, "add", "-A", "--", ".", env=env)
        if added.returncode != 0:
            return None
        tree = _git(top, "write-tree", env=env)
    sha = tree.stdout.strip()
    return sha if tree.returncode == 0 and sha else None


def committed_paths(root: Path, merge_base: str) -> frozenset[str]:
    """Every path some commit of ``merge_base..HEAD`` touched, repo-relative (issue 34).

    The final diff hides a file a pull request added and removed again; its commits still
    carried it (a reviewer of that commit saw it, CI ran it), so risk rules see it. Renames
    count under both names. Merge commits add nothing of their own here (git lists no files
    for them without ``-m``, and with it every file the merged base brought in).
    """
    top = _top_level(root)
    result = _git(top, "log", "--format=", "--name-only", "--no-renames", "-z",
                  f"{merge_base}..HEAD")
    if result.returncode != 0:
        raise EvidenceError(f"git could not list the commits since {merge_base[:12]}: "
                            f"{tail(result.stderr)}")
    return frozenset(normalize_path(name.strip("\n")) for name in result.stdout.split("\0")
                     if name.strip("\n"))


def read_at_ref(root: Path, ref: str, path: str) -> str | None:
    """The text of ``path`` at ``ref``, or None when no such file existed there.

    Used to read the trusted gate configuration from the base branch (a change cannot
    relax its own gate). ``path`` is absolute or relative to ROOT. An unknown ref is an error.
    """
    top = _top_level(root)
    commit = _commit_of(top, ref)
    if commit is None:
        raise EvidenceError(_unknown_ref_message(top, ref))
    absolute = Path(os.path.abspath(Path(path) if Path(path).is_absolute() else root / path))
    # Resolve the folder, not the file: a symlinked config is read under its own name.
    repo_path = normalize_path(os.path.relpath(absolute.parent.resolve() / absolute.name, top))
    if repo_path.startswith("../") or repo_path in ("", ".."):
        raise EvidenceError(f"{path} lies outside the git repository at {top}")
    kind = _git(top, "cat-file", "-t", f"{commit}:{repo_path}")
    if kind.returncode != 0 or kind.stdout.strip() != "blob":
        return None
    blob = _git(top, "cat-file", "blob", f"{commit}:{repo_path}", errors="replace")
    if blob.returncode != 0:
        raise EvidenceError(f"git could not read {repo_path} at {ref}: {tail(blob.stderr)}")
    return blob.stdout


def _git(cwd: Path, *args: str, errors: str = "surrogateescape",
         env: Mapping[str, str] | None = None) -> ToolResult:
    """``git ARGS``; names it prints keep undecodable bytes as surrogates (``os.fsdecode``),
    so a file named ``bad\xffname.py`` is found on disk; text for people uses ``replace``."""
    try:
        argv = ["git", "-c", "core.quotepath=on", *args]  # patch headers quote names alike
        return run_tool(argv, cwd=cwd, timeout_s=GIT_TIMEOUT_S, errors=errors, env=env)
    except ToolMissing as exc:
        message = "git is not installed or not on PATH: install git, or drop `scope: changed`"
        raise EvidenceError(f"{message} and `risk_rules` ({exc})") from exc


def _top_level(root: Path) -> Path:
    result = _git(root, "rev-parse", "--show-toplevel")
    if result.returncode != 0:
        raise EvidenceError(
            f"{root} is not inside a git repository, so there is no change to compare with "
            f"base_ref: run from a clone, or drop `scope: changed` ({tail(result.stderr)})"
        )
    return Path(result.stdout.rstrip("\n")).resolve()


def _commit_of(top: Path, ref: str) -> str | None:
    if not ref or ref.startswith("-"):  # never let a ref be read as an option
        return None
    result = _git(top, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if result.returncode != 0:
        return None
    return result.stdout.strip() or None


def _is_shallow(top: Path) -> bool:
    return _git(top, "rev-parse", "--is-shallow-repository").stdout.strip() == "true"


def _unknown_ref_message(top: Path, ref: str) -> str:
    remote, _, branch = ref.partition("/")
    if not branch or remote not in {"origin", *_git(top, "remote").stdout.split()}:
        remote, branch = "origin", ref
    fetch = f"git fetch {remote} {branch}"
    message = f"base ref {ref!r} is not known to git in {top}: fetch it (`{fetch}`)"
    if _is_shallow(top):
        message += f"; {_SHALLOW_ADVICE}"
    return message + ", or set `base_ref` / `--confgate-base` to a ref that exists"


def _merge_base(top: Path, base_ref: str) -> str:
    result = _git(top, "merge-base", base_ref, "HEAD")
    if result.returncode == 0 and result.stdout.strip():
        return result.stdout.strip()
    if _is_shallow(top):
        raise EvidenceError(f"cannot find the merge base of {base_ref} and HEAD: {_SHALLOW_ADVICE}")
    raise EvidenceError(
        f"{base_ref} and HEAD share no history (no merge base): set `base_ref` to the branch "
        f"this change will merge into ({tail(result.stderr) or 'git merge-base found none'})"
    )


def _tracked_changes(top: Path, merge_base: str, *head: str) -> list[FileChange]:
    """``merge_base`` against the working tree, or against ``head`` when one is given."""
    names = _run_diff(top, "-z", "--name-status", merge_base, *head)
    numstat = _run_diff(top, "-z", "--numstat", merge_base, *head)
    patch = _run_diff(
        top, "-U0", "--no-color", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/",
        merge_base, *head,
    )
    binary = _binary_paths(numstat)
    lines = _added_lines(patch)
    tokens = names.split("\0")
    changes: list[FileChange] = []
    i = 0
    while i < len(tokens) and tokens[i]:
        status = _STATUS.get(tokens[i][0], "modified")
        if status in ("renamed", "copied"):
            old, path, i = tokens[i + 1], tokens[i + 2], i + 3
        else:
            old, path, i = None, tokens[i + 1], i + 2
        added = frozenset() if status == "deleted" else lines.get(path, frozenset())
        changes.append(FileChange(path, old, status, path in binary, added))
    return changes


def _run_diff(top: Path, *args: str, errors: str = "surrogateescape") -> str:
    # -M always (whatever diff.renames says); no external diff drivers or textconv filters.
    result = _git(top, "diff", "-M", "--no-ext-diff", *args, "--", errors=errors)
    if result.returncode != 0:
        raise EvidenceError(f"git diff failed in {top}: {tail(result.stderr)}")
    return result.stdout


def _binary_paths(numstat: str) -> set[str]:
    """``-\\t-\\tpath`` records; a rename's record is ``-\\t-\\t`` then old and new names."""
    tokens, binary, i = numstat.split("\0"), set[str](), 0
    while i < len(tokens) and tokens[i]:
        added, _, rest = tokens[i].split("\t", 2)
        path, i = (tokens[i + 2], i + 3) if rest == "" else (rest, i + 1)
        if added == "-":
            binary.add(path)
    return binary


def _added_lines(patch: str) -> dict[str, frozenset[int]]:
    """New-side line numbers per file from ``git diff -U0``, counting hunk lines exactly.

    Hunk bodies are skipped by their declared sizes, so an added line that reads ``++ x``
    is never mistaken for a ``+++`` file header.
    """
    found: dict[str, set[int]] = {}
    current: str | None = None
    pending = 0
    for line in patch.split("\n"):  # never splitlines(): \x0c or \u2028 may be in the code
        if pending > 0:
            if line[:1] in ("+", "-", " "):  # a "No newline at end of file" note is no line
                pending -= 1
            continue
        if line.startswith("diff --git "):
            current = None
        elif line.startswith("+++ "):
            name = _unquote(line[4:].removesuffix("\t"))
            current = name[2:] if name.startswith("b/") else None  # /dev/null: deleted
        elif line.startswith("@@ ") and (match := _HUNK.match(line)):
            old_count = int(match.group(1) or 1)
            start, new_count = int(match.group(2)), int(match.group(3) or 1)
            pending = old_count + new_count
            if current is not None:
                found.setdefault(current, set()).update(range(start, start + new_count))
    return {path: frozenset(lines) for path, lines in found.items()}


def _unquote(name: str) -> str:
    """Undo git's C-style quoting of unusual names (``"b/\\303\\244.py"`` -> ``b/ä.py``)."""
    if len(name) < 2 or not (name.startswith('"') and name.endswith('"')):
        return name
    body, out, i = name[1:-1], bytearray(), 0
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body):
            if body[i + 1] in _ESCAPES:
                out.append(_ESCAPES[body[i + 1]])
                i += 2
                continue
            if body[i + 1 : i + 4].isdigit():
                out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
        out.extend(char.encode("utf-8"))
        i += 1
    return out.decode("utf-8", errors="surrogateescape")  # as git listed it with -z


def _untracked_files(top: Path) -> list[FileChange]:
    """Untracked, non-ignored files but the gate's own outputs: every line is an added line
    (they will be committed)."""
    result = _git(top, "ls-files", "-z", "--others", "--exclude-standard")
    if result.returncode != 0:
        raise EvidenceError(f"git ls-files failed in {top}: {tail(result.stderr)}")
    changes = []
    for name in result.stdout.split("\0"):
        if not name or name.endswith("/"):  # a nested repository, not a file
            continue
        if name.rpartition("/")[2] in GATE_OUTPUTS:
            continue
        path = top / name
        try:
            data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
        except OSError:
            continue  # vanished or unreadable since git listed it: nothing to judge
        binary = b"\0" in data[:8000]  # git's own heuristic
        count = data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
        lines = frozenset() if binary else frozenset(range(1, count + 1))
        changes.append(FileChange(name, None, "added", binary, lines))
    return changes


def _see_through(top: Path, change: FileChange) -> FileChange:
    path = top / change.path
    if change.status == "deleted" or not path.is_symlink():
        return change
    try:
        target = Path(os.path.realpath(path)).relative_to(top).as_posix()
    except ValueError:
        return change  # points outside the repository: nothing of ours to match
    return replace(change, symlink_target=target)


def _prefix(root: Path, top: Path) -> str:
    try:
        relative = root.resolve().relative_to(top).as_posix()
    except ValueError:
        return ""
    return "" if relative == "." else relative


def change_diff(root: Path, merge_base: str | None) -> str:
    """The change as a unified diff for a reviewer: since ``merge_base`` (else HEAD), working
    tree included, untracked files named. Whole: a reader that shows only part of it must
    know, and say, how much it left out.

    Raises ``EvidenceError`` when git cannot produce it.
    """
    top = _top_level(root)
    against = merge_base or "HEAD"
    if _commit_of(top, against) is None:
        raise EvidenceError(f"there is no commit {against!r} in {top} to diff against")
    text = _run_diff(
        top,
        "--no-color",
        "--no-textconv",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        against,
        errors="replace",  # for a reader: the patch's names are quoted ASCII already
    )
    untracked = [printable(change.path) for change in _untracked_files(top)]
    if untracked:
        text += "".join(f"new untracked file: {name}\n" for name in untracked)
    return text


def change_story(root: Path, merge_base: str | None, max_chars: int = 20_000) -> str:
    """The commit messages of the change (``merge_base..HEAD``), newest first, or ''."""
    if merge_base is None:
        return ""
    top = _top_level(root)
    result = _git(
        top, "log", "--no-color", "--format=%s%n%n%b", f"{merge_base}..HEAD", errors="replace"
    )
    return result.stdout[:max_chars] if result.returncode == 0 else ""

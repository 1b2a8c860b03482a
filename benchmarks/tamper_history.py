"""How often ``test_integrity`` would have raised the tier on a repository's own history.

A false positive makes a pull request wait for a human, so the tamper analysis is measured on
real commits: each of the last N first-parent commits is compared with its parent (both read
through git; nothing is checked out) and the findings are counted by rule::

    python benchmarks/tamper_history.py [REPO] [-n 100] [--show] [--suppressions noqa,nosec]

Prints one line per flagged commit (``--show``: every finding) and a summary; read the
flagged ones to tell real tampering from false positives.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from pytest_confgate.collect.tamper import WATCHED, FileVersions, GitTree, find_tampering
from pytest_confgate.collect.tamper.settings import CONFIG_NAMES, PYTEST_FILES

_STATUS = {"A": "added", "D": "deleted", "R": "renamed", "C": "copied"}


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return done.stdout.decode("utf-8", errors="replace")


def _changed(repo: Path, parent: str, commit: str) -> list[tuple[str, str, str | None]]:
    """(status, path, old path) for every file the commit changed, renames followed."""
    tokens = _git(repo, "diff", "-z", "-M", "--name-status", parent, commit, "--").split("\0")
    found, index = [], 0
    while index < len(tokens) and tokens[index]:
        status = _STATUS.get(tokens[index][0], "modified")
        if status in ("renamed", "copied"):
            found.append((status, tokens[index + 2], tokens[index + 1]))
            index += 3
        else:
            found.append((status, tokens[index + 1], None))
            index += 2
    return found


def versions_of_commit(repo: Path, parent: str, commit: str) -> list[FileVersions]:
    changes = [
        c for c in _changed(repo, parent, commit)
        if c[1].endswith(".py") or c[1].rsplit("/", 1)[-1] in CONFIG_NAMES
    ]
    base_paths = [old or path for status, path, old in changes if status != "added"]
    head_paths = [path for status, path, _ in changes if status != "deleted"]
    base = GitTree(repo, parent).read_many([*base_paths, *PYTEST_FILES])
    head = GitTree(repo, commit).read_many([*head_paths, *PYTEST_FILES])
    versions = [
        FileVersions(path, base.get(old or path), head.get(path),
                     old if status == "renamed" else None)
        for status, path, old in changes
    ]
    touched = {path for _, path, _ in changes}
    versions += [FileVersions(n, base[n], head[n]) for n in PYTEST_FILES if n not in touched]
    return versions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", nargs="?", default=".")
    parser.add_argument("-n", type=int, default=100)
    parser.add_argument("--show", action="store_true", help="print every finding")
    parser.add_argument(
        "--suppressions", default=",".join(WATCHED),
        help="comma-separated directives that count (as test_integrity's `suppressions:`)",
    )
    args = parser.parse_args(argv)
    repo = Path(args.repo).resolve()
    commits = _git(repo, "rev-list", "--first-parent", "-n", str(args.n), "HEAD").split()
    by_rule: Counter[str] = Counter()
    flagged = 0
    compared = 0
    started = time.perf_counter()
    for commit in commits:
        parents = _git(repo, "rev-list", "--parents", "-n", "1", commit).split()[1:]
        if not parents:
            continue
        compared += 1
        watch = [d.strip() for d in args.suppressions.split(",") if d.strip()]
        report = find_tampering(versions_of_commit(repo, parents[0], commit), watch=watch)
        if not report.findings:
            continue
        flagged += 1
        rules = Counter(f.rule for f in report.findings)
        by_rule.update(rules)
        subject = _git(repo, "log", "-1", "--format=%s", commit).strip()
        print(f"{commit[:9]} {dict(rules)}  {subject[:70]}")
        for finding in report.findings if args.show else []:
            print(f"    {finding.rule} {finding.where}: {finding.message[:150]}")
    elapsed = time.perf_counter() - started
    print(f"\n{flagged} of {compared} commits flagged ({elapsed:.1f} s); findings by rule:")
    for rule, count in by_rule.most_common():
        print(f"  {rule:26} {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How often ``test_integrity`` would have raised the tier on a repository's own history.

A false positive makes a pull request wait for a human, so the tamper analysis is measured on
real commits: each of the last N first-parent commits is compared with its parent (both read
through git; nothing is checked out) and the findings are counted by rule::

    python benchmarks/tamper_history.py [REPO ...] [-n 100] [--show] [--suppressions noqa,nosec]
        [--label FILE]

Prints one line per flagged commit (``--show``: every finding) and a summary; read the
flagged ones to tell real tampering from false positives. ``--label FILE`` reads such
judgements, one finding a line::

    <repo name> <commit prefix> <rule> <file>:<line> true|false  [-- why]

and prints, per rule, how many findings were judged and the precision (true / judged), the
findings no label covers, and the flagged commits whose every finding was judged false. The
replay (``behaviour_change``, ``mark_hides_failure``) needs each commit's tests run and is not
measured here.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
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


def own_packages(repo: Path, commit: str) -> set[str]:
    """Top-level packages and modules at ``commit`` (in the root and ``src/``)."""
    found: set[str] = set()
    for prefix in ("", "src/"):
        listing = _git(repo, "ls-tree", "-r", "--name-only", commit, "--", prefix or ".")
        for path in listing.split("\n"):
            rest = path[len(prefix):] if path.startswith(prefix) else None
            if not rest:
                continue
            parts = rest.split("/")
            if len(parts) == 2 and parts[1] == "__init__.py" and parts[0].isidentifier():
                found.add(parts[0])
            elif len(parts) == 1 and parts[0].endswith(".py") and parts[0][:-3].isidentifier():
                found.add(parts[0][:-3])
    return found


@dataclass(frozen=True)
class Label:
    repo: str
    commit: str
    rule: str
    where: str
    true: bool


def read_labels(path: Path) -> list[Label]:
    labels = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("--", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 5 or parts[4] not in ("true", "false"):
            raise SystemExit(f"{path}:{number}: expected `repo commit rule file:line true|false`")
        labels.append(Label(parts[0], parts[1], parts[2], parts[3], parts[4] == "true"))
    return labels


def _label_of(labels: list[Label], repo: str, commit: str, rule: str, where: str) -> Label | None:
    return next((x for x in labels if x.repo == repo and commit.startswith(x.commit)
                 and x.rule == rule and x.where == where), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="*", default=["."])
    parser.add_argument("-n", type=int, default=100)
    parser.add_argument("--show", action="store_true", help="print every finding")
    parser.add_argument(
        "--suppressions", default=",".join(WATCHED),
        help="comma-separated directives that count (as test_integrity's `suppressions:`)",
    )
    parser.add_argument("--label", type=Path, help="judged findings: precision per rule")
    args = parser.parse_args(argv)
    labels = read_labels(args.label) if args.label else []
    by_rule: Counter[str] = Counter()
    judged: Counter[str] = Counter()
    right: Counter[str] = Counter()
    unlabelled: list[str] = []
    only_false: list[str] = []
    flagged = compared = 0
    started = time.perf_counter()
    watch = [d.strip() for d in args.suppressions.split(",") if d.strip()]
    for repo in (Path(r).resolve() for r in args.repos):
        name = _repo_name(repo)
        commits = _git(repo, "rev-list", "--first-parent", "-n", str(args.n), "HEAD").split()
        for commit in commits:
            parents = _git(repo, "rev-list", "--parents", "-n", "1", commit).split()[1:]
            if not parents:
                continue
            compared += 1
            report = find_tampering(versions_of_commit(repo, parents[0], commit), watch=watch,
                                    own_packages=own_packages(repo, commit))
            if not report.findings:
                continue
            flagged += 1
            rules = Counter(f.rule for f in report.findings)
            by_rule.update(rules)
            subject = _git(repo, "log", "-1", "--format=%s", commit).strip()
            print(f"{name} {commit[:9]} {dict(rules)}  {subject[:60]}")
            verdicts = []
            for finding in report.findings:
                label = _label_of(labels, name, commit, finding.rule, finding.where)
                if args.show:
                    mark = "" if label is None else (" [true]" if label.true else " [FALSE]")
                    print(f"    {finding.rule} {finding.where}: {finding.message[:140]}{mark}")
                if label is None:
                    unlabelled.append(f"{name} {commit[:9]} {finding.rule} {finding.where}")
                    continue
                judged[finding.rule] += 1
                right[finding.rule] += label.true
                verdicts.append(label.true)
            if verdicts and len(verdicts) == len(report.findings) and not any(verdicts):
                only_false.append(f"{name} {commit[:9]}")
    elapsed = time.perf_counter() - started
    print(f"\n{flagged} of {compared} commits flagged ({elapsed:.1f} s); findings by rule:")
    for rule, count in by_rule.most_common():
        precision = f"{right[rule]}/{judged[rule]} true" if judged[rule] else "not judged"
        print(f"  {rule:26} {count:4}   {precision}")
    if labels:
        total, true = sum(judged.values()), sum(right.values())
        share = f"{true / total:.1%}" if total else "-"
        print(f"\nprecision: {true} of {total} judged findings true ({share}); "
              f"{len(unlabelled)} not judged")
        print(f"flagged commits flagged only by false findings: {len(only_false)} of {flagged}"
              + (f" ({len(only_false) / flagged:.1%})" if flagged else ""))
        for item in [*only_false, *(f"not judged: {u}" for u in unlabelled)]:
            print(f"  {item}")
    return 0


def _repo_name(repo: Path) -> str:
    """``owner/name`` of a mirror (``owner+name/repo``), else the folder's name."""
    if repo.name == "repo" and "+" in repo.parent.name:
        return repo.parent.name.replace("+", "/")
    return repo.name


if __name__ == "__main__":
    sys.exit(main())

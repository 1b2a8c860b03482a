"""The risk tier worked out again in the publish step, from data the change cannot forge.

The report is written by the process that ran the change's code, so its ``risk_tier``, the
sign-offs it asks for and the approvers it names are the change's own word (SECURITY.md). The
publish step never runs that code and has no checkout; from GitHub it reads the pull request's
file list (and the paths each of its commits touched: a file added and removed again still
counts) and the base commit's configuration, and applies the gate's own rules to them:
``risk_rules``, the config-change and machinery rules, ``protected_paths``. The report's tier
can only rise to that floor, and the approvers and the number of sign-offs come from the base.

It also reads the change's own Python files at both commits (issue 29) and looks for code that
games the gate or its tests in the lines it adds (``collect.tamper.patterns``: a test that
rewrites the report at exit, ...). Such code, like an edit of the gate's machinery, keeps a
human in the loop: the tier is at least T2 and at least one sign-off is needed, whatever the
base's policy says of T2.

What it cannot see: symlinks (GitHub lists a link as a link); the gate job sees through them.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_confgate.config import GateConfig, PolicyConfig
from pytest_confgate.gate.change import (
    ChangeView,
    Trust,
    applied_tier,
    base_config,
    history_only,
)
from pytest_confgate.gate.machinery import is_sectioned, machinery_changes
from pytest_confgate.gate.scope import config_changed
from pytest_confgate.gate.tiers import raised
from pytest_confgate.github.api import GitHubClient
from pytest_confgate.github.event import PullRequest
from pytest_confgate.github.pulls import (
    file_at,
    folder_entries,
    pull_request_commit_paths,
    pull_request_files,
)
from pytest_confgate.models import ChangeSet, FileChange, RiskTier
from pytest_confgate.paths import normalize_path

ENV_CONFIG = "CONFGATE_CONFIG"
ENV_PROJECT_DIR = "CONFGATE_PROJECT_DIR"
MAX_READ_FILES = 300
"""Python files of a pull request read at its head for tamper patterns; beyond, the rest is
not read, and that alone keeps a human in the loop."""


@dataclass(frozen=True)
class Floor:
    """The tier the change's files demand under the base's configuration, and that policy.

    ``configured``: the base has a configuration file (else its defaults judged, whose empty
    approver list accepts anyone, so a report's own list can only be stricter). ``gate``: the
    base's gate configuration, which decides again over the report's evidence. ``guarded``:
    why a human must sign off whatever the tier's policy says (the gate's machinery edited,
    tamper patterns found), or None. ``tamper``: those patterns, for the reviewer.
    """

    tier: RiskTier
    reason: str
    config: str
    policy: PolicyConfig
    files: int
    configured: bool
    gate: GateConfig
    guarded: str | None = None
    tamper: tuple[dict[str, Any], ...] = ()


def derive_floor(
    client: GitHubClient, environ: Mapping[str, str], pull: PullRequest, repo: str
) -> Floor | None:
    """Raises ``GitHubError`` when GitHub cannot say what the change or its base is.

    The base is the event's ``pull_request.base.sha`` (else the ``GITHUB_BASE_REF`` branch);
    None when neither is known. The runner always writes both, so only a hand-made event
    lacks them, and the change cannot edit the event.
    """
    base = pull.base_sha or environ.get("GITHUB_BASE_REF", "").strip()
    if not base:
        return None
    prefix = normalize_path(environ.get(ENV_PROJECT_DIR, "")).strip("/")
    prefix = "" if prefix == "." else prefix

    def at(path: str, ref: str) -> str | None:
        return file_at(client, repo, posixpath.join(prefix, path) if prefix else path, ref)

    explicit = environ.get(ENV_CONFIG, "").strip() or None
    config, where, in_use = base_config(lambda name: at(name, base), explicit, base[:12])
    files = tuple(pull_request_files(client, repo, pull.number))
    whole = ChangeSet(base, base, files, prefix)
    changes = whole.rooted()
    history = history_only(pull_request_commit_paths(client, repo, pull.number),
                           whole.paths() | changes.paths(), prefix)
    view = ChangeView(base, changes, whole.paths(), None, history=history)
    note = None
    if config_changed(changes, in_use):
        note = f"the change edits the gate's configuration, so the base's ({where}) judges it"
    texts = {
        path: (at(path, base), at(path, pull.head_sha))
        for path in sorted(changes.paths())
        if is_sectioned(path)
    }
    machinery = machinery_changes(
        set(changes.paths()) | set(whole.paths()), texts, config.gate.protected_paths
    )
    trust = Trust(where, "the base commit's, read in the publish step", edits_config=note)
    tier, reason = applied_tier(config, view, trust, machinery)
    own = _base_packages(lambda folder: folder_entries(
        client, repo, posixpath.join(prefix, folder) if prefix else folder, base))
    tamper = tuple(_tamper_items(changes.files, lambda path, ref: at(path, ref),
                                 (base, pull.head_sha), own))
    guarded = None
    if machinery:
        guarded = f"the change edits the gate's machinery: {'; '.join(machinery)}"
    if tamper:
        listed = "; ".join(f"{t['file']}:{t['line']}: {t['message']}" for t in tamper[:5])
        why = f"the change carries code that games the gate or its tests: {listed}"
        tier, reason = raised(tier, reason, "T2", why)
        guarded = why if guarded is None else f"{guarded}; {why}"
    return Floor(tier, reason, where, config.gate.policy, len(whole.files), in_use is not None,
                 config.gate, guarded, tamper)


def _base_packages(entries: Callable[[str], list[tuple[str, str]]]) -> frozenset[str]:
    """The project's top-level import names on the base (its folder and ``src/``): its own
    tests may patch them even when it is pytest or pluggy. From the base, so a change cannot
    claim a tool's name by adding a folder of that name."""
    names: set[str] = set()
    for folder in ("", "src"):
        for name, kind in entries(folder):
            stem = name[:-3] if kind == "file" and name.endswith(".py") else name
            if (kind == "dir" or name.endswith(".py")) and stem.isidentifier():
                names.add(stem)
    return frozenset(names)


def _tamper_items(
    files: tuple[FileChange, ...], at: Callable[[str, str], str | None], refs: tuple[str, str],
    own: frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """Issue 27's static patterns over the Python files the pull request adds or modifies,
    read at the base and the head, as ``details.items`` (with both sides' code)."""
    base, head = refs
    read = [f for f in files if f.status != "deleted" and f.path.endswith(".py")]
    versions = []
    for change in read[:MAX_READ_FILES]:
        old = change.old_path or change.path
        text = at(change.path, head)
        if text is not None:
            before = at(old, base) if change.status != "added" else None
            versions.append((change.path, before, text, change.old_path))
    found = static_findings(versions, own)
    if len(read) > MAX_READ_FILES:
        found.append({
            "rule": "unread", "file": read[MAX_READ_FILES].path, "line": 0, "base": None,
            "head": None, "message": f"{len(read) - MAX_READ_FILES} Python files of the pull "
            f"request were not read for tamper patterns (over {MAX_READ_FILES})"})
    return found


def static_findings(
    versions: list[tuple[str, str | None, str, str | None]],
    own_packages: frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """Code that games the gate or its tests in the change's files: (path, base text or
    None, head text, old path) each; one ``details.items`` entry per finding, with the code.

    ``collect.tamper.patterns.find_patterns`` (issue 27) reads the lines the change added: a
    test module registering an ``atexit`` hook or writing the report, patched test tooling, a
    test checking a stand-in, special-cased inputs, constant ``__eq__``. A shell started in
    argv form is a dangerous operation, not tampering, and is left to the gate.
    """
    from pytest_confgate.collect.tamper.patterns import SHELL_ARGV, find_patterns
    from pytest_confgate.collect.tamper.shapes import FileVersions

    files = [FileVersions(path, base, head, old if old and old != path else None)
             for path, base, head, old in versions]
    return [
        {"rule": f.rule, "file": f.file, "line": f.line, "message": f.message,
         "base": f.base, "head": f.head, "test": f.test}
        for f in find_patterns(files, own_packages=own_packages)
        if f.rule != SHELL_ARGV
    ]

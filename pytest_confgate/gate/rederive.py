"""The risk tier worked out again in the publish step, from data the change cannot forge.

The report is written by the process that ran the change's code, so its ``risk_tier``, the
sign-offs it asks for and the approvers it names are the change's own word (SECURITY.md). The
publish step never runs that code and has no checkout; from GitHub it reads the pull request's
file list and the base commit's configuration, and applies the gate's own rules to them:
``risk_rules``, the config-change and machinery rules, ``protected_paths``. The report's tier
can only rise to that floor, and the approvers and the number of sign-offs come from the base.

What it cannot see: symlinks (GitHub lists a link as a link); the gate job sees through them.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass

from pytest_confgate.config import PolicyConfig
from pytest_confgate.gate.change import ChangeView, Trust, applied_tier, base_config
from pytest_confgate.gate.machinery import is_sectioned, machinery_changes
from pytest_confgate.gate.scope import config_changed
from pytest_confgate.github.api import GitHubClient
from pytest_confgate.github.event import PullRequest
from pytest_confgate.github.pulls import file_at, pull_request_files
from pytest_confgate.models import ChangeSet, RiskTier
from pytest_confgate.paths import normalize_path

ENV_CONFIG = "CONFGATE_CONFIG"
ENV_PROJECT_DIR = "CONFGATE_PROJECT_DIR"


@dataclass(frozen=True)
class Floor:
    """The tier the change's files demand under the base's configuration, and that policy.

    ``configured``: the base has a configuration file (else its defaults judged, whose empty
    approver list accepts anyone, so a report's own list can only be stricter).
    """

    tier: RiskTier
    reason: str
    config: str
    policy: PolicyConfig
    files: int
    configured: bool


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
    view = ChangeView(base, changes, whole.paths(), None)
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
    return Floor(tier, reason, where, config.gate.policy, len(whole.files), in_use is not None)

"""Where a judged change's base and configuration come from: never from the change (issue 14).

A pull request can edit its own ``confgate.yml`` (``base_ref: HEAD``), its ``pyproject.toml``
(``addopts = "--confgate-base=HEAD"`` or ``--confgate-config=lax.yml``) and whatever it runs
before the tests. So the base is taken from sources the change cannot edit, in this order:

1. ``--confgate-base`` on pytest's real command line (``invocation_params.args``, not addopts);
2. ``pull_request.base.sha`` of the GitHub event file, written by the runner;
3. ``GITHUB_BASE_REF``, set by the runner.

Only when none exists (a local run) do ``--confgate-base`` from addopts/``PYTEST_ADDOPTS`` and
then the configuration's ``base_ref`` apply. On a pull request a configuration file named by
addopts, ``PYTEST_ADDOPTS`` or ``CONFGATE_CONFIG`` is ignored too; the file that judges is then
read from the base commit (``gate.change.trusted_config``). Every value not used is named in
the report's ``change.ignored`` with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_confgate.collect.changes import github_base_ref
from pytest_confgate.github.event import is_pull_request_run, pull_request_base_sha

ADDOPTS = "addopts or PYTEST_ADDOPTS"
ENV_CONFIG = "CONFGATE_CONFIG"
COMMAND_LINE_BASE = "--confgate-base on the command line"
EVENT_BASE = "pull_request.base.sha of the GitHub event"
_UNTRUSTED = "the change under review could have set it"


@dataclass(frozen=True)
class Requested:
    """``--confgate-base`` / ``--confgate-config`` as pytest parsed them, and whether each
    value was typed on pytest's real command line (else addopts or ``PYTEST_ADDOPTS`` gave it).
    """

    base: str | None = None
    base_on_command_line: bool = False
    config: str | None = None
    config_on_command_line: bool = False


@dataclass(frozen=True)
class ConfigChoice:
    """The configuration file to load (None: find it in the rootdir) and why."""

    path: str | None
    source: str
    ignored: tuple[str, ...] = ()


@dataclass(frozen=True)
class BaseChoice:
    """The ref to compare against and why; ``anchored``: the change could not have chosen it.

    ``event_base`` is the event's base commit, kept to check a command-line base against.
    """

    ref: str | None
    source: str | None
    anchored: bool
    event_base: str | None = None
    ignored: tuple[str, ...] = ()


def choose_config(requested: Requested, environ: Mapping[str, str]) -> ConfigChoice:
    """The configuration path: the real command line always; addopts or the environment only
    outside a pull request."""
    if requested.config and requested.config_on_command_line:
        return ConfigChoice(requested.config, "--confgate-config on the command line")
    from_env = environ.get(ENV_CONFIG, "").strip()
    if not is_pull_request_run(environ):
        if requested.config:
            return ConfigChoice(requested.config, f"--confgate-config from {ADDOPTS}")
        if from_env:
            return ConfigChoice(from_env, ENV_CONFIG)
        return ConfigChoice(None, "found in the rootdir")
    why = f"ignored on a pull request: {_UNTRUSTED}; pass --confgate-config on the command line"
    ignored = []
    if requested.config:
        ignored.append(f"--confgate-config={requested.config} from {ADDOPTS} {why}")
    if from_env:
        ignored.append(f"{ENV_CONFIG}={from_env} {why}")
    return ConfigChoice(None, "found in the rootdir (a pull request)", tuple(ignored))


def choose_base(
    requested: Requested, configured: str | None, environ: Mapping[str, str], root: Path
) -> BaseChoice:
    """The base ref, in the order of the module docstring; blank values count as unset."""
    event_base = pull_request_base_sha(environ)
    trusted = [
        (_clean(requested.base) if requested.base_on_command_line else None, COMMAND_LINE_BASE),
        (event_base, EVENT_BASE),
        (github_base_ref(environ, root), "GITHUB_BASE_REF"),
    ]
    untrusted = [
        (None if requested.base_on_command_line else _clean(requested.base), "addopts"),
        (_clean(configured), "base_ref"),
    ]
    chosen = next(((ref, source) for ref, source in trusted if ref), None)
    if chosen is None:
        local = next(((ref, kind) for ref, kind in untrusted if ref), None)
        if local is None:
            return BaseChoice(None, None, anchored=False)
        ref, kind = local
        return BaseChoice(ref, _untrusted_source(kind), anchored=False)
    ref, source = chosen
    ignored = tuple(
        f"{_named(value, kind)} not used: {_UNTRUSTED}; the base is {source}"
        for value, kind in untrusted
        if value and value != ref
    )
    return BaseChoice(ref, source, anchored=True, event_base=event_base, ignored=ignored)


def off_the_base_branch(ref: str, merge_base: str, event_base: str) -> str:
    """Why a command-line base was replaced by the event's: its merge base is not on it."""
    return (
        f"--confgate-base {ref} on the command line not used: its merge base with HEAD "
        f"({merge_base[:12]}) is not on the base branch ({EVENT_BASE} {event_base[:12]})"
    )


def _named(value: str, kind: str) -> str:
    if kind == "addopts":
        return f"--confgate-base={value} from {ADDOPTS}"
    return f"base_ref: {value} in the configuration"


def _untrusted_source(kind: str) -> str:
    if kind == "addopts":
        return f"--confgate-base from {ADDOPTS}"
    return "base_ref in the configuration"


def _clean(value: str | None) -> str | None:
    return value.strip() if value is not None and value.strip() else None

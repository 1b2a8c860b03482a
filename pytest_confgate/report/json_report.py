"""The JSON report: atomic, schema-versioned, and only inside the working tree."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import secrets
import time
from importlib import resources
from pathlib import Path
from typing import Any

from pytest_confgate.exceptions import ReportError
from pytest_confgate.models import GateReport
from pytest_confgate.paths import printable_data

DEFAULT_REPORT_NAME = "confgate-report.json"


def working_tree(root: Path) -> Path:
    """The enclosing git work tree of ``root`` (a ``.git`` dir or file), else ``root`` itself."""
    root = root.resolve()
    for folder in (root, *root.parents):
        if (folder / ".git").exists():
            return folder
    return root


def resolve_report_path(root: Path, requested: str | None, cwd: Path | None = None) -> Path:
    """Where to write: ``requested`` (relative to ``cwd``) or the default in ``root``.

    A path that resolves outside the working tree (``..``, an absolute path, a symlink) is
    refused before any test runs, so a report can never overwrite a file elsewhere.
    """
    if not requested:
        return root.resolve() / DEFAULT_REPORT_NAME
    path = ((cwd or Path.cwd()) / requested).resolve()
    tree = working_tree(root)
    if not path.is_relative_to(tree):
        raise ReportError(
            f"--confgate-report {requested}: {path} is outside the working tree {tree}; "
            "write the report inside the project"
        )
    if path.is_dir():
        raise ReportError(f"--confgate-report {requested}: is a directory; give a file name")
    return path


def forget_report(path: Path) -> None:
    """Delete the report a previous run left at ``path`` (a symlink is removed, not followed).

    ``confgate gate`` calls it before the tests start: a file found there after the run was
    left by the change's code, never mistaken for an older verdict of ours.
    """
    try:
        if path.is_symlink() or path.is_file():
            path.unlink()
    except OSError as exc:
        raise ReportError(
            f"{path}: the previous report cannot be removed ({exc.strerror}); remove it, or "
            "write the report elsewhere with --report"
        ) from exc


def write_json_report(report: GateReport, path: Path, *, within: Path | None = None) -> str:
    """Write the report atomically (``write_text_atomic``); ``within``: the working tree.
    Returns the sha256 of the bytes written."""
    data = printable_report(report).model_dump(mode="json")
    return write_json_atomic(data, path, within=within)


def printable_report(report: GateReport) -> GateReport:
    """``report`` with every string ``printable`` (a file name that is not UTF-8 becomes
    ``bad\xffname.py``), so every writer, the terminal and GitHub can show it."""
    data = report.model_dump()  # "json" mode would try to encode the surrogates, and fail
    cleaned = printable_data(data)
    return report if cleaned is data else GateReport.model_validate(cleaned)


def write_json_atomic(data: Any, path: Path, *, within: Path | None = None) -> str:
    """Never leave a half-written file: readers see the old file or the new one."""
    return write_text_atomic(json.dumps(data, indent=2, sort_keys=False) + "\n", path,
                             within=within)


def write_text_atomic(text: str, path: Path, *, within: Path | None = None) -> str:
    """A temporary file beside ``path``, then a rename: readers see old or new, never half.

    Both happen through one descriptor of the folder, so they land in the same place. With
    ``within`` (an ancestor of ``path``: the working tree) that folder is reached by opening
    each folder from ``within`` down without following symlinks (created when missing): a
    folder swapped for a symlink while the tests ran cannot send the file outside the tree.
    Temporary files that an earlier, killed run left beside ``path`` are removed. Readable by
    others (0644): a report is meant to be shared and never holds a secret. Text that cannot
    be encoded (a lone surrogate from an undecodable file name) is written escaped. Returns
    the sha256 of the bytes written: what was written, not what a reader finds there later.
    """
    try:
        folder = _open_folder(path, within)
        try:
            _remove_stale_temporaries(folder, path.name)
            return _write_and_rename(folder, path.name, text)
        finally:
            os.close(folder)
    except OSError as exc:
        raise ReportError(f"{path}: the report cannot be written ({exc.strerror})") from exc


_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_STARTED = time.time()
"""Temporary files older than this process are left over from an earlier run."""


def _open_folder(path: Path, within: Path | None) -> int:
    """A descriptor of ``path``'s folder; from ``within`` down, no symlink is followed."""
    if within is None or not _NOFOLLOW or os.open not in os.supports_dir_fd:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path.parent, _FOLDER_FLAGS)
    if not path.parent.is_relative_to(within):
        raise ReportError(f"{path}: outside the working tree {within}; write it inside")
    folder = os.open(within, _FOLDER_FLAGS | _NOFOLLOW)
    reached = within
    for part in path.parent.relative_to(within).parts:
        reached = reached / part
        folder = _step_into(folder, part, reached, path)
    return folder


def _step_into(folder: int, part: str, reached: Path, path: Path) -> int:
    """Open ``part`` below the descriptor ``folder`` (closed here), creating it if missing."""
    try:
        try:
            return os.open(part, _FOLDER_FLAGS | _NOFOLLOW, dir_fd=folder)
        except FileNotFoundError:
            os.mkdir(part, 0o777, dir_fd=folder)
            return os.open(part, _FOLDER_FLAGS | _NOFOLLOW, dir_fd=folder)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise ReportError(
                f"{path}: the report cannot be written: {reached} is not a folder (a symlink or "
                "a file is in its place, perhaps put there while the tests ran); the report is "
                "not written through it"
            ) from exc
        raise
    finally:
        os.close(folder)


def _remove_stale_temporaries(folder: int, name: str) -> None:
    prefix = f".{name}."
    for entry in os.listdir(folder) if os.listdir in os.supports_fd else []:
        if not (entry.startswith(prefix) and entry.endswith(".tmp")):
            continue
        try:
            if os.stat(entry, dir_fd=folder, follow_symlinks=False).st_mtime < _STARTED:
                os.unlink(entry, dir_fd=folder)
        except OSError:
            pass  # gone already, or not ours to remove: the write below is what matters


def _write_and_rename(folder: int, name: str, text: str) -> str:
    data = text.encode("utf-8", errors="backslashreplace")
    temporary = f".{name}.{secrets.token_hex(8)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
    fd = os.open(temporary, flags, 0o644, dir_fd=folder)
    try:
        os.fchmod(fd, 0o644)  # whatever the umask
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.rename(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        raise
    return hashlib.sha256(data).hexdigest()


def report_schema() -> dict[str, Any]:
    """The published JSON Schema of the report, as shipped in the package."""
    text = resources.files("pytest_confgate.report").joinpath("schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def generate_report_schema() -> dict[str, Any]:
    """The schema as the models define it today (a test keeps ``schema.json`` equal to it)."""
    schema = GateReport.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "urn:pytest-confgate:report:1.0"
    return schema

"""The JSON report (SPEC 10): atomic, schema-versioned, and only inside the working tree."""

from __future__ import annotations

import json
import os
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from pytest_confgate.exceptions import ReportError
from pytest_confgate.models import GateReport

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

    Called before anything else can fail, so a run that stops early (a broken configuration, a
    crash) leaves no report at all rather than an older one that still says ``pass``.
    """
    try:
        if path.is_symlink() or path.is_file():
            path.unlink()
    except OSError as exc:
        raise ReportError(
            f"{path}: the previous report cannot be removed ({exc.strerror}); remove it, or "
            "write the report elsewhere with --confgate-report"
        ) from exc


def write_json_report(report: GateReport, path: Path) -> None:
    """Write the report atomically: a temporary file beside it, then ``os.replace``."""
    data = report.model_dump(mode="json")
    write_json_atomic(data, path)


def write_json_atomic(data: Any, path: Path) -> None:
    """Never leave a half-written file: readers see the old file or the new one."""
    write_text_atomic(json.dumps(data, indent=2, sort_keys=False) + "\n", path)


def write_text_atomic(text: str, path: Path) -> None:
    """A temporary file beside ``path``, then ``os.replace``: readers see old or new, never half.

    Readable by others (0644): a report is meant to be shared and never holds a secret.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            os.fchmod(fd, 0o644)
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise ReportError(f"{path}: the report cannot be written ({exc.strerror})") from exc


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

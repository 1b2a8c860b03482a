"""One interface over the report writers: a format name -> text rendered from a ``GateReport``.

Every writer takes only the finished report, so ``confgate report`` can render any saved JSON
report again. Writers decide nothing; they display the policy's verdict.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from pytest_confgate.exceptions import ReportError
from pytest_confgate.models import GateReport
from pytest_confgate.report.html import render_html
from pytest_confgate.report.json_report import printable_report, write_text_atomic
from pytest_confgate.report.markdown import render_comment
from pytest_confgate.report.sarif import render_sarif, sarif_text

__all__ = ["FORMATS", "load_report", "render", "write_text_atomic"]

Writer = Callable[[GateReport], str]


def _json(report: GateReport) -> str:
    return printable_report(report).model_dump_json(indent=2) + "\n"


def _sarif(report: GateReport) -> str:
    return sarif_text(render_sarif(report))


FORMATS: dict[str, Writer] = {
    "md": render_comment,  # what publish posts: a local preview of the PR comment
    "html": render_html,
    "sarif": _sarif,
    "json": _json,
}


def render(report: GateReport, fmt: str) -> str:
    """The report in ``fmt`` (a key of ``FORMATS``); an unknown name is a ``ReportError``."""
    try:
        writer = FORMATS[fmt]
    except KeyError:
        raise ReportError(
            f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}"
        ) from None
    return writer(report)


def load_report(path: Path) -> GateReport:
    """Read a saved JSON report back; each way it can be wrong is one line naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportError(
            f"{path}: no such file; give the JSON report `pytest --confgate` wrote"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"{path}: cannot be read ({exc}); give a UTF-8 JSON report") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "give the JSON report `pytest --confgate` wrote"
        ) from exc
    try:
        return GateReport.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "top level"
        raise ReportError(
            f"{path}: not a confgate gate report ({where}: {error['msg']}); "
            "give the JSON report `pytest --confgate` wrote"
        ) from exc

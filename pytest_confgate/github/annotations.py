"""Annotations on the pull request's files: the workflow commands ``confgate github publish``
prints (issue 29).

Three kinds, most important first, at most ``cap`` per level (GitHub shows 10 of each level per
step; the rest are counted in the summary and kept in the SARIF and the JSON report):

- ``error`` for each tamper or behaviour-change finding (``report.rows.tamper_rows``);
- each lint and security finding on the changed lines, at the level SARIF gives it
  (``report.sarif.sarif_level``: bandit HIGH error, MEDIUM warning, LOW notice) and in
  GitHub's 1-based columns: bandit's ``col_offset`` counts from 0, so it is shown plus one,
  as SARIF's ``startColumn`` is; ruff's columns count from 1 already;
- ``notice`` for each range of changed lines no test ran (grouped: one per range).

Every message and property is escaped (``escape_data``/``escape_property``): text from the
report can never start a command of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from pytest_confgate.models import Finding, GateReport
from pytest_confgate.report.display import in_ranges, line_ranges
from pytest_confgate.report.markdown import report_findings
from pytest_confgate.report.rows import tamper_rows
from pytest_confgate.report.sarif import sarif_column, sarif_level

ANNOTATIONS_CAP = 10  # GitHub shows at most 10 annotations of each level per step
_LEVEL = {"error": "error", "warning": "warning", "note": "notice"}


def escape_data(text: object) -> str:
    """A workflow command's message: ``%``, CR and LF encoded, so it stays one inert line."""
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: object) -> str:
    """A workflow command's property value: also ``:`` and ``,``, which end a property."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


@dataclass(frozen=True)
class Annotations:
    """The commands to print and how many did not fit under the cap."""

    commands: list[str]
    omitted: int


@dataclass(frozen=True)
class _Note:
    level: str
    file: str
    line: int
    end_line: int
    column: int
    title: str
    message: str

    def command(self) -> str:
        props = [f"file={escape_property(self.file)}"]
        if self.line:
            props.append(f"line={self.line}")
            if self.end_line > self.line:
                props.append(f"endLine={self.end_line}")
        if self.column:
            props.append(f"col={self.column}")
        props.append(f"title={escape_property(self.title)}")
        return f"::{self.level} {','.join(props)}::{escape_data(self.message)}"


def annotation_commands(report: GateReport, cap: int = ANNOTATIONS_CAP) -> Annotations:
    """Tamper findings, then findings on the changed lines, then uncovered changed lines;
    at most ``cap`` per level.

    The report's ``change.lines`` maps each changed file to its changed line ranges; a finding
    without a line counts when its file changed. Reports without line ranges fall back to the
    changed files; without a change every finding is annotated.
    """
    shown: dict[str, int] = {}
    commands: list[str] = []
    omitted = 0
    for note in _notes(report):
        if shown.get(note.level, 0) >= cap:
            omitted += 1
            continue
        shown[note.level] = shown.get(note.level, 0) + 1
        commands.append(note.command())
    return Annotations(commands, omitted)


def _notes(report: GateReport) -> Iterator[_Note]:
    for row in tamper_rows(report):
        yield _Note("error", row.file, row.line, row.line, 0, f"confgate tamper {row.rule}",
                    row.message)
    on_change = _change_filter(report)
    for finding in report_findings(report):
        if on_change(finding):
            yield _finding_note(finding)
    yield from _uncovered(report)


def _finding_note(finding: Finding) -> _Note:
    level = _LEVEL[sarif_level(finding)]
    return _Note(level, finding.file, finding.line, finding.line, sarif_column(finding),
                 f"{finding.tool} {finding.rule}", finding.message)


def _uncovered(report: GateReport) -> Iterator[_Note]:
    """One notice per range of changed lines no test ran, each range once."""
    seen: set[tuple[str, int, int]] = set()
    for file, lines in uncovered_changed_lines(report).items():
        for first, last in line_ranges(lines):
            if (file, first, last) in seen:
                continue
            seen.add((file, first, last))
            what = f"line {first}" if first == last else f"lines {first}-{last}"
            yield _Note("notice", file, first, last, 0, "uncovered changed lines",
                        f"{what} changed and no test ran {'it' if first == last else 'them'}")


def uncovered_changed_lines(report: GateReport) -> dict[str, list[int]]:
    """Per file, the changed lines no test ran: a patch coverage metric's missing lines, else
    the project's missing lines within the change's line ranges."""
    found: dict[str, set[int]] = {}
    change = report.change or {}
    ranges = change.get("lines") if isinstance(change.get("lines"), dict) else None
    for metric in report.metrics:
        if metric.type != "test_coverage":
            continue
        patch = metric.details.get("scope") == "changed"
        data: Any = metric.details.get("missing")
        if patch and not data:
            data = metric.details.get("uncovered_changed_lines")
        if not isinstance(data, dict) or not (patch or ranges):
            continue
        for file, lines in data.items():
            if not isinstance(lines, list):
                continue
            spans = ranges.get(file) if ranges else None
            keep = [n for n in lines if isinstance(n, int) and not isinstance(n, bool) and n > 0
                    and (patch or (isinstance(spans, list) and in_ranges(n, spans)))]
            if keep:
                found.setdefault(str(file), set()).update(keep)
    return {file: sorted(lines) for file, lines in sorted(found.items())}


def _change_filter(report: GateReport) -> Callable[[Finding], bool]:
    change = report.change or {}
    files, lines = change.get("files"), change.get("lines")
    if not isinstance(files, list):
        return lambda _: True
    changed = frozenset(str(f) for f in files)
    if not isinstance(lines, dict):
        return lambda finding: finding.file in changed

    def on_changed_line(finding: Finding) -> bool:
        if finding.file not in changed:
            return False
        if not finding.line:
            return True  # a finding about the whole file
        ranges = lines.get(finding.file)
        return isinstance(ranges, list) and in_ranges(
            finding.line, (r for r in ranges if isinstance(r, list))
        )

    return on_changed_line

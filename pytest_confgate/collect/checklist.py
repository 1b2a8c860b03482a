"""``checklist_completion``: Markdown task lists in the pull-request body or a file.

The parser is written by hand, one pass over the lines with ``str.find`` and fixed-width
slices: no regular expression, so no backtracking, and its time is linear in the input whatever
the input is (issue 3, item 4). The text is data: it is only ever split and compared, never
executed, rendered or interpreted, so ``::set-output`` or ``$(...)`` in an item stays literal.

``required:`` items are plain text, never regular expressions: one is satisfied when, after
``normalize_item_text`` on both sides, it equals the *whole* text of a checked item. Never a
substring: ``- [x] tests added (will do later)`` does not tick ``tests added`` (issue 14).
"""

from __future__ import annotations

import json
import time
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_confgate.config import ChecklistMetricConfig
from pytest_confgate.models import EvalMetric, MetricStatus

METRIC_TYPE = "checklist_completion"
PR_BODY = "pr_body"
ENV_EVENT_PATH = "GITHUB_EVENT_PATH"
MAX_CHECKLIST_BYTES = 1024 * 1024
"""Cap on the body or file (GitHub itself caps a PR body at 65,536 characters)."""
MAX_EVENT_BYTES = 32 * 1024 * 1024
"""Cap on the whole event payload, which carries much more than the body."""

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))
_BULLETS = "-*+"
_BLANK = " \t"
_BOXES = {"[ ]": False, "[x]": True, "[X]": True}
_MAX_ORDINAL_DIGITS = 9  # CommonMark: an ordered list marker has at most 9 digits
_MAX_NON_STARTERS = 30  # UAX #15, Stream-Safe Text Format
_CGJ = "\u034f"


class _Unusable(Exception):
    """A checklist that cannot be read; becomes a metric with this ``status`` and ``reason``."""

    def __init__(self, status: MetricStatus, reason: str) -> None:
        self.status = status
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True)
class ChecklistItem:
    """One task-list item: its text as written (stripped), whether it is ticked, its line."""

    text: str
    checked: bool
    line: int


def normalize_item_text(text: str) -> str:
    """Fold text so look-alikes compare equal: zero-width removed, NFKC, casefold, one space.

    Zero-width characters go first so that removing them cannot leave a sequence NFKC would
    compose differently on a second pass; NFKC runs again after casefolding because casefold
    can produce unnormalized text. The result is a fixed point (tested with hypothesis).
    Text is made stream-safe first (``_stream_safe``): NFKC reorders a run of combining marks
    in time quadratic in its length, so one item of 64,000 marks took seconds.
    """
    folded = unicodedata.normalize("NFKC", _stream_safe(text.translate(_ZERO_WIDTH)))
    folded = unicodedata.normalize("NFKC", _stream_safe(folded.casefold()))
    return " ".join(folded.translate(_ZERO_WIDTH).split())


def _stream_safe(text: str) -> str:
    """UAX #15's Stream-Safe Text Format: U+034F COMBINING GRAPHEME JOINER after every 30
    combining marks in a row, so no run NFKC has to reorder is longer than 30."""
    if text.isascii():
        return text
    out: list[str] = []
    run = 0
    for char in text:
        if unicodedata.combining(char):
            run += 1
            if run > _MAX_NON_STARTERS:
                out.append(_CGJ)
                run = 1
        else:
            run = 0
        out.append(char)
    return "".join(out)


def markdown_lines(text: str) -> Iterator[tuple[int, str]]:
    """Yield ``(line number, line)`` for Markdown outside fenced code and HTML comments
    (blank lines hold nothing and are skipped).

    A fence opens with three or more backticks or tildes and closes with a line of at least as
    many of the same character; an unclosed fence runs to the end, as in CommonMark. Comment
    text is blanked out, so ``- [ ] a <!-- note -->`` keeps its item and a commented-out item
    disappears.
    """
    fence: str | None = None
    in_comment = False
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for number, line in enumerate(lines, start=1):
        stripped = line.strip(_BLANK)
        if not stripped:  # opens, closes and holds nothing, in a fence or a comment or not
            continue
        if fence is not None:
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = None
            continue
        if in_comment:
            end = line.find("-->")
            if end >= 0:  # the rest of the closing line belongs to the HTML block
                in_comment = _without_comments(line[end + 3 :])[1]
            continue
        fence = _fence_opening(stripped) if stripped[:1] in ("`", "~") else None
        if fence is not None:
            continue
        visible, in_comment = _without_comments(line) if "<!--" in line else (line, False)
        if not stripped.startswith("<!--"):  # a line opening with a comment is an HTML block
            yield number, visible


def _fence_opening(stripped: str) -> str | None:
    for char in "`~":
        width = len(stripped) - len(stripped.lstrip(char))
        if width >= 3:
            # A backtick fence's info string cannot contain a backtick (CommonMark 4.5).
            if char == "`" and "`" in stripped[width:]:
                return None
            return char * width
    return None


def _without_comments(line: str) -> tuple[str, bool]:
    """Blank out ``<!-- ... -->`` spans; True when a comment stays open past the line end."""
    parts: list[str] = []
    position = 0
    while True:
        start = line.find("<!--", position)
        if start < 0:
            parts.append(line[position:])
            return "".join(parts), False
        parts.append(line[position:start])
        end = line.find("-->", start + 4)
        if end < 0:
            return "".join(parts), True
        position = end + 3


def _parse_item(line: str) -> tuple[bool, str] | None:
    """``- [x] text`` -> ``(True, "text")``; anything else -> None. Fixed-width checks only."""
    body = line.lstrip(_BLANK)
    if body[:1] and body[:1] in _BULLETS:
        marker = 1
    else:
        marker = len(body) - len(body.lstrip("0123456789"))
        if not 1 <= marker <= _MAX_ORDINAL_DIGITS or body[marker : marker + 1] not in (".", ")"):
            return None
        marker += 1
    rest = body[marker:].lstrip(_BLANK)
    if len(rest) == len(body) - marker:  # the marker must be followed by a space
        return None
    checked = _BOXES.get(rest[:3])
    after = rest[3:]
    if checked is None or (after and after[0] not in _BLANK):
        return None
    return checked, after.strip()


def parse_checklist(text: str) -> list[ChecklistItem]:
    """Every task-list item with text, in order (``- [x]``, ``* [ ]``, ``+ [X]``, ``1. [ ]``).

    Nested items count like top-level ones. Items inside fenced code or HTML comments do not
    count, nor do empty boxes (``- [ ]`` with no text: nothing to name or require).
    """
    items: list[ChecklistItem] = []
    for number, line in markdown_lines(text):
        if "[" not in line:  # most lines of a long body: no box, nothing to parse
            continue
        parsed = _parse_item(line)
        if parsed is not None and parsed[1]:
            items.append(ChecklistItem(text=parsed[1], checked=parsed[0], line=number))
    return items


def checklist_metric(items: list[ChecklistItem], required: list[str], *, source: str) -> EvalMetric:
    """checked / total, where an item ticked in one place and unticked in another is unticked.

    ``details.required_missing`` lists the ``required:`` items no checked item equals (after
    normalizing both); the policy fails the gate on it. No items -> ``unavailable`` (missing
    evidence, fails closed).
    """
    keys = [normalize_item_text(item.text) for item in items]
    states: dict[str, set[bool]] = {}
    for key, item in zip(keys, items, strict=True):
        states.setdefault(key, set()).add(item.checked)
    named: dict[str, str] = {}  # contested normalized text -> its first spelling, in order
    ticked: list[str] = []
    for key, item in zip(keys, items, strict=True):
        if len(states[key]) == 2:
            named.setdefault(key, item.text)
        elif item.checked:
            ticked.append(key)
    wanted = {p: normalize_item_text(p) for p in required}
    ticked_keys = set(ticked)
    missing = [p for p in required if not _pattern_met(wanted[p], ticked_keys)]
    details = _details(source, required_missing=missing)
    details.update(
        checked=len(ticked),
        total=len(items),
        conflicting=list(named.values()),
        required_conflicting=[named[wanted[p]] for p in missing if wanted[p] in named],
        items=[{"text": i.text, "checked": i.checked, "line": i.line} for i in items],
    )
    if not items:
        return EvalMetric(
            type=METRIC_TYPE,
            status=MetricStatus.UNAVAILABLE,
            reason=f"no checklist items found in {_where(source)}",
            details=details,
        )
    return EvalMetric(type=METRIC_TYPE, value=len(ticked) / len(items), details=details)


def _pattern_met(pattern: str, ticked: set[str]) -> bool:
    # A pattern that normalizes to nothing (only zero-width characters) is never satisfied,
    # so a typo cannot turn a requirement off.
    return bool(pattern) and pattern in ticked  # a set: whole-text equality, never substring


def collect_checklist(
    config: ChecklistMetricConfig, root: Path, environ: Mapping[str, str]
) -> EvalMetric:
    """Read the checklist named by ``config.source`` and measure it; never raises for bad input.

    ``source: pr_body`` reads ``pull_request.body`` from the GitHub event file; any other value
    is a Markdown file relative to ``root`` (and inside it).
    """
    started = time.perf_counter()
    try:
        if config.source == PR_BODY:
            text = _pr_body(environ)
        else:
            text = _read_markdown(root, config.source)
    except _Unusable as exc:
        details = _details(config.source, required_missing=list(config.required))
        metric = EvalMetric(type=METRIC_TYPE, status=exc.status, reason=exc.reason, details=details)
    else:
        metric = checklist_metric(parse_checklist(text), config.required, source=config.source)
    elapsed = round(time.perf_counter() - started, 6)
    return metric.model_copy(update={"details": {**metric.details, "duration_s": elapsed}})


def _details(source: str, *, required_missing: list[str]) -> dict[str, Any]:
    # The same keys whatever the status, so readers never need to guess.
    return {
        "tool": "checklist",
        "duration_s": 0.0,
        "source": source,
        "checked": 0,
        "total": 0,
        "required_missing": required_missing,
        "conflicting": [],
        "required_conflicting": [],
        "items": [],
    }


def _where(source: str) -> str:
    return "the pull-request body" if source == PR_BODY else source


def _pr_body(environ: Mapping[str, str]) -> str:
    how = "; outside a pull-request workflow set `source: PATH` to read a Markdown file"
    event_path = environ.get(ENV_EVENT_PATH, "")
    if not event_path:
        raise _Unusable(
            MetricStatus.UNAVAILABLE, f"no pull-request body: {ENV_EVENT_PATH} is not set{how}"
        )
    path = Path(event_path)
    if not path.is_file():
        raise _Unusable(
            MetricStatus.UNAVAILABLE,
            f"no pull-request body: the event file {ENV_EVENT_PATH}={event_path} "
            f"does not exist{how}",
        )
    raw = _read_capped(path, MAX_EVENT_BYTES, f"the event file {event_path}")
    try:
        event = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _Unusable(
            MetricStatus.ERROR, f"the event file {event_path} is not valid JSON: {exc}"
        ) from None
    pull_request = event.get("pull_request") if isinstance(event, dict) else None
    if pull_request is None:
        raise _Unusable(
            MetricStatus.UNAVAILABLE,
            f"no pull-request body: the event in {event_path} is not a pull_request event{how}",
        )
    body = pull_request.get("body", 0) if isinstance(pull_request, dict) else 0
    if body is None:  # GitHub sends null for a pull request opened without a description
        return ""
    if not isinstance(body, str):
        raise _Unusable(
            MetricStatus.ERROR,
            f"the event file {event_path} has no text in pull_request.body; "
            "is it a GitHub event payload?",
        )
    # JSON escapes can encode lone surrogates, which no report writer could serialize.
    encoded = body.encode("utf-8", "replace")
    _check_size(len(encoded), "the pull-request body")
    return encoded.decode("utf-8")


def _read_markdown(root: Path, source: str) -> str:
    path = root / source
    try:
        inside = path.resolve().is_relative_to(root.resolve())
    except (OSError, ValueError, RuntimeError):  # a NUL byte, a symlink loop
        inside = False
    if not inside:
        raise _Unusable(
            MetricStatus.ERROR,
            f"the checklist file {source} is outside the project root {root}; "
            "use a path inside the repository",
        )
    if not path.is_file():
        raise _Unusable(
            MetricStatus.ERROR,
            f"the checklist file {source} does not exist under {root}; check `source:`",
        )
    raw = _read_capped(path, MAX_CHECKLIST_BYTES, f"the checklist file {source}")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise _Unusable(
            MetricStatus.ERROR,
            f"the checklist file {source}:{line} is not valid UTF-8; save it as UTF-8",
        ) from None


def _read_capped(path: Path, limit: int, what: str) -> bytes:
    try:
        with path.open("rb") as handle:
            raw = handle.read(limit + 1)  # never more than the cap, whatever stat says
    except OSError as exc:
        raise _Unusable(MetricStatus.ERROR, f"{what} cannot be read ({exc.strerror})") from None
    _check_size(len(raw), what, limit)
    return raw


def _check_size(size: int, what: str, limit: int = MAX_CHECKLIST_BYTES) -> None:
    if size > limit:
        raise _Unusable(
            MetricStatus.ERROR,
            f"{what} is larger than the {limit} byte limit; keep the checklist short",
        )

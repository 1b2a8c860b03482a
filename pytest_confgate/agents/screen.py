"""Screen what an LLM evaluator reads for text that tries to instruct it (issue 21).

Fences and a canary keep a judge's answer honest only if the judge keeps to its prompt; a
judge that obeys instructions it reads can still be talked into a pass. The screen makes such
attempts visible so that they can only make the gate stricter: a hit means "a human looks",
never "the change is fine". What it looks for, in text the change's author controls:

- ``role marker``: chat-template tokens (``<|im_start|>``, ``[INST]``, ``<<SYS>>``) and
  role labels (``SYSTEM:``, ``Assistant:`` opening a line with an order);
- ``override``: "ignore previous/prior/above instructions" and its kin, in English and a dozen
  other languages, also split over lines, spread over string pieces or spelled with
  look-alike letters;
- ``verdict directive``: orders about the score or the verdict ("rate this change 10/10",
  "the judge must approve this"), and text that addresses an AI evaluator;
- ``answer imitation``: text shaped like the judge's answer or the rank verdict (a ``score``
  object with ``confidence``/``reasoning``, ``"winner": "first"``) or like its canary line;
- ``fence imitation``: markers that look like the prompt's data fences;
- ``hidden characters``: bidi overrides and isolates, zero-width and other invisible
  characters, Unicode tag characters (text an LLM reads and a reviewer does not see).

Only text the change's author wrote is screened: in a diff, the added lines and the file
names, never the context or removed lines (they come from the base branch). Each hit names
``file:line`` and shows the line with invisible characters spelled out.

Pure: text in, hits out; no IO, no clock, no network.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pytest_confgate.agents.screen_rules import (
    JOINED_PATTERNS,
    LOOKALIKES,
    NATIVE_SQUASHED_PATTERNS,
    NATIVE_WORD_PATTERNS,
    SQUASHED_PATTERNS,
    WORD_PATTERNS,
    Patterns,
    fold,
    is_hidden,
    line_kinds,
    words,
)

MAX_HITS = 200
"""Hits kept per screening; past that, only the count grows (a hostile diff can be huge)."""
REPORTED_HITS = 20
"""How many hits the metric's details list (``injection_hits``)."""
HIT_TEXT_CHARS = 160
"""How much of a hit's line is shown."""


@dataclass(frozen=True)
class Hit:
    """One suspicious line: where it is, what it looks like, and the line itself (shortened)."""

    where: str
    kind: str
    text: str

    def as_dict(self) -> dict[str, str]:
        return {"where": self.where, "kind": self.kind, "text": self.text}

    def __str__(self) -> str:
        return f'{self.where} ({self.kind}: "{self.text}")'


@dataclass(frozen=True)
class Screening:
    """What a screen found; ``count`` goes on past the ``hits`` kept (``MAX_HITS``)."""

    hits: tuple[Hit, ...] = ()
    count: int = 0

    @property
    def suspected(self) -> bool:
        return self.count > 0

    def __add__(self, other: Screening) -> Screening:
        hits = (self.hits + other.hits)[:MAX_HITS]
        return Screening(hits, self.count + other.count)

    def details(self) -> dict[str, object]:
        """The report's keys: always ``injection_suspected``, and the first hits."""
        return {
            "injection_suspected": self.suspected,
            "injection_hits": [hit.as_dict() for hit in self.hits[:REPORTED_HITS]],
            "injection_hit_count": self.count,
        }

    def summary(self, shown: int = 3) -> str:
        """The first hits for a reason: ``src/a.py:3 (override: "...")``, and how many more."""
        text = ", ".join(str(hit) for hit in self.hits[:shown])
        more = self.count - min(shown, len(self.hits))
        return f"{text} and {more} more" if more > 0 else text


Line = tuple[str, str]
"""(where, text): one line of author-controlled text and its location (``file:line``)."""


def screen_text(name: str, text: str) -> Screening:
    """Screen a plain text (a pull request's body, commit messages); lines are ``name:N``."""
    return screen_lines([(f"{name}:{n}", line) for n, line in enumerate(text.splitlines(), 1)])


def screen_diff(diff: str) -> Screening:
    """Screen what a unified diff's author wrote: added lines (``path:line``) and file names.

    Each file's added lines are screened together, so a phrase split over lines is found.
    """
    found = Screening()
    for lines in diff_authored_lines(diff):
        found += screen_lines(lines)
    return found


def screen_lines(lines: Sequence[Line]) -> Screening:
    """Screen one source: each line on its own, then all of them read as one text."""
    hits: dict[tuple[str, str], Hit] = {}
    for where, text in lines:
        for kind in line_kinds(text):
            hits.setdefault((where, kind), Hit(where, kind, shown_text(text)))
    for index, kind in _joined_hits(lines):
        where, text = lines[index]
        hits.setdefault((where, kind), Hit(where, kind, shown_text(text)))
    ordered = tuple(hits.values())
    return Screening(ordered[:MAX_HITS], len(ordered))


def shown_text(text: str) -> str:
    """``text`` stripped and shortened, with invisible and control characters spelled out."""
    out = []
    for char in text.strip():
        if is_hidden(char) or (unicodedata.category(char) == "Cc" and char != "\t"):
            out.append(f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}")
        else:
            out.append(char)
    shown = "".join(out)
    return shown if len(shown) <= HIT_TEXT_CHARS else shown[: HIT_TEXT_CHARS - 3] + "..."


# --- diffs ---------------------------------------------------------------------------------

_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NAME_HEADERS = ("+++ ", "rename to ", "copy to ", "new untracked file: ")


def diff_authored_lines(diff: str) -> list[list[Line]]:
    """Per file, the lines the change's author wrote: its name, then its added lines.

    Hunks are read by their declared sizes, so an added line reading ``+++ x`` is never taken
    for a header. A line the parser cannot place is screened as ``diff:N`` (fail closed).
    """
    files: list[list[Line]] = []
    current: list[Line] = []
    path, new_line, old_left, new_left = "diff", 0, 0, 0
    for number, line in enumerate(diff.splitlines(), 1):
        if old_left > 0 or new_left > 0:
            tag, body = line[:1], line[1:]
            if tag == "+":
                current.append((f"{path}:{new_line}", body))
                new_line, new_left = new_line + 1, new_left - 1
            elif tag == "-":
                old_left -= 1
            elif tag == "\\":
                pass  # "\ No newline at end of file"
            else:  # context (or a blank line some tools write for an empty context line)
                new_line, old_left, new_left = new_line + 1, old_left - 1, new_left - 1
            continue
        hunk = _HUNK.match(line)
        if hunk:
            old_left = int(hunk.group(1) or 1)
            new_line, new_left = int(hunk.group(2)), int(hunk.group(3) or 1)
            continue
        if line.startswith("diff --git ") or (line.startswith("--- ") and current):
            files.append(current)
            current = []
        name = _header_name(line)
        if name is not None:
            path = name
            current.append((f"{name} (file name)", name))
        elif not _is_header(line):
            current.append((f"diff:{number}", line))
    files.append(current)
    return [lines for lines in files if lines]


def _header_name(line: str) -> str | None:
    for prefix in _NAME_HEADERS:
        if line.startswith(prefix):
            name = _unquote(line[len(prefix) :].split("\t")[0])
            if prefix == "+++ ":
                if name == "/dev/null":
                    return None
                name = name[2:] if name.startswith("b/") else name
            return name
    if line.startswith("Binary files ") and line.endswith(" differ"):
        name = _unquote(line[len("Binary files ") : -len(" differ")].rpartition(" and ")[2])
        return name[2:] if name.startswith("b/") else name
    return None


def _is_header(line: str) -> bool:
    return line.startswith(
        (
            "diff --git ",
            "--- ",
            "+++ ",
            "index ",
            "new file mode",
            "deleted file mode",
            "old mode",
            "new mode",
            "similarity index",
            "dissimilarity index",
            "rename from",
            "copy from",
        )
    ) or not line.strip()


def _unquote(name: str) -> str:
    """Git's C-quoted path (``"b/caf\\303\\251.py"``) as text, so hidden bytes are seen."""
    if not (len(name) > 1 and name.startswith('"') and name.endswith('"')):
        return name
    raw = name[1:-1].encode("latin-1", errors="backslashreplace")
    try:
        return raw.decode("unicode_escape").encode("latin-1").decode("utf-8", errors="replace")
    except (UnicodeDecodeError, UnicodeEncodeError):
        return name


# --- reading a whole source --------------------------------------------------------------------


def _joined_hits(lines: Sequence[Line]) -> Iterable[tuple[int, str]]:
    """(line index, kind) for what is found when the whole source is read as one text.

    Read three ways: the lines joined with newlines (an answer object spread over lines), as
    words (punctuation, comment markers and quotes dropped, one space between words) and with
    no spaces at all, so ``"ig" "nore prev" "ious instructions"`` and a phrase spread over
    three comment lines read as what they say. Latin patterns also see look-alike letters as
    Latin; the other languages' patterns see the text as written.
    """
    plain = [fold(text) for _, text in lines]
    spaced = [words(text) for _, text in lines]
    squashed = [text.replace(" ", "") for text in spaced]
    yield from _scan(plain, "\n", JOINED_PATTERNS, ())
    yield from _scan(spaced, " ", WORD_PATTERNS, NATIVE_WORD_PATTERNS)
    yield from _scan(squashed, "", SQUASHED_PATTERNS, NATIVE_SQUASHED_PATTERNS)


def _scan(
    texts: Sequence[str], separator: str, latin: Patterns, native: Patterns
) -> Iterable[tuple[int, str]]:
    starts, position = [], 0
    for text in texts:
        starts.append(position)
        position += len(text) + len(separator)
    joined = separator.join(texts)
    for source, patterns in ((joined.translate(LOOKALIKES), latin), (joined, native)):
        for kind, pattern in patterns:
            for match in pattern.finditer(source):
                yield bisect_right(starts, match.start()) - 1, kind

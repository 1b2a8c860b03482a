"""Suppression comments, read with ``tokenize`` (issue 15): ``# noqa``, ``# nosec`` and kin.

Only real comments count (a ``"# noqa"`` inside a string is not one). A comment may hold
several directives (``# noqa: S105  # nosec B105 -- why``); each is read on its own, as ruff
and bandit read them. A suppression is *added* when the head has one that the base did not
have on the same code: one whose code line was only edited keeps its directive and codes and
is paired with the base's, so re-indenting or renaming around an old ``# noqa`` is not news.

Each suppression covers its logical line (a statement spread over several lines), which is
what bandit's ``# nosec`` covers; a file-level ``# ruff: noqa`` covers the whole file. Pure.
"""

from __future__ import annotations

import difflib
import io
import tokenize
from collections import Counter
from dataclasses import dataclass

from pytest_confgate.config.metrics import DEFAULT_SUPPRESSIONS, SUPPRESSION_DIRECTIVES

_NOT_CODE = (tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
WHOLE_FILE = 10**9
"""The last line a file-level suppression covers."""

DIRECTIVES: tuple[str, ...] = SUPPRESSION_DIRECTIVES
"""What ``suppressions`` finds; each is also the name a configuration uses to watch it."""
WATCHED: tuple[str, ...] = DEFAULT_SUPPRESSIONS
"""The directives reported unless the caller chooses others."""


@dataclass(frozen=True)
class Suppression:
    """One directive in one comment, and the lines it silences."""

    directive: str
    codes: tuple[str, ...]
    line: int
    first_line: int
    last_line: int
    code: str
    """The line's code without the comment, whitespace collapsed (how it is paired)."""
    text: str

    @property
    def label(self) -> str:
        """``# noqa: S101``, ``# type: ignore[arg-type]`` as a person writes it."""
        codes = ",".join(self.codes)
        if not codes:
            return f"# {self.directive}"
        if self.directive.endswith("ignore"):
            return f"# {self.directive}[{codes}]"
        joiner = "=" if self.directive == "pylint: disable" else ": "
        return f"# {self.directive}{joiner}{codes}"


def suppressions(text: str) -> list[Suppression] | None:
    """Every suppression directive in the Python source ``text``; None if it cannot tokenize."""
    if not _may_hold_directives(text):
        return []  # tokenizing costs; most files hold no directive at all
    lines = text.split("\n")
    found: list[Suppression] = []
    pending: list[tuple[tokenize.TokenInfo, int | None]] = []
    start: int | None = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                pending.append((token, start))
            elif token.type == tokenize.NEWLINE or (token.type == tokenize.NL and start is None):
                end = token.start[0]
                for comment, begun in pending:
                    found += _suppressions(comment, begun or comment.start[0], end, lines)
                pending, start = [], None
            elif start is None and token.type not in _NOT_CODE:
                start = token.start[0]
    except (tokenize.TokenError, SyntaxError):
        return None
    for comment, begun in pending:
        found += _suppressions(comment, begun or comment.start[0], comment.start[0], lines)
    return found


def _suppressions(
    token: tokenize.TokenInfo, first: int, last: int, lines: list[str]
) -> list[Suppression]:
    """Every directive in the comment ``token``: ruff and bandit each find their own."""
    number, column = token.start
    line = lines[number - 1] if number <= len(lines) else token.line
    found = []
    for part in token.string.split("#")[1:]:
        directive = _directive(part.strip())
        if directive is None:
            continue
        name, codes, whole = directive
        found.append(
            Suppression(
                directive=name,
                codes=codes,
                line=number,
                first_line=1 if whole else min(first, number),
                last_line=WHOLE_FILE if whole else max(last, number),
                code="<file>" if whole else " ".join(line[:column].split()),
                text=line.strip(),
            )
        )
    return found


# How a directive starts once spaces are dropped: (prefix, directive, its last word, file-wide).
_PREFIXES = (
    ("ruff:noqa", "noqa", "noqa", True),
    ("flake8:noqa", "noqa", "noqa", True),
    ("mypy:ignore-errors", "type: ignore", "ignore-errors", True),
    ("noqa", "noqa", "noqa", False),
    ("nosec", "nosec", "nosec", False),  # bandit also reads a word like "nosecurity" as one
    ("pragma:nocover", "pragma: no cover", "cover", False),
    ("pragmanocover", "pragma: no cover", "cover", False),
    ("pragma:nobranch", "pragma: no branch", "branch", False),
    ("pragmanobranch", "pragma: no branch", "branch", False),
    ("type:ignore", "type: ignore", "ignore", False),
    ("nosemgrep", "nosemgrep", "nosemgrep", False),
    ("pylint:disable", "pylint: disable", "disable", False),
    ("pyright:ignore", "pyright: ignore", "ignore", False),
)


_WORDS = ("noqa", "nosec", "pragma", "ignore", "nosemgrep", "disable")


def _may_hold_directives(text: str) -> bool:
    """Whether some line has a directive's word after a ``#`` (a cheap look before tokenize)."""
    for line in text.splitlines():
        _, hash_sign, after = line.partition("#")
        if hash_sign and any(word in after.lower() for word in _WORDS):
            return True
    return False


def _directive(part: str) -> tuple[str, tuple[str, ...], bool] | None:
    lowered = part.lower()
    compact = "".join(lowered.split())
    for prefix, directive, word, whole in _PREFIXES:
        if compact.startswith(prefix):
            rest = part[lowered.find(word) + len(word) :]
            return directive, _codes(rest, shaped=directive in ("noqa", "nosec")), whole
    return None


def _codes(rest: str, *, shaped: bool) -> tuple[str, ...]:
    """``: S101, E501`` / ``[attr-defined]`` / `` B105 -- why`` -> sorted codes.

    After ``:``, ``=`` or in brackets every word is a code until the explanation starts
    (``--``); without them, or when ``shaped`` (ruff's and bandit's codes), only words shaped
    like codes (``B105``) are, so prose is not.
    """
    body = rest.strip()
    if body.startswith("["):
        body, listed = body[1 : body.find("]")] if "]" in body else body[1:], True
    else:
        listed = body[:1] in (":", "=")
        body = body.lstrip(":=").strip()
    codes = []
    for word in body.replace(",", " ").split():
        if not word[:1].isalnum() or not ((listed and not shaped) or _code_shaped(word)):
            break  # "-- why": the explanation after the codes
        codes.append(word)
    return tuple(sorted(set(codes)))


def _code_shaped(word: str) -> bool:
    letters = word.rstrip("0123456789")
    return letters.isalpha() and len(letters) < len(word)


def added_suppressions(base: str | None, head: str) -> list[Suppression] | None:
    """Suppressions in ``head`` that ``base`` did not have; None if ``head`` cannot tokenize.

    A head suppression is old when the base had one with the same directive and codes on the
    same code. The rest are paired with base suppressions that vanished (the line was edited
    around its old comment), each with the one most like it: same directive and codes on the
    most similar code, so a new comment above an edited old one is the one reported. A
    suppression that only got narrower (a bare ``# type: ignore`` given ``[code]``) or whose
    codes were renamed on the same code (as many codes as before) is not news either. What is
    left was added.
    """
    new = suppressions(head)
    if not new:
        return new
    old = suppressions(base) if base is not None else []
    if old is None:
        old = []  # a base that cannot tokenize: everything in the head is news
    kept = _on_unchanged_lines(base or "", head, old, new)
    new = [item for item in new if id(item) not in kept]
    old = [item for item in old if id(item) not in kept.values()]
    exact = Counter((s.directive, s.codes, s.code) for s in old)
    unpaired: list[Suppression] = []
    for item in new:
        key = (item.directive, item.codes, item.code)
        if exact[key] > 0:
            exact[key] -= 1
        else:
            unpaired.append(item)
    vanished: list[Suppression] = []
    for item in old:
        key = (item.directive, item.codes, item.code)
        if exact[key] > 0:
            exact[key] -= 1
            vanished.append(item)
    for grade in (_no_wider, _same_codes):
        for gone in list(vanished):
            fits = [item for item in unpaired if grade(gone, item)]
            if fits:
                best = max(fits, key=lambda item: (_likeness(gone.code, item.code),
                                                   -abs(item.line - gone.line)))
                unpaired.remove(best)
                vanished.remove(gone)
    return unpaired


def _on_unchanged_lines(
    base: str, head: str, old: list[Suppression], new: list[Suppression]
) -> dict[int, int]:
    """Head suppressions on lines the change left alone, paired with the base's there (by
    ``id``): of three identical ``pass  # pragma: no cover`` lines, the old one is the one
    the diff did not touch, whatever order the new ones come in."""
    matcher = difflib.SequenceMatcher(None, base.split("\n"), head.split("\n"), autojunk=False)
    was = {
        first_new + offset + 1: first_old + offset + 1
        for tag, first_old, _, first_new, last_new in matcher.get_opcodes() if tag == "equal"
        for offset in range(last_new - first_new)
    }
    at = {(s.line, s.directive, s.codes): s for s in old}
    kept: dict[int, int] = {}
    for item in new:
        twin = at.pop((was.get(item.line, -1), item.directive, item.codes), None)
        if twin is not None:
            kept[id(item)] = id(twin)
    return kept


def _same_codes(old: Suppression, new: Suppression) -> bool:
    return (old.directive, old.codes) == (new.directive, new.codes)


def _no_wider(old: Suppression, new: Suppression) -> bool:
    """On the same code: the same codes, bare -> with codes (narrower), or as many codes
    renamed. Paired first, so an edited line elsewhere cannot take this one's twin."""
    if old.directive != new.directive or old.code != new.code:
        return False
    return old.codes == new.codes or not old.codes or (
        bool(new.codes) and len(new.codes) <= len(old.codes))


def _likeness(old: str, new: str) -> float:
    return difflib.SequenceMatcher(None, old, new, autojunk=False).ratio()

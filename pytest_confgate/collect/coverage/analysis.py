"""coverage.py's analysis of each measured file, kept by content between runs.

After the last test, coverage.py's JSON report parses every measured file again (tokenizing,
compiling, its arc analysis) and splits each into per-function regions: on click that is
~1.7 CPU seconds of every run, whatever the engine. The gate reads only the per-file and
total figures, so ``reporters`` hands coverage.py file reporters that

- reuse coverage.py's own ``PythonParser`` state, pickled under the gate's cache and keyed by
  the source text, the exclusion regex, coverage.py's and Python's versions: nothing that
  could change the figures is left out of the key, and
- report no regions (the gate reads no per-function figures).

Everything else (which files, include/omit, ``[paths]``, the arithmetic, the JSON shape) stays
coverage.py's ``json_report``. Any surprise (a coverage.py whose internals moved, a cache that
cannot be read) falls back to coverage.py's own reporter: the cache only ever costs speed.

``expected`` (``confgate gate``): the sha256 of each measured file's bytes as they were before
any test ran. Each such file is read once, its bytes checked, and those very bytes analysed, so
the analysis may run while code of the change can still write (the test process winding down)
and still only ever reads the change as it was: a file that differs raises ``RewrittenSource``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pytest_confgate.collect import cache_trust

FORMAT = 2
"""Bumped whenever what is cached changes."""
ANALYSES = "analysis"
"""The folder under the probes' cache where the analyses are kept."""


class RewrittenSource(Exception):
    """A measured file no longer holds the bytes it held before the tests ran."""

    def __init__(self, filename: str) -> None:
        super().__init__(filename)
        self.filename = filename


@contextlib.contextmanager
def reporters(cov: Any, folder: Path | None,
              expected: Mapping[str, str | None] | None = None) -> Iterator[None]:
    """While inside, ``cov``'s reports use cached analyses and skip per-function regions,
    and read the files ``expected`` names only as they were (``RewrittenSource``)."""
    try:
        from coverage.python import PythonFileReporter
    except ImportError:  # a coverage.py laid out differently: its own reporter, unchanged
        yield
        return
    original = cov._get_file_reporter
    cached = _reporter_class(PythonFileReporter)

    def file_reporter(morf: Any) -> Any:
        found = original(morf)
        if type(found) is not PythonFileReporter:  # a plugin's file: its own reporter
            return found
        return cached(morf, cov, folder, expected)

    cov._get_file_reporter = file_reporter
    try:
        yield
    finally:
        del cov._get_file_reporter  # the instance attribute; the method shows through again


def _reporter_class(base: Any) -> Any:
    class CachedPythonReporter(base):  # type: ignore[misc]
        """coverage.py's reporter for a Python file, its parser restored from the cache."""

        def __init__(self, morf: Any, coverage: Any, folder: Path | None,
                     expected: Mapping[str, str | None] | None = None) -> None:
            super().__init__(morf, coverage)
            self._folder = folder
            self._expected = expected

        @property
        def parser(self) -> Any:
            if self._parser is None:  # type: ignore[has-type]
                parser = _parser(self.filename, self.coverage, self._folder, self._expected)
                self._source = parser.text
                self._parser = parser
            return self._parser

        def code_region_kinds(self) -> list[tuple[str, str]]:
            return []  # the gate reads per-file figures only

        def code_regions(self) -> list[Any]:
            return []

    return CachedPythonReporter


def _parser(filename: str, coverage: Any, folder: Path | None,
            expected: Mapping[str, str | None] | None = None) -> Any:
    """coverage.py's ``PythonParser`` of ``filename`` after ``parse_source`` and ``arcs``."""
    from coverage.exceptions import NoSource
    from coverage.python import get_python_source

    digest = expected.get(os.path.realpath(filename), "") if expected is not None else ""
    try:
        if digest == "":  # not a file measured before the run: read as coverage.py reads it
            text = get_python_source(filename)
        else:
            data = Path(filename).read_bytes()
            if hashlib.sha256(data).hexdigest() != digest:
                raise RewrittenSource(filename)
            text = python_text(data)
    except OSError as err:  # what coverage.py's own parser says, word for word
        if digest:
            raise RewrittenSource(filename) from err
        raise NoSource(f"No source for code: '{filename}': {err}") from err
    return parsed(text, filename, coverage._exclude_regex("exclude"), folder)


def python_text(data: bytes) -> str:
    """The text coverage.py's ``get_python_source`` makes of a file's bytes."""
    from coverage.phystokens import source_encoding

    data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").replace(b"\f", b" ")
    text = data.decode(source_encoding(data), "replace")
    return text if not text or text.endswith("\n") else text + "\n"


def parsed(text: str, filename: str, exclude: str | None, folder: Path | None) -> Any:
    """coverage.py's ``PythonParser`` of ``text`` (``parse_source``, ``arcs`` done), kept.

    The key is the text, not the file's name: what coverage.py's analysis says depends on
    nothing else (the name only labels its errors), so a copy of the file elsewhere (a
    ranked candidate's tree) finds it too. Branch probes place their arcs with the very
    parser coverage.py's reporter then reads: a cold run parses each file once.
    """
    from coverage.parser import PythonParser

    entry = _entry(folder, text, exclude) if folder is not None else None
    if entry is not None:
        restored = _load(entry, PythonParser)
        if restored is not None:
            restored.text, restored.filename = text, filename
            return restored
    parser = PythonParser(text=text, filename=filename, exclude=exclude)
    parser.parse_source()  # NotPython propagates: coverage.py reports it as it always does
    parser.arcs()
    parser.exit_counts()
    if entry is not None:
        _store(entry, parser)
    return parser


def multiline_map(filename: str, exclude: str | None, folder: Path) -> dict[int, int] | None:
    """The multi-line statements of ``filename`` (each line to its statement's first) from
    its kept analysis, or None where none is kept: ``sys.monitoring`` resolves its branch
    events with them, and tokenizing each file for them took 0.25 s of click's run."""
    from coverage.parser import PythonParser
    from coverage.python import get_python_source

    try:
        text = get_python_source(filename)
    except Exception:  # unreadable: the caller's own reading says why, as before
        return None
    kept = _load(_entry(folder, text, exclude), PythonParser)
    found = getattr(kept, "multiline_map", None)
    return found if isinstance(found, dict) else None


def missing(files: list[str], exclude: str | None, folder: Path) -> list[str]:
    """The files whose analysis is not kept under ``folder`` (by name only: a stat, no read);
    what is kept is still read through ``cache_trust``, so a wrong answer costs only speed."""
    from coverage.python import get_python_source

    found = []
    for path in files:
        try:
            text = get_python_source(path)
        except Exception:  # noqa: S112 -- unreadable: the report says so, not this
            continue
        if not _entry(folder, text, exclude).exists():
            found.append(path)
    return found


def kept(text: str, exclude: str | None, folder: Path) -> bool:
    """Whether the analysis of ``text`` is kept under ``folder`` (and may be read), unread."""
    return cache_trust.read_bytes(_entry(folder, text, exclude)) is not None


def _entry(folder: Path, text: str, exclude: str | None) -> Path:
    from coverage import __version__

    key = hashlib.sha256(
        "\0".join([text, exclude or "", __version__, sys.version, str(FORMAT)])
        .encode("utf-8", "surrogatepass")
    ).hexdigest()
    return folder / key[:2] / f"{key}.pickle"


def _load(entry: Path, kind: type) -> Any:
    """The parser kept at ``entry``: only bytes the gate wrote (``cache_trust``), and only
    the classes a parser holds, so a planted ``__reduce__`` is a miss, never code run."""
    data = cache_trust.read_bytes(entry)
    found = cache_trust.unpickle(data) if data is not None else None
    return found if isinstance(found, kind) else None


def _store(entry: Path, parser: Any) -> None:
    """Write atomically, without the source text (the key holds its hash)."""
    state = dict(vars(parser))
    state["text"] = ""
    state["_ast_root"] = None
    clone = object.__new__(type(parser))
    clone.__dict__.update(state)
    try:
        data = pickle.dumps(clone, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return  # a cache that cannot be written only costs speed
    cache_trust.write_bytes(entry, data)

"""Per-file coverage work shared with a helper process, on the machine's other core.

A cold run (no ``.confgate/cache``) spends most of a second of click's suite in coverage.py's
per-file analysis, on the tests' core:

- branch probes (3.10/3.11) compile every measured file before the first import, to know
  which ones they refuse (``ProbeEngine.for_run``), while the tests wait. ``prepare_all``
  starts ``python -m pytest_confgate.collect.coverage.ahead`` on the same list: the gate works
  through it from the front, the helper from the back, and they stop where they meet. The helper's
  answer per file is what the gate's own ``LineProbes.prepare`` would have returned;
- ``sys.monitoring`` (3.12+) and line probes analyse nothing ahead, so the report parses every
  file after the last test. ``ANALYSE`` has the helper keep those analyses while the tests
  run; the report reads them (``analysis``) and does whatever is left itself.

Trust: the helper reads and writes the caches through ``cache_trust`` with the gate's
threshold and the entries the gate vouches for, as the tools' helper does; each answer line
lists the entries it wrote, which the gate then vouches for (``cache_trust.trust``). Any
failure of the helper (it does not start, dies, answers garbage or too late) only means the
gate does those files itself.

Protocol: one JSON request line on the helper's stdin, then one byte per file the gate takes
(so the helper knows where the gate is; end of input: stop); the helper writes ``{"i": INDEX,
"started": true}`` before and ``{"i": INDEX, "reason": ..., "written": [...]}`` after each
file, and ``{"end": true}`` when it stops.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pytest_confgate.collect import cache_trust
from pytest_confgate.collect.coverage.assert_rewrite import PlainRewriting
from pytest_confgate.processes import kill_process_group

MIN_FILES = 8
"""Fewer files than this are not worth a Python start-up."""
_SCRUBBED = ("COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG", "COV_CORE_SOURCE")
"""Variables that would make coverage.py measure the helper itself."""
PREPARE, ANALYSE = "prepare", "analyse"
"""What the helper does per file: ``LineProbes.prepare``, or keep coverage.py's analysis."""
_WAIT_S = 30.0
"""How long the gate waits for the file the helper is working on when they meet."""


def worth_it(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """A second core to use, and not an xdist worker (its siblings use the cores already)."""
    return (os.cpu_count() or 1) > 1 and not environ.get("PYTEST_XDIST_WORKER")


class Ahead:
    """The helper process and what it has answered so far."""

    def __init__(self, proc: subprocess.Popen[bytes], count: int) -> None:
        self._proc = proc
        self._count = count
        self._buffer = b""
        self.answers: dict[int, str | None] = {}
        """Index -> the helper's answer for that file (``prepare``'s refusal reason)."""
        self.started: set[int] = set()
        """Files the helper has begun: the gate leaves them to it."""
        self.ended = False

    @classmethod
    def start(
        cls, files: Sequence[str], exclude: str | None, cache_dir: Path, kind: str = PREPARE,
        rewritten: str | None = None,
    ) -> Ahead | None:
        """The helper for ``files`` (coverage.py's exclusions ``exclude``), or None: do it all
        here. ``kind``: ``PREPARE`` (branch probes) or ``ANALYSE`` (coverage.py's analysis);
        ``rewritten``: the run's assertion-rewriting variant (``assert_rewrite``), for the
        helper to compile test modules as the run will, when it can rewrite them the same."""
        if len(files) < MIN_FILES or not worth_it():
            return None
        request = json.dumps({
            "kind": kind,
            "files": list(files),
            "exclude": exclude,
            "rewritten": rewritten,
            "cache_dir": str(cache_dir),
            "cwd": os.getcwd(),
            "cache_threshold_ns": cache_trust.threshold(),
            "cache_written": cache_trust.written(),
        }).encode() + b"\n"
        env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
        flags = subprocess._args_from_interpreter_flags()  # type: ignore[attr-defined]
        try:
            proc = subprocess.Popen(  # an argv list, never a shell
                [sys.executable, *flags, "-m", "pytest_confgate.collect.coverage.ahead"],
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                process_group=0,  # ours: ``confgate gate`` ends the run's leftovers, not it
            )
        except OSError:
            return None
        if proc.stdin is None or proc.stdout is None:
            return None
        try:
            os.set_blocking(proc.stdout.fileno(), False)
            proc.stdin.write(request)
            proc.stdin.flush()
        except OSError:
            ahead = cls(proc, len(files))
            ahead.close()
            return None
        return cls(proc, len(files))

    def take(self, index: int) -> bool:
        """The gate is about to do file ``index``: False when the helper has it already."""
        self._read()
        if index in self.answers or index in self.started:
            return False
        stdin = self._proc.stdin
        with contextlib.suppress(OSError, ValueError):
            if stdin is not None:
                stdin.write(b".")
                stdin.flush()
        return True

    def poll(self) -> None:
        """Take in the answers written so far (never waiting)."""
        if not self.ended:
            self._read()

    def stop(self) -> None:
        """The gate needs the analyses now: take what is done, and the file under way."""
        self._read()
        with contextlib.suppress(OSError, ValueError):
            if self._proc.stdin is not None:
                self._proc.stdin.close()  # the helper stops after its current file
        deadline = time.monotonic() + _WAIT_S
        while (self.started - set(self.answers) and not self.ended
               and time.monotonic() < deadline and self._proc.poll() is None):
            self._read(wait=min(0.5, max(0.0, deadline - time.monotonic())))
        self._read()
        self.close()

    def finish(self) -> dict[int, str | None]:
        """Wait for the files the helper took, then stop it; index -> its answer."""
        deadline = time.monotonic() + _WAIT_S
        while not self.ended and time.monotonic() < deadline and self._proc.poll() is None:
            self._read(wait=min(0.5, max(0.0, deadline - time.monotonic())))
        self._read()
        self.close()
        return dict(self.answers)

    def close(self) -> None:
        """Stop the helper whatever it is doing (its unfinished entries are never vouched)."""
        with contextlib.suppress(OSError, ValueError):
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        if self._proc.poll() is None:
            with contextlib.suppress(OSError):
                kill_process_group(self._proc)
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            self._proc.wait(timeout=5)
        if self._proc.stdout is not None:
            with contextlib.suppress(OSError):
                self._proc.stdout.close()

    def _read(self, wait: float = 0.0) -> None:
        """Take in every complete answer line the helper has written (waiting up to ``wait``)."""
        stdout = self._proc.stdout
        if stdout is None:
            return
        if wait > 0:
            import select

            with contextlib.suppress(OSError, ValueError):
                select.select([stdout], [], [], wait)
        while True:
            try:
                chunk = os.read(stdout.fileno(), 65536)
            except BlockingIOError:
                break
            except (OSError, ValueError):
                self.ended = True
                break
            if not chunk:
                self.ended = True
                break
            self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            self._answer(line)

    def _answer(self, line: bytes) -> None:
        try:
            raw = json.loads(line)
        except ValueError:
            return
        if not isinstance(raw, dict):
            return
        if raw.get("end") is True:
            self.ended = True
            return
        index = raw.get("i")
        if not isinstance(index, int) or not 0 <= index < self._count:
            return
        if raw.get("started") is True:
            self.started.add(index)
            return
        reason = raw.get("reason")
        written = raw.get("written")
        if (reason is not None and not isinstance(reason, str)) or not isinstance(written, list):
            return
        cache_trust.trust(written)  # our own helper's writes: read as if this process wrote them
        self.answers[index] = reason


def prepare_all(
    files: Sequence[str],
    prepare: Callable[[str], str | None],
    exclude: str | None,
    cache_dir: Path | None,
    rewritten: str | None = None,
) -> dict[str, str | None]:
    """``prepare(path)`` for every file, the far end by the helper when there is one."""
    ahead = (Ahead.start(files, exclude, cache_dir, PREPARE, rewritten)
             if cache_dir is not None else None)
    answers: dict[str, str | None] = {}
    if ahead is None:
        return {path: prepare(path) for path in files}
    theirs: dict[int, str | None] = {}
    try:
        for index, path in enumerate(files):
            if not ahead.take(index):
                theirs = ahead.finish()  # the rest is the helper's, done or under way
                break
            answers[path] = prepare(path)
    finally:
        ahead.close()  # all done here (a warm run): no waiting for its start-up
    for index, path in enumerate(files):
        if path in answers:
            continue
        answers[path] = theirs[index] if index in theirs else prepare(path)
    return answers


def _helper(request: dict[str, Any]) -> None:
    """In the helper: prepare files from the back until the gate's progress reaches us."""
    from coverage.files import canonical_filename

    from pytest_confgate.collect.coverage.branch_probes import BranchProbes
    from pytest_confgate.collect.coverage.line_probes import LineProbes

    os.chdir(request["cwd"])
    if isinstance(request.get("cache_threshold_ns"), int):
        cache_trust.begin(request["cache_threshold_ns"])
    cache_trust.trust(request.get("cache_written") or [])
    cache_dir = Path(request["cache_dir"])
    work = _analyse(request["exclude"], cache_dir) if request.get("kind") == ANALYSE else None
    probes = LineProbes(
        lambda _filename, _module: True,
        cache_dir=cache_dir,
        canonical=canonical_filename,
        rewriting=_rewriting(request.get("rewritten")),
        branches=BranchProbes(request["exclude"], cache_dir),
    )
    files: list[str] = list(request["files"])
    os.set_blocking(0, False)
    taken = int(request.get("_early_progress", 0))
    out = sys.stdout
    for index in range(len(files) - 1, -1, -1):
        taken += _progress()
        if index < taken:
            break
        out.write(json.dumps({"i": index, "started": True}) + "\n")
        out.flush()
        before = set(cache_trust.written())
        reason = work(files[index]) if work is not None else probes.prepare(files[index])
        written = [entry for entry in cache_trust.written() if entry not in before]
        out.write(json.dumps({"i": index, "reason": reason, "written": written}) + "\n")
        out.flush()
    out.write(json.dumps({"end": True}) + "\n")
    out.flush()


def _rewriting(wanted: object) -> PlainRewriting | None:
    """Assertion rewriting as the run does it, or None (then test modules are only planned)."""
    if not isinstance(wanted, str):
        return None
    try:
        plain = PlainRewriting()
    except ImportError:
        return None
    return plain if plain.variant == wanted else None


def _analyse(exclude: str | None, cache_dir: Path) -> Callable[[str], str | None]:
    """coverage.py's analysis of a file, kept for the report (``analysis``)."""
    from coverage.python import get_python_source

    from pytest_confgate.collect.coverage.analysis import ANALYSES, kept, parsed

    folder = cache_dir / ANALYSES

    def analyse(path: str) -> str | None:
        try:
            text = get_python_source(path)
            if not kept(text, exclude, folder):
                parsed(text, path, exclude, folder)
        except Exception as exc:  # the report says it, as coverage.py does; only speed here
            return type(exc).__name__
        return None

    return analyse


def _progress() -> int:
    """Bytes the gate has sent since the last call: one per file it took."""
    count = 0
    while True:
        try:
            chunk = os.read(0, 4096)
        except BlockingIOError:
            return count
        except OSError:
            return count + (1 << 30)
        if not chunk:
            return count + (1 << 30)  # the gate closed the pipe: stop
        count += len(chunk)


def _read_request() -> dict[str, Any]:
    data = b""
    while b"\n" not in data:
        chunk = os.read(0, 65536)
        if not chunk:
            raise SystemExit(1)
        data += chunk
    line, _, rest = data.partition(b"\n")
    request: dict[str, Any] = json.loads(line)
    request["_early_progress"] = len(rest)
    return request


def main() -> int:
    request = _read_request()
    _helper(request)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Run-time audit of the test process (issue 34): what the project's code does, not how it is
spelled.

A PEP 578 audit hook (``sys.addaudithook``; it cannot be removed), installed before any conftest
is imported, records what the change's code (tests, conftests, the code under test) does to
the evidence, whatever names it builds at run time:

- writes, renames and deletions under ``.confgate/`` or of the report (``open`` for writing,
  ``os.rename``/``os.replace``, ``os.remove``, ``shutil.*``): ``runtime_state_write``;
- ``gc.get_objects``/``get_referrers``/``get_referents`` (reaching pytest's and the gate's
  objects): ``runtime_gc_scan``;
- a function's ``__code__`` replaced: ``runtime_code_swap``; a special attribute
  (``__module__``, ``__bases__``...) of a class of ``_pytest``, ``pluggy``, ``coverage`` or
  ``pytest_confgate`` set: ``runtime_gate_patched`` (Python audits no other class attribute);
- ``sys._getframe`` called by the project's own code and returning a frame that is not the
  project's (pytest's, pluggy's, the gate's), or ``sys._current_frames``: ``runtime_frame_reach``;
- ``os.kill``/``os.killpg``/``signal.pthread_kill`` aimed at its own process: ``runtime_self_kill``;
- ``compile()`` or ``code.replace`` by the project's code under the name of a real file that
  is not the project's (pytest's, a library's) or is a conftest, so the code passes for
  theirs: ``runtime_code_forged``;
- ``os._exit`` before the session ended (no audit event: the function is wrapped):
  ``runtime_early_exit``; the report file is removed and a line on the real stderr says so;
- and, checked by the plugin rather than the hook (``runtime_snapshot``), the real
  stdout/stderr changed after a test (``runtime_output_redirect``), and functions, classes and
  methods of those modules, or the builtins, replaced during the session
  (``runtime_gate_patched``); plugins, marks and relabelled reports the project's code adds to
  pytest (``plugin_audit``).

Each event is attributed by walking the stack to the first frame in a project file (under the
rootdir, not in ``site-packages``); an event whose stack reaches the gate's own code first is the
gate's own and is ignored. The hot path is one dict lookup on the event name.

In-process limits (``docs/security.md``): code that knows the gate can reach this module's
objects too; the supervisor (a process of its own) is what such code cannot reach. Under
``confgate gate`` each finding leaves the process as it is recorded (``Recorder.on_finding``
is the channel's ``finding``), unfiltered: the supervisor places it against the change.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from sys import _getframe  # bound once: a test may delete sys._getframe
from typing import Any, NoReturn

WATCHED_PACKAGES = ("_pytest", "pluggy", "coverage", "pytest_confgate", "pytest")
"""Modules whose objects the change's code must leave alone."""
MAX_FINDINGS = 200
"""Distinct findings kept; repeats of one (rule, place) only count."""
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_OTHER, _PROJECT, _GATE, _ROOTED = 0, 1, 2, 3
"""``_ROOTED``: a ``site-packages`` file under the rootdir. Not the project's own hand (a
virtualenv kept in the project), but on the stack it is named, so a ``site-packages`` folder
the change commits and puts on ``sys.path`` counts like any file the change touched."""
_GATE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_MAX_STACK = 12


@dataclass(frozen=True)
class RuntimeFinding:
    """One thing the project's code did at run time, where it did it (innermost first)."""

    rule: str
    message: str
    stack: tuple[tuple[str, int], ...]
    """(project-relative file, line) of each project frame on the stack, innermost first."""
    test: str | None = None

    def as_item(self, changed: Iterable[str] | None = None) -> dict[str, Any]:
        """As a ``test_integrity`` item, placed at the innermost frame in a ``changed`` file
        (the innermost project frame when ``changed`` is None)."""
        file, line = self.place(changed) or self.stack[0]
        return {"rule": self.rule, "file": file, "line": line, "message": self.message,
                "test": self.test, "base": None, "head": None}

    def as_dict(self) -> dict[str, Any]:
        """Plain data for an xdist worker's ``workeroutput`` (``from_dict`` reads it back)."""
        return {"rule": self.rule, "message": self.message, "test": self.test,
                "stack": [list(frame) for frame in self.stack]}

    @classmethod
    def from_dict(cls, raw: object) -> RuntimeFinding | None:
        if not isinstance(raw, dict):
            return None
        stack = tuple((str(f[0]), int(f[1])) for f in raw.get("stack") or []
                      if isinstance(f, list | tuple) and len(f) == 2)
        test = raw.get("test")
        return cls(str(raw.get("rule")), str(raw.get("message")), stack,
                   str(test) if test is not None else None)

    def place(self, changed: Iterable[str] | None) -> tuple[str, int] | None:
        """Where it counts; None when a change is known and no frame is in its files. With
        no project frame at all (a module found patched at the end), it always counts."""
        if not self.stack:
            return ("(no project frame)", 0)
        if changed is None:
            return self.stack[0]
        wanted = set(changed)
        return next(((f, n) for f, n in self.stack if f in wanted), None)


@dataclass
class Recorder:
    """What one gate session's hook saw; ``on_finding`` (if set) hears each one at once."""

    root: Path
    state_dir: Path
    report_path: Path | None
    pid: int = field(default_factory=os.getpid)
    on_finding: Callable[[RuntimeFinding], None] | None = None
    findings: list[RuntimeFinding] = field(default_factory=list)
    repeats: int = 0
    current_test: str | None = None
    session_over: bool = False
    stderr_fd: int = 2
    """The real stderr (pytest's saved descriptor while it captures fd 2)."""

    def __post_init__(self) -> None:
        self._root = str(self.root.resolve()) + os.sep
        self._state = os.path.abspath(self.state_dir) + os.sep
        self._report = os.path.abspath(self.report_path) if self.report_path else None
        self._kinds: dict[str, int] = {}
        self._seen: set[tuple[str, tuple[str, int] | None]] = set()

    def record(self, rule: str, message: str, stack: tuple[tuple[str, int], ...]) -> None:
        key = (rule, stack[0] if stack else None)
        if key in self._seen or len(self.findings) >= MAX_FINDINGS:
            self.repeats += 1
            return
        self._seen.add(key)
        found = RuntimeFinding(rule, message, stack, self.current_test)
        self.findings.append(found)
        if self.on_finding is not None:
            self.on_finding(found)

    def items(self, changed: Iterable[str] | None) -> list[dict[str, Any]]:
        """The findings as ``test_integrity`` items: with a change known, only those whose
        stack passes through a file the change added or edited count."""
        wanted = None if changed is None else set(changed)
        return [f.as_item(wanted) for f in self.findings if f.place(wanted) is not None]

    def kind(self, filename: str) -> int:
        known = self._kinds.get(filename)
        if known is None:
            path = os.path.abspath(filename) if filename[:1] not in ("<", "") else ""
            if path.startswith(_GATE_DIR):
                known = _GATE
            elif path.startswith(self._root):
                known = _PROJECT if "site-packages" not in path else _ROOTED
            else:
                known = _OTHER
            self._kinds[filename] = known
        return known

    def is_project(self, filename: str) -> bool:
        """A file of the project's own (under the rootdir, not in ``site-packages``)."""
        return self.kind(filename) == _PROJECT

    def is_gate(self, filename: str) -> bool:
        return self.kind(filename) == _GATE

    def under_root(self, filename: str) -> bool:
        """Under the rootdir, ``site-packages`` included."""
        return self.kind(filename) in (_PROJECT, _ROOTED)

    def relative(self, filename: str) -> str:
        """``filename`` relative to the rootdir, as findings name files."""
        return self._relative(filename)

    def project_stack(self, frame: types.FrameType | None) -> tuple[tuple[str, int], ...] | None:
        """The project frames from ``frame`` outward; None when the gate's code comes first
        (the gate's own doing) or no project frame is on the stack."""
        found: list[tuple[str, int]] = []
        while frame is not None and len(found) < _MAX_STACK:
            kind = self.kind(frame.f_code.co_filename)
            if kind == _GATE and not found:
                return None
            if kind in (_PROJECT, _ROOTED):
                found.append((self._relative(frame.f_code.co_filename), frame.f_lineno))
            frame = frame.f_back
        return tuple(found) or None

    def watched_path(self, path: object) -> str | None:
        if isinstance(path, int):
            return None
        try:
            full = os.path.abspath(os.fsdecode(path))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return None
        if full.startswith(self._state) or full == self._state[:-1] or full == self._report:
            return self._relative(full)
        return None

    def _relative(self, filename: str) -> str:
        full = os.path.abspath(filename)
        return full[len(self._root):].replace(os.sep, "/") if full.startswith(self._root) else full


_active: list[Recorder] = []
"""The session's recorder (at most one): the hook stays, sessions come and go."""
_busy = threading.local()


def start(recorder: Recorder) -> None:
    """Install the hook (once per process) and make ``recorder`` the one it feeds."""
    _active[:] = [recorder]
    if not getattr(start, "installed", False):
        sys.addaudithook(_hook)
        _wrap_exit()
        start.installed = True  # type: ignore[attr-defined]


def stop(recorder: Recorder) -> bool:
    """The session is over; False when someone had switched the recorder off or swapped it."""
    intact = _active == [recorder]
    if intact:
        _active.clear()
    return intact


def stop_all() -> None:
    """No session after all (its start-up failed): the hook stays, feeding nothing."""
    _active.clear()


def _hook(event: str, args: tuple[Any, ...]) -> None:
    handler = _lookup(event)
    if handler is None or not _active:
        return
    if handler is _on_open and not (args[2] & _WRITE_FLAGS if len(args) > 2
                                    and isinstance(args[2], int) else 0):
        return  # every import reads files: the commonest event stops here
    if getattr(_busy, "on", False):
        return
    _busy.on = True
    try:
        recorder = _active[0]
        handler(recorder, event, args, _getframe(1))
    except Exception:  # noqa: S110 -- the audit must never change what the code under test does
        pass
    finally:
        _busy.on = False


Handler = Callable[[Recorder, str, tuple[Any, ...], types.FrameType], None]


def _on_open(recorder: Recorder, event: str, args: tuple[Any, ...], frame: types.FrameType) -> None:
    flags = args[2] if len(args) > 2 else 0
    if isinstance(flags, int) and flags & _WRITE_FLAGS:
        _on_paths(recorder, "open for writing", (args[0],), frame)


def _on_move(recorder: Recorder, event: str, args: tuple[Any, ...], frame: types.FrameType) -> None:
    _on_paths(recorder, event, args[:2], frame)


def _on_delete(
    recorder: Recorder, event: str, args: tuple[Any, ...], frame: types.FrameType
) -> None:
    _on_paths(recorder, event, args[:1], frame)


def _on_paths(
    recorder: Recorder, what: str, paths: Iterable[object], frame: types.FrameType
) -> None:
    for path in paths:
        target = recorder.watched_path(path)
        if target is None:
            continue
        stack = recorder.project_stack(frame)
        if stack is not None:
            recorder.record("runtime_state_write", f"{what}: {target} (the gate's own state)",
                            stack)
        return


def _on_gc(recorder: Recorder, event: str, args: tuple[Any, ...], frame: types.FrameType) -> None:
    stack = recorder.project_stack(frame)
    if stack is not None:
        recorder.record("runtime_gc_scan", f"{event}(): reaches every object in the process, "
                        "pytest's and the gate's included", stack)


def _on_setattr(
    recorder: Recorder, event: str, args: tuple[Any, ...], frame: types.FrameType
) -> None:
    target, name = args[0], args[1]
    # ``type(target)``, never ``isinstance``: that asks a foreign object for its ``__class__``,
    # and a lazy module (``importlib.util.LazyLoader``) loads itself on that question, inside
    # the ``__class__`` assignment being audited; CPython then freed its class twice.
    kind = type(target)
    if name == "__code__" and issubclass(kind, types.FunctionType):
        # Decorators of the standard library swap the code of their own functions on import
        # (``types.coroutine``): only the project's own hand, or its code or ours, counts.
        ours = (recorder.kind(frame.f_code.co_filename) == _PROJECT
                or recorder.kind(target.__code__.co_filename) != _OTHER
                or watched_module(str(getattr(target, "__module__", ""))))
        stack = recorder.project_stack(frame) if ours else None
        if stack is not None:
            where = f"{target.__module__}.{target.__qualname__}"
            recorder.record("runtime_code_swap", f"replaced the code of {where}", stack)
    elif issubclass(kind, type) and watched_module(getattr(target, "__module__", "")):
        stack = recorder.project_stack(frame)
        if stack is not None:
            where = f"{target.__module__}.{target.__qualname__}.{name}"
            recorder.record("runtime_gate_patched", f"set {where}", stack)


def _on_frame(
    recorder: Recorder, event: str, args: tuple[Any, ...], frame: types.FrameType
) -> None:
    # Only a direct call from the project's own code: libraries (logging, warnings) ask for
    # frames all the time on its behalf, and a frame of the project's own is its business.
    if recorder.kind(frame.f_code.co_filename) != _PROJECT:
        return
    reached = args[0] if args else None
    if isinstance(reached, types.FrameType):
        if recorder.kind(reached.f_code.co_filename) == _PROJECT:
            return
        module = reached.f_globals.get("__name__") or reached.f_code.co_filename
        what = f"sys._getframe() reached a frame of {module}"
    else:
        what = f"{event}(): every thread's frames"
    stack = recorder.project_stack(frame)
    if stack is not None:
        recorder.record("runtime_frame_reach", what, stack)


def _on_compile(
    recorder: Recorder, event: str, args: tuple[Any, ...], frame: types.FrameType
) -> None:
    # Code that the project's own hand compiles (or rebuilds with ``code.replace``) under the
    # name of a real file that is a library's, pytest's, the gate's or a conftest: its
    # functions then look like theirs to every check that asks where code comes from.
    if recorder.kind(frame.f_code.co_filename) not in (_PROJECT, _ROOTED) or len(args) < 2:
        return
    try:
        claimed = os.path.abspath(os.fsdecode(args[1]))
    except (TypeError, ValueError):
        return
    if claimed == os.path.abspath(frame.f_code.co_filename) or not os.path.isfile(claimed):
        return
    if recorder.kind(claimed) == _PROJECT and os.path.basename(claimed) != "conftest.py":
        return  # another project file: whatever it defines is judged as the project's
    stack = recorder.project_stack(frame)
    if stack is not None:
        recorder.record("runtime_code_forged", f"{event}: code compiled under the name of "
                        f"{recorder.relative(claimed)}, which it does not come from", stack)


def _on_kill(recorder: Recorder, event: str, args: tuple[Any, ...], frame: types.FrameType) -> None:
    target = args[0] if args else None
    own = {
        "os.kill": (os.getpid(), 0),
        "os.killpg": (_own_group(),),
    }.get(event)
    if own is not None and target not in own:
        return
    stack = recorder.project_stack(frame)
    if stack is not None:
        recorder.record("runtime_self_kill", f"{event}{tuple(args)!r}: a signal to its own process",
                        stack)


def _own_group() -> int:
    try:
        return os.getpgid(0)
    except OSError:
        return -1


def watched_module(name: str) -> bool:
    """A module of pytest, pluggy, coverage.py or the gate."""
    return name.partition(".")[0] in WATCHED_PACKAGES


_HANDLERS: dict[str, Handler] = {
    "open": _on_open,
    "os.rename": _on_move,
    "os.link": _on_move,
    "os.symlink": _on_move,
    "shutil.copyfile": _on_move,
    "shutil.copytree": _on_move,
    "shutil.move": _on_move,
    "os.remove": _on_delete,
    "os.rmdir": _on_delete,
    "os.truncate": _on_delete,
    "shutil.rmtree": _on_delete,
    "gc.get_objects": _on_gc,
    "gc.get_referrers": _on_gc,
    "gc.get_referents": _on_gc,
    "object.__setattr__": _on_setattr,
    "sys._getframe": _on_frame,
    "sys._current_frames": _on_frame,
    "compile": _on_compile,
    "code.__new__": _on_compile,
    "os.kill": _on_kill,
    "os.killpg": _on_kill,
    "signal.pthread_kill": _on_kill,
}
_lookup = _HANDLERS.get


def _wrap_exit() -> None:
    """``os._exit`` raises no audit event: wrap it (and ``posix._exit``, the same function) so
    a test process that ends before its session did leaves no report behind."""
    real = os._exit

    def _exit(status: int) -> NoReturn:  # same name and signature as the real one
        recorder = _active[0] if _active else None
        if recorder is not None and recorder.pid == os.getpid() and not recorder.session_over:
            _early_exit(recorder, status, _getframe(1))
        real(status)

    _exit.__doc__ = real.__doc__
    _exit.__qualname__ = _exit.__name__ = "_exit"
    _exit.__module__ = real.__module__
    os._exit = _exit
    posix = sys.modules.get("posix") or sys.modules.get("nt")
    if posix is not None:
        posix._exit = _exit  # type: ignore[attr-defined]


def _early_exit(recorder: Recorder, status: int, frame: types.FrameType) -> None:
    stack = recorder.project_stack(frame) or ()
    where = f" at {stack[0][0]}:{stack[0][1]}" if stack else ""
    recorder.record("runtime_early_exit", f"os._exit({status}) before the session ended", stack)
    if recorder.report_path is not None:
        with contextlib.suppress(OSError):
            os.unlink(recorder.report_path)
    line = (f"\nconfgate: ERROR: os._exit({status}){where} ended the test process before its "
            "session did; no report stands\n")
    with contextlib.suppress(OSError):
        os.write(recorder.stderr_fd, line.encode("utf-8", "replace"))


__all__ = ["MAX_FINDINGS", "WATCHED_PACKAGES", "Recorder", "RuntimeFinding", "start", "stop",
           "stop_all", "watched_module"]

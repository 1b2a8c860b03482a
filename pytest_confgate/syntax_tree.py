"""``ast.parse`` that two of confgate's threads may call at once, on every Python we support.

CPython 3.11.0 to 3.11.7 and 3.12.0 to 3.12.1 keep one recursion counter for building Python
AST objects per interpreter, not per call (gh-106905, fixed in 3.11.8 and 3.12.2). When a
garbage collection inside one thread's ``ast.parse`` runs a finalizer and the interpreter
switches to another thread that parses too, the first fails with ``SystemError: AST
constructor recursion depth mismatch``. ``confgate rank`` evaluates candidates in threads and
the supervisor analyses the change beside the run, so every parse of ours goes through here:
on those versions one lock serializes them (a parse is milliseconds; the threads mostly wait on
processes). Parses by code we do not own (coverage.py, pytest's assertion rewriting) cannot take
the lock; ``PARSES_SHARE_STATE`` tells the callers that must then not parse beside them.
"""

from __future__ import annotations

import ast
import os
import sys
import threading
from typing import Literal, overload

_FIXED = {(3, 11): 8, (3, 12): 2}

PARSES_SHARE_STATE: bool = sys.implementation.name == "cpython" and (
    sys.version_info[2] < _FIXED.get(sys.version_info[:2], 0)
)
"""True on the CPython versions where two threads' ``ast.parse`` can break each other."""

_LOCK = threading.Lock()


def _new_lock_in_child() -> None:
    """A fork while another thread parses must not leave the child a lock nobody releases."""
    global _LOCK
    _LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock_in_child)


@overload
def parse(source: str | bytes, filename: str = ..., mode: Literal["exec"] = ...) -> ast.Module:
    ...


@overload
def parse(source: str | bytes, filename: str = ..., *, mode: Literal["eval"]) -> ast.Expression:
    ...


def parse(source: str | bytes, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """``ast.parse(source, filename, mode)``, serialized where the interpreter needs it."""
    if not PARSES_SHARE_STATE:
        return ast.parse(source, filename=filename, mode=mode)
    with _LOCK:
        return ast.parse(source, filename=filename, mode=mode)

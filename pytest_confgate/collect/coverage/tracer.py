"""coverage.py's own tracer, the engine every other one falls back to.

It measures everything when no probe engine serves the run (3.11 with a configuration the
probes cannot follow; 3.12+ when ``sys.monitoring`` is taken), and the files the probe and
monitoring engines leave to it. ``choose_core`` picks coverage.py's ``sysmon`` core where
coverage.py can use it for the run (never on 3.11, where it warns and falls back); the other
helpers are what every engine does with coverage.py's data at the end.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pytest_confgate.collect.coverage.children import leave_children_to_the_gate
from pytest_confgate.collect.coverage.settings import SELECTION, option, set_selection

if TYPE_CHECKING:
    from pytest_confgate.collect.coverage.files import FileSelection

TRACER = "coverage.py"
FileMapper = Callable[[str], str]
"""A measured file's absolute name -> the name coverage.py's data keeps it under."""
_T = TypeVar("_T")
_NO_SYSMON_CONCURRENCY = {"greenlet", "eventlet", "gevent"}
"""``concurrency`` settings coverage.py's ``sysmon`` core refuses (with a warning)."""


def choose_core(cov: Any, version: tuple[int, ...] = sys.version_info[:3]) -> None:
    """Prefer ``sysmon`` where coverage.py can use it for this run, unless the project chose.

    coverage.py measures branches with ``sys.monitoring`` only from Python 3.14, lines from
    3.12; elsewhere asking for it only produces a warning and the default core, and a
    warning is an error in projects with ``filterwarnings = error``.
    """
    needed = (3, 14) if cov.get_option("run:branch") else (3, 12)
    if version < needed:
        return
    try:
        if cov.get_option("run:core") or cov.get_option("run:timid"):
            return
        if cov.get_option("run:dynamic_context") not in (None, "", "none"):
            return
        if set(cov.get_option("run:concurrency") or ()) & _NO_SYSMON_CONCURRENCY:
            return
        if not follows_threads(cov):  # sysmon would measure the threads its tracer leaves out
            return
        cov.set_option("run:core", "sysmon")
    except Exception:  # a coverage.py without the option keeps its default core
        return


def reference_core(cov: Any) -> str:
    """The core ``coverage run`` would measure with under ``cov``'s settings: ``sysmon``,
    ``ctrace`` or ``pytrace``, chosen as coverage.py chooses it (``[run] core``, or
    ``COVERAGE_CORE``, which coverage.py reads into that option; its default otherwise).

    Their arcs differ on the same program (3.14's ``sysmon`` records no arc out of a function
    left by an exception; the tracers do), so the engines follow the reference's core, not
    the Python's default one. Call it before ``choose_core`` changes ``cov``'s core.
    """
    import coverage.env

    try:
        if cov.get_option("run:timid"):
            return "pytrace"
        chosen = cov.get_option("run:core") or None
        branch = bool(cov.get_option("run:branch"))
        contexts = cov.get_option("run:dynamic_context") not in (None, "", "none")
        concurrency = set(cov.get_option("run:concurrency") or ())
    except Exception:  # a coverage.py without these options: its default
        chosen, branch, contexts, concurrency = None, False, False, set()
    usable = (
        sys.version_info >= ((3, 14) if branch else (3, 12))
        and not contexts
        and not concurrency & _NO_SYSMON_CONCURRENCY
    )
    if chosen == "sysmon" and not usable:
        chosen = None  # coverage.py warns and takes its default
    if chosen is None:
        chosen = "sysmon" if getattr(coverage.env, "SYSMON_DEFAULT", False) and usable else "ctrace"
    return str(chosen)


def follows_threads(cov: Any) -> bool:
    """Whether ``coverage run`` with these settings measures code run in other threads than
    the one it starts in. Its tracers follow new threads only when ``concurrency`` names
    ``thread`` or names nothing (``concurrency = ["multiprocessing"]`` alone, as Django and
    ansible set it, leaves them out); its ``sysmon`` core sees every thread."""
    try:
        concurrency = set(cov.get_option("run:concurrency") or ())
    except Exception:  # a coverage.py without the option follows threads
        return True
    return not concurrency or "thread" in concurrency or reference_core(cov) == "sysmon"


def reference_uses_sysmon(cov: Any) -> bool:
    """Whether ``coverage run`` with these settings would measure with coverage.py's
    ``sysmon`` core, which keeps every code object it sees alive (``reference_core``)."""
    return reference_core(cov) == "sysmon"


def tracer_for(
    cov: Any, files: list[str], branch: bool = False, *, omit: list[str] | None = None
) -> Any:
    """A tracer limited to ``files``, with the rest of ``cov``'s configuration.

    With ``omit``, no ``files``: ``cov``'s own selection but for those files (the ones the
    probes measure).
    """
    import coverage

    tracer = coverage.Coverage(data_file=None, branch=branch, config_file=_config_file(cov))
    if omit is not None:
        set_selection(tracer, {name: option(cov, name) for name in SELECTION})
        tracer.set_option("run:omit", [*(cov.get_option("run:omit") or []), *omit])
    else:
        set_selection(tracer, {"run:include": list(files)})
    choose_core(tracer)
    leave_children_to_the_gate(tracer)
    return tracer


def finish(
    data: Any, tracer: Any | None, selection: FileSelection | None, mapper: FileMapper = str
) -> None:
    """What every engine does last: the leftover files' tracer stopped and its data merged,
    and files that never ran reported at 0%, as coverage.py's source search does."""
    if tracer is not None:
        tracer.stop()
        data.update(tracer.get_data())
    if selection is not None:
        data.touch_files([mapper(name) for name in selection.unexecuted_candidates()])


def file_mapper(cov: Any) -> FileMapper:
    """The name coverage.py records a measured file under: relative to the directory it
    started in with ``relative_files = true`` (its reporting looks data up by that name),
    else the absolute name the engines already use."""
    if not cov.get_option("run:relative_files"):
        return str
    from coverage.files import relative_filename

    return relative_filename


def mapped(found: dict[str, list[_T]], mapper: FileMapper) -> dict[str, list[_T]]:
    """``found`` keyed by ``mapper``'s names (files that map alike are merged)."""
    if mapper is str:
        return found
    result: dict[str, list[_T]] = {}
    for name, items in found.items():
        result.setdefault(mapper(name), []).extend(items)
    return result


def _config_file(cov: Any) -> str | bool:
    found = getattr(cov.config, "config_file", None)
    return str(found) if found else False

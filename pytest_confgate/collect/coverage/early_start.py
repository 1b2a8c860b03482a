"""Measuring from the start of the process, before pytest imports its plugins.

``pytest --confgate`` starts measuring once pytest has loaded its plugins: a package pytest
imports first (pluggy, a pytest plugin, anything a plugin imports) has run its import-time lines
unmeasured, where ``coverage run -m pytest`` counts them. ``python -m pytest_confgate`` owns the
process start: it calls ``begin`` before importing pytest, so coverage.py's tracer records from
the first line, and the gate's measurement takes the early part over (``handover``) when it
starts, keeping the files it measures. Without it, ``CoverageSession`` names the measured
modules imported too early instead.
"""

from __future__ import annotations

import warnings
from typing import Any

RUN_INSTEAD = "python -m pytest_confgate"
"""What to run instead of ``pytest --confgate`` so early imports count (same arguments)."""

_early: Any = None
_owned = False
"""Whether this process was started by the gate (``begin`` was called), measured or not."""


def begin() -> None:
    """Start coverage.py's tracer with the project's configuration (cwd), as ``coverage run``.

    Child-process settings are left to the gate's own measurement: this part only covers the
    time before it starts, in this process.
    """
    global _early, _owned
    _owned = True
    if _early is not None:
        return
    import coverage

    from pytest_confgate.collect.coverage.tracer import choose_core

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            # Arcs, whatever the project's `branch`: the gate's own `branch: true` may
            # measure branches where coverage.py's settings do not, and arcs give lines too.
            cov = coverage.Coverage(data_file=None, branch=True)
            cov.set_option("run:patch", [])
            configured = cov.get_option("run:concurrency")
            concurrency = [c for c in (configured if isinstance(configured, list) else [])
                           if c != "multiprocessing"]
            cov.set_option("run:concurrency", concurrency)
            choose_core(cov)
            cov.start()
        except Exception:  # a broken configuration: the gate's own start reports it
            return
    _early = cov


def handover() -> Any | None:
    """Stop the early measurement; its ``CoverageData``, or ``None`` if there was none."""
    global _early
    cov, _early = _early, None
    if cov is None:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            cov.stop()
            return cov.get_data()
        except Exception:  # coverage.py raises plain exceptions; the part is lost, not wrong
            return None


def started() -> bool:
    """Whether an early measurement is running (``python -m pytest_confgate``)."""
    return _early is not None


def owned() -> bool:
    """Whether the gate started this process (``python -m pytest_confgate``, ``confgate
    gate``'s test process): nothing is to be gained by starting it again."""
    return _owned


def discard() -> None:
    """Stop the early measurement without using it (the gate did not measure here)."""
    handover()


def part_for(early: Any, wants: Any, branch: bool) -> Any:
    """The early data for the files ``wants(filename)`` keeps, as lines or as arcs."""
    from coverage import CoverageData

    kept = CoverageData(no_disk=True)
    names = [name for name in early.measured_files() if wants(name)]
    if branch and early.has_arcs():
        kept.add_arcs({name: early.arcs(name) or [] for name in names})
    elif branch:
        return None  # lines cannot become arcs: the project's and the gate's branch differ
    else:
        kept.add_lines({name: early.lines(name) or [] for name in names})
    return kept

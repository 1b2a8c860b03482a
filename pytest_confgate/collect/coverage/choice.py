"""Which engine records a run's lines and branches, chosen here and nowhere else.

- Python 3.12+: ``sys.monitoring`` (``monitor_engine``), lines and branches;
- Python 3.10/3.11: line probes, with branch coverage branch probes too (``probe_engine``);
- otherwise, or when the chosen engine cannot follow the run's configuration: coverage.py's
  own tracer (``tracer``), and the reason is kept as a warning the report shows. That
  includes a ``concurrency`` without ``thread`` where coverage.py's tracer leaves threads out
  (``tracer.follows_threads``): the engines record every thread.

``None`` means coverage.py's tracer measures everything; an engine may still hand single
files to it (``by_file`` names them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_confgate.collect.coverage.line_probes import AssertRewriting
from pytest_confgate.collect.coverage.monitor_engine import AVAILABLE as MONITORING
from pytest_confgate.collect.coverage.monitor_engine import MonitorEngine
from pytest_confgate.collect.coverage.probe_engine import ProbeEngine, branch_probes
from pytest_confgate.collect.coverage.tracer import follows_threads


def choose_engine(
    cov: Any,
    *,
    branch: bool,
    only: list[Path] | None,
    cache_dir: Path | None,
    rewriting: AssertRewriting | None,
    warnings: list[str],
) -> ProbeEngine | MonitorEngine | None:
    """The engine for ``cov``'s run (``only``: just these files, pull-request mode), or None
    for coverage.py's tracer; why an engine was refused is appended to ``warnings``."""
    if not follows_threads(cov):  # the engines record every thread
        warnings.append(f"traced with coverage.py: concurrency = {_named(cov)} names no "
                        '"thread", so coverage.py measures only the thread it starts in')
        return None
    if MONITORING:
        return _monitor_engine(cov, only, cache_dir, warnings)
    if branch and isinstance(branch_probes(cov), str):
        return None
    return _probe_engine(cov, branch, only, cache_dir, rewriting, warnings)


def _named(cov: Any) -> str:
    return "[" + ", ".join(f'"{name}"' for name in cov.get_option("run:concurrency")) + "]"


def _monitor_engine(
    cov: Any, only: list[Path] | None, cache_dir: Path | None, warnings: list[str]
) -> MonitorEngine | None:
    found = (MonitorEngine.for_run(cov, cache_dir) if only is None
             else MonitorEngine.for_files(cov, only, cache_dir))
    if isinstance(found, str):
        warnings.append(f"traced with coverage.py: {found}")
        return None
    return found


def _probe_engine(
    cov: Any,
    branch: bool,
    only: list[Path] | None,
    cache_dir: Path | None,
    rewriting: AssertRewriting | None,
    warnings: list[str],
) -> ProbeEngine | None:
    branches = None
    if branch:
        found_branches = branch_probes(cov, cache_dir=cache_dir)
        if isinstance(found_branches, str):
            warnings.append(f"traced with coverage.py: {found_branches}")
            return None
        branches = found_branches
    if only is not None:
        engine = ProbeEngine.for_files(only, cache_dir, rewriting, branches=branches)
        if engine is None:
            warnings.append(
                "traced with coverage.py: a changed module was imported before the gate started"
            )
        return engine
    found = ProbeEngine.for_run(cov, cache_dir, rewriting, branch=branch)
    if isinstance(found, str):
        warnings.append(f"traced with coverage.py: {found}")
        return None
    return found

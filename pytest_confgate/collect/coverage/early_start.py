"""Measuring from the start of the process, before pytest imports its plugins.

``pytest --confgate`` starts measuring once pytest has loaded its plugins: a package pytest
imports first (pluggy, a pytest plugin, anything a plugin imports) has run its import-time lines
unmeasured, where ``coverage run -m pytest`` counts them. ``python -m pytest_confgate`` owns the
process start: it calls ``begin`` before importing pytest, and the gate's measurement takes the
early part over (``handover``) when it starts, keeping the files it measures. Without it,
``CoverageSession`` names the measured modules imported too early instead.

``begin`` does not trace at once: most projects import none of their code before the gate
starts, and tracing pytest's own start-up cost ``confgate gate`` several percent on click for
nothing. It watches each module body about to run instead (``foreign_loaders``: the ``exec``
audit event, whatever finder and loader imported it), and starts coverage.py's tracer as the
first module that could be measured starts, before its first line runs (code of the project's
folder outside any installed packages, or a ``source`` / ``source_pkgs`` that coverage.py's
settings name): the lines recorded are the same. A finder first on ``sys.meta_path`` did not
do: pytest puts its assertion rewriter ahead of it, and the rewriter finds the modules of
pytest11 plugins (pytest-mock, typeguard) and ``-p`` modules itself.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import warnings
from types import CodeType
from typing import Any

from pytest_confgate.collect.coverage import foreign_loaders
from pytest_confgate.collect.coverage.settings import option

RUN_INSTEAD = "python -m pytest_confgate"
"""What to run instead of ``pytest --confgate`` so early imports count (same arguments)."""

_early: Any = None
_owned = False
"""Whether this process was started by the gate (``begin`` was called), measured or not."""


class _FirstMeasured:
    """Watches each module body about to run (``foreign_loaders.watch``), and starts the
    early measurement when one could be measured (then stops watching)."""

    def __init__(self, cov: Any, folders: tuple[str, ...], packages: frozenset[str]) -> None:
        self.cov, self.folders, self.packages = cov, folders, packages
        self.skipped = tuple({os.path.join(os.path.realpath(p), "") for p in _installed()})

    def __call__(self, code: CodeType, name: str, loader: str) -> None:
        if self._measurable(name, code.co_filename):
            _start(self)

    def _measurable(self, name: str, origin: str | None) -> bool:
        if name.partition(".")[0] in self.packages:
            return True
        if not origin or origin.startswith("<"):
            return False  # built in, frozen, code given as text: nothing coverage.py measures
        real = os.path.realpath(origin)
        if any(real.startswith(folder) for folder in self.folders[1:]):
            return True  # a folder `source` names, wherever it is
        return real.startswith(self.folders[0]) and not real.startswith(self.skipped)


def _installed() -> list[str]:
    """Where the interpreter and installed packages live: not the project's own code."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        found = sysconfig.get_paths().get(key)
        if found:
            paths.add(found)
    return [p for p in paths if p]


_finder: _FirstMeasured | None = None


def _start(finder: _FirstMeasured) -> None:
    global _early
    _disarm()
    if type(finder.cov).current() is not None:
        return  # coverage.py already measures (pytest-cov started): that measurement counts
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            finder.cov.start()
        except Exception:  # a broken configuration: the gate's own start reports it
            return
    _early = finder.cov


def _disarm() -> None:
    global _finder
    if _finder is not None:
        foreign_loaders.unwatch(_finder)
        _finder = None


def begin() -> None:
    """Measure with the project's configuration (cwd), as ``coverage run`` would, from the
    first import of a module it could measure (see above).

    Child-process settings are left to the gate's own measurement: this part only covers the
    time before it starts, in this process.
    """
    global _owned, _finder
    _owned = True
    if _early is not None or _finder is not None:
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
            folders, packages = _named_sources(cov)
        except Exception:  # a broken configuration: the gate's own start reports it
            return
    _finder = _FirstMeasured(cov, folders, packages)
    foreign_loaders.watch(_finder)


def _named_sources(cov: Any) -> tuple[tuple[str, ...], frozenset[str]]:
    """The project's folder first, then the folders coverage.py's ``source`` and
    ``source_dirs`` name; the packages ``source`` and ``source_pkgs`` name."""
    here = os.path.join(os.path.realpath(os.getcwd()), "")
    folders, packages = [here], set()
    for name in ("run:source", "run:source_pkgs", "run:source_dirs"):
        for entry in option(cov, name):
            candidate = os.path.realpath(os.path.join(here, entry))
            if name == "run:source_dirs" or (name == "run:source" and os.path.isdir(candidate)):
                folders.append(os.path.join(candidate, ""))
            else:
                packages.add(entry.partition(".")[0])
    return tuple(folders), frozenset(packages)


def handover() -> Any | None:
    """Stop the early measurement; its ``CoverageData``, or ``None`` if there was none."""
    global _early
    _disarm()
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
    from pytest_confgate.collect.coverage.data_copy import subset

    names = [name for name in early.measured_files() if wants(name)]
    if branch and not early.has_arcs():
        return None  # lines cannot become arcs: the project's and the gate's branch differ
    return subset(early, names, arcs=branch)

"""Python 3.12+: lines and branches recorded with ``sys.monitoring`` (``monitor_probes``).

The files measured are the ones coverage.py's tracer would record (``files``), or in
pull-request mode the changed ones. A file whose branches the events cannot map with certainty
is measured by coverage.py's own tracer, limited to those files, and ``by_file`` says which
engine measured what. On 3.12 and 3.13 that is a file with ``async for`` (its loop ends by an
exception, not a branch event); it is found before the run from the source (the packages
``source`` names too, found without importing them), and a module the search did not list
is caught when its code first runs (``unprobed``: the figure then fails closed rather than
differ from coverage.py's).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_confgate.collect.coverage.analysis import ANALYSES, multiline_map
from pytest_confgate.collect.coverage.files import FileSelection
from pytest_confgate.collect.coverage.monitor_probes import (
    BRANCH_EVENTS,
    MONITOR,
    MonitorProbes,
    Wants,
)
from pytest_confgate.collect.coverage.tracer import (
    TRACER,
    FileMapper,
    finish,
    mapped,
    reference_core,
    tracer_for,
)

MONITOR_MIXED = f"{MONITOR} and {TRACER}"
AVAILABLE = sys.version_info >= (3, 12)
_ASYNC_FOR = re.compile(rb"\basync\s+for\b")


def needs_tracer(path: str, branch: bool) -> bool:
    """Whether ``path``'s branches need coverage.py's tracer on this Python."""
    if not branch or BRANCH_EVENTS:
        return False
    try:
        return _ASYNC_FOR.search(Path(path).read_bytes()) is not None
    except OSError:
        return False


def _probes(cov: Any, wants: Wants, branch: bool, cache_dir: Path | None) -> MonitorProbes:
    """The probes, recording what ``coverage run`` records with the core it would use."""
    from coverage.files import canonical_filename

    core = reference_core(cov)
    return MonitorProbes(wants, branch=branch, canonical=canonical_filename,
                         keep_alive=core == "sysmon", reference_traces=core != "sysmon",
                         multiline=_kept_multiline(cov, cache_dir) if branch else None)


def _kept_multiline(cov: Any, cache_dir: Path | None) -> Callable[[str], dict[int, int] | None]:
    """A measured file's multi-line statements from the analysis the report keeps (the same
    tokens coverage.py's ``compute_multiline_map`` reads), or None where none is kept."""
    exclude: str | None = None
    try:
        exclude = cov._exclude_regex("exclude")
    except Exception:  # an internal API of coverage.py that moved: tokenize as before
        cache_dir = None

    def multiline(filename: str) -> dict[int, int] | None:
        if cache_dir is None:
            return None
        return multiline_map(filename, exclude, cache_dir / ANALYSES)

    return multiline


class MonitorEngine:
    """``sys.monitoring`` for the measured files, coverage.py's tracer for the uncertain."""

    def __init__(
        self,
        probes: MonitorProbes,
        selection: FileSelection | None,
        tracer: Any | None,
        traced: list[str],
    ) -> None:
        self.probes = probes
        self.selection = selection
        self.tracer = tracer
        self.traced = traced

    @classmethod
    def for_run(cls, cov: Any, cache_dir: Path | None = None) -> MonitorEngine | str:
        """The engine for ``cov``'s configuration, or why there cannot be one."""
        if MonitorProbes.free_tool_id() is None:
            return "every sys.monitoring tool id the gate may use is taken"
        selection = FileSelection.build(cov)
        if isinstance(selection, str):
            return selection
        from coverage.files import canonical_filename

        branch = bool(cov.get_option("run:branch"))
        # coverage.py's own search lists a package `source` names only once it is imported
        # (jinja2: `source = ["jinja2", "tests"]`, the package under src/): found unimported.
        known = {*selection.unexecuted_candidates(), *selection.package_files()} if branch else ()
        traced = [f for f in sorted(known) if needs_tracer(f, branch)]
        leave = frozenset(traced)

        def wants(filename: str, module: str) -> bool:
            return selection.wants(filename, module) and canonical_filename(filename) not in leave

        probes = _probes(cov, wants, branch, cache_dir)
        tracer = tracer_for(cov, traced, branch) if traced else None
        return cls(probes, selection, tracer, traced)

    @classmethod
    def for_files(
        cls, cov: Any, files: list[Path], cache_dir: Path | None = None
    ) -> MonitorEngine | str:
        """The engine for just ``files`` (pull-request mode: the changed ones)."""
        if MonitorProbes.free_tool_id() is None:
            return "every sys.monitoring tool id the gate may use is taken"
        from coverage.files import canonical_filename

        branch = bool(cov.get_option("run:branch"))
        traced = [canonical_filename(str(f)) for f in files if needs_tracer(str(f), branch)]
        wanted = {canonical_filename(str(f)) for f in files} - set(traced)

        def wants(filename: str, module: str) -> bool:
            return canonical_filename(filename) in wanted

        probes = _probes(cov, wants, branch, cache_dir)
        tracer = tracer_for(cov, traced, branch) if traced else None
        return cls(probes, None, tracer, traced)

    def start(self) -> None:
        self.probes.start()
        if self.tracer is not None:
            self.tracer.start()

    def stop(self, data: Any, mapper: FileMapper = str) -> None:
        """Stop recording and put what ran into ``data`` (a ``CoverageData``), each file under
        the name ``mapper`` gives it (``tracer.file_mapper``)."""
        self.probes.stop()
        if self.probes.branch:
            data.add_arcs(mapped(self.probes.arcs(), mapper))
        else:
            data.add_lines(mapped(self.probes.lines(), mapper))
        finish(data, self.tracer, self.selection, mapper)
        self.tracer = None

    @property
    def label(self) -> str:
        return MONITOR_MIXED if self.traced else MONITOR

    def by_file(self) -> dict[str, str]:
        """Which engine measured each file, when more than one was needed."""
        if not self.traced:
            return {}
        engines = dict.fromkeys(self.probes.files(), MONITOR)
        engines.update(dict.fromkeys(self.traced, TRACER))
        return engines

"""The 3.10/3.11 engine: line probes, and with branch coverage branch probes, in the files
coverage.py would measure; coverage.py's tracer (``tracer``) for the ones they cannot take.

``CoverageSession`` owns the ``coverage.Coverage`` object whose configuration and reporting
count; ``ProbeEngine`` only fills its data. Probes go into every file coverage.py would
measure, chosen by coverage.py itself (``files``); files imported before the gate started
cannot be instrumented and are traced by a second ``coverage.Coverage`` limited to them, a
module another import hook executes is traced from then on (``foreign_loaders``), and
``by_file`` says which engine measured what.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import CodeType
from typing import Any

from pytest_confgate.collect.coverage import foreign_loaders
from pytest_confgate.collect.coverage.aexit import aexit_on_a_raise_at
from pytest_confgate.collect.coverage.ahead import prepare_all
from pytest_confgate.collect.coverage.branch_probes import BranchProbes, arcs_of
from pytest_confgate.collect.coverage.files import FileSelection
from pytest_confgate.collect.coverage.line_probes import AssertRewriting, LineProbes
from pytest_confgate.collect.coverage.tracer import (
    TRACER,
    FileMapper,
    finish,
    mapped,
    tracer_for,
)

PROBES = "line probes"
MIXED = "line probes and coverage.py"
BRANCH_PROBES = "branch probes"
BRANCH_MIXED = "branch probes and coverage.py"
BRANCH_PROBES_PYTHONS = ((3, 10), (3, 12))
"""Where branch probes replace the tracer for branch coverage (``sys.monitoring`` after)."""


class ProbeEngine:
    """Line probes for the files coverage.py would measure, the tracer for the rest."""

    def __init__(
        self,
        probes: LineProbes,
        selection: FileSelection | None,
        tracer: Any | None,
        traced: list[str],
        cov: Any | None = None,
    ) -> None:
        self.probes = probes
        self.selection = selection
        self.tracer = tracer
        self.traced = traced
        """Measured files left to the tracer (already imported, or rewritten by pytest)."""
        self.foreign: dict[str, str] = {}
        """Measured files another import hook executed, and its loader: traced from then on."""
        self._cov = cov
        self._held: list[Any] = []
        self._tracer_files: list[str] = []
        self._canonical: dict[str, str] = {}
        self._omitted: set[str] = set()
        """Files the tracer leaves to the probes (they measured them before it started)."""

    @classmethod
    def for_run(
        cls,
        cov: Any,
        cache_dir: Path | None,
        rewriting: AssertRewriting | None = None,
        *,
        branch: bool = False,
    ) -> ProbeEngine | str:
        """Probes for the whole run of ``cov``'s configuration, or why there cannot be any.

        With ``branch``, branch probes too; a file whose arcs they cannot place is traced
        by coverage.py (found now, before anything is imported).
        """
        selection = FileSelection.build(cov)
        if isinstance(selection, str):
            return selection
        from coverage.files import canonical_filename

        branches = branch_probes(cov, cache_dir=cache_dir) if branch else None
        if isinstance(branches, str):
            return branches
        traced = sorted({*selection.imported(), *selection.archived_files()})
        options: dict[str, Any] = {
            "cache_dir": cache_dir, "canonical": canonical_filename, "rewriting": rewriting,
            "branches": branches,
        }
        if branches is not None:
            ahead = LineProbes(selection.wants, leave=traced, **options)
            known = {*selection.unexecuted_candidates(), *selection.package_files()}
            todo = [path for path in sorted(known) if path not in traced]
            # On a cold run most of the start-up: split with a helper on another core.
            refused = prepare_all(todo, ahead.prepare, branches.exclude, cache_dir,
                                  rewriting.variant if rewriting is not None else None)
            traced += [path for path in todo if refused[path] is not None]
        probes = LineProbes(selection.wants, leave=traced, **options)
        tracer = tracer_for(cov, traced, branch) if traced else None
        return cls(probes, selection, tracer, traced, cov)

    @classmethod
    def for_files(
        cls,
        files: list[Path],
        cache_dir: Path | None,
        rewriting: AssertRewriting | None = None,
        *,
        branches: BranchProbes | None = None,
    ) -> ProbeEngine | None:
        """Probes for just ``files`` (pull-request mode); ``None`` if one is imported already,
        or (branch probes) one cannot have them."""
        if branches is None and any(aexit_on_a_raise_at(str(p)) is not None for p in files):
            return None  # line probes cannot see what coverage.py's tracer sees there
        probes = LineProbes.for_files(
            files, cache_dir=cache_dir, rewriting=rewriting, branches=branches
        )
        if probes.missed_modules():
            return None
        if branches is not None:
            for path in files:
                if path.suffix in (".py", ".pyw") and probes.prepare(str(path)) is not None:
                    return None
        return cls(probes, None, None, [])

    def start(self) -> None:
        self.probes.install()
        if self._cov is not None:
            self.probes.traces_others = True
            foreign_loaders.watch(self._executing)
        if self.tracer is not None:
            self.tracer.start()

    def stop(self, data: Any, mapper: FileMapper = str) -> None:
        """Stop recording and put every line that ran into ``data`` (a ``CoverageData``),
        each file under the name ``mapper`` gives it (coverage.py's, see ``file_mapper``)."""
        foreign_loaders.unwatch(self._executing)
        self._cov = None  # a handler left behind by a run that died does nothing
        self.probes.uninstall()
        if self.probes.branches is not None:
            data.add_arcs(mapped(arcs_of(self.probes.hits), mapper))
        else:
            data.add_lines(mapped(self.probes.lines(), mapper))
        if self.tracer is not None and self.foreign:
            self.tracer.stop()
            self._tracer_files = list(self.tracer.get_data().measured_files())
        finish(data, self.tracer, self.selection, mapper)
        for held in self._held:
            data.update(held)
        self.tracer = None

    def _executing(self, code: CodeType, module: str, loader: str) -> None:
        """A module body is about to run: one the probes did not compile is traced instead.

        From the first one on, coverage.py's tracer measures every measured file the probes
        have not compiled yet (the gate's finder steps aside), as under ``coverage run``.
        """
        if self._cov is None or code in self.probes.compiled:
            return
        filename = code.co_filename
        canonical = self._canonical.get(filename)
        if canonical is None:
            from coverage.files import canonical_filename

            canonical = self._canonical.setdefault(filename, canonical_filename(filename))
        if canonical in self.foreign:
            return
        if canonical in self.traced or not filename.endswith((".py", ".pyw")):
            return
        if not self.probes.wants(filename, module):
            return
        self.foreign[canonical] = loader
        # A file the probes measured already (imported, then run again by ``runpy`` or
        # ``exec``) was left out of the tracer: it is traced too from now on.
        if len(self.foreign) == 1 or canonical in self._omitted:
            self._trace_the_rest()

    def _trace_the_rest(self) -> None:
        self.probes.uninstall()
        if self.tracer is not None:
            self.tracer.stop()
            self._held.append(self.tracer.get_data())
        self._omitted = set(self.probes.hits) - set(self.foreign)
        self.tracer = tracer_for(
            self._cov, [], self.probes.branches is not None, omit=sorted(self._omitted)
        )
        self.tracer.start()

    @property
    def label(self) -> str:
        if self.probes.branches is not None:
            return BRANCH_MIXED if self.traced or self.foreign else BRANCH_PROBES
        return MIXED if self.traced or self.foreign else PROBES

    def by_file(self) -> dict[str, str]:
        """Which engine measured each file, when more than one was needed."""
        if not self.traced and not self.foreign:
            return {}
        probed = BRANCH_PROBES if self.probes.branches is not None else PROBES
        engines = dict.fromkeys(self.probes.hits, probed)
        engines.update(dict.fromkeys(self.traced, TRACER))
        engines.update(dict.fromkeys(self._tracer_files, TRACER))
        return engines


def branch_probes(
    cov: Any, version: tuple[int, ...] = sys.version_info[:2], cache_dir: Path | None = None
) -> BranchProbes | str:
    """Branch probes for ``cov``'s exclusions, or why this run cannot have them."""
    low, high = BRANCH_PROBES_PYTHONS
    if not low <= version < high:
        return f"branch probes serve Python {low[0]}.{low[1]} to {high[0]}.{high[1] - 1}"
    try:
        exclude = cov._exclude_regex("exclude")
    except Exception as exc:  # an internal API of coverage.py that may move: trace instead
        return f"this coverage.py cannot share its exclusions ({type(exc).__name__})"
    return BranchProbes(exclude, cache_dir)



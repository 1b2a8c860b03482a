"""``test_coverage`` from coverage.py's API, measured in the pytest process itself.

Measuring starts before conftest files are imported so import-time lines of the measured code
count, as under ``coverage run -m pytest``. ``choice`` picks the engine (``sys.monitoring`` on
3.12+, probes on 3.10/3.11, coverage.py's tracer otherwise); a file an engine cannot place is
traced by coverage.py and named. Either way the configuration is the project's own coverage.py
configuration (``source``, ``omit``, ``branch``, ``exclude_lines``, ``[paths]``) except what the
gate's configuration sets (``selection``), and the figures come from coverage.py's own JSON
report (``reporting``), so they are exactly the numbers ``coverage json`` would print.
Coverage's warnings are caught and kept in ``details`` (a project with ``filterwarnings =
error`` must not abort on them). This module is the session's life: start, stop, child
processes, xdist workers' parts, pytest-cov's measurement adopted, a shard's data saved.
"""

from __future__ import annotations

import contextlib
import os
import sys
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_confgate.collect.coverage import early_start
from pytest_confgate.collect.coverage.ahead import ANALYSE, Ahead
from pytest_confgate.collect.coverage.analysis import ANALYSES, missing
from pytest_confgate.collect.coverage.children import (
    ChildProcesses,
    leave_children_to_the_gate,
    merged_notes,
)
from pytest_confgate.collect.coverage.choice import choose_engine
from pytest_confgate.collect.coverage.line_probes import AssertRewriting
from pytest_confgate.collect.coverage.monitor_engine import MonitorEngine
from pytest_confgate.collect.coverage.probe_engine import MIXED, ProbeEngine
from pytest_confgate.collect.coverage.reporting import Reporting
from pytest_confgate.collect.coverage.tracer import TRACER, choose_core, file_mapper
from pytest_confgate.collect.namespaces import module_file
from pytest_confgate.collect.sources import tests_omit_patterns
from pytest_confgate.models import EvalMetric

if typing.TYPE_CHECKING:
    from pytest_confgate.collect.pytest_settings import PytestCov


class CoverageSession(Reporting):
    """One coverage.py measurement of the given sources: ``start``, ``stop``, ``metric``."""

    def __init__(
        self,
        root: Path,
        sources: list[Path],
        *,
        branch: bool | None = None,
        only: list[Path] | None = None,
        own_sources: bool = True,
        omit_tests: bool = False,
        cache_dir: Path | None = None,
        rewriting: AssertRewriting | None = None,
        fail_under: float | None = None,
        pytest_cov: PytestCov | None = None,
    ) -> None:
        self.root = root
        self.fail_under = fail_under
        """pytest-cov's ``--cov-fail-under`` when given (it wins over coverage.py's own)."""
        self.sources = sources
        self.branch = bool(branch)
        """Whether branches are measured; settled from coverage.py's configuration."""
        self._branch_setting = branch
        """The gate's own ``branch:`` (``None``: coverage.py's configuration decides)."""
        self._pytest_cov = pytest_cov
        """``confgate gate``'s own process: what pytest-cov measured in the test process, so
        the data is analysed with the same selection, branches and configuration file."""
        self.only = only
        """Pull-request mode: measure and report just these files (the changed ones)."""
        self._own_sources = own_sources
        """``sources`` come from the gate's ``source:`` and replace coverage.py's selection."""
        self._omit_tests = omit_tests
        self._cache_dir = cache_dir
        self._rewriting = rewriting
        self._cov: Any = None
        self._warnings: list[str] = []
        self._error: str | None = None
        self._workers: list[str] = []
        self._adopted: str | None = None
        self._include: list[str] | None = None
        self._omit: list[str] | None = None
        self._engine: ProbeEngine | MonitorEngine | None = None
        self._ahead: Ahead | None = None
        """The helper keeping coverage.py's analyses while the tests run (``ahead``)."""
        self._selected_by = "confgate"
        self._by_file: dict[str, str] = {}
        self._unprobed: dict[str, str] = {}
        self.engine = TRACER
        """Which engine recorded the lines: ``line probes``, ``coverage.py`` or both."""
        self.files: dict[str, Any] = {}
        """coverage.py's per-file figures of the last ``metric`` call (for patch coverage)."""
        self._measured: EvalMetric | None = None
        """The figures once reported: a project and a patch entry share one report."""
        self._children: ChildProcesses | None = None
        self._children_elsewhere: dict[str, Any] | None = None
        """``details.child_processes`` of the processes that measured (xdist, confgate gate)."""
        """Child processes measured by coverage.py (its ``patch`` / ``concurrency``)."""
        self._children_problem: str | None = None
        self._early: Any = None
        """coverage.py's data from the process start (``python -m pytest_confgate``)."""
        self._too_early: list[str] = []
        """Measured modules imported before measuring began (plain ``pytest --confgate``)."""
        self.expected_sources: dict[str, str | None] | None = None
        """``confgate gate``: each measured file's sha256 before the tests ran (realpath ->
        digest); the analysis reads those files only as they were (``analysis.reporters``)."""

    def start(self) -> None:
        """Begin measuring; a failure is remembered and reported as an error metric later.

        On Python 3.12+ lines and branches are recorded with ``sys.monitoring``; on 3.11 line
        coverage by line probes and branch coverage by branch probes (for every measured file,
        or in pull-request mode the changed ones). A changed module imported already, or a
        configuration or file the probes cannot follow, needs coverage.py's tracer.
        """
        if not self._create():
            return
        if self._early is None and self.only is None:
            self._too_early = self._imported_already()
        self._children = ChildProcesses.for_run(self._cov)
        if self._children is not None:
            self._children.start(self._save_forked)
        engine = choose_engine(
            self._cov,
            branch=self.branch,
            only=self.only,
            cache_dir=self._cache_dir,
            rewriting=self._rewriting,
            warnings=self._warnings,
        )
        if engine is not None:
            self._engine = engine
            with self._catch():
                engine.start()
            self.engine = engine.label
            self._analyse_ahead(engine)
            return
        choose_core(self._cov)
        leave_children_to_the_gate(self._cov)
        with self._catch():
            self._cov.start()

    def _analyse_ahead(self, engine: ProbeEngine | MonitorEngine) -> None:
        """coverage.py's analysis of every measured file, kept by a helper on the other core
        while the tests run: a cold run's report would parse them all after the last test.
        Branch probes have them already (compiled ahead); only speed depends on this."""
        if self._cache_dir is None or self.only is not None or engine.selection is None:
            return
        if isinstance(engine, ProbeEngine) and engine.probes.branches is not None:
            return
        try:
            exclude = self._cov._exclude_regex("exclude")
            files = engine.selection.unexecuted_candidates()
        except Exception:  # an internal API of coverage.py that moved: the report parses
            return
        files = missing(files, exclude, self._cache_dir / ANALYSES)  # a warm run: none
        self._ahead = Ahead.start(files, exclude, self._cache_dir, ANALYSE)

    def between_tests(self) -> None:
        """No measured code runs now: let the probes drop the ones that fired."""
        if self._engine is not None:
            self._engine.probes.between_tests()
        if self._ahead is not None:
            self._ahead.poll()  # its pipe never fills up, however many files it keeps

    def _create(self) -> bool:
        if self.only is not None and not self.only:
            self._error = None  # nothing changed that coverage could measure
            return False
        if not self.sources and self._own_sources:
            self._error = (
                f"no source code found to measure under {self.root}; "
                "set `source:` in the confgate configuration"
            )
            return False
        try:
            import coverage

            with self._catch():
                cov = coverage.Coverage(data_file=None, **self._as_pytest_cov())
                problem = self._checkout_plugins(cov)
                if problem is None:
                    self._configure(cov)
                    problem = self._select(cov)
            told = self._pytest_cov
            chose = told is not None and told.sources is not None
            if chose and self._selected_by == "coverage.py configuration":
                self._selected_by = "pytest-cov (--cov)"
        except Exception as exc:  # coverage.py raises plain exceptions for bad configs too
            self._error = f"coverage.py could not start: {exc}"
            self._cov = None
            return False
        if problem is not None:
            self._error = problem
            return False
        self._cov = cov
        self.branch = bool(cov.get_option("run:branch"))
        self._early = early_start.handover()
        return True

    def _checkout_plugins(self, cov: Any) -> str | None:
        """``confgate gate``'s own process imports no coverage.py plugin from the checkout:
        refused before ``_configure`` would import it."""
        if self.expected_sources is None:
            return None
        checkout = checkout_plugins(cov.config.plugins, self.root)
        if not checkout:
            return None
        return (
            f"coverage.py's `plugins` setting names {', '.join(checkout)}, which imports from "
            f"the checkout ({self.root}): confgate gate will not run the change's code in its "
            "own process; install the plugin as a package outside the checkout, or measure "
            "with `pytest --confgate`"
        )

    def _configure(self, cov: Any) -> None:
        """coverage.py's configuring plugins (``covdefaults`` turns ``branch`` on, sets
        ``source`` and ``fail_under``) change the settings when coverage.py initialises, which
        its public methods do first; done now, so the selection, the engine and ``branch`` are
        read as coverage.py will use them. The gate's own ``branch:`` still wins."""
        cov._init()
        if self._branch_setting is not None:
            cov.set_option("run:branch", self._branch_setting)

    def _as_pytest_cov(self) -> dict[str, Any]:
        """coverage.py's arguments as pytest-cov gave them in the test process (the gate's own
        ``branch:`` wins, as it does over coverage.py's configuration)."""
        told = self._pytest_cov
        branch = self._branch_setting
        if told is None:
            return {"branch": branch}
        return {"branch": True if branch is None and told.branch else branch,
                "config_file": told.config or True,
                "source": list(told.sources) if told.sources is not None else None}

    def stop(self) -> None:
        """Stop measuring; safe to call twice or when start failed."""
        if self._ahead is not None:  # the report needs the analyses now
            ahead, self._ahead = self._ahead, None
            ahead.stop()
        if self._engine is not None:
            engine, self._engine = self._engine, None
            if self._cov is not None:
                with self._catch():
                    try:
                        engine.stop(self._static_context(), file_mapper(self._cov))
                    except UnicodeEncodeError:  # coverage.py stores file names as UTF-8 text
                        self._error = self._undecodable_names()
                self._by_file = engine.by_file()
                self._unprobed = dict(engine.probes.unprobed)
                self.engine = engine.label
                self._name_foreign(engine)
        elif self._cov is not None:
            with self._catch():
                self._cov.stop()
        self._merge_early()
        self._combine_children()

    def _static_context(self) -> Any:
        """The run's data, what the engines add next recorded under coverage.py's static
        ``[run] context``, as its own collector records it (``[report] contexts`` reads it)."""
        data = self._cov.get_data()
        context = self._cov.get_option("run:context")
        if context:
            data.set_context(str(context))
        return data

    def _imported_already(self) -> list[str]:
        """Measured modules whose import-time lines ran before the gate could see them."""
        from pytest_confgate.collect.coverage.files import FileSelection

        selection = FileSelection.build(self._cov)
        if isinstance(selection, str):
            return []
        return sorted(self._relative(Path(name)) for name in selection.imported())

    def _measured_filter(self) -> Any:
        """``wants(filename)``: whether this session's coverage.py measures the file."""
        from pytest_confgate.collect.coverage.files import FileSelection

        selection = FileSelection.build(self._cov)
        if isinstance(selection, str):
            return None
        # `source = ["pkg"]` names a package: coverage.py matches the module's name, not
        # its folder, so each file is asked about under the name it was imported as.
        modules: dict[str, str] = {}
        for name, module in list(sys.modules.items()):
            filename = module_file(module)
            if filename is not None:
                modules.setdefault(filename, name)
                modules.setdefault(os.path.realpath(filename), name)
        # With `relative_files` coverage.py records names relative to the folder it started
        # in (the early measurement's too): asked about by their full name.
        from coverage.files import abs_file

        def wants(filename: str) -> bool:
            full = filename if os.path.isabs(filename) else abs_file(filename)
            return selection.wants(full, modules.get(full, ""))

        return wants

    def _merge_early(self) -> None:
        early, self._early = self._early, None
        if early is None or self._cov is None:
            return
        wants = self._measured_filter()
        with self._catch():
            part = early_start.part_for(early, wants or (lambda _name: True), self.branch)
            if part is None:
                self._warnings.append(
                    "the measurement from the process start recorded lines, not branches "
                    "(the gate's `branch:` differs from coverage.py's); it was left out"
                )
                return
            self._cov.get_data().update(part)

    def _name_foreign(self, engine: ProbeEngine | MonitorEngine) -> None:
        foreign = getattr(engine, "foreign", None)
        if not foreign:
            return
        listed = ", ".join(
            f"{self._relative(Path(name))} ({loader})" for name, loader in sorted(foreign.items())
        )
        self._warnings.append(
            f"traced with coverage.py: {listed} ran from a loader other than the gate's probes "
            "(an import hook ahead of the gate's, or code executed by hand); every measured "
            "file imported after it was traced too"
        )

    def _save_forked(self, path: str) -> None:
        """In a child forked from the pytest process: stop and write what it measured."""
        from coverage import CoverageData

        self._children = None  # the parent combines; this child only hands its part over
        self.stop()
        saved = CoverageData(basename=path)
        saved.update(self._cov.get_data())
        saved.write()

    def _combine_children(self) -> None:
        children = self._children
        if children is None or self._cov is None:
            return
        with self._catch():
            problem = children.combine(
                self._cov.get_data(), self._measured_filter(), self._path_map()
            )
        # Called at each end (stop, report): a later call, with nothing left to combine, must
        # not clear why an earlier one failed.
        self._children_problem = self._children_problem or problem
        self._warnings.extend(children.unreadable)
        children.unreadable.clear()

    def _path_map(self) -> Any:
        """How ``coverage combine`` names a file of another process's data: ``[paths]``,
        and with ``relative_files`` relative to the project (coverage.py's own aliases)."""
        try:
            return self._cov._make_aliases().map
        except Exception:  # an internal API of coverage.py that moved: names as recorded
            return None

    def discard(self) -> None:
        """Stop and forget: this process turned out not to be the one that measures."""
        early_start.discard()
        self.stop()
        self._cov = None
        self._error = "coverage was discarded"

    def payload(self) -> bytes | None:
        """This process's data, serialized for another process (an xdist worker's part)."""
        self.stop()
        if self._cov is None:
            return None
        with self._catch():
            data: bytes = self._cov.get_data().dumps()
        return data

    def save(self, path: Path) -> None:
        """Write this run's data to ``path`` as a coverage.py data file, replacing it."""
        from coverage import CoverageData

        from pytest_confgate.exceptions import EvidenceError

        self.stop()
        if self._cov is None:
            raise EvidenceError(f"cannot write {path}: {self._error or 'coverage did not run'}")
        try:
            path.unlink(missing_ok=True)
            saved = CoverageData(basename=str(path))
            saved.update(self._cov.get_data())
            saved.write()
        except Exception as exc:  # coverage.py raises plain exceptions (sqlite, OS)
            raise EvidenceError(f"cannot write the coverage data to {path}: {exc}") from exc

    def engine_note(self) -> dict[str, Any]:
        """Which engine this process used, for the process that reports (xdist)."""
        return {
            "engine": self.engine,
            "engine_by_file": dict(self._by_file),
            "unprobed": dict(self._unprobed),
            "warnings": list(self._warnings),
            "child_processes": self._children.note() if self._children is not None else None,
        }

    def combine(
        self,
        parts: dict[str, bytes],
        missing: list[str],
        engines: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        """Merge the data of every xdist worker; a missing part fails closed, never shrinks.

        ``engines`` are the workers' ``engine_note``s: the report names the engines they used.
        """
        if missing:
            self._error = (
                f"coverage data from {', '.join(sorted(missing))} is missing (the worker "
                "crashed or stopped early); the figures would be too small, so none are given"
            )
            return
        if not parts:
            self._error = "no xdist worker sent coverage data"
            return
        if not self._create():
            return
        from coverage import CoverageData

        if self._pytest_cov is not None and self._selected_by == "confgate" and not self.only:
            self._keep_to_sources()  # a bare --cov measured everything: report as `adopt` does
        with self._catch():
            combined = self._cov.get_data()
            for name in sorted(parts):
                part = CoverageData(no_disk=True)
                part.loads(parts[name])
                if self.branch and part.measured_files() and not part.has_arcs():
                    self._error = (
                        f"branch coverage is measured, but {name} handed over lines only; the "
                        "figures would leave the branches out, so none are given")
                    self._cov = None
                    return
                combined.update(part)
            names = combined.measured_files()
            if self.branch and not combined.has_arcs() and not any(map(combined.lines, names)):
                # parts that ran nothing measured (files only touched) hand over no kind of
                # data: the report's branch counts (0/0) need branch data, as each part's was
                from coverage.exceptions import DataError

                with contextlib.suppress(DataError):
                    combined.add_arcs({})
        self._merge_early()
        self._workers = sorted(parts)
        if engines:
            self._merge_engines(list(engines.values()))

    def _merge_engines(self, notes: list[dict[str, Any]]) -> None:
        labels = {str(note.get("engine")) for note in notes}
        self.engine = labels.pop() if len(labels) == 1 else MIXED
        children = [dict(note["child_processes"]) for note in notes
                    if isinstance(note.get("child_processes"), dict)]
        self._children_elsewhere = merged_notes(children)
        for note in notes:
            self._unprobed.update(dict(note.get("unprobed") or {}))
            # What a worker (or confgate gate's test process) was warned of, said once: shown
            # to people, never a figure or a verdict.
            self._warnings.extend(str(w) for w in list(note.get("warnings") or [])[:20]
                                  if str(w) not in self._warnings)
            for name, engine in dict(note.get("engine_by_file") or {}).items():
                if self._by_file.get(name, engine) != engine:
                    engine = MIXED
                self._by_file[name] = engine
        if self.engine == MIXED and not self._by_file:
            self._by_file = {"(per worker)": ", ".join(sorted(labels | {self.engine}))}

    def adopt(self, cov: Any, origin: str, failed: str | None = None) -> None:
        """Report from a measurement someone else ran (pytest-cov) instead of tracing twice.

        The figures are the measurement's own; only when it measured everything (a bare
        ``--cov`` with no ``source`` anywhere) does the report keep to the gate's sources.
        ``failed`` (its data could not be read) is the evidence error instead of figures.
        """
        self._adopted = origin
        early_start.discard()  # pytest-cov's own measurement counts, from its own start
        if failed is not None:
            self._error = failed
            return
        config = getattr(cov, "config", None)
        measured_branches = bool(getattr(config, "branch", False))
        if self._branch_setting and not measured_branches:
            self._error = (
                f"branch coverage is configured but {origin} measured lines only; "
                "add --cov-branch (or set branch = true in the coverage configuration)"
            )
            return
        self.branch = measured_branches and self._branch_setting is not False
        self.engine = f"{TRACER} ({origin})"
        chose = any(getattr(config, name, None) for name in ("source", "source_pkgs"))
        chose = chose or bool(getattr(config, "run_include", None))
        if chose and not self._own_sources:
            self._selected_by = f"{origin} (--cov / coverage.py configuration)"
        else:
            self._keep_to_sources()
        self._cov = cov

    def _keep_to_sources(self) -> None:
        """Report the gate's sources only, of data that holds more (pytest-cov's bare
        ``--cov`` measures every file run, tests and the gate's own code included)."""
        self._include = [f"{p}/*" if p.is_dir() else str(p) for p in self.sources]
        if self._omit_tests:
            self._omit = tests_omit_patterns(self.sources)

    def files_by_root(self) -> dict[str, Any]:
        """coverage.py's per-file figures keyed by rootdir-relative POSIX path."""
        return {self._relative(Path(name)): data for name, data in self.files.items()}





def checkout_plugins(names: Sequence[str], root: Path) -> list[str]:
    """The coverage.py plugin modules among ``names`` that would be imported from under
    ``root``: an editable install of the project makes its own files importable anywhere.
    Found without importing anything (only the top-level name's spec is asked for)."""
    import importlib.util

    base = os.path.realpath(root)
    found = []
    for name in names:
        try:
            spec = importlib.util.find_spec(name.partition(".")[0])
        except (ImportError, ValueError):
            continue  # coverage.py says it cannot import it
        if spec is None:
            continue
        places = [spec.origin or "", *(spec.submodule_search_locations or [])]
        if any(place and os.path.realpath(place).startswith(base + os.sep) for place in places):
            found.append(name)
    return found

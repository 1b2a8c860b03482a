"""``test_coverage`` from coverage.py's API, measured in the pytest process itself.

Measuring starts before conftest files are imported so import-time lines of the measured code
count, as under ``coverage run -m pytest``. On Python 3.12+ lines and branches are recorded with
``sys.monitoring`` (``monitor_engine``); on 3.11 lines by line probes and, with branch
coverage, arcs by branch probes (``coverage_engines``, ``branch_probes``). A file an engine
cannot place is traced by coverage.py and named.
Either way the configuration is the project's own coverage.py configuration (``source``,
``omit``, ``branch``, ``exclude_lines``, ``[paths]``) except what the gate's configuration
sets, and the figures come from coverage.py's own JSON report, so they are exactly the numbers
``coverage json`` would print. Coverage's warnings are caught and kept in ``details`` (a
project with ``filterwarnings = error`` must not abort on them).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pytest_confgate.collect import early_start
from pytest_confgate.collect.ahead import ANALYSE, Ahead
from pytest_confgate.collect.coverage_analysis import ANALYSES, missing, reporters
from pytest_confgate.collect.coverage_children import ChildProcesses
from pytest_confgate.collect.coverage_engines import (
    MIXED,
    TRACER,
    ProbeEngine,
    branch_probes,
    choose_core,
    file_mapper,
)
from pytest_confgate.collect.coverage_figures import Provenance, coverage_metric, relative
from pytest_confgate.collect.line_probes import AssertRewriting
from pytest_confgate.collect.monitor_engine import AVAILABLE as MONITORING
from pytest_confgate.collect.monitor_engine import MonitorEngine
from pytest_confgate.collect.sources import tests_omit_patterns
from pytest_confgate.models import EvalMetric, MetricStatus

_UNDECODABLE = "coverage.py cannot record a file whose name is not UTF-8"

_SELECTION = ("run:source", "run:source_pkgs", "run:include")
"""coverage.py settings that choose what is measured; the gate's ``source:`` replaces them."""


class CoverageSession:
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
    ) -> None:
        self.root = root
        self.fail_under = fail_under
        """pytest-cov's ``--cov-fail-under`` when given (it wins over coverage.py's own)."""
        self.sources = sources
        self.branch = bool(branch)
        """Whether branches are measured; settled from coverage.py's configuration."""
        self._branch_setting = branch
        """The gate's own ``branch:`` (``None``: coverage.py's configuration decides)."""
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
        """The helper keeping coverage.py's analyses while the tests run (``collect.ahead``)."""
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
        """Child processes measured by coverage.py (its ``patch`` / ``concurrency``)."""
        self._children_problem: str | None = None
        self._early: Any = None
        """coverage.py's data from the process start (``python -m pytest_confgate``)."""
        self._too_early: list[str] = []
        """Measured modules imported before measuring began (plain ``pytest --confgate``)."""

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
        engine: ProbeEngine | MonitorEngine | None = None
        if MONITORING:
            engine = self._monitor_engine()
        elif not self.branch or not isinstance(branch_probes(self._cov), str):
            engine = self._probe_engine()
        if engine is not None:
            self._engine = engine
            with self._catch():
                engine.start()
            self.engine = engine.label
            self._analyse_ahead(engine)
            return
        choose_core(self._cov)
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

    def _monitor_engine(self) -> MonitorEngine | None:
        if self.only is not None:
            found = MonitorEngine.for_files(self._cov, self.only)
        else:
            found = MonitorEngine.for_run(self._cov)
        if isinstance(found, str):
            self._warnings.append(f"traced with coverage.py: {found}")
            return None
        return found

    def _probe_engine(self) -> ProbeEngine | None:
        branches = None
        if self.branch:
            found_branches = branch_probes(self._cov, cache_dir=self._cache_dir)
            if isinstance(found_branches, str):
                self._warnings.append(f"traced with coverage.py: {found_branches}")
                return None
            branches = found_branches
        if self.only is not None:
            engine = ProbeEngine.for_files(
                self.only, self._cache_dir, self._rewriting, branches=branches
            )
            if engine is None:
                self._warnings.append(
                    "traced with coverage.py: a changed module was imported before the gate "
                    "started"
                )
            return engine
        found = ProbeEngine.for_run(
            self._cov, self._cache_dir, self._rewriting, branch=self.branch
        )
        if isinstance(found, str):
            self._warnings.append(f"traced with coverage.py: {found}")
            return None
        return found

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
                cov = coverage.Coverage(data_file=None, branch=self._branch_setting)
                problem = self._select(cov)
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

    def _select(self, cov: Any) -> str | None:
        """What is measured: the changed files, the gate's sources, or the project's choice.

        Returns why nothing can be measured, if so.
        """
        if self.only is not None:
            # Measuring only what changed is what makes a pull-request gate cheap.
            self._replace_selection(cov, include=[str(p) for p in self.only])
            return None
        if not self._own_sources and any(cov.get_option(name) for name in _SELECTION):
            self._selected_by = "coverage.py configuration"
            return None
        if not self.sources:
            return (
                f"no source code found to measure under {self.root}; set `source:` in the "
                "confgate configuration (or `source` in coverage.py's)"
            )
        dirs = [str(p) for p in self.sources if p.is_dir()]
        modules = [p.stem for p in self.sources if p.is_file()]
        self._replace_selection(cov, source=dirs + modules)
        if self._omit_tests:
            omit = list(cov.get_option("run:omit") or [])
            cov.set_option("run:omit", omit + tests_omit_patterns(self.sources))
        return None

    @staticmethod
    def _replace_selection(
        cov: Any, *, source: list[str] | None = None, include: list[str] | None = None
    ) -> None:
        cov.set_option("run:source", source or [])
        cov.set_option("run:source_pkgs", [])
        cov.set_option("run:include", include or [])

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
                        engine.stop(self._cov.get_data(), file_mapper(self._cov))
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

    def _imported_already(self) -> list[str]:
        """Measured modules whose import-time lines ran before the gate could see them."""
        from pytest_confgate.collect.coverage_files import FileSelection

        selection = FileSelection.build(self._cov)
        if isinstance(selection, str):
            return []
        return sorted(self._relative(Path(name)) for name in selection.imported())

    def _measured_filter(self) -> Any:
        """``wants(filename)``: whether this session's coverage.py measures the file."""
        from pytest_confgate.collect.coverage_files import FileSelection

        selection = FileSelection.build(self._cov)
        if isinstance(selection, str):
            return None
        # `source = ["pkg"]` names a package: coverage.py matches the module's name, not
        # its folder, so each file is asked about under the name it was imported as.
        modules: dict[str, str] = {}
        for name, module in list(sys.modules.items()):
            filename = getattr(module, "__file__", None)
            if isinstance(filename, str):
                modules.setdefault(filename, name)
                modules.setdefault(os.path.realpath(filename), name)
        return lambda filename: selection.wants(filename, modules.get(filename, ""))

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
            self._children_problem = children.combine(
                self._cov.get_data(), self._measured_filter()
            )

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

        with self._catch():
            combined = self._cov.get_data()
            for name in sorted(parts):
                part = CoverageData(no_disk=True)
                part.loads(parts[name])
                combined.update(part)
        self._merge_early()
        self._workers = sorted(parts)
        if engines:
            self._merge_engines(list(engines.values()))

    def _merge_engines(self, notes: list[dict[str, Any]]) -> None:
        labels = {str(note.get("engine")) for note in notes}
        self.engine = labels.pop() if len(labels) == 1 else MIXED
        for note in notes:
            self._unprobed.update(dict(note.get("unprobed") or {}))
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
            self._include = [f"{p}/*" if p.is_dir() else str(p) for p in self.sources]
            if self._omit_tests:
                self._omit = tests_omit_patterns(self.sources)
        self._cov = cov

    def files_by_root(self) -> dict[str, Any]:
        """coverage.py's per-file figures keyed by rootdir-relative POSIX path."""
        return {self._relative(Path(name)): data for name, data in self.files.items()}

    def metric(self) -> EvalMetric:
        """Coverage of the run as an ``EvalMetric``; no data is an error, never 0% or 100%.

        coverage.py's report (parsing every measured file) is most of what the gate adds
        after the last test, so it is made once however many entries read it.
        """
        if self._measured is None:
            self._measured = self._measure()
        return self._measured

    def _measure(self, weight: float = 1.0) -> EvalMetric:
        if self.only is not None and not self.only:
            return EvalMetric(
                type="test_coverage",
                value=1.0,
                weight=weight,
                details={
                    "tool": "coverage.py",
                    "covered_lines": 0,
                    "num_statements": 0,
                    "note": "no changed Python file under the measured source",
                },
            )
        if self._cov is None or (self._error or "").startswith(_UNDECODABLE):
            return self._failed(self._error or "coverage.py did not run")
        if self._children_problem is not None:
            return self._failed(self._children_problem)
        from coverage.exceptions import CoverageException

        began = time.perf_counter()
        try:
            with self._catch(), tempfile.TemporaryDirectory(prefix="confgate-cov-") as tmp:
                out = Path(tmp) / "coverage.json"
                if self._workers and not self._cov.get_data().measured_files():
                    return self._failed("no xdist worker measured any code in " + self._names())
                # Flush the tracer's pending data first: with [coverage:paths] remapping,
                # json_report copies the data before it would flush it, and sees none.
                data = self._cov.get_data()
                ran = any(data.lines(name) for name in data.measured_files())
                morfs = [str(p) for p in self.only] if self.only is not None else None
                with reporters(self._cov, self._analysis_cache()):
                    self._cov.json_report(
                        morfs=morfs, outfile=str(out), include=self._include, omit=self._omit
                    )
                report = json.loads(out.read_text(encoding="utf-8"))
        except CoverageException as exc:
            return self._failed(f"coverage.py: {exc} (did the tests import {self._names()}?)")
        except UnicodeEncodeError:  # coverage.py stores file names as UTF-8 text
            return self._failed(self._undecodable_names())
        except (SyntaxError, UnicodeDecodeError) as exc:  # a source it cannot decode
            return self._failed(self._undecodable_sources(exc))
        self.files = report.get("files", {})
        if self._unprobed:
            listed = ", ".join(f"{self._relative(Path(f))} ({loader})"
                               for f, loader in sorted(self._unprobed.items()))
            if MONITORING:
                return self._failed(
                    f"sys.monitoring could not map the branches of {listed}. Leave them out "
                    "of the measured source (coverage.py `omit`), or name their directory in "
                    "the gate's `source:` so they are found before the tests start"
                )
            if self.branch:
                return self._failed(
                    f"branch probes could not measure {listed}. Leave them out of the "
                    "measured source (coverage.py `omit`), or name their folder in `source` "
                    "so they are checked, and traced where need be, before the tests start"
                )
            return self._failed(
                f"line probes could not measure {listed}. Leave them out of the measured "
                "source (coverage.py `omit`), or set `branch: true` to measure with "
                "coverage.py's tracer"
            )
        if self.only is None and not _covers_anything(report):
            # Unexecuted files would still be reported at 0%: a figure, but not evidence.
            if ran:  # recorded, yet reported under no name it was recorded by: never a pass
                return self._failed(
                    f"coverage.py's report counts no line of {self._names()} as run, though "
                    "the tests ran measured code (recorded under other file names than it "
                    "reports, or outside what it reports); the figure would read 0%, so none "
                    "is given"
                )
            return self._failed(
                f"coverage.py collected no data: the tests never ran code in {self._names()}"
            )
        return self._build(report, weight, time.perf_counter() - began)

    def _chooser(self) -> str:
        """Who chose what is measured, as the report says it: the configuration's ``source:``
        is the user's choice, not the gate's guess."""
        if self._selected_by == "confgate" and self._own_sources:
            return "source: in the configuration"
        return self._selected_by

    def _analysis_cache(self) -> Path | None:
        return self._cache_dir / ANALYSES if self._cache_dir is not None else None

    def _build(self, report: dict[str, Any], weight: float, elapsed: float) -> EvalMetric:
        how = Provenance(
            branch=self.branch,
            engine=self.engine,
            engine_by_file=self._by_file,
            source=self._source_names(),
            selected_by=self._chooser(),
            workers=self._workers,
            measured_by=self._adopted,
            warnings=self._warnings,
        )
        metric = coverage_metric(report, how, self.root, weight=weight, elapsed=elapsed)
        extra: dict[str, Any] = {}
        if self._children is not None:
            extra["child_processes"] = self._children.note()
        if self._too_early:
            extra["imported_before_start"] = list(self._too_early)
            extra["run_instead"] = f"{early_start.RUN_INSTEAD} [the same pytest arguments]"
        details = {**metric.details, **extra, **self._report_settings()}
        return self._without_statements(metric.model_copy(update={"details": details}))

    def _report_settings(self) -> dict[str, Any]:
        """coverage.py's ``fail_under`` (or pytest-cov's ``--cov-fail-under``), the floor when
        the gate's configuration sets none, and ``precision``, how its figure is shown."""
        found: dict[str, Any] = {}
        try:
            configured = float(self._cov.get_option("report:fail_under") or 0)
            precision = int(self._cov.get_option("report:precision") or 0)
        except Exception:  # a coverage.py without the options: nothing to inherit
            return found
        floor, origin = configured, "coverage.py fail_under"
        if self.fail_under is not None and self.fail_under != configured:
            floor, origin = float(self.fail_under), "pytest-cov --cov-fail-under"
        if floor > 0:
            found.update(fail_under=floor, fail_under_from=origin)
        if precision > 0:
            found["precision"] = precision
        return found

    def _without_statements(self, metric: EvalMetric) -> EvalMetric:
        """0/0 is no evidence, never "100.00%"; a change that adds no statement is clean."""
        details = metric.details
        if details.get("num_statements", 0) + details.get("num_branches", 0):
            return metric
        if self.only is not None:
            note = "the changed Python files hold no statement"
            return metric.model_copy(update={"details": {**details, "note": note}})
        reason = f"coverage.py found no statement to measure in {self._names()} (0 statements)"
        return metric.model_copy(
            update={
                "value": None,
                "status": MetricStatus.UNAVAILABLE,
                "reason": f"{reason}; point `source` at the code the tests exercise",
            }
        )

    def _source_names(self) -> list[str]:
        """What was measured, as the report names it."""
        if self._cov is not None and self._selected_by != "confgate":
            chosen = [
                *(self._cov.get_option("run:source") or []),
                *(self._cov.get_option("run:source_pkgs") or []),
            ]
            named = [self._relative(Path(s)) if Path(s).exists() else s for s in chosen]
            return named or list(self._cov.get_option("run:include") or [])
        return [self._relative(p) for p in self.sources]

    def _relative(self, path: Path) -> str:
        return relative(path, self.root)

    def _names(self) -> str:
        """What is measured, for hints: coverage.py's own selection when it chose."""
        return ", ".join(self._source_names()) or "the measured code"

    def _undecodable_names(self) -> str:
        from pytest_confgate.collect.sources import undecodable_names

        names = ", ".join(undecodable_names(self.root, self.sources)) or "a measured file"
        return (
            f"{_UNDECODABLE}: {names}; rename it "
            "(git, ruff and GitHub cannot show it either)"
        )

    def _undecodable_sources(self, exc: Exception) -> str:
        from pytest_confgate.collect.sources import undecodable_sources

        measured = self._cov.get_data().measured_files()
        folders = [p for p in (self.root / name for name in self._source_names()) if p.is_dir()]
        names = "; ".join(undecodable_sources(self.root, [*self.sources, *folders], measured))
        return (
            f"coverage.py cannot read {names or f'a measured file ({exc})'}; save such a "
            "file as UTF-8, or declare its encoding on its first line (`# -*- coding: latin-1 -*-`)"
        )

    def _failed(self, reason: str) -> EvalMetric:
        details: dict[str, Any] = {"tool": "coverage.py", "source": self._source_names()}
        if self._selected_by != "confgate":
            details["selected_by"] = self._selected_by
        if self._warnings:
            details["warnings"] = list(self._warnings)
        return EvalMetric(
            type="test_coverage", status=MetricStatus.ERROR, reason=reason, details=details
        )

    @contextmanager
    def _catch(self) -> Iterator[None]:
        """Keep coverage.py's warnings as data instead of letting them reach ``warnings``."""
        with warnings.catch_warnings(record=True) as records:
            warnings.simplefilter("always")
            try:
                yield
            finally:
                self._warnings.extend(str(record.message) for record in records)


def _covers_anything(report: dict[str, Any]) -> bool:
    """Whether coverage.py's report counts a covered line or branch, or has nothing to count
    (a project of no statements is judged by ``_without_statements``)."""
    totals = report.get("totals", {})
    if totals.get("covered_lines") or totals.get("covered_branches"):
        return True
    return not (totals.get("num_statements") or totals.get("num_branches"))


def unreadable_data(exc: BaseException, origin: str) -> str | None:
    """Why ``origin``'s coverage data could not be read, when ``exc`` is coverage.py saying so
    (a data file that is not a coverage database, e.g. a corrupt ``.coverage`` that
    ``--cov-append`` adds to); None for any other error."""
    from coverage.exceptions import DataError

    if not isinstance(exc, DataError):
        return None
    return (
        f"{origin} could not read its coverage data: {exc}. Delete the data file (and any "
        "`.coverage.*` beside it) or run without --cov-append"
    )

"""A coverage session's figures: coverage.py's JSON report of what was recorded, made once.

Whatever the engine, the figures are coverage.py's ``json_report`` (its file reporters fed
from the analysis cache, ``analysis``), turned into ``test_coverage`` by ``figures``. No data,
data under names the report does not use, files an engine could not measure, or 0/0 are
errors or unavailable, never 0% or 100%. coverage.py's ``fail_under`` (or pytest-cov's
``--cov-fail-under``) and ``precision`` go into the details, where the policy reads the floor.
"""

from __future__ import annotations

import json
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pytest_confgate.collect.coverage import early_start
from pytest_confgate.collect.coverage.analysis import ANALYSES, RewrittenSource, reporters
from pytest_confgate.collect.coverage.children import ChildProcesses
from pytest_confgate.collect.coverage.figures import Provenance, coverage_metric
from pytest_confgate.collect.coverage.monitor_engine import AVAILABLE as MONITORING
from pytest_confgate.collect.coverage.selection import Selection
from pytest_confgate.collect.namespaces import module_file
from pytest_confgate.models import EvalMetric, MetricStatus

_UNDECODABLE = "coverage.py cannot record a file whose name is not UTF-8"


class Reporting(Selection):
    """The part of ``CoverageSession`` that turns its data into the ``test_coverage`` metric."""

    fail_under: float | None
    branch: bool
    engine: str
    files: dict[str, Any]
    _cache_dir: Path | None
    _error: str | None
    _warnings: list[str]
    _workers: list[str]
    _adopted: str | None
    _include: list[str] | None
    _omit: list[str] | None
    _by_file: dict[str, str]
    _unprobed: dict[str, str]
    _measured: EvalMetric | None
    _children: ChildProcesses | None
    _children_elsewhere: dict[str, Any] | None
    _children_problem: str | None
    _too_early: list[str]
    expected_sources: dict[str, str | None] | None

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
                    # one part: the xdist worker, or confgate gate's test process, by its name
                    who = (f"{self._workers[0]} measured no code" if len(self._workers) == 1
                           else "no xdist worker measured any code")
                    return self._failed(f"{who} in {self._names()}")
                # Flush the tracer's pending data first: with [coverage:paths] remapping,
                # json_report copies the data before it would flush it, and sees none.
                data = self._cov.get_data()
                ran = any(data.lines(name) for name in data.measured_files())
                morfs = [str(p) for p in self.only] if self.only is not None else None
                with reporters(self._cov, self._analysis_cache(), self.expected_sources):
                    self._cov.json_report(
                        morfs=morfs, outfile=str(out), include=self._include, omit=self._omit
                    )
                report = json.loads(out.read_text(encoding="utf-8"))
        except RewrittenSource as exc:
            return self._failed(
                f"{self._relative(Path(exc.filename))} no longer holds what it held before the "
                "tests ran (code of the change rewrote it during the run): its coverage would be "
                "read from what the run left, not from the change"
            )
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
                + self._installed_copies()
            )
        return self._build(report, weight, time.perf_counter() - began)

    def _installed_copies(self) -> str:
        """Where the tests took the measured packages from instead, when that is elsewhere (an
        installed copy in site-packages, tox's way), and what to do about it."""
        import sys

        found = []
        for folder in self.sources if self._selected_by == "confgate" else []:
            module = sys.modules.get(folder.name)
            where = module_file(module)
            if folder.is_dir() and isinstance(where, str) and not Path(where).is_relative_to(
                    folder.resolve()):
                found.append(f"{folder.name} from {Path(where).parent}")
        if not found:
            return ""
        return (f"; they imported {', '.join(found)}, an installed copy: install the project "
                "in editable mode (pip install -e .), or set coverage.py's `source` to the "
                "package names with `[paths]` mapping site-packages to your source folder")

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
        elif self._children_elsewhere is not None:
            extra["child_processes"] = self._children_elsewhere
        if self._too_early:
            extra["imported_before_start"] = list(self._too_early)
            extra["run_instead"] = f"{early_start.RUN_INSTEAD} [the same pytest arguments]"
        details = {**metric.details, **extra, **self._report_settings()}
        return self._without_statements(metric.model_copy(update={"details": details}))

    def _report_settings(self) -> dict[str, Any]:
        """coverage.py's ``fail_under`` (or pytest-cov's ``--cov-fail-under``), the floor when
        the gate's configuration sets none, and ``precision``, how its figure is shown and
        rounded before it is compared with that floor (``gate.policy``)."""
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

"""``test_coverage`` from coverage.py's API, traced in the pytest process itself.

Tracing starts before conftest files are imported so import-time lines of the measured code
count, as under ``coverage run -m pytest``. Figures come from coverage.py's own JSON report,
so they are exactly the numbers ``coverage json`` would print. Coverage's warnings are caught
and kept in ``details`` (a project with ``filterwarnings = error`` must not abort on them).
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

from pytest_confgate.collect.line_probes import LineProbes
from pytest_confgate.models import EvalMetric, MetricStatus

_TOTAL_KEYS = (
    "covered_lines",
    "num_statements",
    "missing_lines",
    "excluded_lines",
    "num_branches",
    "covered_branches",
    "missing_branches",
    "num_partial_branches",
)


class CoverageSession:
    """One coverage.py measurement of the given sources: ``start``, ``stop``, ``metric``."""

    def __init__(
        self,
        root: Path,
        sources: list[Path],
        *,
        branch: bool = False,
        only: list[Path] | None = None,
    ) -> None:
        self.root = root
        self.sources = sources
        self.branch = branch
        self.only = only
        """Pull-request mode: trace and report just these files (the changed ones)."""
        self._cov: Any = None
        self._warnings: list[str] = []
        self._error: str | None = None
        self._started = 0.0
        self._workers: list[str] = []
        self._adopted: str | None = None
        self._probes: LineProbes | None = None
        self.engine = "coverage.py"
        """``line probes`` when pull-request mode measured without a tracer."""
        self.files: dict[str, Any] = {}
        """coverage.py's per-file figures of the last ``metric`` call (for patch coverage)."""

    def start(self) -> None:
        """Begin measuring; a failure is remembered and reported as an error metric later.

        Pull-request mode with line coverage only compiles the changed modules with probes
        instead of starting a tracer (``line_probes``): the rest of the suite runs at full
        speed. A changed module imported already, or branch coverage, needs the tracer.
        """
        if not self._create():
            return
        if self.only is not None and not self.branch:
            probes = LineProbes(self.only)
            missed = probes.missed_modules()
            if not missed:
                probes.install()
                self._probes, self.engine = probes, "line probes"
                self._started = time.perf_counter()
                return
            self._warnings.append(
                "traced with coverage.py: imported before the gate started: " + ", ".join(missed)
            )
        with self._catch():
            self._cov.start()
        self._started = time.perf_counter()

    def _create(self) -> bool:
        if self.only is not None and not self.only:
            self._error = None  # nothing changed that coverage could measure
            return False
        if not self.sources:
            self._error = (
                f"no source code found to measure under {self.root}; "
                "set `source:` in the confgate configuration"
            )
            return False
        try:
            import coverage

            dirs = [str(p) for p in self.sources if p.is_dir()]
            modules = [p.stem for p in self.sources if p.is_file()]
            with self._catch():
                if self.only is not None:
                    # Tracing only what changed is what makes a pull-request gate cheap.
                    self._cov = coverage.Coverage(
                        include=[str(p) for p in self.only], branch=self.branch, data_file=None
                    )
                else:
                    self._cov = coverage.Coverage(
                        source=dirs + modules, branch=self.branch, data_file=None
                    )
        except Exception as exc:  # coverage.py raises plain exceptions for bad configs too
            self._error = f"coverage.py could not start: {exc}"
            self._cov = None
            return False
        return True

    def stop(self) -> None:
        """Stop measuring; safe to call twice or when start failed."""
        if self._probes is not None:
            probes, self._probes = self._probes, None
            probes.uninstall()
            if self._cov is not None:
                self._cov.get_data().add_lines(probes.lines())
        elif self._cov is not None:
            with self._catch():
                self._cov.stop()

    def discard(self) -> None:
        """Stop and forget: this process turned out not to be the one that measures."""
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

    def combine(self, parts: dict[str, bytes], missing: list[str]) -> None:
        """Merge the data of every xdist worker; a missing part fails closed, never shrinks."""
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
        self._workers = sorted(parts)

    def adopt(self, cov: Any, origin: str) -> None:
        """Report from a measurement someone else ran (pytest-cov) instead of tracing twice."""
        self._adopted = origin
        measured_branches = bool(getattr(getattr(cov, "config", None), "branch", False))
        if self.branch and not measured_branches:
            self._error = (
                f"branch coverage is configured but {origin} measured lines only; "
                "add --cov-branch (or set branch = true in the coverage configuration)"
            )
            return
        self.branch = measured_branches
        self._cov = cov

    def files_by_root(self) -> dict[str, Any]:
        """coverage.py's per-file figures keyed by rootdir-relative POSIX path."""
        return {self._relative(Path(name)): data for name, data in self.files.items()}

    def metric(self, *, weight: float = 1.0) -> EvalMetric:
        """Coverage of the run as an ``EvalMetric``; no data is an error, never 0% or 100%."""
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
        if self._cov is None:
            return self._failed(self._error or "coverage.py did not run")
        from coverage.exceptions import CoverageException

        began = time.perf_counter()
        try:
            with self._catch(), tempfile.TemporaryDirectory(prefix="confgate-cov-") as tmp:
                out = Path(tmp) / "coverage.json"
                if self._workers and not self._cov.get_data().measured_files():
                    return self._failed("no xdist worker measured any code in " + self._names())
                # Flush the tracer's pending data first: with [coverage:paths] remapping,
                # json_report copies the data before it would flush it, and sees none.
                self._cov.get_data()
                morfs = [str(p) for p in self.only] if self.only is not None else None
                self._cov.json_report(morfs=morfs, outfile=str(out), include=self._include())
                report = json.loads(out.read_text(encoding="utf-8"))
        except CoverageException as exc:
            return self._failed(f"coverage.py: {exc} (did the tests import {self._names()}?)")
        except UnicodeEncodeError:  # coverage.py stores file names as UTF-8 text
            return self._failed(self._undecodable_names())
        self.files = report.get("files", {})
        no_data = any(
            "no-data-collected" in w or "No data was collected" in w for w in self._warnings
        )
        if no_data and self.only is None:
            # Unexecuted files would still be reported at 0%: a figure, but not evidence.
            return self._failed(
                f"coverage.py collected no data: the tests never ran code in {self._names()}"
            )
        return self._build(report, weight, time.perf_counter() - began)

    def _build(self, report: dict[str, Any], weight: float, elapsed: float) -> EvalMetric:
        totals = report.get("totals", {})
        covered = totals.get("covered_lines", 0) + totals.get("covered_branches", 0)
        total = totals.get("num_statements", 0) + totals.get("num_branches", 0)
        details: dict[str, Any] = {key: totals[key] for key in _TOTAL_KEYS if key in totals}
        details.update(
            tool="coverage.py",
            version=report.get("meta", {}).get("version"),
            duration_s=round(elapsed, 6),
            branch=self.branch,
            percent_covered=totals.get("percent_covered"),
            engine=self.engine,
            files_measured=len(report.get("files", {})),
            source=[self._relative(p) for p in self.sources],
            missing=self._missing(report),
        )
        if self._workers:
            details["workers"] = self._workers
        if self._adopted:
            details["measured_by"] = self._adopted
        if self._warnings:
            details["warnings"] = list(self._warnings)
        if not total and self.only is not None:  # a change that adds no statement
            details["note"] = "the changed Python files hold no statement"
            return EvalMetric(type="test_coverage", value=1.0, weight=weight, details=details)
        if not total:  # 0/0 is no evidence, never "100.00%"
            reason = f"coverage.py found no statement to measure in {self._names()} (0 statements)"
            return EvalMetric(
                type="test_coverage",
                weight=weight,
                status=MetricStatus.UNAVAILABLE,
                reason=f"{reason}; point `source` at the code the tests exercise",
                details=details,
            )
        return EvalMetric(
            type="test_coverage",
            value=covered / total,
            weight=weight,
            status=MetricStatus.OK,
            details=details,
        )

    def _include(self) -> list[str] | None:
        """Only our sources count, even when the measurement (pytest-cov's) covered more."""
        if not self._adopted:
            return None
        return [f"{p}/*" if p.is_dir() else str(p) for p in self.sources]

    def _missing(self, report: dict[str, Any]) -> dict[str, list[int]]:
        """Missing lines per file, relative paths, for reports that point at the gaps."""
        result = {}
        for name, data in sorted(report.get("files", {}).items()):
            if data.get("missing_lines"):
                result[self._relative(Path(name))] = data["missing_lines"]
        return result

    def _relative(self, path: Path) -> str:
        # coverage.py names files relative to the current directory.
        absolute = path if path.is_absolute() else Path.cwd() / path
        try:
            return absolute.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return path.as_posix()

    def _names(self) -> str:
        return ", ".join(self._relative(p) for p in self.sources) or "the measured code"

    def _undecodable_names(self) -> str:
        from pytest_confgate.collect.sources import undecodable_names

        names = ", ".join(undecodable_names(self.root, self.sources)) or "a measured file"
        return (
            f"coverage.py cannot record a file whose name is not UTF-8: {names}; rename it "
            "(git, ruff and GitHub cannot show it either)"
        )

    def _failed(self, reason: str) -> EvalMetric:
        details: dict[str, Any] = {"tool": "coverage.py", "source": self._names()}
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

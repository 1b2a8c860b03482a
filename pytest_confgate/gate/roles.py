"""Which share of the gate one pytest process does, serially or under pytest-xdist.

- ``serial``: everything, in this process.
- ``controller``: runs lint and security, collects the test reports, combines every worker's
  coverage data and decides.
- ``worker``: only measures coverage, and hands its data back through ``workeroutput``.

A worker cannot be told apart from a controller nested in someone else's xdist worker until
``pytest_configure`` (both see ``PYTEST_XDIST_WORKER`` at start-up), so a process that may be a
worker starts measuring provisionally and ``settle`` decides. With pytest-cov active
(``--cov``) its measurement is adopted instead of tracing twice, in every process: a second
tracer would either crash coverage.py or pause pytest-cov's, so the figures are pytest-cov's.

pytest itself stays in ``plugin.py``: the plugin reads pytest's objects and passes plain facts.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_confgate.gate.engine import GateRun

SERIAL, CONTROLLER, WORKER = "serial", "controller", "worker"
WORKER_KEY = "confgate_coverage"
"""The ``workeroutput`` key a worker's coverage data travels under."""
ENGINE_KEY = "confgate_coverage_engine"
"""... and the key naming the engine that recorded it (line probes, coverage.py or both)."""
AUDIT_KEY = "confgate_runtime_audit"
"""... and what the run-time audit saw there (``collect.runtime_audit``)."""
CACHE_KEY = "confgate_cache_written"
"""... and the cache entries it wrote, which the controller's sweep keeps (``cache_trust``)."""


def distributed(options: Any) -> bool:
    """Whether pytest-xdist was asked to distribute this run (``-n``/``--dist``)."""
    workers = getattr(options, "numprocesses", None)
    return workers not in (None, 0, "0") or getattr(options, "dist", "no") not in ("no", None)


def pytest_cov_active(options: Any, cov_plugin: object | None = None) -> bool:
    """Whether pytest-cov measures this run (``--cov`` given and not ``--no-cov``).

    ``cov_plugin`` is pytest-cov's plugin if it registered already: it turns a bare ``--cov``
    (``cov_source == [True]``) into ``None`` as it starts, so the option alone can no longer
    tell once pytest-cov's start-up ran before ours.
    """
    if getattr(options, "no_cov", False):
        return False
    if cov_plugin is not None and not getattr(cov_plugin, "_disabled", False):
        return True
    return bool(getattr(options, "cov_source", None))


class ProcessRole:
    """This process's role and the coverage parts it gathered from workers."""

    def __init__(self, run: GateRun, name: str, *, borrow_cov: bool) -> None:
        self.run = run
        self.name = name
        self.borrow_cov = borrow_cov
        self._parts: dict[str, bytes] = {}
        self._engines: dict[str, dict[str, Any]] = {}
        self._missing: list[str] = []

    @classmethod
    def at_startup(
        cls,
        run: GateRun,
        options: Any,
        environ: Mapping[str, str],
        cov_plugin: object | None = None,
    ) -> ProcessRole:
        """The provisional role, from the command line and xdist's worker variable."""
        name = SERIAL
        if distributed(options):
            name = WORKER if environ.get("PYTEST_XDIST_WORKER") else CONTROLLER
        return cls(run, name, borrow_cov=pytest_cov_active(options, cov_plugin))

    @property
    def decides(self) -> bool:
        """Whether this process writes the report (the controller, or a serial run)."""
        return self.name != WORKER

    def begin(self) -> None:
        """Start what this (provisional) role measures.

        Coverage first: a cold run's compile-ahead splits its files with a helper on the
        other core (``collect.coverage.ahead``), and the tools have the whole test run to finish.
        """
        if self.name != CONTROLLER and not self.borrow_cov:
            self.run.start_coverage()
        if self.name != WORKER:
            self.run.start_tools()

    def settle(self, *, is_worker: bool, distributing: bool) -> None:
        """Correct the provisional role once xdist has said who is a worker."""
        if self.name == WORKER and not is_worker:
            self.run.discard_coverage()  # a controller nested inside someone's xdist worker
            self.name = CONTROLLER
            self.run.start_tools()
        if self.name == CONTROLLER and not distributing:
            self.name = SERIAL  # xdist stood down (e.g. --pdb): measure here after all
            if not self.borrow_cov:
                self.run.start_coverage()

    def worker_finished(self, worker: str, output: Mapping[str, Any], failed: bool) -> None:
        """Keep one worker's coverage data; a worker that died is named, never ignored."""
        from pytest_confgate.collect import cache_trust
        from pytest_confgate.collect.runtime_audit import RuntimeFinding

        cache_trust.trust(output.get(CACHE_KEY) or [])
        seen = [RuntimeFinding.from_dict(raw) for raw in output.get(AUDIT_KEY) or []]
        self.run.audit += [finding for finding in seen if finding is not None]
        part = output.get(WORKER_KEY)
        if failed or part is None:
            self._missing.append(worker)
        else:
            self._parts[worker] = part
            engine = output.get(ENGINE_KEY)
            if isinstance(engine, dict):
                self._engines[worker] = engine

    def hand_back(self, output: MutableMapping[str, Any] | None) -> None:
        """As a worker: put this process's coverage data where the controller finds it."""
        from pytest_confgate.collect import cache_trust

        payload = None if self.borrow_cov else self.run.coverage_payload()
        if output is not None:
            output[CACHE_KEY] = [list(entry) for entry in cache_trust.written()]
            output[AUDIT_KEY] = [finding.as_dict() for finding in self.run.audit]
        if output is not None and payload is not None:
            output[WORKER_KEY] = payload
            output[ENGINE_KEY] = self.run.coverage_engine()

    def gather(self, pytest_cov: object | None, failed: str | None = None) -> None:
        """As the deciding process: the coverage that counts, once the tests are over.

        ``pytest_cov`` is pytest-cov's controller object when it measured this run;
        ``failed`` says why its data could not be read, when it could not.
        """
        if self.borrow_cov:
            cov = getattr(pytest_cov, "cov", None)
            if cov is not None:
                self.run.adopt_coverage(cov, "pytest-cov", failed)
        elif self.name == CONTROLLER:
            self.run.combine_coverage(self._parts, self._missing, self._engines)

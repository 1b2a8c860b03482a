"""Process roles under pytest-xdist: who measures, who decides, and how a role settles."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from pytest_confgate.gate.roles import (
    AUDIT_KEY,
    CACHE_KEY,
    CONTROLLER,
    ENGINE_KEY,
    SERIAL,
    WORKER,
    WORKER_KEY,
    ProcessRole,
    distributed,
    pytest_cov_active,
)


class RecordingRun:
    """Stands in for ``GateRun``: records which measurements a role starts and gathers."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.combined: tuple[dict[str, bytes], list[str]] | None = None
        self.engines: dict[str, dict[str, Any]] | None = None
        self.audit: list[Any] = []  # run-time audit findings workers hand back

    def start_tools(self) -> None:
        self.calls.append("tools")

    def start_coverage(self) -> None:
        self.calls.append("coverage")

    def discard_coverage(self) -> None:
        self.calls.append("discard")

    def coverage_payload(self) -> bytes | None:
        return b"data"

    def combine_coverage(
        self, parts: dict[str, bytes], missing: list[str], engines: dict[str, Any]
    ) -> None:
        self.combined = (dict(parts), list(missing))
        self.engines = dict(engines)

    def coverage_engine(self) -> dict[str, Any]:
        return {"engine": "line probes", "engine_by_file": {}}

    def adopt_coverage(self, cov: object, origin: str, failed: str | None = None) -> None:
        self.calls.append(f"adopt:{origin}")


def _role(name: str, *, borrow_cov: bool = False) -> tuple[ProcessRole, RecordingRun]:
    run = RecordingRun()
    return ProcessRole(run, name, borrow_cov=borrow_cov), run  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "environ", "expected"),
    [
        (SimpleNamespace(numprocesses=None, dist="no"), {}, SERIAL),
        (SimpleNamespace(numprocesses=2, dist="load"), {}, CONTROLLER),
        (SimpleNamespace(numprocesses=2, dist="load"), {"PYTEST_XDIST_WORKER": "gw0"}, WORKER),
        (SimpleNamespace(numprocesses=0, dist="no"), {"PYTEST_XDIST_WORKER": "gw0"}, SERIAL),
    ],
    ids=["serial", "controller", "worker", "nested-serial"],
)
def test_the_startup_role_comes_from_the_command_line_and_xdist(
    options: Any, environ: dict[str, str], expected: str
) -> None:
    role = ProcessRole.at_startup(RecordingRun(), options, environ)  # type: ignore[arg-type]
    assert role.name == expected
    assert role.decides is (expected != WORKER)


def test_a_serial_run_starts_coverage_then_the_tools_in_this_process() -> None:
    """Coverage first: a cold compile-ahead gets the other core before ruff and bandit."""
    role, run = _role(SERIAL)
    role.begin()
    assert run.calls == ["coverage", "tools"]


def test_a_worker_only_measures_and_a_controller_only_runs_the_tools() -> None:
    worker, worker_run = _role(WORKER)
    worker.begin()
    controller, controller_run = _role(CONTROLLER)
    controller.begin()
    assert worker_run.calls == ["coverage"]
    assert controller_run.calls == ["tools"]


def test_a_provisional_worker_that_is_not_one_becomes_the_controller() -> None:
    role, run = _role(WORKER)
    role.begin()
    role.settle(is_worker=False, distributing=True)
    assert role.name == CONTROLLER
    assert run.calls == ["coverage", "discard", "tools"]


def test_a_controller_whose_xdist_stood_down_measures_here_after_all() -> None:
    role, run = _role(CONTROLLER)
    role.begin()
    role.settle(is_worker=False, distributing=False)
    assert role.name == SERIAL
    assert run.calls == ["tools", "coverage"]


def test_a_dead_worker_is_named_and_never_shrinks_the_denominator() -> None:
    role, run = _role(CONTROLLER)
    role.worker_finished("gw0", {WORKER_KEY: b"a"}, failed=False)
    role.worker_finished("gw1", {}, failed=False)
    role.worker_finished("gw2", {WORKER_KEY: b"c"}, failed=True)
    role.gather(None)
    assert run.combined == ({"gw0": b"a"}, ["gw1", "gw2"])


def test_a_worker_hands_its_data_back_unless_pytest_cov_measures() -> None:
    own, _ = _role(WORKER)
    output: dict[str, Any] = {}
    own.hand_back(output)
    borrowed, _ = _role(WORKER, borrow_cov=True)
    untouched: dict[str, Any] = {}
    borrowed.hand_back(untouched)
    # Cache entries the worker wrote (this process's, whatever ran in it before) are vouched
    # for to the controller; the rest is this worker's own.
    assert isinstance(output.pop(CACHE_KEY), list)
    assert output == {
        WORKER_KEY: b"data",
        ENGINE_KEY: {"engine": "line probes", "engine_by_file": {}},
        AUDIT_KEY: [],  # what the run-time audit saw in the worker
    }
    assert set(untouched) <= {AUDIT_KEY, CACHE_KEY}  # no coverage data: pytest-cov has it


def test_the_controller_hears_which_engine_each_worker_used() -> None:
    role, run = _role(CONTROLLER)
    note = {"engine": "line probes", "engine_by_file": {}}
    role.worker_finished("gw0", {WORKER_KEY: b"a", ENGINE_KEY: note}, failed=False)
    role.worker_finished("gw1", {WORKER_KEY: b"b"}, failed=False)  # an older worker: no note
    role.gather(None)
    assert run.engines == {"gw0": note}


def test_pytest_cov_measurement_is_adopted_instead_of_tracing_twice() -> None:
    role, run = _role(SERIAL, borrow_cov=True)
    role.begin()
    role.gather(SimpleNamespace(cov=object()))
    assert run.calls == ["tools", "adopt:pytest-cov"]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (SimpleNamespace(cov_source=["src"], no_cov=False), True),
        (SimpleNamespace(cov_source=["src"], no_cov=True), False),
        (SimpleNamespace(cov_source=None), False),
        (SimpleNamespace(), False),
    ],
    ids=["cov", "no-cov", "unset", "no-pytest-cov"],
)
def test_pytest_cov_is_active_only_with_cov_and_without_no_cov(
    options: Any, expected: bool
) -> None:
    assert pytest_cov_active(options) is expected
    assert distributed(SimpleNamespace()) is False


def test_a_bare_cov_is_seen_after_pytest_cov_has_rewritten_the_option() -> None:
    """pytest-cov turns ``--cov`` (``[True]``) into ``None`` when its start-up runs first."""
    rewritten = SimpleNamespace(cov_source=None, no_cov=False)
    assert pytest_cov_active(rewritten, SimpleNamespace(_disabled=False)) is True
    assert pytest_cov_active(rewritten, SimpleNamespace(_disabled=True)) is False
    assert pytest_cov_active(SimpleNamespace(cov_source=[True], no_cov=False)) is True
    no_cov = SimpleNamespace(cov_source=None, no_cov=True)
    assert pytest_cov_active(no_cov, SimpleNamespace(_disabled=False)) is False

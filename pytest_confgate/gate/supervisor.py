"""``confgate gate``: the tests run in a child process; the verdict is made outside it (issue 34).

The change's code runs in the test process, and there it can do anything that process can:
rewrite the report it wrote, print a digest of its own, silence the gate's output, end with
``os._exit(0)``. So the evidence the verdict rests on is kept here, in a process the change's
code never runs in:

1. before the tests start: the configuration that judges, the tier, the provenance (a
   ``GateRun`` of our own that runs no plugin), and a pipe (``gate.channel``) whose write end
   the child inherits;
2. the child (``child_command``: ``python -m pytest ... --confgate``, under ``subreaper``)
   streams each test report as it happens; its output is passed on line by line. Beside it,
   ruff and bandit run in our own helper (``gate.background``), with caches only this
   process reads and vouches for (``collect.cache_trust``); the child runs neither;
3. after the child *and every process it started* ended (the subreaper kills what is left):
   a report file at the report path (only we write there), a missing session end, a closed
   or flooded channel are each a failing condition;
4. the child leaves its report and its raw coverage data (the lines and arcs it ran) at
   private paths of our choosing, their digests sent with its session end. We analyse the
   data with coverage.py here as soon as that end arrives, while the child winds down
   (statements, branches, exclusions, figures), reading each measured file only as its bytes
   were before the go (``_take_over``); after every process ended we ask the judge, run the
   differential run against our own per-test tally, merge into ``test_integrity`` the
   run-time audit's findings the child streamed as they were recorded (placed against the
   change's files settled in step 1: the child's own copy of that list is the change's to
   edit), replace the child's outcomes and those metrics, and let the policy decide again
   (``gate.supervised``); we write the report and return its digest. With no usable report
   from the child, the failing report still lists those findings.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import selectors
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_confgate import subreaper
from pytest_confgate.gate.child import ENV_FD, ENV_GO
from pytest_confgate.gate.source_watch import SourceWatch
from pytest_confgate.processes import INHERITED_PYTEST_STATE

if TYPE_CHECKING:  # imported once the child started: its start-up and ours overlap
    from pytest_confgate.gate.channel import StreamTally
    from pytest_confgate.gate.engine import GateRun
    from pytest_confgate.models import EvalMetric, GateReport

DIGEST_ENV = "CONFGATE_REPORT_DIGEST"
"""Removed from the child's environment: only the supervisor prints the report's digest."""
_CHUNK = 65536
_LONGEST_LINE = 65536
_IDLE_S = 1.0
"""How often a quiet run checks that the intermediary is still there (no cost while busy)."""
_PR_SET_DUMPABLE = 4
STATE_DIR = ".confgate"
"""``gate.engine.STATE_DIR``, spelled here so nothing heavy is imported before the child."""


def child_command(pytest_args: Sequence[str]) -> list[str]:
    """How the test process is started: the one place to change it.

    ``gate.child`` imports the gate's own modules, waits for the supervisor's go, then runs
    pytest as ``python -m pytest`` would."""
    return [sys.executable, "-m", "pytest_confgate.gate.child", *pytest_args]


@dataclass
class Supervised:
    """What ``supervise`` made: the report (None when none could be built), its digest, the
    test process's exit status and the problems seen."""

    report: GateReport | None
    digest: str | None
    child_status: int
    problems: list[str] = field(default_factory=list)


def supervise(
    root: Path,
    pytest_args: Sequence[str],
    environ: Mapping[str, str],
    output: Callable[[bytes], None],
    settle: Callable[[], tuple[GateRun, Path]],
) -> Supervised:
    """Run the tests in ``root``; ``settle`` gives the run and where its report goes.

    The child starts first and imports what it needs; it waits (``gate.child``) until
    ``settle`` has fixed the configuration, tier and provenance and removed any old report,
    so both start-ups overlap and no test or conftest runs before that. ``output`` receives
    the child's output one line at a time (a line that reads as our digest line comes with
    ``| `` before it). An error in ``settle`` ends the child and is raised."""
    private = _Private(root / STATE_DIR / "supervised" / secrets.token_hex(8))
    args = [*pytest_args, "--confgate", f"--confgate-report={private.report}",
            f"--confgate-coverage-data={private.coverage}"]
    with contextlib.suppress(OSError):
        private.folder.parent.mkdir(parents=True, exist_ok=True)
    child = _Child(args, root, environ)
    try:
        run, report_path = settle()
    except BaseException:
        child.stop()
        raise
    from pytest_confgate.collect import cache_trust

    # Entries changed once this process started are read only if it (or its helper) wrote them.
    cache_trust.begin()
    try:
        before = _measured_code(run)
        run.expected_sources = {os.path.realpath(path): digest for path, digest in before.items()}
        watch = SourceWatch.arm(root, _linted(run, before), _site_packages())  # before the go
        handed: list[_HandedOver] = []
        # ruff and bandit run here, beside the tests, with caches only this process vouches for
        stream, status = child.follow(
            output, then=lambda: _beside_the_tests(run, watch),
            at_end=lambda ended: handed.append(_take_over(run, ended, private)))
        stream.problems.extend(_rewritten_sources(run, root, before))
        stream.problems.extend(_written_while_linted(watch))
        return _finish(run, stream, status, private, report_path, handed[0] if handed else None)
    finally:
        run.close()
        private.discard()
        run.sweep_evidence_caches()
        cache_trust.end()


def _measured_code(run: GateRun) -> dict[Path, str | None]:
    """Each ``.py`` file under the sources, by the sha256 of its bytes (None: unreadable).

    Read by this process, before the go and again after the run: no git command runs in
    between that the run could have reconfigured (a clean filter or an fsmonitor program in
    ``.git/config`` runs inside ``git add`` and could show git the old bytes)."""
    import hashlib

    found: dict[Path, str | None] = {}
    for source in run.sources:
        source = source.resolve()
        files = [source] if source.is_file() else source.rglob("*.py")
        for path in files:
            if path.suffix != ".py" or path.is_symlink():
                continue
            try:
                found[path] = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                found[path] = None
    return found


def _rewritten_sources(run: GateRun, root: Path, before: dict[Path, str | None]) -> list[str]:
    """The measured code the run rewrote or removed: coverage.py's analysis (statements,
    branches) and the tools' findings are read from those files after the run, so code of the
    change that empties an untested module at exit would make it look covered. Files the run
    only added count as coverage.py would count them."""
    after = _measured_code(run)
    measured = sorted(str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
                      for path, digest in before.items() if after.get(path) != digest)
    if not measured:
        return []
    shown = ", ".join(measured[:5]) + (f" and {len(measured) - 5} more" if len(measured) > 5
                                       else "")
    return [f"the run rewrote or removed measured code: {shown}; its coverage and findings "
            "would be read from what the run left, not from the change (a test must not "
            "write into the code it measures)"]


def _linted(run: GateRun, measured: dict[Path, str | None]) -> list[Path]:
    """The measured files ruff and bandit read (the sources without their tests)."""
    checked = [source.resolve() for source in run.checked_sources]
    return [path for path in measured
            if any(path == source or path.is_relative_to(source) for source in checked)]


def _site_packages() -> list[Path]:
    """Where this interpreter's packages live: what starts bandit (``python -I``) reads."""
    import site
    import sysconfig

    found = {Path(p) for p in site.getsitepackages()}
    found |= {Path(sysconfig.get_paths()[key]) for key in ("purelib", "platlib")}
    return sorted(found)


def _written_while_linted(watch: SourceWatch | None) -> list[str]:
    """A file ruff or bandit read that the run wrote while they read it (put back since, or
    its digest after the run would already say so)."""
    written = watch.stop() if watch is not None else []
    if not written:
        return []
    shown = ", ".join(written[:5]) + (f" and {len(written) - 5} more" if len(written) > 5
                                      else "")
    return [f"the run wrote {shown} while ruff and bandit read it (or while bandit's "
            "interpreter started): their findings would be of what the run wrote, not of the "
            "change (a test must not write into the code, the settings or the packages the "
            "gate reads)"]


def _beside_the_tests(run: GateRun, watch: SourceWatch | None = None) -> None:
    """While the tests run: start ruff and bandit (``watch`` listens until they are done),
    and import what the report needs after them (coverage.py's analysis, the report
    writers), off the path that follows the run."""
    run.start_tools(TOOL_KINDS)
    if watch is not None:
        watch.until(run.tools_done)
    run.analyse_change_beside()
    import coverage.jsonreport  # noqa: F401 - warmed, see above

    import pytest_confgate.collect.coverage.session
    import pytest_confgate.report.json_report
    import pytest_confgate.report.writers  # noqa: F401


TOOL_KINDS = ("lint_score", "security_score")
"""The background tools ``confgate gate`` runs itself (the test process runs none of them)."""
MAX_COVERAGE_BYTES = 1024 * 1024 * 1024
"""coverage.py's compressed data of a very large suite is tens of MiB: past this it is a flood."""
CHILD_PART = "the test process"
"""How the coverage data the test process handed over is named (``combine_coverage``)."""


@dataclass(frozen=True)
class _Private:
    """Where the test process leaves its report and its coverage data: a folder of the
    supervisor's choosing, read once and removed."""

    folder: Path

    @property
    def report(self) -> Path:
        return self.folder.with_suffix(".json")

    @property
    def coverage(self) -> Path:
        return self.folder.with_suffix(".coverage")

    def discard(self) -> None:
        for path in (self.report, self.coverage):
            with contextlib.suppress(OSError):
                path.unlink()
        with contextlib.suppress(OSError):
            self.folder.parent.rmdir()


@dataclass
class _HandedOver:
    """What the test process's session end handed over, read and analysed at once."""

    child: GateReport | None
    unsaved: str | None
    problems: list[str]


def _take_over(run: GateRun, stream: StreamTally, private: _Private) -> _HandedOver:
    """At the test process's session end: its report and coverage data are final (their
    digests came with the end), so they are read, checked and coverage.py's analysis made
    while that process winds down (its interpreter's shutdown takes a second or more on a
    large suite). The analysis reads each measured file only as it was before the go
    (``GateRun.expected_sources``), so code of the change still running cannot steer it."""
    problems: list[str] = []
    child = (_load_child(private.report, problems)
             if _unchanged(private.report, stream, "report", problems) else None)
    if child is not None and not _unchanged(private.coverage, stream, "coverage", problems):
        child = None
    unsaved = _combine_coverage(run, child, private.coverage) if child is not None else None
    if child is not None:
        with contextlib.suppress(Exception):  # measured again, and said, with the metrics
            run.measure_coverage()
    return _HandedOver(child, unsaved, problems)


def _finish(run: GateRun, stream: StreamTally, status: int, private: _Private,
            report_path: Path, handed: _HandedOver | None = None) -> Supervised:
    import hashlib

    from pytest_confgate.report.json_report import working_tree, write_json_report

    problems = list(stream.problems)
    if status < 0:
        problems.append(f"the test process (or the intermediary that watches it) was ended by "
                        f"signal {-status}: the run is not whole")
    if report_path.is_symlink() or report_path.exists():
        problems.append(f"the test process left a file at the report path ({report_path.name}) "
                        "that only the supervisor writes: code of the change wrote it")
        with contextlib.suppress(OSError):
            report_path.unlink()
    if handed is None:  # no session end came: nothing was handed over
        handed = _take_over(run, stream, private)
    else:  # read at the session end; a rewrite since is still the change's doing, and said
        for name, path in (("report", private.report), ("coverage", private.coverage)):
            if handed.child is not None and name in stream.handed_over:
                _unchanged(path, stream, name, handed.problems)
    problems += handed.problems
    report = _decide(run, handed.child, handed.unsaved, stream, problems)
    subreaper.end_descendants()  # what the differential run or the replay left running
    write_json_report(report, report_path, within=working_tree(run.root))
    digest = hashlib.sha256(report_path.read_bytes()).hexdigest()
    return Supervised(report, digest, status, problems)


class _Child:
    """The test process under the subreaper: started at once, told to go, followed."""

    def __init__(self, args: list[str], root: Path, environ: Mapping[str, str]) -> None:
        self._read, write_end = os.pipe()
        go_read, self._go = os.pipe()
        env = {k: v for k, v in environ.items()
               if k != DIGEST_ENV and k not in INHERITED_PYTEST_STATE}
        env.update({ENV_FD: str(write_end), ENV_GO: str(go_read)})
        _harden()
        fds = (write_end, go_read)
        try:
            self.proc = subprocess.Popen(
                subreaper.contained(child_command(args), pass_fds=fds),
                cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                pass_fds=fds, start_new_session=True,
            )
        finally:
            os.close(write_end)
            os.close(go_read)
        self._started = time.perf_counter()

    def stop(self) -> None:
        """The run was not settled: no test runs (the go pipe closes unsaid)."""
        os.close(self._go)
        os.close(self._read)
        subreaper.stop(self.proc)
        subreaper.end_descendants()
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def follow(self, output: Callable[[bytes], None],
               then: Callable[[], None] = lambda: None,
               at_end: Callable[[StreamTally], None] | None = None) -> tuple[StreamTally, int]:
        """Let the tests start, then call ``then``; read until the child and all it started
        have ended. ``at_end`` is called once, as soon as the test process's session end
        arrives (an error in it only means the work is done after the run instead)."""
        from pytest_confgate.gate.channel import StreamTally

        stream = StreamTally()
        os.write(self._go, b"g")
        os.close(self._go)
        try:
            then()
            _pump(self.proc, self._read, stream, _Lines(output), at_end)
            status = self.proc.wait()
            # Orphans of a killed intermediary came to us; our own helpers (ruff and bandit,
            # the change's analysis) may still be at work, in our session, and are spared.
            subreaper.end_descendants(sparing_our_session=True)
        except BaseException:
            subreaper.stop(self.proc)
            subreaper.end_descendants()
            raise
        finally:
            os.close(self._read)
        stream.close()
        stream.duration_s = time.perf_counter() - self._started
        return stream, status


def _harden() -> None:
    """Before the child exists (Linux): orphans of the run come to us, never to init, and
    our memory and descriptors are closed to a process of the same user without
    ``CAP_SYS_PTRACE`` (not dumpable: ``/proc/PID/mem`` and ``/proc/PID/fd`` refuse it).
    See docs/security.md for what root or ``sudo`` on the runner still reaches."""
    if not subreaper.become_subreaper():
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def _pump(proc: subprocess.Popen[bytes], channel: int, stream: StreamTally,
          lines: _Lines, at_end: Callable[[StreamTally], None] | None = None) -> None:
    """Read the child's output and the channel until both reach end of file: O(bytes).

    A flooded channel is closed at once: the child's writes then fail instead of blocking."""
    assert proc.stdout is not None  # noqa: S101 - PIPE was asked for
    out = proc.stdout.fileno()
    with selectors.DefaultSelector() as selector:
        selector.register(out, selectors.EVENT_READ)
        selector.register(channel, selectors.EVENT_READ)
        open_fds = {out, channel}
        while open_fds:
            ready = selector.select(_IDLE_S)
            if not ready and proc.poll() is not None:
                # The intermediary is gone (killed?) and something it left holds our pipes.
                subreaper.end_descendants(sparing_our_session=True)
            for key, _ in ready:
                fd = int(key.fd)
                data = os.read(fd, _CHUNK)
                if fd == out and data:
                    lines.feed(data)
                    continue
                if fd == channel and data and stream.feed(data):
                    if at_end is not None and stream.ended:
                        with contextlib.suppress(Exception):
                            at_end(stream)
                        at_end = None
                    continue
                selector.unregister(fd)
                open_fds.discard(fd)
                if fd == out:
                    lines.flush()
                elif data:  # flooded: the pipe's read end goes, so the child's writes fail
                    null = os.open(os.devnull, os.O_RDONLY)
                    os.dup2(null, channel)
                    os.close(null)


class _Lines:
    """The child's output, passed on one whole line at a time (a long one in pieces)."""

    def __init__(self, output: Callable[[bytes], None]) -> None:
        from pytest_confgate.github.action_run import DIGEST_LINE

        self._output = output
        self._pending = b""
        self._digest = DIGEST_LINE

    def feed(self, data: bytes) -> None:
        parts = (self._pending + data).split(b"\n")
        self._pending = parts.pop()
        for part in parts:
            self._say(part + b"\n")
        if len(self._pending) > _LONGEST_LINE:
            self.flush()

    def flush(self) -> None:
        if self._pending:
            self._say(self._pending + b"\n")
            self._pending = b""

    def _say(self, line: bytes) -> None:
        self._output(b"| " + line if line.lstrip().startswith(self._digest) else line)


def _unchanged(path: Path, stream: StreamTally, name: str, problems: list[str]) -> bool:
    """Whether ``path`` holds the bytes the test process named at its session end: code of
    the change that runs after it (``atexit``, a process left behind) may rewrite the file."""
    import hashlib

    if not stream.ended:
        return True  # no session end: the stream's own problem fails the run already
    expected = stream.handed_over.get(name)
    try:
        actual = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        actual = None
    if expected == actual:
        return True
    if expected is None:
        problems.append(f"the test process left a {name} file its session end did not name "
                        "(written after the session: code of the change wrote it)")
    else:
        problems.append(f"the test process's {name} file changed after its session ended "
                        "(code of the change rewrote it at exit, or a process it left behind)")
    return False


def _load_child(path: Path, problems: list[str]) -> GateReport | None:
    from pytest_confgate.exceptions import ReportError
    from pytest_confgate.report.writers import load_report

    try:
        return load_report(path)
    except ReportError as exc:
        problems.append(f"the test process wrote no report the supervisor could read ({exc})")
        return None


def _decide(run: GateRun, child: GateReport | None, unsaved: str | None, stream: StreamTally,
            problems: list[str]) -> GateReport:
    from pytest_confgate.collect.signoffs import collect_signoffs
    from pytest_confgate.collect.tests import pass_rate_metric
    from pytest_confgate.exceptions import EvidenceError
    from pytest_confgate.gate.supervised import problem_conditions, supervised_report

    tests = stream.tally.outcomes(stream.duration_s)
    run.audit = list(stream.findings)  # sent as recorded: whatever the test process did later
    measured = None
    if child is not None:
        try:
            measured = run.supervisor_metrics(child.metrics, tests, stream.tally.links,
                                              stream.tally.by_test)
        except EvidenceError as exc:
            problems.append(str(exc))
        except Exception as exc:  # a bug of ours must still fail closed, with a report
            problems.append(f"the supervisor could not measure ({type(exc).__name__}: {exc})")
    if child is None or measured is None:
        failed = run.failed_report(tests, "; ".join(problems))
        audit = run.audit_metric()  # what the run-time audit saw still shows, and why
        return failed.model_copy(update={"conditions": [*problem_conditions(problems),
                                                        *failed.conditions],
                                         "metrics": [audit] if audit is not None else []})
    metrics, waivers, confidence = measured
    problems = _explained(problems, run, metrics)
    signoffs = collect_signoffs(run.environ, run.gate.policy.signoff.approvers)
    return supervised_report(child, tests, pass_rate_metric(tests), problems, gate=run.deciding,
                             tier=(run.tier, run.tier_reason), signoffs=signoffs,
                             provenance=run.provenance, described=run.described(),
                             measured=([_without_part(m, unsaved) for m in metrics], waivers,
                                       confidence))


def _explained(problems: list[str], run: GateRun, metrics: Sequence[EvalMetric]) -> list[str]:
    """pytest-cov fails the session itself (exit status 1, no test failed) when its figure is
    under its floor: with this process's own figure under the same floor, the coverage row
    says why, and that exit status is no sign of a hidden failure."""
    from pytest_confgate.gate.channel import UNSEEN_FAILURE
    from pytest_confgate.gate.policy import below_project_floor

    if run.pytest_cov is None or not any(below_project_floor(m) for m in metrics
                                         if m.type == "test_coverage"):
        return problems
    return [p for p in problems if not p.startswith(UNSEEN_FAILURE)]


def _combine_coverage(run: GateRun, child: GateReport, data: Path) -> str | None:
    """The test process's raw coverage data (lines and arcs it ran) -> this process's own
    coverage.py analysis of the sources: statements, branches, exclusions and the figures
    are computed here, never read from the test process's report.

    Returns why the test process had no data to hand over, when it said (its coverage
    error, e.g. pytest-cov measured no branches): the metric then fails with that reason."""
    stand_in = next((m for m in child.metrics if m.type == "test_coverage"), None)
    if stand_in is None:
        return None
    unsaved = stand_in.details.get("unsaved")
    too_big = False
    note = stand_in.details.get("engine_note")
    engines = {CHILD_PART: note} if isinstance(note, dict) else None
    try:
        too_big = data.stat().st_size > MAX_COVERAGE_BYTES
        payload = b"" if too_big else data.read_bytes()
    except OSError:
        payload = b""
    if not payload and too_big:
        run.combine_coverage({}, [CHILD_PART])
        return f"the test process handed over more than {MAX_COVERAGE_BYTES} bytes of coverage data"
    if not payload:  # none handed over: the figures would be too small, so none are given
        run.combine_coverage({}, [CHILD_PART])
        return unsaved if isinstance(unsaved, str) and unsaved else None
    try:
        run.combine_coverage({CHILD_PART: payload}, [], engines)
    except Exception as exc:  # coverage.py raises plain exceptions for data it cannot read
        run.combine_coverage({}, [CHILD_PART])
        return f"the test process handed over coverage data coverage.py cannot read ({exc})"
    return None


def _without_part(metric: EvalMetric, unsaved: str | None) -> EvalMetric:
    """The figures name no xdist worker for the test process's one part; a failure for want of
    data says why the test process had none."""
    if metric.type != "test_coverage":
        return metric
    if unsaved is not None and not metric.available:
        return metric.model_copy(update={"reason": unsaved})
    if metric.details.get("workers") != [CHILD_PART]:
        return metric
    details = {k: v for k, v in metric.details.items() if k != "workers"}
    return metric.model_copy(update={"details": details})


def open_run(root: Path, environ: Mapping[str, str], config: str | None, base: str | None,
             report: str | None, pytest_args: Sequence[str] = ()) -> tuple[GateRun, Path]:
    """The supervisor's own ``GateRun`` and report path: configuration, change, tier and
    provenance settled before any test runs; no tool started and no third-party plugin loaded
    in this process; any old report removed.

    ``config`` and ``base`` were typed on the supervisor's command line, which the change
    cannot edit, so they count as pytest's real command line does. pytest-cov's options
    (``--cov-fail-under``, and ``--cov``, ``--cov-branch``, ``--cov-config`` that decide what
    this process analyses) are read here from the settings file and ``pytest_args``, never from
    the test process, whose code could change them."""
    from pytest_confgate.collect.pytest_settings import cov_fail_under, no_cov, pytest_cov
    from pytest_confgate.config.loader import load_config
    from pytest_confgate.gate.anchor import Requested, choose_config
    from pytest_confgate.gate.engine import GateRun
    from pytest_confgate.gate.plugin_host import PluginHost
    from pytest_confgate.report.json_report import forget_report, resolve_report_path

    report_path = resolve_report_path(root, report)
    requested = Requested(base=base, base_on_command_line=base is not None,
                          config=config, config_on_command_line=config is not None)
    choice = choose_config(requested, environ)
    loaded = load_config(root, choice.path)
    run = GateRun(loaded, root, environ, plugins=PluginHost(), requested=requested,
                  config_choice=choice)
    run.agents.read_change()
    run.read_before_the_run()
    words = _pytest_words(root, environ, pytest_args)
    run.pytest_cov = pytest_cov(words)
    # pytest-cov's floor, the project's even where the gate measures; `--no-cov` turns it off.
    run.coverage_fail_under = None if no_cov(words) else cov_fail_under(words)
    forget_report(report_path)
    return run, report_path


def _pytest_words(root: Path, environ: Mapping[str, str],
                  pytest_args: Sequence[str]) -> list[str]:
    """Every word pytest will parse in the test process: its settings file's ``addopts``,
    ``PYTEST_ADDOPTS``, then the command line."""
    from pytest_confgate.collect.pytest_settings import SETTINGS_FILES, run_words

    files: dict[str, str] = {}
    for name in SETTINGS_FILES:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            files[name] = (root / name).read_text(encoding="utf-8")
    return run_words(files, environ, pytest_args)

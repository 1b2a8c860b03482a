"""Stages 1 and 2 for one tree, in its own processes: build, gate (tests, coverage, lint,
security), type check (optional), and the static metrics.

Most evidence comes from one ``pytest --confgate`` run in the candidate's tree with a gate
configuration confgate writes (T0, so the gate only measures): test outcomes and coverage.
ruff and bandit findings (with severity) come from rank itself (``lint_copy``), beside that
run, on a copy of the tree its code never ran in. Where pytest imports the project before the gate
begins (iniconfig, a pytest plugin), that run starts as ``python -m pytest_confgate``, which
the gate's pytest would otherwise restart itself as (``measured_from_start``).

Each process gets its own coverage file, temp, cache and ``PYTHONPATH`` inside the
candidate's temporary directory, so candidates share no state; every process runs in its own
session under the ``subreaper`` intermediary, so on a timeout or when the ranking is
interrupted (``Processes.kill_all``) everything it started dies with it, also what left its
group: the gate's own ruff and bandit run in sessions of their own, and one still running
after the ranking's temporary tree was removed wrote it back (its cache).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pytest_confgate import subreaper
from pytest_confgate.config.rank import RankTimeouts
from pytest_confgate.exceptions import ReportError
from pytest_confgate.models import EvalMetric, GateReport
from pytest_confgate.processes import (
    DEFAULT_MAX_OUTPUT_BYTES,
    PastDeadline,
    PastOutputCap,
    describe_bytes,
    exchange,
)
from pytest_confgate.rank import lint_copy
from pytest_confgate.rank.build_check import build_check, top_level_modules
from pytest_confgate.rank.models import PASSING, Evidence, Issue, TestCounts
from pytest_confgate.rank.trees import RANK_STATE

_SCRUBBED = ("PYTHONPATH", "PYTHONHOME", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "GITHUB_BASE_REF",
             "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
_SCRUBBED_PREFIXES = ("CONFGATE_", "COVERAGE_", "COV_CORE_", "PYTEST_XDIST_")
_GATE_CONFIG = (
    "gate:\n  risk_tier: T0\n  metrics:\n    - {type: test_pass_rate}\n"
    "    - {type: test_coverage}\n"
)
"""Tests and coverage only: rank measures lint and security itself (``lint_copy``)."""
_MYPY_LINE = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+)(?::\d+)?: error: (?P<msg>.*?)"
                        r"(?:  \[(?P<code>[\w-]+)\])?$")
OUTCOMES_PLUGIN = "pytest_confgate.rank.outcomes_plugin"
TOOLS_COPY = "tools-copy"
"""Beside a tree's state directory: the copy of it ruff and bandit read (``lint_copy``)."""
_PYTEST_BROKE = frozenset({3, 4})
"""pytest's exit statuses for an internal error and a usage error: no run to read."""


@dataclass(frozen=True)
class Settings:
    """How every tree is evaluated (from the ``rank:`` config and the command line)."""

    test_command: tuple[str, ...]
    python: str
    type_check: bool
    timeouts: RankTimeouts
    sources: tuple[str, ...] | None = None
    environ: Mapping[str, str] | None = None


@dataclass(frozen=True)
class GateEvidence:
    """What one gate run (or its failure) says about tests, coverage, lint and security."""

    tests: TestCounts | None = None
    tests_problem: str | None = None
    coverage: float | None = None
    statements: int | None = None
    lint: tuple[Issue, ...] | None = None
    lint_problem: str | None = None
    security: tuple[Issue, ...] | None = None
    security_problem: str | None = None
    outcomes: dict[str, str] | None = None

    @classmethod
    def failed(cls, problem: str) -> GateEvidence:
        """The gate did not run: every piece of its evidence is missing for the same reason."""
        return cls(tests_problem=problem, lint_problem=problem, security_problem=problem)


@dataclass(frozen=True)
class Finished:
    """One finished process: exit status and decoded output."""

    returncode: int
    stdout: str
    stderr: str


class Processes:
    """Runs candidate processes and remembers them, so Ctrl-C can kill all they started."""

    def __init__(self) -> None:
        self._live: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self.cancelled = False

    def run(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout_s: float,
            pass_fds: Sequence[int] = (), started: Callable[[int], None] | None = None
            ) -> Finished:
        """Run ``argv``; ``TimeoutError`` after ``timeout_s``, ``OSError`` if it cannot start.
        ``pass_fds``: descriptors it inherits (through the intermediary); ``started`` is told
        its pid as soon as it exists."""
        proc = self.start(argv, cwd=cwd, env=env, pass_fds=pass_fds)
        if started is not None:
            started(proc.pid)
        try:
            out, err = exchange(
                proc, deadline=time.perf_counter() + timeout_s, max_stdout=DEFAULT_MAX_OUTPUT_BYTES
            )
        except PastDeadline:
            _stop_and_reap(proc)
            raise TimeoutError(f"{argv[0]} did not finish within {timeout_s:g} s") from None
        except PastOutputCap:
            _stop_and_reap(proc)
            cap = describe_bytes(DEFAULT_MAX_OUTPUT_BYTES)
            raise OSError(f"{argv[0]} printed more than {cap} on stdout and was killed") from None
        finally:
            self.forget(proc)
        text = (out.decode("utf-8", errors="replace"), err.decode("utf-8", errors="replace"))
        return Finished(proc.returncode, *text)

    def start(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str],
              output: IO[bytes] | None = None, pass_fds: Sequence[int] = ()
              ) -> subprocess.Popen[bytes]:
        """Start ``argv`` under the intermediary and remember it until ``forget``: its stdout
        and stderr are pipes, or both go to ``output``. ``TimeoutError`` once interrupted."""
        with self._lock:  # checked and registered at once: ``kill_all`` sees it or it never runs
            if self.cancelled:
                raise TimeoutError("the ranking was interrupted")
            proc = subprocess.Popen(  # an argv list, never a shell
                subreaper.contained(argv, pass_fds), cwd=cwd, env=dict(env),
                stdin=subprocess.DEVNULL, stdout=output or subprocess.PIPE,
                stderr=output or subprocess.PIPE, start_new_session=True, pass_fds=pass_fds,
            )
            self._live.add(proc)
        return proc

    def forget(self, proc: subprocess.Popen[bytes]) -> None:
        """``proc`` has ended (or is ended by its owner): ``kill_all`` leaves it alone."""
        with self._lock:
            self._live.discard(proc)

    def kill_all(self) -> None:
        """Stop every running process and all it started (Ctrl-C); none starts after this.

        The intermediary kills and reaps its descendants before it exits, so a thread waiting
        on one returns only when nothing it started can still write into the scratch tree.
        """
        with self._lock:
            self.cancelled = True
            live = list(self._live)
        for proc in live:
            _stop(proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Ask the intermediary to kill everything below it; without one, kill the group."""
    with contextlib.suppress(ProcessLookupError, PermissionError):  # it already ended
        if subreaper.supported():
            proc.send_signal(signal.SIGTERM)  # not SIGKILL: it would orphan what left the group
        else:
            os.killpg(proc.pid, signal.SIGKILL)


def _stop_and_reap(proc: subprocess.Popen[bytes]) -> None:
    """Stop it and all it started, and reap it without reading on: what is left is no longer
    ours to read."""
    subreaper.stop(proc)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


@dataclass(frozen=True)
class PytestRun:
    """One pytest run with ``outcomes_plugin``: outcomes by node id, or why there are none."""

    finished: Finished | None
    outcomes: dict[str, str] | None
    problem: str | None = None
    why: dict[str, str] = dataclasses.field(default_factory=dict)
    """Failed test id -> the first line of its failure (``outcomes_plugin``)."""
    files: dict[str, str] = dataclasses.field(default_factory=dict)
    """The sha256 of each file the run wrote for rank, sent with its end (the gate's report)."""


WarmRun = Callable[..., "Finished | None"]
"""``warm.WarmPytest.run``: a pytest argv forked from a warm pytest, as ``Processes.run``
(keywords ``cwd``, ``env``, ``timeout_s``, ``pass_fds``), or None where it must start as a
process."""


def run_pytest(arguments: Sequence[str], tree: Path, state: Path, settings: Settings,
               processes: Processes, extra_env: Mapping[str, str] | None = None,
               warm: WarmRun | None = None) -> PytestRun:
    """``test_command`` plus ``arguments`` in ``tree``, each test's outcome by id as the run
    streamed it (``outcomes.OutcomeReceiver``): the candidate's code can run after pytest's
    session ends (an ``atexit`` handler), and a record written then could say anything.

    No session end on the stream (pytest crashed, timed out, or the candidate's settings turn
    the confgate plugin off) is a problem; so is an exit status pytest gives only for an
    internal error or a usage error.
    """
    from pytest_confgate.collect.tamper.replay import failure_line
    from pytest_confgate.outcomes import OutcomeReceiver

    state.mkdir(parents=True, exist_ok=True)
    # ``python -m pytest`` inherits its end of a socket pair: nothing outside the run can reach
    # it. A wrapper of the user's may not pass a descriptor on: it gets a listening socket's
    # path, which any process of this user can find (another candidate's code running beside
    # it), so the receiver takes a connection only from the run's own processes.
    direct = runs_pytest_itself(settings.test_command)
    receiver = OutcomeReceiver(listen=not direct)
    fds = (receiver.child_fd,) if direct else ()
    env = {**candidate_env(settings, tree, state), **(extra_env or {}), **receiver.environ}
    argv = [*settings.test_command, "-p", OUTCOMES_PLUGIN, *arguments]
    try:
        timeout_s = settings.timeouts.tests_s
        done = (warm(argv, cwd=tree, env=env, timeout_s=timeout_s, pass_fds=fds)
                if warm is not None and direct else None) or processes.run(
            argv, cwd=tree, env=env, timeout_s=timeout_s, pass_fds=fds,
            started=None if direct else receiver.started)
    except (OSError, TimeoutError) as exc:
        receiver.close(0.0)
        return PytestRun(None, None, str(exc))
    except BaseException:  # our end of the socket pair must not stay open in this process
        receiver.close(0.0)
        raise
    received = receiver.close()
    if not received.ended or done.returncode in _PYTEST_BROKE:
        tail = "\n".join((done.stderr.strip() or done.stdout.strip()).splitlines()[-5:])
        unended = "" if received.ended else " without reporting its session end"
        return PytestRun(done, None, f"pytest exited {done.returncode}{unended}: {tail}")
    results = received.results
    return PytestRun(done, {node: r["outcome"] for node, r in results.items()},
                     why={node: failure_line(r["failure"]) for node, r in results.items()
                          if r["outcome"] in ("failed", "error")}, files=received.files)


def runs_pytest_itself(command: Sequence[str]) -> bool:
    """Whether ``command`` is ``PYTHON -m pytest ...``: pytest is the process it starts (so it
    inherits a descriptor), not a wrapper of the user's that may close it."""
    return len(command) >= 3 and tuple(command[1:3]) == ("-m", "pytest")


def candidate_env(settings: Settings, tree: Path, state: Path) -> dict[str, str]:
    """The caller's environment minus what steers pytest/coverage, plus private state dirs.

    Bytecode is written where Python writes it (issue 28): a tree's ``__pycache__`` is in the
    ranking's temporary copy and goes with it, and what is outside the trees is compiled once,
    not in every process. pytest rewrites the modules of plugin packages (hypothesis) and
    keeps them only where bytecode may be written: without bytecode every short cross-test
    process rewrote them again, most of its cost. A copy never carries ``__pycache__`` from
    one tree into another (``IGNORED_NAMES``), so no tree runs bytecode compiled from another
    tree's file of the same size and time.
    """
    base = os.environ if settings.environ is None else settings.environ
    env = {
        key: value for key, value in base.items()
        if key not in _SCRUBBED and not key.startswith(_SCRUBBED_PREFIXES)
    }
    tmp = state / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    paths = [str(tree / "src")] if (tree / "src").is_dir() else []
    env.update(
        PYTHONPATH=os.pathsep.join([*paths, str(tree)]),
        COVERAGE_FILE=str(state / ".coverage"),
        TMPDIR=str(tmp), TMP=str(tmp), TEMP=str(tmp),
        RUFF_CACHE_DIR=str(state / "ruff-cache"),
        MYPY_CACHE_DIR=str(state / "mypy-cache"),
        XDG_CACHE_HOME=str(state / "cache"),
    )
    return env


def collect_evidence(
    solution_id: str, tree: Path, state: Path, settings: Settings, processes: Processes,
    tools: Callable[[], lint_copy.ToolFindings], last: Sequence[str] = (),
) -> Evidence:
    """Stage 1 and the tool half of stage 2 for one tree (static metrics come from ``trees``);
    the tests of the files in ``last`` (its new test modules) run after all the others.

    ``tools`` waits for the tree's ruff and bandit findings, which rank measures beside the
    tests on a copy no candidate's code ran in (``lint_copy``).
    """
    started = time.perf_counter()
    env = candidate_env(settings, tree, state)
    def run_import_check(argv: list[str]) -> tuple[int, str]:
        done = processes.run(argv, cwd=tree, env=env, timeout_s=settings.timeouts.build_s)
        return done.returncode, done.stderr

    build_problem = build_check(tree, settings.python, run_import_check)
    gate = _with_tools(_gate(tree, state, settings, processes, last), tools())
    types: tuple[tuple[Issue, ...] | None, str | None] = (None, None)
    if settings.type_check:
        types = _type_check(tree, settings, env, processes)
    return Evidence(
        solution_id=solution_id,
        builds=build_problem is None,
        build_problem=build_problem,
        type_errors=types[0],
        type_problem=types[1],
        tests=gate.tests,
        tests_problem=gate.tests_problem,
        coverage=gate.coverage,
        statements=gate.statements,
        lint=gate.lint,
        lint_problem=gate.lint_problem,
        security=gate.security,
        security_problem=gate.security_problem,
        outcomes=gate.outcomes,
        duration_s=time.perf_counter() - started,
    )


def _gate(tree: Path, state: Path, settings: Settings, processes: Processes,
          last: Sequence[str] = ()) -> GateEvidence:
    """One ``pytest --confgate`` run: tests (by id too), coverage, lint and security."""
    from pytest_confgate.rank.outcomes_plugin import LAST

    config = state / "confgate-rank.yml"
    source = "" if settings.sources is None else f"source: {list(settings.sources)!r}\n"
    config.write_text(source + _GATE_CONFIG, encoding="utf-8")
    report = tree / RANK_STATE / "report.json"
    run = run_pytest(
        ["--confgate", f"--confgate-config={config}", f"--rootdir={tree}",
         f"--confgate-report={report}", "-p", "no:cacheprovider", "-q"],
        tree, state / "gate", _gate_settings(tree, settings), processes,
        {LAST: json.dumps(list(last))} if last else None,
    )
    if run.finished is None:
        return GateEvidence.failed(run.problem or "pytest did not run")
    rewritten = _rewritten(report, run.files.get("report"))
    if rewritten is not None:
        return GateEvidence.failed(rewritten)
    try:
        from pytest_confgate.report.writers import load_report

        found = _from_report(load_report(report))
    except ReportError as exc:
        done = run.finished
        tail = "\n".join((done.stderr.strip() or done.stdout.strip()).splitlines()[-5:])
        problem = f"pytest exited {done.returncode} without a gate report ({exc}): {tail}"
        return GateEvidence.failed(problem)
    return dataclasses.replace(found, outcomes=run.outcomes,
                               tests=_counted(run.outcomes or {}, found.tests))


def _with_tools(gate: GateEvidence, tools: lint_copy.ToolFindings) -> GateEvidence:
    """The gate run's evidence with rank's own lint and security findings; a gate run that
    gave no evidence keeps its one reason for all of it."""
    if gate.tests is None and gate.tests_problem is not None:
        return gate
    lint, lint_problem = _issues(tools.lint, "lint_score")
    security, security_problem = _issues(tools.security, "security_score")
    return dataclasses.replace(gate, lint=lint, lint_problem=lint_problem, security=security,
                               security_problem=security_problem)


_WITH_VALUE = frozenset({"-W", "-X", "--check-hash-based-pycs"})
"""Interpreter options whose value is the next argument."""


def _gate_settings(tree: Path, settings: Settings) -> Settings:
    """``settings`` with the gate run's command: measured from the start where pytest imports
    the tree's code before the gate begins, where the gate's pytest would start again."""
    if not pytest_imports_first(tree, settings.python):
        return settings
    return dataclasses.replace(settings, test_command=measured_from_start(settings.test_command))


def pytest_imports_first(tree: Path, python: str) -> bool:
    """Whether pytest imports one of the tree's top-level modules before the gate begins, as
    this interpreter's packages tell: a requirement of pytest (iniconfig, pluggy) or the
    package of a pytest plugin's entry point. False for another interpreter (its packages
    are not visible here) and for what only a plugin's own imports bring in: there the gate's
    pytest still starts again when it must, and elsewhere it is not started measured from the
    start, which costs tracing pytest's imports (0.2 s CPU on attrs' suite with hypothesis).
    """
    if os.path.abspath(python) != os.path.abspath(sys.executable):
        return False
    return not _loaded_with_pytest().isdisjoint(m.lower() for m in top_level_modules(tree))


@functools.cache
def _loaded_with_pytest() -> frozenset[str]:
    """Top-level module names pytest imports at its start in this interpreter: its required
    distributions' names (as modules) and its plugins' entry-point packages."""
    from importlib import metadata

    try:
        requires = metadata.distribution("pytest").requires or []
    except metadata.PackageNotFoundError:
        return frozenset()
    names = {re.split(r"[\s;<>=!~\[(]", text, maxsplit=1)[0] for text in requires
             if "extra ==" not in text}
    plugins = {point.value.split(":")[0].split(".")[0]
               for point in metadata.entry_points(group="pytest11")}
    found = {name.lower().replace("-", "_") for name in names | plugins}
    return frozenset(found - {"pytest_confgate"})  # the gate never restarts for its own code


def measured_from_start(command: Sequence[str]) -> tuple[str, ...]:
    """The gate run's command: ``python [options] -m pytest ARGS`` as ``python [options] -m
    pytest_confgate ARGS``, any other command as given.

    The gate's pytest replaces itself with exactly that command when pytest imported a
    measured module before the gate began (``early_restart``: a project pytest depends on,
    such as iniconfig, or one a pytest plugin imports): started so, such a gate run costs one
    interpreter start and one pytest import less (0.2 s CPU of iniconfig's 1.7 s), and
    measures the same.
    """
    rest = list(command[1:])
    options: list[str] = []
    while rest and rest[0].startswith("-") and rest[0] != "-m":
        option = rest.pop(0)
        if option.startswith(("-c", "-m")) or option == "-":
            return tuple(command)  # code on the command line, or a module spelled -mNAME
        options.append(option)
        if option in _WITH_VALUE and rest:
            options.append(rest.pop(0))
    if rest[:2] != ["-m", "pytest"]:
        return tuple(command)
    return (command[0], *options, "-m", "pytest_confgate", *rest[2:])


def _from_report(report: GateReport) -> GateEvidence:
    metrics = {m.type: m for m in report.metrics}
    t = report.tests
    coverage = metrics.get("test_coverage")
    lint, lint_problem = _issues(metrics.get("lint_score"), "lint_score")
    security, security_problem = _issues(metrics.get("security_score"), "security_score")
    return GateEvidence(
        tests=TestCounts(t.passed + t.xpassed, t.failed, t.errors, t.skipped, t.duration_s),
        coverage=coverage.value if coverage is not None and coverage.available else None,
        statements=_int(coverage.details.get("num_statements")) if coverage is not None
        and coverage.available else None,
        lint=lint,
        lint_problem=lint_problem,
        security=security,
        security_problem=security_problem,
    )


def _rewritten(report: Path, digest: str | None) -> str | None:
    """Why the gate report cannot be read as the gate wrote it, or None: the digest came
    with the run's end, and the candidate's code could run after that (an ``atexit``
    handler that rewrites the report)."""
    import hashlib

    if digest is None:
        return "the gate run named no report at its end: its report is not read"
    try:
        found = hashlib.sha256(report.read_bytes()).hexdigest()
    except OSError:
        return None  # no report: the reader says so
    if found != digest:
        return ("the gate report was rewritten after the gate wrote it (the candidate's code "
                "ran after the gate's end): its report is not read")
    return None


def _counted(outcomes: Mapping[str, str], reported: TestCounts | None) -> TestCounts:
    """The counts of the streamed outcomes (the report's only for the duration): the report
    is a file the candidate's process wrote, and its code could rewrite it at exit."""
    found = list(outcomes.values())
    return TestCounts(
        passed=sum(o in PASSING for o in found), failed=found.count("failed"),
        errors=found.count("error"), skipped=found.count("skipped"),
        duration_s=reported.duration_s if reported is not None else 0.0)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _issues(metric: EvalMetric | None, kind: str) -> tuple[tuple[Issue, ...] | None, str | None]:
    if metric is None or not metric.available:
        return None, (metric.reason if metric else None) or f"{kind} was not measured"
    items = metric.details.get("items", [])
    return tuple(
        Issue(str(i["rule"]), str(i["file"]), str(i["message"]), int(i.get("line") or 0),
              i.get("severity"))
        for i in items
    ), None


def _type_check(tree: Path, settings: Settings, env: Mapping[str, str], processes: Processes
                ) -> tuple[tuple[Issue, ...] | None, str | None]:
    """mypy over the tree's source (the project's own mypy config applies)."""
    targets = list(settings.sources or []) or top_level_modules(tree) or ["."]
    root = "src/" if (tree / "src").is_dir() and not settings.sources else ""
    argv = [settings.python, "-m", "mypy", "--no-error-summary", "--show-error-codes",
            "--no-pretty", *(root + t if not t.endswith(".py") else t for t in targets)]
    try:
        done = processes.run(argv, cwd=tree, env=env, timeout_s=settings.timeouts.type_check_s)
    except (OSError, TimeoutError) as exc:
        return None, str(exc)
    if done.returncode not in (0, 1) or "No module named mypy" in done.stderr:
        return None, f"mypy exited {done.returncode}: {done.stderr.strip()[-300:]}"
    issues = []
    for line in done.stdout.splitlines():
        match = _MYPY_LINE.match(line.strip())
        if match:
            issues.append(Issue(match["code"] or "mypy", match["path"], match["msg"],
                                int(match["line"])))
    if done.returncode == 1 and not issues:
        return None, f"mypy failed without errors it could name: {done.stdout.strip()[-300:]}"
    return tuple(issues), None

"""``confgate rank`` end to end: check out, evaluate concurrently, cross-test, assess, rank.

The IO shell around the pure stages. Every candidate (and the baseline) gets its own
temporary directory; all of them, worktrees included, are removed when the ranking ends, also
on an error or Ctrl-C, and Ctrl-C first kills every process the ranking started (and theirs).
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from secrets import token_hex

from pytest_confgate.agents import Agent
from pytest_confgate.config import ConfgateConfig
from pytest_confgate.config.rank import AutoAcceptConfig
from pytest_confgate.rank import crosstest, lint_copy, regression, trees
from pytest_confgate.rank.assessment import assess
from pytest_confgate.rank.baseline_cache import (
    baseline_key,
    load_baseline,
    save_baseline,
    save_tools,
    seed_tools,
)
from pytest_confgate.rank.blocking import block_reasons
from pytest_confgate.rank.candidates import CandidateSource, checked_out, resolve, resolve_all
from pytest_confgate.rank.crosstest import CrossCell, agreement, run_cross_tests, standing
from pytest_confgate.rank.evaluate import (
    TOOLS_COPY,
    Processes,
    Settings,
    WarmRun,
    collect_evidence,
)
from pytest_confgate.rank.feedback import adjusted_weights
from pytest_confgate.rank.feedback_store import RankStore
from pytest_confgate.rank.models import (
    AutoAccept,
    Comparison,
    Evidence,
    LlmPreference,
    Ranking,
    ScoringContext,
)
from pytest_confgate.rank.ranking import rank_solutions, should_auto_accept
from pytest_confgate.rank.regression import MASKED, run_regression, run_unmarked
from pytest_confgate.rank.scoring import evaluate
from pytest_confgate.rank.tampering import inspect
from pytest_confgate.rank.warm import WarmPytest, provided_names, search_folders

Progress = Callable[[str], None]


@dataclass(frozen=True)
class RankRequest:
    """What the user asked for on the command line."""

    candidates: tuple[str, ...]
    cwd: Path
    baseline: str | None = None
    jobs: int = 1
    task: str | None = None
    baseline_cache: Path | None = None
    """Where the baseline's evidence is kept by content; None evaluates it afresh."""


@dataclass(frozen=True)
class RankOutcome:
    """A finished ranking with the evidence behind it, ready for the report writers."""

    ranking_id: str
    created_at: str
    ranking: Ranking
    auto_accept: AutoAccept
    weights: Mapping[str, float]
    evidence: Mapping[str, Evidence]
    baseline: Evidence | None
    cross_tests: Sequence[CrossCell]
    notes: Sequence[str] = field(default=())
    sources: Mapping[str, CandidateSource] = field(default_factory=dict)
    """Each candidate as evaluated (a ref's commit as resolved), for ``--apply``."""


def run_ranking(
    request: RankRequest, config: ConfgateConfig, settings: Settings, store: RankStore,
    progress: Progress, agent: Agent | None = None,
) -> RankOutcome:
    """Rank ``request.candidates``; ``CandidateError`` (before any work) for a bad candidate."""
    sources = resolve_all(request.candidates, request.cwd)
    base_source = resolve(request.baseline, request.cwd) if request.baseline else None
    weights = adjusted_weights(config.rank.weights.model_dump(), store.feedback_events())
    processes = Processes()
    with ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="confgate-rank-")))
        try:
            return _rank(request, config, settings, store, progress, agent, weights,
                         (sources, base_source), (stack, root, processes))
        except BaseException:
            processes.kill_all()  # Ctrl-C or a bug: no candidate process outlives us
            raise
    raise AssertionError("unreachable")  # pragma: no cover - the with block returns or raises


def _rank(
    request: RankRequest, config: ConfgateConfig, settings: Settings, store: RankStore,
    progress: Progress, agent: Agent | None, weights: Mapping[str, float],
    given: tuple[list[CandidateSource], CandidateSource | None],
    scratch: tuple[ExitStack, Path, Processes],
) -> RankOutcome:
    sources, base_source = given
    stack, root, processes = scratch
    paths = {}
    for index, source in enumerate([*sources, *([base_source] if base_source else [])]):
        work = root / f"c{index}"
        work.mkdir()
        key = source.solution_id if index < len(sources) else _BASELINE
        paths[key] = (stack.enter_context(checked_out(source, work)), work / "state")
    files = {key: trees.read_tree(tree) for key, (tree, _) in paths.items()}
    clones = same_trees(files, [s.solution_id for s in sources])
    warm = _warm_pytest(settings, processes, root / "warm", paths, len(set(clones.values())))
    if warm is not None:
        stack.callback(warm.close)
    progress(f"evaluating {len(sources)} candidates"
             + (f" against baseline {base_source.solution_id}" if base_source else "")
             + f" with {request.jobs} jobs"
             + (f" ({len(sources) - len(set(clones.values()))} identical to another, "
                "evaluated once)" if len(set(clones.values())) < len(sources) else ""))
    with ThreadPoolExecutor(max_workers=max(1, request.jobs)) as pool:
        try:
            jobs = Jobs(pool, paths, files, settings, processes, progress, root,
                        warm.run if warm is not None else None)
            clock = [time.perf_counter()]
            evidence = _evaluate_all(jobs, [k for k in paths if clones.get(k, k) == k],
                                     request.baseline_cache)
            baseline = evidence.pop(_BASELINE, None)
            stages = [("evaluation and tamper analysis" if baseline is not None
                       else "evaluation") + f" {_lap(clock):.1f} s"]
            evidence = {
                s.solution_id: dataclasses.replace(evidence[clones[s.solution_id]],
                                                   solution_id=s.solution_id)
                for s in sources
            }
            context = scoring_context(config, weights, baseline, evidence, agent is not None)
            unblocked = [k for k, e in evidence.items() if not block_reasons(e, context)]
            cells = _cross_test_all(jobs, {k: evidence[k] for k in unblocked}, clones,
                                    baseline is not None)
            if warm is not None:
                warm.close(wait=False)  # waited for as the ranking ends
            progress("stages: " + ", ".join([*stages, f"cross-testing {_lap(clock):.1f} s"]))
        except BaseException:
            processes.kill_all()  # first, so the threads waiting on candidates return at once
            # Then wait for them: a thread still writing into the scratch tree while it is
            # removed would leave it behind (seen under load).
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    llm: dict[str, LlmPreference] = {}
    llm_comparisons: list[Comparison] = []
    if agent is not None and len(unblocked) > 1:
        progress(f"asking {agent.name} to compare {len(unblocked)} candidates pairwise")
        texts = _solution_texts(files, sorted(unblocked), baseline is not None)
        llm, llm_comparisons = assess(agent, request.task, texts)
    ranking, answer = decide(evidence, context, cells, config.rank.auto_accept,
                             (llm, llm_comparisons), clones)
    created = datetime.now(UTC)
    ranking_id = f"{created:%Y%m%d-%H%M%S}-{token_hex(3)}"
    store.save_ranking(ranking_id, created.isoformat(timespec="seconds"), ranking, weights)
    return RankOutcome(ranking_id, created.isoformat(timespec="seconds"), ranking, answer,
                       weights, evidence, baseline, cells,
                       sources={source.solution_id: source for source in sources})


def _warm_pytest(settings: Settings, processes: Processes, workdir: Path,
                 paths: Mapping[str, tuple[Path, Path]], distinct: int) -> WarmPytest | None:
    """A warm pytest for the cross-test runs, started now, before any candidate's code runs,
    when there will be several (two distinct candidates or more); it loads nothing any of the
    trees provides."""
    if distinct < 2 or not WarmPytest.usable(settings):
        return None
    blocked = provided_names(folder for tree, _ in paths.values()
                             for folder in search_folders(tree))
    return WarmPytest(settings, processes, workdir, blocked)


def _lap(clock: list[float]) -> float:
    """Seconds since the last lap (progress only: what each stage of a ranking costs)."""
    now = time.perf_counter()
    elapsed, clock[0] = now - clock[0], now
    return elapsed


def decide(
    evidence: Mapping[str, Evidence], context: ScoringContext, cells: Sequence[CrossCell],
    auto_accept: AutoAcceptConfig,
    llm: tuple[Mapping[str, LlmPreference], Sequence[Comparison]] = ({}, ()),
    clones: Mapping[str, str] | None = None,
) -> tuple[Ranking, AutoAccept]:
    """Stages 4 and 5 from measured evidence (pure): what ``confgate rank`` answers.

    Only unblocked candidates' tests count in cross-testing, on unblocked candidates: a
    candidate that broke the baseline's tests writes tests for the behaviour it broke. Each
    failure weighs its writer's standing (``crosstest.standing``), not a majority.
    Ranking a subset of the candidates is calling this with their evidence.
    """
    preferences, comparisons = llm
    unblocked = {k for k, e in evidence.items() if not block_reasons(e, context)}
    counted = [c for c in cells if c.source in unblocked and c.target in unblocked]
    standings = {k: standing(evidence[k], context.baseline) for k in unblocked}
    cross = agreement(counted, clones, standings)
    evaluations = [
        evaluate(e, context, cross.get(k), preferences.get(k)) for k, e in evidence.items()
    ]
    ranking = rank_solutions(evaluations, comparisons, allow_single=auto_accept.allow_single)
    return ranking, should_auto_accept(ranking, auto_accept)


def same_trees(files: Mapping[str, Mapping[str, str]], ids: Sequence[str]) -> dict[str, str]:
    """Candidate -> the first candidate (in the order given) with byte-identical files.

    Identical trees get identical evidence, evaluated once: an exact tie is then exact.
    """
    first: dict[tuple[tuple[str, str], ...], str] = {}
    return {key: first.setdefault(tuple(sorted(files[key].items())), key) for key in ids}


_BASELINE = "\x00baseline"  # cannot collide with a directory name or a git ref


@dataclass(frozen=True)
class Jobs:
    """What the concurrent stages share: the pool, every tree and how it is evaluated."""

    pool: ThreadPoolExecutor
    paths: Mapping[str, tuple[Path, Path]]
    """Candidate (or ``_BASELINE``) -> (checked-out tree, its private state directory)."""
    files: Mapping[str, Mapping[str, str]]
    settings: Settings
    processes: Processes
    progress: Progress
    scratch: Path
    """The ranking's temporary directory (cross-test trees go here)."""
    warm: WarmRun | None = None
    """Cross-test runs forked from a warm pytest where they can be (``warm``)."""


def _evaluate_all(jobs: Jobs, keys: Sequence[str], cache: Path | None) -> dict[str, Evidence]:
    lock = threading.Lock()
    done = [0]
    base_files = jobs.files.get(_BASELINE)
    settings, processes = jobs.settings, jobs.processes
    key_of_base = (baseline_key(jobs.paths[_BASELINE][0], settings)
                   if cache is not None and _BASELINE in keys else None)
    stored = load_baseline(cache, key_of_base) if cache is not None and key_of_base else None
    # ruff and bandit on copies made now, before any candidate's code runs; one bandit for all.
    runs = lint_copy.ToolRuns({
        key: (jobs.paths[key][0], jobs.paths[key][1].parent / TOOLS_COPY, jobs.files[key])
        for key in keys if not (key == _BASELINE and stored is not None)
    }, settings.sources, lambda: processes.cancelled)

    def job(key: str) -> Evidence:
        tree, state = jobs.paths[key]
        name = "baseline" if key == _BASELINE else key
        reused = False
        if key == _BASELINE and cache is not None and key_of_base is not None:
            found, reused = _cached_baseline(tree, state, jobs, (cache, key_of_base), stored,
                                             partial(runs.result, _BASELINE))
        else:
            last = [p for p in trees.new_test_files(jobs.files[key], base_files)
                    if not p.endswith("conftest.py")] if base_files is not None else []
            seed_tools(cache, key_of_base, tree)
            found = collect_evidence(name, tree, state, settings, processes,
                                     partial(runs.result, key), last)
        reference = None if key == _BASELINE else base_files
        rerun = 0.0
        if reference is not None:
            base_tree = jobs.paths[_BASELINE][0]
            started = time.perf_counter()
            found = dataclasses.replace(found, regression=run_regression(
                tree, base_tree, (reference, jobs.files[key]), found.outcomes,
                state / "regression", settings, processes))
            rerun = time.perf_counter() - started
        found = dataclasses.replace(
            found,
            code=trees.code_metrics(jobs.files[key], reference),
            changes=trees.change_stats(jobs.files[key], reference) if reference is not None
            else None,
            dangerous=() if key == _BASELINE else trees.dangerous_operations(
                jobs.files[key], reference),
        )
        with lock:
            done[0] += 1
            took = ("reused, not run again" if reused else f"{found.duration_s:.1f} s"
                    + (f", baseline tests again {rerun:.1f} s" if rerun >= 0.05 else ""))
            jobs.progress(f"[{done[0]}/{len(keys)}] {name}: {_status(found)} ({took})")
        if reference is None:
            return found
        # Right after its own evaluation, in the same worker: a stage of its own waited for
        # every candidate and then held one core while the other stood idle (issue 28).
        try:
            return _inspect(jobs, key, found, futures[_BASELINE].result(), runs.on_copy(key))
        finally:  # the tools are done with its copy: removed now, beside the other runs
            shutil.rmtree(jobs.paths[key][1].parent / TOOLS_COPY, ignore_errors=True)

    # The baseline first: each candidate's tamper analysis waits for it, and the pool starts
    # jobs in the order given, so the baseline is running or done before any candidate waits.
    futures: dict[str, Future[Evidence]] = {}
    for key in sorted(keys, key=lambda k: k != _BASELINE):
        futures[key] = jobs.pool.submit(job, key)
    return {key: futures[key].result() for key in keys}


def _inspect(jobs: Jobs, key: str, found: Evidence, baseline: Evidence,
             copy: lint_copy.CopyRun | None) -> Evidence:
    """Tamper findings and the findings behind added suppressions (ruff and bandit again on
    ``copy``, the files as submitted), the tests it added to the baseline's test files, and
    its new tests marked xfail or skip run without the mark."""
    tree, state = jobs.paths[key]
    base_tree = jobs.paths[_BASELINE][0]
    found = trees.added_test_ids(inspect(found, tree, baseline, base_tree, jobs.settings.sources,
                                         jobs.files[key], copy), baseline)
    outcomes, new = found.outcomes or {}, trees.new_test_ids(found)  # once, not per test
    masked = [test for test, outcome in outcomes.items() if test in new and outcome in MASKED]
    if not masked:
        return found
    return dataclasses.replace(found, unmarked=run_unmarked(
        masked, tree, state / "unmarked", jobs.settings, jobs.processes))


def _cached_baseline(
    tree: Path, state: Path, jobs: Jobs, kept: tuple[Path, str], stored: Evidence | None,
    tools: Callable[[], lint_copy.ToolFindings],
) -> tuple[Evidence, bool]:
    """The baseline's evidence, and whether it was reused (``stored``: what the folder
    ``cache`` keeps under ``key``, read before the ranking began)."""
    cache, key = kept
    found = stored
    if found is not None:
        jobs.progress(f"baseline: evidence of an identical tree reused ({cache / key[:12]}...)")
        return found, True
    found = collect_evidence("baseline", tree, state, jobs.settings, jobs.processes, tools)
    if save_baseline(cache, key, found):
        save_tools(cache, key, tree)
    return found, False


def _status(evidence: Evidence) -> str:
    tests = evidence.tests
    if tests is None:
        return f"tests did not run ({(evidence.tests_problem or '')[:80]})"
    return f"{tests.passed} passed, {tests.failed} failed, {tests.errors} errors"


def scoring_context(
    config: ConfgateConfig, weights: Mapping[str, float], baseline: Evidence | None,
    evidence: Mapping[str, Evidence], llm: bool = False,
) -> ScoringContext:
    """What every candidate is scored against; the reference run time is the baseline's,
    else the fastest unblocked candidate's."""
    probe = ScoringContext(weights=weights, baseline=baseline, type_check=config.rank.type_check,
                           hard_limits=config.gate.hard_limits())
    if baseline is not None and baseline.tests is not None:
        reference: float | None = baseline.tests.duration_s
    else:
        times = [e.tests.duration_s for e in evidence.values()
                 if e.tests is not None and not block_reasons(e, probe)]
        reference = min(times) if times else None
    return dataclasses.replace(probe, llm_expected=llm, reference_duration_s=reference)


def _cross_test_all(
    jobs: Jobs, unblocked: Mapping[str, Evidence], clones: Mapping[str, str],
    has_baseline: bool,
) -> list[CrossCell]:
    """Unblocked candidates' new tests on the other unblocked candidates; a target identical
    to another is run once and its cells copied. New tests are new test files and, with a
    baseline, new test ids in the baseline's own test files (only those ids count)."""
    files = jobs.files
    ids = list(unblocked)
    picks: dict[str, dict[str, frozenset[str]]] = {key: {} for key in ids}
    for key in ids:
        changes = unblocked[key].changes
        for test in changes.new_test_ids if has_baseline and changes is not None else ():
            path = test.split("::", 1)[0]
            picks[key][path] = picks[key].get(path, frozenset()) | {test}
    new_tests = {
        key: crosstest.modules_that_travel(
            [*trees.new_test_files(files[key], files[_BASELINE]), *sorted(picks[key])]
            if has_baseline
            else trees.distinct_test_files(files[key], [files[o] for o in ids if o != key]))
        for key in ids
    }
    machinery = (jobs.paths[_BASELINE][0], files[_BASELINE]) if has_baseline else None
    runs: dict[str, list[crosstest.Source]] = {}
    for target in dict.fromkeys(clones.get(t, t) for t in ids):
        for source in ids:
            chosen = [p for p in new_tests[source] if files[target].get(p) != files[source][p]]
            if clones.get(source, source) != target and chosen:
                runs.setdefault(target, []).append(
                    (source, jobs.paths[source][0], tuple(chosen), picks[source]))
    if not runs:
        return []
    # A writer whose machinery is not the baseline's runs its own tests on itself without it
    # first: only those that pass there are evidence about the others (``crosstest.vouched``).
    selves = [source for source in dict.fromkeys(clones.get(s, s) for s in ids)
              if machinery is not None and new_tests[source]
              and regression.machinery_changed(files[_BASELINE], files[source])]
    pairs = sum(len(sources) for sources in runs.values())
    jobs.progress(f"cross-testing: {pairs} candidates' new tests on the others, one run per "
                  "target, under the baseline's conftests and settings"
                  + (f" ({len(selves)} also on themselves)" if selves else ""))
    # A writer's run on itself joins the run of the others' tests on it, last, as one more
    # source: the tree is the same (its code, the baseline's machinery), so one pytest start
    # does both. Its tests are split off again below; if any fails there it runs alone
    # (``run_cross_tests``), which is the run on itself it had before. Only a writer no one
    # else's tests reach runs on itself in a run of its own.
    for source in selves:
        own_tests = (source, jobs.paths[source][0], tuple(new_tests[source]), picks[source])
        runs.setdefault(source, []).append(own_tests)
    futures = []
    for index, (target, sources) in enumerate(runs.items()):
        work = jobs.scratch / f"x{index}"
        work.mkdir()
        futures.append(jobs.pool.submit(
            _cross_tested, sources, (target, jobs.paths[target][0]), work, jobs.settings,
            jobs.processes, machinery, jobs.warm,
        ))
    found = [cell for future in futures for cell in future.result()]
    own = {cell.source: cell for cell in found if cell.source == cell.target}
    own = {twin: own[clones.get(twin, twin)] for twin in ids if clones.get(twin, twin) in own}
    cells = crosstest.vouched([cell for cell in found if cell.source != cell.target], own)
    return [
        dataclasses.replace(cell, target=twin)
        for cell in cells for twin in ids
        if clones.get(twin, twin) == cell.target and clones.get(cell.source) != clones.get(twin)
    ]


def _cross_tested(
    sources: Sequence[crosstest.Source], target: tuple[str, Path], work: Path,
    settings: Settings, processes: Processes, machinery: crosstest.Machinery | None,
    warm: WarmRun | None,
) -> list[CrossCell]:
    """``run_cross_tests``, and its trees removed right after, beside the other runs (every
    process it started has ended by then), not at the end while both cores wait."""
    try:
        return run_cross_tests(sources, target, work, settings, processes, machinery, warm)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _solution_texts(files: Mapping[str, Mapping[str, str]], ids: Sequence[str],
                    has_baseline: bool) -> dict[str, str]:
    """What the evaluator reads: the diff against the baseline, else the differing files."""
    if has_baseline:
        return {key: trees.unified_diff(files[key], files[_BASELINE]) for key in ids}
    differing = {
        path for key in ids for path in files[key]
        if any(files[other].get(path) != files[key][path] for other in ids)
    }
    return {
        key: trees.unified_diff({p: t for p, t in files[key].items() if p in differing}, {})
        for key in ids
    }

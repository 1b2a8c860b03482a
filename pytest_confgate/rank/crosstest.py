"""Cross-testing: each candidate's new tests run against every other one.

Agreement with the tests other candidates wrote is a correctness signal (CodeT's dual
agreement): a solution that passes the tests its rivals wrote for the same task is more
likely right. For a pair (source, target) the source's new test files are laid over a fresh
copy of the target's tree (same paths) and only those files run; the result is one cell of the
pass matrix. Tests the target already has, byte for byte, are its own and are not re-run.

Every source's files are laid over one copy of the target and run in one pytest process
(``run_cross_tests``); ``outcomes_plugin`` records each test's outcome by id, so each cell is
counted from its own files. Sources whose files would overwrite each other go in separate
runs. Each pytest start-up costs a real suite a second or more, so this is n runs instead of
n x (n-1); only a source with a failing test in a shared run runs again alone, so another
source's module cannot fail it by patching the target at import, and a source with a module
that acts when imported (not ``inert``) never shares a run: it cannot make the others' tests
pass by patching the target either.

Every cell runs under the baseline's machinery (issue 36): the target's copy gets the
baseline's conftests, pytest settings, helpers and data back and loses the test-support files
the baseline does not have (``regression.restore_machinery``), and only the writer's new test
modules are laid over it, never its ``conftest.py`` or helpers. A target that loosens its
helper or flips results in its conftest no longer does it to everyone's tests, and a writer's
conftest that swaps the code under test no longer travels to the other targets. A writer whose
own machinery differs from the baseline's has its tests run on itself the same way
(``vouched``): a test that does not pass on its own writer without that machinery is no
evidence about anyone else. That run on itself is one more source in the run of the others'
tests on the writer (the same tree, one pytest start less); its tests run again alone when
one fails there or when the shared run gave no outcomes.

Where rank has a warm pytest (``warm``: several candidates, ``python -m pytest``), each run
is forked from it instead of started: the same run, in the same folder and environment, one
Python start and pytest import less (issue 36, speed); any other run starts as before.

``agreement`` counts evidence, not votes (issue 28): a test a candidate wrote, and that it
passes itself, is evidence about every other candidate, and a failure elsewhere weighs by the
writer's own standing (``standing``: the baseline's tests pass on it where they should, the
task's failing tests included, and it has no tamper finding), never by how many other
candidates pass the same test. Two candidates sharing a bug fail a correct candidate's test
together; under a majority that made the test worthless, here it counts on both. A writer
without standing still shows its tests in the matrix, counted 0, with the reason.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from pytest_confgate.rank.candidates import IGNORED_NAMES
from pytest_confgate.rank.evaluate import Processes, PytestRun, Settings, WarmRun, run_pytest
from pytest_confgate.rank.inert import inert
from pytest_confgate.rank.models import PASSING, RAN, CrossTest, Evidence
from pytest_confgate.rank.regression import restore_machinery
from pytest_confgate.rank.trees import RANK_STATE


@dataclass(frozen=True)
class CrossCell:
    """Source's new tests on target: counts, or the problem that stopped the run."""

    source: str
    target: str
    files: tuple[str, ...]
    outcomes: Mapping[str, str] = field(default_factory=dict)
    """The source's tests on the target: node id -> outcome."""
    problem: str | None = None
    why: Mapping[str, str] = field(default_factory=dict)
    """Failed or errored test id -> the first line of its failure, as pytest reported it."""

    @property
    def passed(self) -> int:
        """Tests that passed on the target."""
        return sum(1 for outcome in self.outcomes.values() if outcome in PASSING)

    @property
    def failed(self) -> int:
        """Tests that failed on the target."""
        return sum(1 for outcome in self.outcomes.values() if outcome == "failed")

    @property
    def errors(self) -> int:
        """Tests (or whole modules) that errored on the target."""
        return sum(1 for outcome in self.outcomes.values() if outcome == "error")

    @property
    def ran(self) -> int:
        """Tests that gave a verdict on the target."""
        return self.passed + self.failed + self.errors

    @property
    def failing(self) -> tuple[str, ...]:
        """The ids that failed or errored on the target."""
        return tuple(sorted(t for t, o in self.outcomes.items() if o in RAN and o not in PASSING))


def agreement(
    cells: Iterable[CrossCell], clones: Mapping[str, str] | None = None,
    standing: Mapping[str, Standing] | None = None,
) -> dict[str, CrossTest]:
    """Per target: the other candidates' tests it passed, and the evidence against it.

    Each failure weighs the writer's standing (1.0 when ``standing`` does not name it).
    ``clones`` maps a candidate to the one whose identical tree stands for it: the tests of
    copies of one solution count once, so duplicating a test does not double its evidence.
    """
    rank_of = standing or {}
    usable = [cell for cell in cells if cell.problem is None
              and (clones is None or clones.get(cell.source, cell.source) == cell.source)]
    totals: dict[str, CrossTest] = {}
    for cell in usable:
        before = totals.get(cell.target, CrossTest())
        weight, reason = rank_of.get(cell.source, FULL)
        failing = tuple(f"{cell.source}: {test}" for test in cell.failing)
        totals[cell.target] = CrossTest(
            before.passed + cell.passed, before.ran + cell.ran,
            before.disagreement + weight * len(cell.failing),
            before.failing + failing,
            {**before.why, **{f"{cell.source}: {t}": cell.why.get(t, cell.outcomes[t])
                              for t in cell.failing}},
            {**before.standing, cell.source: (weight, reason)},
            before.independent + (cell.ran if weight > 0 else 0),
        )
    return totals


Standing = tuple[float, str]
"""How much a writer's failing tests weigh, and why."""
FULL: Standing = (1.0, "its tests count in full")


def standing(evidence: Evidence, baseline: Evidence | None) -> Standing:
    """A writer's standing: 1.0 when the baseline's tests, run unmodified, pass on it where
    they should (every one that passed on the baseline, and the baseline's failing tests:
    the task) and it has no tamper finding; else 0.0, with the reason. Pure."""
    tamper = evidence.tamper or ()
    if baseline is not None and evidence.tamper is None:
        return 0.0, "its tamper analysis did not run"
    serious = [f for f in tamper if f.rule not in QUIET_TAMPER]
    if serious:
        first = serious[0]
        where = f"{first.rule} at {first.path}:{first.line}"
        return 0.0, f"not counted: it has a tamper finding ({where})"
    regression = evidence.regression
    if baseline is not None and baseline.outcomes is not None and regression is not None:
        broken = sorted(t for t, o in baseline.outcomes.items()
                        if o in RAN and regression.outcomes.get(t) not in PASSING)
        if broken:
            return 0.0, (f"not counted: the baseline's test {broken[0]} does not pass on it, "
                         "run unmodified")
    return FULL


QUIET_TAMPER = frozenset({"suppression_added"})
"""Tamper findings that do not cost a writer its standing: an added ``# noqa`` is common and
what it hides is scored where it belongs (lint, security, coverage)."""


Source = tuple[str, Path, tuple[str, ...], Mapping[str, frozenset[str]]]
"""A candidate whose new tests are cross-run: (id, tree, files, picks). ``picks`` names, for
a baseline test file the candidate added tests to, the new test ids that count (the file's
other tests are the baseline's and are not this candidate's evidence)."""


Machinery = tuple[Path, Mapping[str, str]]
"""The baseline's tree and its files: the conftests, settings, helpers and data every
cross-test runs under (issue 36)."""


def run_cross_tests(
    sources: Sequence[Source], target: tuple[str, Path], workdir: Path, settings: Settings,
    processes: Processes, machinery: Machinery | None = None, warm: WarmRun | None = None,
) -> list[CrossCell]:
    """One cell per source: all their files run together on ``target`` where paths allow,
    under the baseline's ``machinery`` when there is a baseline.

    A source whose tests fail or error in a shared run runs again on its own, and that run
    is its cell: another source's module, imported in the same process, could have patched
    the target (a function's ``__code__`` swapped at import) to mark everyone else down.
    A writer's tests on itself (source and target the same: its run on itself, see
    ``vouched``) also run again alone when the shared run gave no outcomes: another source's
    test that ends the process must not cost the writer its standing everywhere.
    """
    cells: list[CrossCell] = []
    for index, group in enumerate(_compatible_groups(sources)):
        shared = _run_group(group, target, workdir / f"g{index}", settings, processes,
                            machinery, warm)
        for position, (source, found) in enumerate(zip(group, shared, strict=True)):
            itself = source[0] == target[0] and found.problem is not None
            if len(group) > 1 and (found.failing or itself):  # else a problem counts nowhere
                found, = _run_group([source], target, workdir / f"g{index}-{position}",
                                    settings, processes, machinery, warm)
            cells.append(found)
    return cells


def modules_that_travel(files: Sequence[str]) -> list[str]:
    """What of a writer's new test files travels to other targets: its test modules, never a
    ``conftest.py`` (issue 36: it would steer every target's run)."""
    return [name for name in files if PurePosixPath(name).name != "conftest.py"]


def vouched(cells: Iterable[CrossCell], own: Mapping[str, CrossCell]) -> list[CrossCell]:
    """``cells`` keeping, for each writer named in ``own``, only the tests that passed on the
    writer itself under the baseline's machinery (``own``: its tests run on its own tree as
    every other target runs them). A writer's test that needs its own conftest, helper or
    settings to pass says nothing about the others; a writer whose self-run gave no outcomes
    counts nowhere."""
    kept: list[CrossCell] = []
    for found in cells:
        mine = own.get(found.source)
        if mine is None:
            kept.append(found)
            continue
        if mine.problem is not None:
            continue
        good = {test for test, outcome in mine.outcomes.items() if outcome in PASSING}
        kept.append(dataclasses.replace(
            found, outcomes={t: o for t, o in found.outcomes.items() if t in good},
            why={t: w for t, w in found.why.items() if t in good}))
    return kept


def _compatible_groups(sources: Sequence[Source]) -> list[list[Source]]:
    """Greedy: a source joins the first group none of whose files it would overwrite; a
    source with a module that acts when imported runs alone."""
    groups: list[tuple[list[Source], dict[str, bytes]]] = []
    alone: list[list[Source]] = []
    for source in sources:
        _, tree, files, _ = source
        content = {name: (tree / name).read_bytes() for name in files}
        if not all(inert(data.decode("utf-8", errors="replace")) for data in content.values()):
            alone.append([source])
            continue
        for members, taken in groups:
            if all(taken.get(name, data) == data for name, data in content.items()):
                members.append(source)
                taken.update(content)
                break
        else:
            groups.append(([source], dict(content)))
    return [*(members for members, _ in groups), *alone]


def _run_group(
    group: Sequence[Source], target: tuple[str, Path], workdir: Path, settings: Settings,
    processes: Processes, machinery: Machinery | None = None, warm: WarmRun | None = None,
) -> list[CrossCell]:
    target_id, target_tree = target
    tree = workdir / "tree"
    shutil.copytree(target_tree, tree, symlinks=True,
                    ignore=lambda _, names: {n for n in names if n in IGNORED_NAMES | {RANK_STATE}})
    if machinery is not None:
        restore_machinery(tree, *machinery)
    chosen = sorted({name for _, _, files, _ in group for name in files})
    for _, source_tree, files, _ in group:
        for name in files:
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source_tree / name, tree / name)
    run = run_pytest(["-q", "-p", "no:cacheprovider", "--continue-on-collection-errors",
                      f"--rootdir={tree}", *chosen],
                     tree, workdir / "state", settings, processes, warm=warm)
    if run.outcomes is None:
        problem = run.problem or "pytest gave no outcomes"
        return [CrossCell(s, target_id, files, problem=problem) for s, _, files, _ in group]
    return [_cell(source, target_id, files, picks, run)
            for source, _, files, picks in group]


def _cell(source: str, target: str, files: tuple[str, ...],
          picks: Mapping[str, frozenset[str]], run: PytestRun) -> CrossCell:
    """The outcomes of the source's tests in ``files`` (a module that failed to import counts
    once; in a file named in ``picks``, only the ids it names)."""
    outcomes, why = run.outcomes or {}, run.why
    mine = {test: outcome for test, outcome in outcomes.items()
            if test.split("::", 1)[0] in files
            and (test.split("::", 1)[0] not in picks or test in picks[test.split("::", 1)[0]])}
    return CrossCell(source, target, files, mine, why={t: why[t] for t in mine if t in why})

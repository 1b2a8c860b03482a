"""Cross-testing (beyond the seed): each candidate's new tests run against every other one.

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
source's module cannot fail it by patching the target at import.

``agreement`` weighs each failure by how many other candidates the same test passes on: a
test that fails on every candidate but its author is more likely wrong than they are, while
one that only this candidate fails is a concrete counterexample (with two candidates there is
nobody else to ask, and a failure counts in full).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_confgate.rank.candidates import IGNORED_NAMES
from pytest_confgate.rank.evaluate import Processes, Settings, run_pytest
from pytest_confgate.rank.models import PASSING, RAN, CrossTest
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
    cells: Iterable[CrossCell], clones: Mapping[str, str] | None = None
) -> dict[str, CrossTest]:
    """Per target: the other candidates' tests it passed, and its weighted disagreement.

    ``clones`` maps a candidate to the one whose identical tree stands for it: copies of one
    solution vote once, so duplicating a wrong answer cannot outvote a test that catches it.
    """
    voter = (lambda target: clones.get(target, target)) if clones else (lambda target: target)
    usable = [cell for cell in cells if cell.problem is None]
    passed_on: dict[tuple[str, str], set[str]] = {}
    ran_on: dict[tuple[str, str], set[str]] = {}
    for cell in usable:
        for test, outcome in cell.outcomes.items():
            if outcome in RAN:
                ran_on.setdefault((cell.source, test), set()).add(voter(cell.target))
                if outcome in PASSING:
                    passed_on.setdefault((cell.source, test), set()).add(voter(cell.target))
    totals: dict[str, CrossTest] = {}
    for cell in usable:
        before = totals.get(cell.target, CrossTest())
        weight = sum(
            _support(passed_on.get((cell.source, test), set()),
                     ran_on[(cell.source, test)] - {voter(cell.target)})
            for test in cell.failing
        )
        totals[cell.target] = CrossTest(
            before.passed + cell.passed, before.ran + cell.ran,
            before.disagreement + weight,
            before.failing + tuple(f"{cell.source}: {test}" for test in cell.failing),
        )
    return totals


def _support(passed_on: set[str], others: set[str]) -> float:
    """How far the other candidates back a test that failed here: the share it passes on."""
    if not others:
        return 1.0
    return len(passed_on & others) / len(others)


Source = tuple[str, Path, tuple[str, ...]]
"""A candidate whose new test files are cross-run: (id, tree, files)."""


def run_cross_tests(
    sources: Sequence[Source], target: tuple[str, Path], workdir: Path, settings: Settings,
    processes: Processes,
) -> list[CrossCell]:
    """One cell per source: all their files run together on ``target`` where paths allow.

    A source whose tests fail or error in a shared run runs again on its own, and that run
    is its cell: another source's module, imported in the same process, could have patched
    the target (a function's ``__code__`` swapped at import) to mark everyone else down.
    """
    cells: list[CrossCell] = []
    for index, group in enumerate(_compatible_groups(sources)):
        shared = _run_group(group, target, workdir / f"g{index}", settings, processes)
        for position, (source, found) in enumerate(zip(group, shared, strict=True)):
            if len(group) > 1 and found.failing:  # a problem counts nowhere: no re-run
                found, = _run_group([source], target, workdir / f"g{index}-{position}",
                                    settings, processes)
            cells.append(found)
    return cells


def _compatible_groups(sources: Sequence[Source]) -> list[list[Source]]:
    """Greedy: a source joins the first group none of whose files it would overwrite."""
    groups: list[tuple[list[Source], dict[str, bytes]]] = []
    for source in sources:
        _, tree, files = source
        content = {name: (tree / name).read_bytes() for name in files}
        for members, taken in groups:
            if all(taken.get(name, data) == data for name, data in content.items()):
                members.append(source)
                taken.update(content)
                break
        else:
            groups.append(([source], dict(content)))
    return [members for members, _ in groups]


def _run_group(
    group: Sequence[Source], target: tuple[str, Path], workdir: Path, settings: Settings,
    processes: Processes,
) -> list[CrossCell]:
    target_id, target_tree = target
    tree = workdir / "tree"
    shutil.copytree(target_tree, tree, symlinks=True,
                    ignore=lambda _, names: {n for n in names if n in IGNORED_NAMES | {RANK_STATE}})
    chosen = sorted({name for _, _, files in group for name in files})
    for _, source_tree, files in group:
        for name in files:
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source_tree / name, tree / name)
    run = run_pytest(["-q", "-p", "no:cacheprovider", "--continue-on-collection-errors",
                      f"--rootdir={tree}", *chosen],
                     tree, workdir / "state", settings, processes)
    if run.outcomes is None:
        problem = run.problem or "pytest gave no outcomes"
        return [CrossCell(s, target_id, files, problem=problem) for s, _, files in group]
    return [_cell(source, target_id, files, run.outcomes) for source, _, files in group]


def _cell(source: str, target: str, files: tuple[str, ...],
          outcomes: Mapping[str, str]) -> CrossCell:
    """The outcomes of the tests in ``files`` (a module that failed to import counts once)."""
    mine = {test: outcome for test, outcome in outcomes.items()
            if test.split("::", 1)[0] in files}
    return CrossCell(source, target, files, mine)

"""Cross-testing (beyond the seed): each candidate's new tests run against every other one.

Agreement with the tests other candidates wrote is a correctness signal (CodeT's dual
agreement): a solution that passes the tests its rivals wrote for the same task is more
likely right. For a pair (source, target) the source's new test files are laid over a fresh
copy of the target's tree (same paths) and only those files run; the result is one cell of the
pass matrix. Tests the target already has, byte for byte, are its own and are not re-run.

Every source's files are laid over one copy of the target and run in one pytest process
(``run_cross_tests``), with ``-rA`` naming each test's outcome so each cell is counted
from its own files; sources whose files would overwrite each other go in separate runs. Each
pytest start-up costs a real suite a second or more, so this is n runs instead of n x (n-1).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_confgate.rank.candidates import IGNORED_NAMES
from pytest_confgate.rank.evaluate import Processes, Settings, candidate_env
from pytest_confgate.rank.models import CrossTest
from pytest_confgate.rank.trees import RANK_STATE

_COUNT = re.compile(r"(\d+) (passed|failed|errors?|xpassed|xfailed|skipped)\b")
_OUTCOME = re.compile(r"^(PASSED|FAILED|ERROR|XPASS) (?P<path>[^\s:]+?)(?:::|\s|$)")
"""One line of pytest's ``-rA`` summary: the outcome and the test file it belongs to."""
_NO_TESTS = 5  # pytest's exit status when nothing was collected


@dataclass(frozen=True)
class CrossCell:
    """Source's new tests on target: counts, or the problem that stopped the run."""

    source: str
    target: str
    files: tuple[str, ...]
    passed: int = 0
    failed: int = 0
    errors: int = 0
    problem: str | None = None

    @property
    def ran(self) -> int:
        """Tests that gave a verdict on the target."""
        return self.passed + self.failed + self.errors


def parse_summary(output: str) -> tuple[int, int, int] | None:
    """(passed, failed, errors) from pytest's final summary line, or None when there is none."""
    for line in reversed(output.strip().splitlines()):
        found = dict.fromkeys(("passed", "failed", "errors"), 0)
        matches = _COUNT.findall(line)
        if not matches or " in " not in line:
            continue
        for count, word in matches:
            key = "errors" if word.startswith("error") else word
            if key in found:
                found[key] += int(count)
            elif key == "xpassed":
                found["passed"] += int(count)
        return found["passed"], found["failed"], found["errors"]
    return None


def agreement(cells: Iterable[CrossCell]) -> dict[str, CrossTest]:
    """Per target: the other candidates' tests it passed, of those that gave a verdict."""
    totals: dict[str, CrossTest] = {}
    for cell in cells:
        if cell.problem is not None:
            continue
        before = totals.get(cell.target, CrossTest())
        totals[cell.target] = CrossTest(before.passed + cell.passed, before.ran + cell.ran)
    return totals


Source = tuple[str, Path, tuple[str, ...]]
"""A candidate whose new test files are cross-run: (id, tree, files)."""


def run_cross_tests(
    sources: Sequence[Source], target: tuple[str, Path], workdir: Path, settings: Settings,
    processes: Processes,
) -> list[CrossCell]:
    """One cell per source: all their files run together on ``target`` where paths allow."""
    cells: list[CrossCell] = []
    for index, group in enumerate(_compatible_groups(sources)):
        cells += _run_group(group, target, workdir / f"g{index}", settings, processes)
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
    env = candidate_env(settings, tree, workdir / "state")
    argv = [*settings.test_command, "-q", "-rA", "--tb=no", "-p", "no:cacheprovider",
            f"--rootdir={tree}", *chosen]
    try:
        done = processes.run(argv, cwd=tree, env=env, timeout_s=settings.timeouts.tests_s)
    except (OSError, TimeoutError) as exc:
        return [CrossCell(s, target_id, files, problem=str(exc)) for s, _, files in group]
    by_file = per_file_outcomes(done.stdout)
    if not by_file and parse_summary(done.stdout) is None and done.returncode != _NO_TESTS:
        problem = f"pytest exited {done.returncode} without a summary"
        return [CrossCell(s, target_id, files, problem=problem) for s, _, files in group]
    return [_cell(source, target_id, files, by_file) for source, _, files in group]


def per_file_outcomes(output: str) -> dict[str, tuple[int, int, int]]:
    """(passed, failed, errors) per test file from the ``-rA`` short summary."""
    counts: dict[str, list[int]] = {}
    for line in output.splitlines():
        match = _OUTCOME.match(line)
        if match is None:
            continue
        slot = {"PASSED": 0, "XPASS": 0, "FAILED": 1, "ERROR": 2}[match[1]]
        counts.setdefault(match["path"], [0, 0, 0])[slot] += 1
    return {path: (c[0], c[1], c[2]) for path, c in counts.items()}


def _cell(source: str, target: str, files: tuple[str, ...],
          by_file: dict[str, tuple[int, int, int]]) -> CrossCell:
    passed = failed = errors = 0
    for name in files:
        p, f, e = by_file.get(name, (0, 0, 0))
        passed, failed, errors = passed + p, failed + f, errors + e
    return CrossCell(source, target, files, passed, failed, errors)

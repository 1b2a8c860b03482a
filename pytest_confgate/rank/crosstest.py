"""Cross-testing (beyond the seed): each candidate's new tests run against every other one.

Agreement with the tests other candidates wrote is a correctness signal (CodeT's dual
agreement): a solution that passes the tests its rivals wrote for the same task is more
likely right. For a pair (source, target) the source's new test files are laid over a fresh
copy of the target's tree (same paths) and only those files run; the result is one cell of the
pass matrix. Tests the target already has, byte for byte, are its own and are not re-run.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pytest_confgate.rank.candidates import IGNORED_NAMES
from pytest_confgate.rank.evaluate import Processes, Settings, candidate_env
from pytest_confgate.rank.models import CrossTest
from pytest_confgate.rank.trees import RANK_STATE

_COUNT = re.compile(r"(\d+) (passed|failed|errors?|xpassed|xfailed|skipped)\b")
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


def run_cross_test(
    source: tuple[str, Path], files: Iterable[str], target: tuple[str, Path],
    workdir: Path, settings: Settings, processes: Processes,
) -> CrossCell:
    """Run ``files`` of the source tree against a copy of the target tree in ``workdir``."""
    (source_id, source_tree), (target_id, target_tree) = source, target
    chosen = tuple(files)
    tree = workdir / "tree"
    shutil.copytree(target_tree, tree, symlinks=True,
                    ignore=lambda _, names: {n for n in names if n in IGNORED_NAMES | {RANK_STATE}})
    for name in chosen:
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source_tree / name, tree / name)
    env = candidate_env(settings, tree, workdir / "state")
    argv = [*settings.test_command, "-q", "--tb=no", "-p", "no:cacheprovider",
            f"--rootdir={tree}", *chosen]
    cell = CrossCell(source=source_id, target=target_id, files=chosen)
    try:
        done = processes.run(argv, cwd=tree, env=env, timeout_s=settings.timeouts.tests_s)
    except (OSError, TimeoutError) as exc:
        return CrossCell(source_id, target_id, chosen, problem=str(exc))
    counts = parse_summary(done.stdout)
    if counts is None:
        if done.returncode == _NO_TESTS:
            return cell
        return CrossCell(source_id, target_id, chosen,
                         problem=f"pytest exited {done.returncode} without a summary")
    return CrossCell(source_id, target_id, chosen, *counts)


def agreement(cells: Iterable[CrossCell]) -> dict[str, CrossTest]:
    """Per target: the other candidates' tests it passed, of those that gave a verdict."""
    totals: dict[str, CrossTest] = {}
    for cell in cells:
        if cell.problem is not None:
            continue
        before = totals.get(cell.target, CrossTest())
        totals[cell.target] = CrossTest(before.passed + cell.passed, before.ran + cell.ran)
    return totals

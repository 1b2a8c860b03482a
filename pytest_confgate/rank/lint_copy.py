"""ruff and bandit over a ranked tree, run by rank itself on a copy no candidate's code runs in.

A tree's lint and security findings used to come from its gate run: the gate's helper process
read the tree while the candidate's own tests ran in it, one more Python start and one more
bandit start per candidate (0.4 s of iniconfig's 1.3 CPU s per gate run, issue 36). The gate
run now measures tests and coverage only; rank runs the gate's own collectors, with the gate
metrics' default settings and the sources the gate would pick, in a thread of its own beside
the tests, on copies of the trees made before any candidate's code runs (``ToolRuns``): ruff
on each copy, one bandit process for all of them.

Nothing a candidate's code writes reaches these findings. The copy must hold exactly the text
files rank read before any candidate ran (``trees.read_tree``), checked once the kernel's clock
has passed every entry's ``st_ctime`` (so any later write, rename, link or ``utime`` in the copy
gives a newer ``st_ctime``, which no process can set back), and every entry's ``lstat`` must be
the same after the tools read it. ruff keeps no cache there (``--no-cache``) and bandit writes
nothing, so the copy cannot change on its own: a copy that changed gives no findings, with the
reason, as a failed tool does (missing evidence blocks). No per-file cache is read: one that a
candidate's code could reach would have to be vouched for, and the tools' work on a changed
file is the small part of their cost.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_confgate.config import LintMetricConfig, SecurityMetricConfig
from pytest_confgate.exceptions import ConfigError
from pytest_confgate.models import EvalMetric, MetricStatus

_NOT_COPIED = frozenset({"__pycache__", ".confgate", ".confgate-rank", ".ruff_cache"})
"""Caches and the gate's own state; everything else is copied as the tree has it (a git
worktree's ``.git`` file too: ruff honours ``.gitignore`` only inside a repository)."""
_TICK_WAIT_S = 1.0
"""How long to wait for the clock to pass the copy's newest ``st_ctime`` (one tick, normally)."""

_CHANGED = ("the copy of the tree rank made before any candidate's code ran changed (a "
            "candidate's code wrote into it)")
CopyRun = Callable[[str, Callable[[Path], EvalMetric]], EvalMetric]
"""``run(kind, work)``: ``work(copy)``'s metric, named for the tree, or a ``kind`` error."""
Stat = tuple[int, int, int, int, int]
"""An entry's inode, size, ``st_ctime_ns``, ``st_mtime_ns`` and mode (``lstat``)."""


@dataclass(frozen=True)
class ToolFindings:
    """The gate's ``lint_score`` and ``security_score`` metrics for one tree (or why not)."""

    lint: EvalMetric
    security: EvalMetric


class ToolRuns:
    """Copies of several trees, made now, and their findings, measured in one thread: ruff on
    each copy, one bandit process for all of them where bandit reads no settings
    (``collect.security.collect_security_scores``). ``result(key)`` waits for one tree's.

    Make it before any code of these trees runs: the copies are made here, at once.
    """

    def __init__(self, trees: Mapping[str, tuple[Path, Path, Mapping[str, str]]],
                 sources: Sequence[str] | None,
                 cancelled: Callable[[], bool] = lambda: False) -> None:
        """``trees``: key -> (tree, where its copy goes, its snapshot); ``cancelled``: the
        ranking was interrupted (nothing waits for the tools then)."""
        self._cancelled = cancelled
        self._found: dict[str, ToolFindings] = {}
        self._copies: dict[str, tuple[Path, Path, dict[str, Stat]]] = {}
        self._pending = dict(trees)
        for key, (tree, copy, _) in trees.items():
            try:
                shutil.copytree(tree, copy, symlinks=True, ignore=_ignored)
                self._copies[key] = (tree, copy, entries(copy))
            except (OSError, shutil.Error) as exc:
                self._found[key] = _failed(f"could not copy the tree: {exc}")
        self._thread = threading.Thread(target=self._work, args=(sources,),
                                        name="confgate-rank-lint", daemon=True)
        self._thread.start()

    def result(self, key: str) -> ToolFindings:
        """The findings of the tree ``key`` (one of those given), once they are measured."""
        while self._thread.is_alive() and not self._cancelled():
            self._thread.join(0.05)
        if self._thread.is_alive():
            return _failed("the ranking was interrupted")
        return self._found[key]

    def on_copy(self, key: str) -> CopyRun | None:
        """Run more of the tools on the copy of tree ``key`` later (rank's reruns behind the
        suppressions a candidate added): only while the copy still holds exactly what rank
        read before any code ran, before and after they read it. None: there is no copy."""
        found = self._copies.get(key)
        if found is None:
            return None
        tree, copy, before = found
        snapshot = self._pending[key][2]

        def run(kind: str, work: Callable[[Path], EvalMetric]) -> EvalMetric:
            from pytest_confgate.rank.trees import read_tree

            if entries(copy) != before or read_tree(copy) != snapshot:
                return _error(kind, f"{kind}: {_CHANGED}")
            metric = work(copy)
            if entries(copy) != before:
                return _error(kind, f"{kind}: {_CHANGED}")
            return _as_tree(metric, copy, tree)

        return run

    def _work(self, sources: Sequence[str] | None) -> None:
        try:
            self._found.update(_measured(self._copies, self._pending, sources))
        except Exception as exc:  # any surprise is missing evidence, never a clean result
            for key in self._pending:
                self._found.setdefault(key, _failed(f"could not measure a copy: {exc}"))


def start(tree: Path, copy: Path, snapshot: Mapping[str, str], sources: Sequence[str] | None
          ) -> Callable[[], ToolFindings]:
    """One tree's ``ToolRuns``: copy it now, measure it in a thread; the call returned waits
    for the findings. Call it before any code of the tree runs."""
    runs = ToolRuns({"tree": (tree, copy, snapshot)}, sources)
    return lambda: runs.result("tree")


def measure(tree: Path, copy: Path, snapshot: Mapping[str, str], sources: Sequence[str] | None
            ) -> ToolFindings:
    """Copy ``tree`` to ``copy``, check the copy against ``snapshot``, run ruff and bandit."""
    return start(tree, copy, snapshot, sources)()


def _measured(
    copies: Mapping[str, tuple[Path, Path, dict[str, Stat]]],
    trees: Mapping[str, tuple[Path, Path, Mapping[str, str]]], sources: Sequence[str] | None,
) -> dict[str, ToolFindings]:
    from pytest_confgate.rank.trees import read_tree

    _clock_past(max((stat[2] for *_, before in copies.values() for stat in before.values()),
                    default=0))
    found: dict[str, ToolFindings] = {}
    ready: dict[str, tuple[Path, list[Path]]] = {}
    for key, (_, copy, before) in copies.items():
        checked = None
        if read_tree(copy) == trees[key][2] and entries(copy) == before:
            checked = _checked_sources(copy, sources)
        if checked is None:
            found[key] = _failed("the tree changed after rank read it, before ruff and bandit "
                                 "could read it (a candidate's code wrote into it)")
        elif isinstance(checked, ToolFindings):
            found[key] = checked
        else:
            ready[key] = checked
    for key, done in _tools(ready).items():
        _, copy, before = copies[key]
        if entries(copy) != before:
            found[key] = _failed("the copy of the tree that ruff and bandit read changed while "
                                 "they read it (a candidate's code wrote into it)")
        else:
            found[key] = done
    return {key: ToolFindings(_as_tree(f.lint, copies[key][1], copies[key][0]),
                              _as_tree(f.security, copies[key][1], copies[key][0]))
            for key, f in found.items()}


def _checked_sources(root: Path, sources: Sequence[str] | None
                     ) -> tuple[Path, list[Path]] | ToolFindings:
    """What the gate run would check in ``root``: its sources, tests left out unless
    configured; or the error the gate gives when there are none."""
    from pytest_confgate.collect.sources import resolve_sources, without_tests

    try:
        found = resolve_sources(root, list(sources) if sources is not None else None)
    except ConfigError as exc:
        return ToolFindings(_error("lint_score", str(exc)), _error("security_score", str(exc)))
    checked = without_tests(found) if sources is None else found
    if not checked:
        reason = f"no source code found under {root}; set `source:` in the config"
        return ToolFindings(_error("lint_score", reason), _error("security_score", reason))
    return root, checked


def _tools(projects: Mapping[str, tuple[Path, list[Path]]]) -> dict[str, ToolFindings]:
    """The gate's collectors with its metrics' defaults: ruff on each project, bandit once."""
    from pytest_confgate.collect.lint import collect_lint_score
    from pytest_confgate.collect.security import collect_security_scores

    lint_config = LintMetricConfig(type="lint_score")
    security_config = SecurityMetricConfig(type="security_score")
    keys = list(projects)
    security = collect_security_scores(
        [projects[key] for key in keys], min_severity=security_config.min_severity,
        min_confidence=security_config.min_confidence, timeout_s=security_config.timeout_s,
        max_output_bytes=security_config.max_output_bytes,
    ) if keys else []
    found = {}
    for key, metric in zip(keys, security, strict=True):
        root, checked = projects[key]
        lint = collect_lint_score(
            root, checked, command=lint_config.command, timeout_s=lint_config.timeout_s,
            max_output_bytes=lint_config.max_output_bytes, extra_args=("--no-cache",),
        )
        found[key] = ToolFindings(lint, metric)
    return found


def entries(root: Path) -> dict[str, Stat]:
    """Every entry under ``root`` (itself included) by relative path, as ``lstat`` sees it."""
    found: dict[str, Stat] = {}
    for folder, dirs, names in os.walk(root):
        for name in [".", *dirs, *names]:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            key = os.path.normpath(os.path.relpath(path, root))
            found[key] = (info.st_ino, info.st_size, info.st_ctime_ns, info.st_mtime_ns,
                          info.st_mode)
    return found


def _clock_past(newest_ns: int) -> None:
    """Wait until the clock the kernel stamps ``st_ctime`` with is past ``newest_ns``: from then
    on, any change to an entry gives it a newer ``st_ctime`` than the copy gave it."""
    clock = getattr(time, "CLOCK_REALTIME_COARSE", None)

    def now() -> int:
        return time.clock_gettime_ns(clock) if clock is not None else time.time_ns()

    deadline = time.monotonic() + _TICK_WAIT_S
    while now() <= newest_ns and time.monotonic() < deadline:
        time.sleep(0.001)


def _ignored(folder: str, names: list[str]) -> set[str]:
    return {
        name for name in names
        if name in _NOT_COPIED or name.endswith((".pyc", ".pyo"))
        or (name == ".git" and os.path.isdir(os.path.join(folder, name)))
    }


def _as_tree(metric: EvalMetric, copy: Path, tree: Path) -> EvalMetric:
    """The metric as its JSON reads back (the gate report's form), naming the tree, not the
    copy, where a reason or a detail names a path."""
    import json

    text = json.dumps(metric.model_dump(mode="json")).replace(
        json.dumps(str(copy))[1:-1], json.dumps(str(tree))[1:-1])
    return EvalMetric.model_validate(json.loads(text))


def _error(kind: str, reason: str) -> EvalMetric:
    return EvalMetric(type=kind, status=MetricStatus.ERROR, reason=reason)


def _failed(reason: str) -> ToolFindings:
    return ToolFindings(_error("lint_score", f"lint_score: {reason}"),
                        _error("security_score", f"security_score: {reason}"))

"""The regression suite: the baseline's own test files, unmodified, run on a candidate.

A candidate that edits, deletes or skips a baseline test has changed the judge, not the code.
So a copy of the candidate's tree gets the baseline's test files back (every test module,
``conftest.py`` and file under a ``tests``/``test``/``testing`` folder, as the baseline has
them), loses every test file the baseline does not have (a ``conftest.py``, or a
``tests/__init__.py`` that runs when a test module is imported), and the baseline's test
modules run there. ``Regression.failures`` then compares the outcomes by test id with the baseline's
own run: a test that passed on the baseline and fails, errors, is skipped or is missing here
blocks the candidate.

The rerun collects what the baseline's own configuration collects (issue 28): its pytest
settings file comes back with the tests (``--doctest-modules``, ``testpaths``, ``-p`` plugins
in ``addopts``), one the baseline does not have is removed, and a full rerun names no paths,
so pytest collects what the baseline's run collected: the doctests of source modules too.

A candidate that changed only source files already ran the baseline's test files, as they
are, in its own run: ``rerun_plan`` then re-runs only the modules it changed or deleted. So
does a candidate whose new test files are only test modules that do nothing when imported
(``inert``: imports, definitions, literals): its own run ran them after every baseline test
(``outcomes_plugin`` moves them last), so they could not patch the code the baseline's tests
judged before those tests ran (issue 28: the full rerun was the largest stage repeated per
candidate). Any other new file in a test folder (a ``conftest.py``, a helper, a module that
runs code at import), a changed ``conftest.py`` or helper, or changed pytest settings make
the whole suite run again.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from pytest_confgate.collect.tamper import PYTEST_FILES
from pytest_confgate.rank.candidates import IGNORED_NAMES
from pytest_confgate.rank.evaluate import Processes, Settings, run_pytest
from pytest_confgate.rank.inert import inert
from pytest_confgate.rank.models import Regression
from pytest_confgate.rank.trees import RANK_STATE, is_test_file

TEST_FOLDERS = frozenset({"tests", "test", "testing"})


def is_test_support(path: str) -> bool:
    """A file the baseline's tests may read: a test file or anything in a test folder."""
    return is_test_file(path) or any(
        part in TEST_FOLDERS for part in PurePosixPath(path).parts[:-1]
    )


def test_modules(files: Mapping[str, str]) -> list[str]:
    """The test modules of a tree (``conftest.py`` is support, not a module to run)."""
    return [p for p in sorted(files)
            if is_test_file(p) and PurePosixPath(p).name != "conftest.py"]


def rerun_plan(baseline_files: Mapping[str, str], candidate_files: Mapping[str, str]
               ) -> list[str] | None:
    """The baseline modules to run again on the candidate; None: all of them."""
    for path, text in baseline_files.items():
        changed = candidate_files.get(path) != text
        if changed and (path in PYTEST_FILES or (is_test_support(path) and not _module(path))):
            return None
    if any(is_test_support(p) and p not in baseline_files and not last_safe(p, text)
           for p, text in candidate_files.items()):
        return None  # new conftests, helpers or test modules that act when imported
    return [p for p in test_modules(baseline_files) if candidate_files.get(p) != baseline_files[p]]


def last_safe(path: str, text: str) -> bool:
    """A new test module the candidate's own run may hold beside the baseline's tests: it
    does nothing when imported (``inert``), and its tests run after theirs."""
    return _module(path) and inert(text)


def _module(path: str) -> bool:
    return is_test_file(path) and PurePosixPath(path).name != "conftest.py"


def run_regression(
    candidate: Path, baseline: Path, files: tuple[Mapping[str, str], Mapping[str, str]],
    own: Mapping[str, str] | None, workdir: Path, settings: Settings, processes: Processes,
) -> Regression:
    """The baseline's test modules on ``candidate`` with the baseline's test files restored.

    ``files`` are the baseline's and the candidate's trees; ``own`` the outcomes of the
    candidate's own run, which stand for the modules it left alone (None: run them all).
    """
    baseline_files, candidate_files = files
    plan = rerun_plan(baseline_files, candidate_files) if own is not None else None
    modules = test_modules(baseline_files) if plan is None else plan
    kept = {} if plan is None or own is None else {
        test: outcome for test, outcome in own.items()
        if test.split("::", 1)[0] in baseline_files and test.split("::", 1)[0] not in plan
    }
    if plan is not None and not modules:
        return Regression(outcomes=kept)  # pytest without paths would run everything
    tree = workdir / "tree"
    shutil.copytree(candidate, tree, symlinks=True,
                    ignore=lambda _, names: {n for n in names if n in IGNORED_NAMES | {RANK_STATE}})
    restore_machinery(tree, baseline, baseline_files)
    paths = [] if plan is None else modules  # None: what the baseline's settings collect
    run = run_pytest(["-q", "-p", "no:cacheprovider", "--continue-on-collection-errors",
                      f"--rootdir={tree}", *paths],
                     tree, workdir / "state", settings, processes)
    if run.outcomes is None:
        return Regression(problem=run.problem or "pytest gave no outcomes")
    return Regression(outcomes={**kept, **run.outcomes})


def machinery_changed(baseline_files: Mapping[str, str], candidate_files: Mapping[str, str]
                      ) -> bool:
    """Whether the candidate's test machinery differs from the baseline's: its pytest
    settings, or any test-support file that is not a test module (a conftest, a helper, data)
    added, changed or removed."""
    if any(baseline_files.get(name) != candidate_files.get(name) for name in PYTEST_FILES):
        return True
    support = {p for p in (*baseline_files, *candidate_files)
               if is_test_support(p) and not _module(p)}
    return any(baseline_files.get(p) != candidate_files.get(p) for p in support)


def restore_machinery(tree: Path, baseline: Path, baseline_files: Mapping[str, str]) -> None:
    """Give ``tree`` the baseline's test machinery: its pytest settings (or none where it
    had none), every test file and test-support file as the baseline has it, and none the
    baseline does not have (issue 36: also what cross-tests run under)."""
    for name in PYTEST_FILES:  # the baseline's pytest settings, or none where it had none
        target = tree / name
        if name not in baseline_files and (target.is_file() or target.is_symlink()):
            target.unlink()
    for path in sorted(baseline_files):
        if is_test_support(path) or path in PYTEST_FILES:
            target = tree / path
            if target.is_symlink() or target.is_dir():
                _remove(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(baseline / path, target)
    for found in sorted(tree.rglob("*")):  # a new tests/__init__.py runs when test_x.py imports
        relative = found.relative_to(tree).as_posix()
        if (found.is_file() or found.is_symlink()) and is_test_support(relative) and (
            relative not in baseline_files and not _ignored(relative)
        ):
            found.unlink()


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def _ignored(relative: str) -> bool:
    return any(part in IGNORED_NAMES for part in relative.split("/"))


MASKED = frozenset({"xfailed", "skipped"})


def run_unmarked(tests: Sequence[str], tree: Path, state: Path, settings: Settings,
                 processes: Processes) -> dict[str, str]:
    """``tests`` run without their xfail/skip marks: id -> outcome (issue 28). A run that
    gives no outcomes makes each of them an ``error``: never a pass."""
    from pytest_confgate.rank.outcomes_plugin import UNMARK

    if not tests:
        return {}
    run = run_pytest(["-q", "-p", "no:cacheprovider", "--runxfail", f"--rootdir={tree}",
                      *tests], tree, state, settings, processes, {UNMARK: "1"})
    found = run.outcomes or {}
    return {test: found.get(test, "error") for test in tests}

"""Tamper evidence (issue 15): what a change does to the tests and tools that judge it.

Coding agents told to "make the checks pass" delete, skip or weaken tests and silence
findings. Given the base and head versions of the files a change touches, this finds, each
with ``file:line`` and the code on each side (``TamperFinding``):

- tests present on the base and gone or no longer collected (``test_removed``), parametrised
  cases that vanished (``parametrize_case_removed``);
- new ``skip``/``skipif``/``xfail`` marks (aliases, ``pytestmark``, ``pytest.param(marks=)``,
  ``unittest.skip``) and ``pytest.skip()``/``importorskip``/``xfail`` calls on existing tests
  or in fixtures and conftest (``skip_added``), and, when test outcomes are known, tests that
  ran on the base and were skipped or not run on the head (``test_skipped``/``test_removed``);
- fewer live checks in a test that exists on both sides (``assertions_weakened``);
- new suppression comments (``suppression_added``), new ignores and excludes in tool config
  (``tool_ignore_added``), pytest settings or ``collect_ignore`` that run fewer tests
  (``collection_narrowed``) and conftest hooks that can deselect or rewrite tests
  (``test_hook_changed``).

Two front doors share one pure core, ``find_tampering(files)``:

- the gate: ``ChangeAnalysis(root, changes).report()`` reads the base through git (the merge
  base of the ``ChangeSet``) and the head from the working tree, once, thread-safely;
- ``confgate rank``: ``analyse_directories(baseline, candidate, base_outcomes=...,
  head_outcomes=...)`` compares two checkouts, with pytest outcomes by node id when known.

The package: ``core`` (``find_tampering``, pure), ``reading`` (git and checkouts, the two
front doors), and its pure parts: ``syntax`` (names, constant truths), ``checks`` (live
checks), ``shapes`` (the data read), ``suites`` (a module's tests and skips), ``compare``
(base vs head tests), ``comments`` (suppression comments), ``settings`` (tool and pytest
settings), ``patterns`` (static reward-hacking patterns in what a change adds, with
``harness`` for test code and ``special`` for code under test); and, with IO,
``differential`` (the base's tests run with the base's machinery on the head's code after the
main run, in a process that carries no mark of the gate), ``replay`` (new tests run without
their new ``skip``/``xfail`` marks) and ``replay_plugin`` (loaded into the replay's process).

Code is read with ``ast`` and comments with ``tokenize``, never with regexes; what this cannot
see (tests generated at run time, helpers in unchanged modules) is in ``docs/tamper.md``.
"""

from __future__ import annotations

from pytest_confgate.collect.tamper.comments import DIRECTIVES, WATCHED
from pytest_confgate.collect.tamper.compare import RULES, TamperFinding
from pytest_confgate.collect.tamper.core import AddedSuppression, TamperReport, find_tampering
from pytest_confgate.collect.tamper.reading import (
    MAX_FILE_BYTES,
    ChangeAnalysis,
    GitTree,
    analyse_directories,
    versions_as_submitted,
    versions_from_change,
    versions_from_directories,
)
from pytest_confgate.collect.tamper.settings import CONFIG_NAMES, PYTEST_FILES
from pytest_confgate.collect.tamper.shapes import FileVersions

__all__ = [
    "CONFIG_NAMES",
    "DIRECTIVES",
    "MAX_FILE_BYTES",
    "PYTEST_FILES",
    "RULES",
    "WATCHED",
    "AddedSuppression",
    "ChangeAnalysis",
    "FileVersions",
    "GitTree",
    "TamperFinding",
    "TamperReport",
    "analyse_directories",
    "find_tampering",
    "versions_as_submitted",
    "versions_from_change",
    "versions_from_directories",
]

"""Base vs head tests, compared the way a reviewer who has watched agents game CI would.

A base test is followed to the head by its id, then (renamed file, moved into a class or to
another file) by its name, then (renamed) by an identical body. A base test with no head
counterpart is *removed* unless its checks all reappear in new tests (a test split in two, or
renamed and edited). For each pair: fewer live checks per run is *weakened*; parametrised cases
that vanished are *removed cases*; skips that apply now and did not before are *added skips*.
Skips outside tests, conftest hooks and ``collect_ignore`` are compared file by file. Pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pytest_confgate.collect.tamper.shapes import Case, ModuleShape, Rerun, Spot, TestShape
from pytest_confgate.collect.tamper.syntax import no_wider_mark

TEST_REMOVED = "test_removed"
CASE_REMOVED = "parametrize_case_removed"
SKIP_ADDED = "skip_added"
TEST_SKIPPED = "test_skipped"
ASSERTIONS_WEAKENED = "assertions_weakened"
SUPPRESSION_ADDED = "suppression_added"
TOOL_IGNORE_ADDED = "tool_ignore_added"
COLLECTION_NARROWED = "collection_narrowed"
TEST_HOOK_CHANGED = "test_hook_changed"
RULES = (
    TEST_REMOVED, CASE_REMOVED, SKIP_ADDED, TEST_SKIPPED, ASSERTIONS_WEAKENED,
    SUPPRESSION_ADDED, TOOL_IGNORE_ADDED, COLLECTION_NARROWED, TEST_HOOK_CHANGED,
)
"""Every finding's ``rule``, most serious first."""
_RAN = frozenset({"passed", "failed", "error", "xpassed"})
_NOT_RUN = frozenset({"skipped", "xfailed"})
_MAX_LISTED = 3
Keyed = TypeVar("Keyed", Spot, Case)


@dataclass(frozen=True)
class TamperFinding:
    """One sign that the change games its evidence, with the code on each side."""

    rule: str
    file: str
    line: int
    message: str
    base: str | None = None
    """The code on the base (the removed test's ``def`` line, the old parametrize case)."""
    head: str | None = None
    """The code on the head (the added mark or comment, the test's ``def`` line)."""
    test: str | None = None
    """The test it concerns (``path::Class::name``), when it concerns one."""

    def as_item(self) -> dict[str, Any]:
        """The finding as a ``details.items`` entry of the ``test_integrity`` metric."""
        return {
            "rule": self.rule,
            "file": self.file,
            "line": self.line,
            "message": self.message,
            "test": self.test,
            "base": self.base,
            "head": self.head,
        }

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def compare_tests(
    base: Mapping[str, ModuleShape], head: Mapping[str, ModuleShape], renamed: Mapping[str, str]
) -> list[TamperFinding]:
    """Every test finding; ``renamed`` maps a base path to its head path."""
    old_tests = {t.test_id: t for module in base.values() for t in module.tests.values()}
    new_tests = {t.test_id: t for module in head.values() for t in module.tests.values()}
    pairs, gone, fresh = _match(old_tests, new_tests, renamed)
    fresh_checks = {check for test in fresh for check in test.checks}
    for test in (*fresh, *(new for _, new in pairs)):  # a test rewritten as a parametrised one
        fresh_checks |= test.expanded_checks()
    findings = [
        _removed(old, head, renamed)
        for old in gone
        if not (old.checks and set(old.checks) <= fresh_checks)
    ]
    for old, new in pairs:
        findings += _weakened(old, new) + _cases_removed(old, new)
    findings += _skips_added(pairs)
    findings += _spots_added(base, head, renamed)
    findings += _checkers_weakened(base, head, renamed)
    return findings


_MARKS = frozenset({"xfail mark", "skip mark", "unittest skip", "unittest expectedFailure"})
"""Marks that hide a failing test whatever the platform (``skipif`` depends on it)."""


def reruns(
    base: Mapping[str, ModuleShape], head: Mapping[str, ModuleShape], renamed: Mapping[str, str]
) -> list[Rerun]:
    """The tests to run again after the main run: each base test the change edited or
    removed (when its module is still there to put the base version beside), and each new or
    changed test that carries a new ``skip`` or ``xfail`` mark."""
    old_tests = {t.test_id: t for module in base.values() for t in module.tests.values()}
    new_tests = {t.test_id: t for module in head.values() for t in module.tests.values()}
    pairs, gone, fresh = _match(old_tests, new_tests, renamed)
    found: list[Rerun] = []
    for old, new in pairs:
        if old.body != new.body or _cases(old) != _cases(new):
            found.append(Rerun("base", new.path, old.path, _qualname(old), new.test_id, new.line,
                               new.test_id))
    for old in gone:
        home = renamed.get(old.path, old.path)
        if home in head:
            found.append(Rerun("base", home, old.path, _qualname(old), old.test_id, old.line))
    before = {new.test_id: {s.key for s in old.skips} for old, new in pairs}
    for new in (*fresh, *(new for _, new in pairs)):
        known = before.get(new.test_id, set())
        if any(s.kind in _MARKS and s.key not in known for s in new.skips):
            found.append(Rerun("unmarked", new.path, new.path, _qualname(new), new.test_id,
                               new.line))
    return sorted(found, key=lambda r: (r.module, r.line, r.kind))


def _cases(test: TestShape) -> list[tuple[str, tuple[str, ...] | None]]:
    """The parametrised cases by what they hold, not where they are."""
    return [(label, None if cases is None else tuple(c.key for c in cases))
            for label, cases in test.parametrize]


def _qualname(test: TestShape) -> str:
    return test.test_id.split("::", 1)[1]


def _checkers_weakened(
    base: Mapping[str, ModuleShape], head: Mapping[str, ModuleShape], renamed: Mapping[str, str]
) -> list[TamperFinding]:
    """Assertion helpers and fixtures that check less: every test calling them does too."""
    back = {new: old for old, new in renamed.items()}
    findings = []
    for path, module in head.items():
        before = base.get(back.get(path, path))
        for name, new in module.checkers.items():
            old = before.checkers.get(name) if before is not None else None
            if old is None or new.checks >= old.checks:
                continue
            message = (
                f"{name}, which tests call, makes fewer live checks: {old.checks} -> "
                f"{new.checks}"
            )
            findings.append(
                TamperFinding(ASSERTIONS_WEAKENED, path, new.line, message, old.text, new.text)
            )
    return findings


def _match(
    old: Mapping[str, TestShape], new: Mapping[str, TestShape], renamed: Mapping[str, str]
) -> tuple[list[tuple[TestShape, TestShape]], list[TestShape], list[TestShape]]:
    free = dict(new)
    pairs: list[tuple[TestShape, TestShape]] = []
    rest: list[TestShape] = []
    for test in old.values():
        qualname = test.test_id.split("::", 1)[1]
        twin = free.pop(f"{renamed.get(test.path, test.path)}::{qualname}", None)
        if twin is None:
            rest.append(test)
        else:
            pairs.append((test, twin))
    gone: list[TestShape] = []
    for test in rest:
        home = renamed.get(test.path, test.path)
        same_name = sorted(
            (t for t in free.values() if t.name == test.name), key=lambda t: t.path != home
        )
        twin = same_name[0] if same_name else next(
            (t for t in free.values() if t.body == test.body), None
        )
        if twin is None:
            gone.append(test)
        else:
            pairs.append((test, free.pop(twin.test_id)))
    return pairs, gone, list(free.values())


def _removed(
    test: TestShape, head: Mapping[str, ModuleShape], renamed: Mapping[str, str]
) -> TamperFinding:
    module = head.get(renamed.get(test.path, test.path))
    why = module.hidden.get(test.name) if module is not None else None
    for other in ([module] if module is not None else []) + list(head.values()):
        why = why or other.hidden.get(test.name) or other.strays.get(test.body)
    if why is not None:
        message = f"test {test.test_id} is no longer collected: {why}"
    elif module is None and test.path not in head:
        message = f"test {test.test_id} was removed (its file is gone or renamed)"
    else:
        message = f"test {test.test_id} was removed"
    if test.checks:
        checks = "its check" if len(test.checks) == 1 else f"its {len(test.checks)} checks"
        message += f"; no new test makes {checks}"
    return TamperFinding(TEST_REMOVED, test.path, test.line, message, test.text, None, test.test_id)


def _weakened(old: TestShape, new: TestShape) -> list[TamperFinding]:
    if new.weight >= old.weight or len(new.checks) >= len(old.checks):
        return []
    message = (
        f"test {new.test_id} makes fewer live checks: {len(old.checks)} -> {len(new.checks)}"
        + (f" per run ({old.weight} -> {new.weight} in all)" if old.runs > 1 else "")
    )
    return [
        TamperFinding(ASSERTIONS_WEAKENED, new.path, new.line, message, old.text, new.text,
                      new.test_id)
    ]


def _cases_removed(old: TestShape, new: TestShape) -> list[TamperFinding]:
    if new.runs >= old.runs:
        return []
    now = dict(new.parametrize)
    findings = []
    for label, cases in old.parametrize:
        if cases is None:
            continue
        missing = _unmatched(cases, (case.key for case in now.get(label) or ()))
        if not missing or (label in now and now[label] is None):
            continue
        listed = ", ".join(case.text for case in missing[:_MAX_LISTED])
        more = f" and {len(missing) - _MAX_LISTED} more" if len(missing) > _MAX_LISTED else ""
        message = (
            f"test {new.test_id} lost {_plural(len(missing), 'parametrised case')} of "
            f"{label}: {listed}{more} ({old.runs} -> {new.runs} runs)"
        )
        findings.append(
            TamperFinding(CASE_REMOVED, new.path, new.line, message, missing[0].text, new.text,
                          new.test_id)
        )
    return findings


def _skips_added(pairs: Iterable[tuple[TestShape, TestShape]]) -> list[TamperFinding]:
    """New skips on tests that exist on both sides, one finding per skip (not per test)."""
    affected: dict[tuple[str, int, str], tuple[Spot, list[str]]] = {}
    for old, new in pairs:
        gone = _unmatched(old.skips, (spot.key for spot in new.skips))
        for spot in _unmatched(new.skips, (spot.key for spot in old.skips)):
            was = next((o for o in gone if o.kind == spot.kind
                        and no_wider_mark(o.code or o.text, spot.code or spot.text)), None)
            if was is not None:  # the same mark, narrowed or reworded: nothing new is skipped
                gone.remove(was)
                continue
            entry = affected.setdefault((new.path, spot.line, spot.key), (spot, []))
            entry[1].append(new.test_id)
    findings = []
    for (path, line, _), (spot, tests) in affected.items():
        whom = tests[0] if len(tests) == 1 else f"{len(tests)} tests ({', '.join(tests[:2])}, ...)"
        message = f"{spot.kind} added: {whom} no longer runs as before"
        findings.append(TamperFinding(SKIP_ADDED, path, line, message, None, spot.text, tests[0]))
    return findings


def _spots_added(
    base: Mapping[str, ModuleShape], head: Mapping[str, ModuleShape], renamed: Mapping[str, str]
) -> list[TamperFinding]:
    """Skips in fixtures and helpers, conftest hooks, ``collect_ignore``/``pytest_plugins``."""
    back = {new: old for old, new in renamed.items()}
    findings: list[TamperFinding] = []
    for path, module in head.items():
        before = base.get(back.get(path, path))
        if before is None and not path.endswith("conftest.py"):
            continue  # a new module's fixtures serve only its own, new tests
        before = before or ModuleShape(path)
        for spot in _unmatched(module.other_skips, (s.key for s in before.other_skips)):
            message = f"{spot.kind} added outside a test: it can skip the tests that use it"
            findings.append(TamperFinding(SKIP_ADDED, path, spot.line, message, None, spot.text))
        for spot in _unmatched(module.lists, (s.key for s in before.lists)):
            rule = TEST_HOOK_CHANGED if spot.kind == "pytest_plugins" else COLLECTION_NARROWED
            message = f"conftest adds to {spot.kind}: {spot.text}"
            findings.append(TamperFinding(rule, path, spot.line, message, None, spot.text))
        for name, spot in module.hooks.items():
            old = before.hooks.get(name)
            if old is not None and old.key == spot.key:
                continue
            verb = "added" if old is None else "changed"
            message = f"conftest hook {name} {verb}: it can deselect, skip or rewrite tests"
            findings.append(
                TamperFinding(TEST_HOOK_CHANGED, path, spot.line, message,
                              old.text if old else None, spot.text)
            )
    return findings


def _unmatched(items: Iterable[Keyed], keys: Iterable[str]) -> list[Keyed]:
    """``items`` left once each of ``keys`` has taken one item with its key (a multiset
    difference: a skip added next to an identical one is still one more)."""
    available = Counter(keys)
    left = []
    for item in items:
        if available[item.key] > 0:
            available[item.key] -= 1
        else:
            left.append(item)
    return left


def compare_outcomes(
    base: Mapping[str, str],
    head: Mapping[str, str],
    known: Mapping[str, TestShape],
    reported: set[str],
) -> list[TamperFinding]:
    """Tests that ran on the base and were skipped or not run on the head (by node id).

    ``known`` locates base tests by id; tests already in ``reported`` are not repeated.
    """
    findings = []
    for node, outcome in sorted(base.items()):
        test_id = node.split("[", 1)[0]
        now = head.get(node)
        if outcome not in _RAN or test_id in reported or (now is not None and now not in _NOT_RUN):
            continue
        shape = known.get(test_id)
        path = test_id.split("::", 1)[0]
        line = shape.line if shape is not None else 0
        ran = f"test {node} ran on the base ({outcome})"
        if now is None:
            rule, message = TEST_REMOVED, f"{ran}, and not on the head"
        else:
            rule, message = TEST_SKIPPED, f"{ran}; now {now}"
        findings.append(
            TamperFinding(rule, path, line, message, shape.text if shape else None, None, node)
        )
    return findings


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"

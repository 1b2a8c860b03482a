"""Does ``tests/unit`` notice when a tamper rule is removed or weakened by one step? (issue 30)

Each mutant is a one-line edit of ``pytest_confgate/collect/tamper/``: a rule dropped, or a
rule made one step weaker (the weakened-checks rule firing only at zero checks, the
special-casing rule ignoring parametrised cases, ...). For each, the tamper unit tests run on
the mutated code; a mutant they do not kill is a gap in the suite::

    python benchmarks/tamper_mutants.py [--only NAME]

The source is restored after each mutant (and on Ctrl-C). Exit 1 when a mutant survives.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pytest_confgate" / "collect" / "tamper"
TESTS = [
    "tests/unit/test_tamper.py", "tests/unit/test_tamper_text.py",
    "tests/unit/test_tamper_patterns.py", "tests/unit/test_tamper_replay.py",
]

MUTANTS: dict[str, tuple[str, str, str]] = {
    # rule: (module, the code, the mutant)
    "test_removed: dropped": (
        "compare.py", "        for old in gone\n        if not (old.checks",
        "        for old in gone[:0]\n        if not (old.checks"),
    "test_removed: a test without checks no longer counts": (
        "compare.py", "if not (old.checks and set(old.checks) <= fresh_checks)",
        "if not (set(old.checks) <= fresh_checks)"),
    "assertions_weakened: dropped": (
        "compare.py", "findings += _weakened(old, new) + _cases_removed(old, new)",
        "findings += _cases_removed(old, new)"),
    "assertions_weakened: only at zero checks": (
        "compare.py",
        "    if new.weight >= old.weight or len(new.checks) >= len(old.checks):\n        return []",
        "    if new.checks:\n        return []"),
    "assertions_weakened in helpers: dropped": (
        "compare.py", "    findings += _checkers_weakened(base, head, renamed)\n",
        "    findings += []\n"),
    "assertions_weakened in helpers: only at zero checks": (
        "compare.py", "if old is None or new.checks >= old.checks:",
        "if old is None or new.checks > 0:"),
    "parametrize_case_removed: dropped": (
        "compare.py", "findings += _weakened(old, new) + _cases_removed(old, new)",
        "findings += _weakened(old, new)"),
    "parametrize_case_removed: one case may go": (
        "compare.py", "    if new.runs >= old.runs:\n        return []",
        "    if new.runs >= old.runs - 1:\n        return []"),
    "skip_added: dropped": (
        "compare.py", "    findings += _skips_added(pairs)\n", "    findings += []\n"),
    "skip_added outside tests: dropped": (
        "compare.py", "for spot in _unmatched(module.other_skips,",
        "for spot in _unmatched(module.other_skips[:0],"),
    "collection_narrowed by conftest lists: dropped": (
        "compare.py", "for spot in _unmatched(module.lists,",
        "for spot in _unmatched(module.lists[:0],"),
    "test_hook_changed: new hooks pass": (
        "compare.py", "if old is not None and old.key == spot.key:",
        "if old is None or old.key == spot.key:"),
    "test_skipped/test_removed by outcome: dropped": (
        "core.py", "findings += compare_outcomes(base_outcomes, head_outcomes, known, reported)",
        "findings += []"),
    "suppression_added: dropped": (
        "core.py", "_suppression_finding(s) for s in suppressions if s.suppression.directive",
        "_suppression_finding(s) for s in suppressions[:0] if s.suppression.directive"),
    "tool_ignore_added/collection_narrowed in settings: dropped": (
        "core.py", "findings += _config_findings(files)", "findings += _config_findings([])"),
    "patched_under_test: dropped": (
        "harness.py", "    found += _patched_under_test(path, tree, names, touched, own)\n",
        "    found += []\n"),
    "patched_under_test: dotted string targets pass": (
        "harness.py", 'return text if "." in text and kind in ("setattr", "delattr", "patch")',
        'return None if "." in text and kind in ("setattr", "delattr", "patch")'),
    "gate_escape: dropped": (
        "harness.py", "            found += _exit_call(node, names, raising)\n",
        "            found += []\n"),
    "gate_report_written: dropped": (
        "harness.py", "            found += _report_write(node, tainted)\n",
        "            found += []\n"),
    "gate_report_written: paths through a variable pass": (
        "harness.py", "    tainted = _report_names(tree)\n", "    tainted: set[str] = set()\n"),
    "harness_patched: dropped": (
        "harness.py", 'if target and target.split(".")[0] in HARNESS - own:',
        'if target and target.split(".")[0] in frozenset():'),
    "constant_dunder: dropped": (
        "patterns.py", "constant_dunders(file.tree, file.touched)]",
        "constant_dunders(file.tree, file.touched)[:0]]"),
    "constant_dunder: a NotImplemented guard hides it": (
        "special.py", '        if isinstance(item.value, ast.Name) and item.value.id == "NotImpl'
        'emented":\n            continue',
        '        if isinstance(item.value, ast.Name) and item.value.id == "NotImpl'
        'emented":\n            return _NO_VALUE'),
    "special_cased_input: dropped": (
        "patterns.py", "special_cases(file.tree, file.touched, calls)]",
        "special_cases(file.tree, file.touched, calls)[:0]]"),
    "special_cased_input: parametrised cases pass": (
        "special.py", "        for case in _cases(function):", "        for case in [{}]:"),
    "shell_argv: only a bare -c": (
        "patterns.py", 'return flag.startswith("-") and not flag.startswith("--") and "c" in flag',
        'return flag == "-c"'),
    "behaviour_change: an import error passes": (
        "replay.py", '_FAILED = frozenset({"failed", "error"})', '_FAILED = frozenset({"failed"})'),
    "behaviour_change: a removed test passes": (
        "compare.py", "        if home in head:\n", "        if home in head and False:\n"),
    "behaviour_change: parametrised cases are not edits": (
        "compare.py", "if old.body != new.body or _cases(old) != _cases(new):",
        "if old.body != new.body:"),
    "mark_hides_failure: xfail passes": (
        "compare.py", '_MARKS = frozenset({"xfail mark", ', '_MARKS = frozenset({'),
}


def _run_tests() -> bool:
    """True when the tests fail (the mutant is killed)."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:xdist", "-p", "no:cacheprovider",
         *TESTS], cwd=ROOT, capture_output=True, check=False)
    return done.returncode != 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="run the mutants whose name contains this")
    args = parser.parse_args(argv)
    survived = 0
    chosen = {k: v for k, v in MUTANTS.items() if not args.only or args.only in k}
    for name, (module, code, mutant) in chosen.items():
        path = PACKAGE / module
        original = path.read_text(encoding="utf-8")
        if original.count(code) != 1:
            print(f"STALE   {name}: the code to mutate is not in {module} exactly once")
            survived += 1
            continue
        try:
            path.write_text(original.replace(code, mutant), encoding="utf-8")
            killed = _run_tests()
        finally:
            path.write_text(original, encoding="utf-8")
        survived += not killed
        print(f"{'killed ' if killed else 'SURVIVED'} {name}", flush=True)
    print(f"{len(chosen) - survived} of {len(chosen)} mutants killed")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())

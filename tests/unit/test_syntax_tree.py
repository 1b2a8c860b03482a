"""Our parses survive each other in threads, on the CPython versions where ``ast.parse`` alone
does not (gh-106905: CI failed once with "AST constructor recursion depth mismatch" inside
``confgate rank``'s evaluation threads on 3.11.7)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from pytest_confgate import syntax_tree

# Three threads parse a large module while a fourth makes garbage whose finalizers run inside
# the parses' garbage collections; a tiny switch interval lets another thread in right there.
# With bare ast.parse, 3.11.7 fails in about four rounds of five.
RACE = textwrap.dedent(
    """
    import ast, gc, sys, threading
    from pytest_confgate import syntax_tree

    source = open(ast.__file__).read()
    errors = []

    class Finalized:
        def __init__(self):
            self.me = self
        def __del__(self):
            for _ in range(20):
                pass

    def churn():
        for _ in range(5000):
            Finalized()

    def work():
        try:
            for _ in range(10):
                syntax_tree.parse(source)
        except SystemError as exc:
            errors.append(str(exc))

    gc.set_threshold(50, 1, 1)
    sys.setswitchinterval(1e-6)
    for _ in range(4):
        threads = [threading.Thread(target=work) for _ in range(3)]
        threads.append(threading.Thread(target=churn))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    print(len(errors), errors[:1])
    """
)


def test_parses_in_threads_do_not_break_each_other(tmp_path: Path) -> None:
    script = tmp_path / "race.py"
    script.write_text(RACE, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "0", done.stdout


def test_the_lock_is_taken_exactly_on_the_versions_with_the_shared_counter() -> None:
    major_minor, micro = sys.version_info[:2], sys.version_info[2]
    broken = (major_minor == (3, 11) and micro < 8) or (major_minor == (3, 12) and micro < 2)
    assert syntax_tree.PARSES_SHARE_STATE is broken


def test_parse_gives_what_ast_parse_gives() -> None:
    tree = syntax_tree.parse("x = 1\n", filename="page.py")
    assert type(tree).__name__ == "Module"
    assert type(syntax_tree.parse("1 + 2", mode="eval")).__name__ == "Expression"

"""What a line probe costs in a hot loop, before and after it is stripped (issue 19, item 2).

    python benchmarks/probe_cost.py [--loops 2000000] [--repeat 5]

One loop body of a few statements runs ``--loops`` times three ways: compiled plainly, with
line probes (every statement calls ``set.add`` each time), and with line probes after a sweep
(each fired probe jumped over). It prints the best of ``--repeat`` timings, the nanoseconds a
probe adds per executed statement, and checks that all three compute the same result.
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import CodeType

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_confgate.collect.coverage.line_probes import PROBE, instrument
from pytest_confgate.collect.coverage.probe_code import Deinstrumenter

SOURCE = """\
def hot(n):
    total = 0
    for i in range(n):
        if i % 3:
            total += i
        else:
            total -= 1
    return total
"""
STATEMENTS_PER_LOOP = 2  # the `if` and one of its branches run every time round


def _compiled(probed: bool, hits: set[int]) -> tuple[Callable[[int], int], Deinstrumenter]:
    """``hot`` compiled plainly or with probes, and the stripper that knows its code."""
    tree = instrument(ast.parse(SOURCE)) if probed else ast.parse(SOURCE)
    code: CodeType = compile(tree, "hot.py", "exec")
    namespace: dict[str, object] = {PROBE: hits.add}
    exec(code, namespace)  # noqa: S102 -- our own constant source above, never user text
    stripper = Deinstrumenter(PROBE)
    stripper.track(code, "hot.py")
    function = namespace["hot"]
    assert callable(function)
    return function, stripper  # type: ignore[return-value]


def _best(function: Callable[[int], int], loops: int, repeat: int) -> tuple[float, int]:
    best, result = float("inf"), 0
    for _ in range(repeat):
        started = time.perf_counter()
        result = function(loops)
        best = min(best, time.perf_counter() - started)
    return best, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    plain, _ = _compiled(False, set())
    hits: set[int] = set()
    probed, stripper = _compiled(True, hits)
    seconds_plain, expected = _best(plain, args.loops, args.repeat)
    seconds_probed, got_probed = _best(probed, args.loops, args.repeat)
    stripper.sweep({"hot.py": hits})
    seconds_swept, got_swept = _best(probed, args.loops, args.repeat)
    statements = args.loops * STATEMENTS_PER_LOOP
    print(f"plain:          {seconds_plain:.3f} s")
    for name, seconds in (("probed:", seconds_probed), ("probed, swept:", seconds_swept)):
        extra_ns = (seconds - seconds_plain) / statements * 1e9
        print(f"{name:<15} {seconds:.3f} s  ({seconds / seconds_plain:.2f}x plain, "
              f"{extra_ns:+.1f} ns per statement)")
    same = expected == got_probed == got_swept
    print(f"same result: {'yes' if same else 'NO'}; lines recorded: {sorted(hits)}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

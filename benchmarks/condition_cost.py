"""The worst exit conditions the load-time caps still allow, timed (issue 17.9).

The CEL engine holds the GIL and cannot be interrupted, so ``config.expressions`` caps what a
condition may do (two comprehensions, none nested, no list or map built or indexed in a
body) and ``overlays.exit_conditions`` measures each evaluation against ``DEADLINE_S``. This
script times the most expensive shapes that pass the caps, at the 1000-character limit, and
shows the shapes the caps refuse (they ran 46 s and past 60 s before). Run:
``python benchmarks/condition_cost.py``.
"""

from __future__ import annotations

import time

from pytest_confgate.config.expressions import MAX_CONDITION_CHARS, compile_condition
from pytest_confgate.exceptions import ConditionError
from pytest_confgate.overlays.exit_conditions import DEADLINE_S


def _digits(count: int) -> str:
    return "[" + ",".join(str(i % 10) for i in range(count)) + "]"


def _fill(template: str) -> str:
    """``template`` with ``{L}`` replaced by the longest digit list that stays under the cap."""
    count = 1
    while len(template.replace("{L}", _digits(count + 1))) <= MAX_CONDITION_CHARS:
        count += 1
    return template.replace("{L}", _digits(count))


ALLOWED = {
    "one long exists_one": "{L}.exists_one(x, x + x + x + x + x + x + x + x > 100)",
    "map then all": "{L}.map(x, x * 7 + 3).all(y, y > 2)",
    "two filters": "{L}.filter(x, x > 4).size() + {L}.filter(y, y < 3).size() > 0",
    "string growth": '["' + "a" * 300 + '"].map(s, s + s + s + s + s + s + s + s + s + s)'
                     '.all(t, size(t) > 0)',
}
REFUSED = {
    "nested all": "{L}.all(a, {L}.all(b, a + b >= 0))",
    "map building lists": "{L}.map(a, {L}).all(b, size(b) > 0)",
}


def main() -> None:
    print(f"deadline {DEADLINE_S * 1000:.0f} ms; condition cap {MAX_CONDITION_CHARS} chars")
    for name, template in ALLOWED.items():
        source = template if "{L}" not in template else _fill(template)
        program = compile_condition(source).program
        best = min(_timed(program) for _ in range(5))
        print(f"allowed  {name:<22} {len(source):>5} chars  {best * 1000:8.3f} ms")
    for name, template in REFUSED.items():
        try:
            compile_condition(_fill(template))
        except ConditionError as exc:
            print(f"refused  {name:<22} {str(exc)[-70:]}")


def _timed(program: object) -> float:
    started = time.perf_counter()
    program.execute({})  # type: ignore[attr-defined]
    return time.perf_counter() - started


if __name__ == "__main__":
    main()

"""How long a 1 MiB pull-request body takes to read for ``checklist_completion`` (issue 30).

GitHub caps a body at 65,536 characters; the gate reads up to ``MAX_CHECKLIST_BYTES`` (1 MiB)
from a file or an event. Each shape below fills 1 MiB; the parse and the metric are timed
apart. A run of combining marks took 2 s at 64,000 marks and 146 s at 128,000 before items were
made stream-safe (NFKC reorders such a run in quadratic time). Run:
``python benchmarks/checklist_speed.py``.
"""

from __future__ import annotations

import time

from pytest_confgate.collect.checklist import (
    MAX_CHECKLIST_BYTES,
    checklist_metric,
    parse_checklist,
)


def _fill(unit: str) -> str:
    """``unit`` repeated to just under the cap, in UTF-8 bytes."""
    size = len(unit.encode("utf-8"))
    return unit * (MAX_CHECKLIST_BYTES // size)


SHAPES = {
    "same item, ticked": _fill("- [x] tests pass\n"),
    "distinct items": "".join(f"- [{'x' if i % 2 else ' '}] item {i}\n" for i in range(60_000)),
    "blank lines": _fill("\n"),
    "one long line": _fill("a"),
    "comments": _fill("<!-- c -->\n"),
    "fences": _fill("```\n"),
    "combining marks in one item": "- [x] a" + _fill("\u0316\u0301")[:-4],
    "combining marks, many items": _fill("- [ ] a" + "\u0316\u0301" * 200 + "\n"),
}


def main() -> None:
    for name, text in SHAPES.items():
        started = time.perf_counter()
        items = parse_checklist(text)
        parsed = time.perf_counter()
        checklist_metric(items, ["tests pass", "item 1"], source="pr_body")
        done = time.perf_counter()
        print(
            f"{name:30} {len(text.encode('utf-8')) / 1024:7.0f} KiB  {len(items):6} items  "
            f"parse {parsed - started:6.3f} s  metric {done - parsed:6.3f} s"
        )


if __name__ == "__main__":
    main()

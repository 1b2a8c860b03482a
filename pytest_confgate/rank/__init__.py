"""Parallel-solution ranking (SPEC 7, seed solution-ranking): ``confgate rank``.

The pipeline keeps IO at its edges::

    candidates (checkouts) -> evaluate (stage 1, 2: one process per candidate)
        -> crosstest (new tests x candidates) -> assessment (stage 3, optional LLM)
        -> scoring (stage 4, pure) -> ranking (stage 5, pure) -> report (md, json, html)
    feedback_store (SQLite) <-> feedback (pure weight adjustment)

``service.run_ranking`` wires the stages together for the CLI; ``apply`` checks an accepted
winner's evaluated commit out (``--apply``).
"""

from __future__ import annotations

"""Parallel-solution ranking: ``confgate rank``.

The pipeline keeps IO at its edges::

    candidates (checkouts) -> evaluate (stage 1, 2: one process per candidate)
        + build_check (every file compiles, memoised by content; the packages import)
        + regression (the baseline's tests, unmodified, as the baseline's settings collect
          them; skipped for new test modules that are ``inert`` when imported; new tests
          marked xfail/skip run without the mark)
        + lint_copy (ruff and bandit, run by rank beside the tests on copies of the trees
          made before any candidate's code ran; one bandit process for them all)
        + trees / code_metrics / dangerous (static metrics, dangerous operations; pure)
        -> tampering (tamper findings, what added suppressions hide, ``collection``: the
           collection options a candidate dropped; in the worker that evaluated the
           candidate, right after it)
        -> crosstest (new test modules x candidates, under the baseline's conftests,
           settings and helpers; each failure weighed by its writer's standing; each run
           forked from a warm pytest where a fresh process would load the same code:
           ``warm``, and ``warm_server`` in the candidates' Python)
        -> assessment (stage 3, optional LLM)
        -> blocking (stage 1, pure: the task's tests, the gate's hard limits)
        -> scoring (stage 4, pure) -> ranking (stage 5, pure: confidence by the evidence
           a candidate did not write)
        -> report, report_html (md, json, html)
    feedback_store (SQLite) <-> feedback (pure weight adjustment)
    baseline_cache: the baseline's evidence and its per-file tool caches, kept by content
    outcomes_plugin: loaded into every pytest run rank starts; each test's outcome by id

``service.run_ranking`` wires the stages together for the CLI; ``service.decide`` is stages
4 and 5 on measured evidence; ``apply`` checks an accepted winner's evaluated commit out
(``--apply``). ``models`` holds the data passed between them.
"""

from __future__ import annotations

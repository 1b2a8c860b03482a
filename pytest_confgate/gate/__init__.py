"""The gate's own stages: the change, the evidence wiring, the policy and the verdict.

One evaluation flows one way::

    anchor      where the base and the configuration come from: never from the change
    change      what the change touched, which configuration judges it, the applied tier
    machinery   pure: edits of conftest, tool settings (by section) and workflows -> T2
    engine      ``GateRun``: starts the collectors, gathers metrics, decides, builds the report
    collectors  the table of per-metric collectors the engine calls
    background  lint and security beside the tests, in a helper process
    roles       which share of the work one pytest process does under xdist
    scope       pure: risk rules, patch coverage, findings on changed lines
    tiers       pure: a tier, once set, only rises (the change's machinery, tamper evidence,
                a judge whose input tried to instruct it or that saw part of the diff)
    waivers     pure: active waivers excuse findings; expired ones excuse nothing
    policy      pure: tier + evidence + sign-offs -> ``Verdict``
    score       pure: ``compute_confidence``, ``compute_raw``
    confidence  the advisory score: formula, llm or hybrid; never read by the policy
    agent_evidence  the gate's calls to agents: preflight, the judge, the confidence
    plugin_host third-party pluggy plugins, each called on its own
    loop_evidence  a task's loop metrics collected by its gate step, never deciding
    merge       ``confgate merge``: CI shards -> one report decided once
    shard_data  the shards' coverage.py data files, refused by name when empty or foreign
    recount     the publish step decides again: the tier, the base's policy over the report's
                evidence, the PR's reviews, the gate job's result
    recheck     pure: whether a report's verdict follows from its own evidence (publish asks)
    binding     whether a saved report is this run's verdict on this commit (publish asks)
    rederive    the tier worked out again in the publish step from GitHub's file list, and
                gate-tampering code in the change's Python files
    channel     the test outcomes and the run-time audit's findings streamed from the test
                process to ``confgate gate`` as they happen (the plugin's end and the
                supervisor's tally)
    supervisor  ``confgate gate``: pytest as a child process, its outcomes counted outside
                it; ruff, bandit, the coverage analysis (from the child's raw data), the
                judge and the differential run done in the supervisor; the report written
                after every process of the run ended
    supervised  pure: the test process's report with the supervisor's outcomes and metrics,
                decided again
    child       the test process's entry: ``python -m pytest`` once the supervisor says go
    source_watch  writes to what ruff and bandit read while they read it (``inotify``,
                armed before the go)

Below it sit ``collect/`` (evidence, the only IO) and ``config/``; above it the front doors
(``plugin.py``, ``cli/``) and ``overlays/``, which run it.
"""

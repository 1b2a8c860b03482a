"""Evidence collection: the only stage that does IO (subprocesses, files, tracing).

Each module turns one source of evidence into an ``EvalMetric``:

- ``tests``    -- tallies pytest outcomes into ``test_pass_rate`` (fed by the plugin);
- ``coverage`` -- drives coverage.py's API in process into ``test_coverage``;
- ``lint``     -- runs ruff (JSON output) into ``lint_score``;
- ``security`` -- runs bandit (JSON output) into ``security_score``;
- ``sources``  -- finds what to measure when ``source:`` is not configured.

Collectors never raise for a tool's failure: a missing, crashing or garbled tool gives a
metric with ``status`` ``unavailable`` or ``error`` and a ``reason``, so the gate fails closed.
The engine decides *when* they run (lint and security start with the tests, in threads).
"""

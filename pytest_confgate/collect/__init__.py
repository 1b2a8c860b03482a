"""Evidence collection: the only stage that does IO (subprocesses, files, tracing).

Each module turns one source of evidence into an ``EvalMetric``:

- ``tests``        -- tallies pytest outcomes into ``test_pass_rate`` (fed by the plugin);
- ``coverage``     -- drives coverage.py's API in process into ``test_coverage`` with the
  project's coverage.py settings, combines xdist workers' data, adopts pytest-cov's
  measurement and saves a shard's data for ``confgate merge``;
- ``coverage_engines`` -- how lines are recorded: line probes, coverage.py's tracer, or both;
- ``coverage_files`` -- which files coverage.py would measure, asked of coverage.py itself;
- ``coverage_children`` -- code run in child processes (coverage.py's ``patch`` and
  ``concurrency``), measured by coverage.py's own start-up hooks into a private folder, combined;
- ``foreign_loaders`` -- measured modules another import hook executes, seen by an ``exec``
  audit hook, so the probe engine has coverage.py trace them (3.11);
- ``early_start`` -- coverage.py started before pytest imports its plugins
  (``python -m pytest_confgate``), its part handed over to the gate's measurement;
- ``line_probes``  -- line coverage without a tracer: modules compiled with a probe before
  each statement, the recorded lines analysed by coverage.py itself;
- ``probe_import`` -- the finder and loader that put the probes in a module, the import
  otherwise left to the import system (no frame of ours on the module's stack);
- ``probe_code``   -- instrumented code cached on disk; fired probes jumped over where nothing
  but the function holds its code (3.10/3.11);
- ``branch_probes`` -- branch coverage without a tracer on 3.11: arc probes on each branch's
  edges, written by ``branch_edits``, at the end of ``finally`` blocks by ``branch_finally``,
  their offsets turned into coverage.py's arcs by ``arc_resolver``;
- ``monitor_engine`` / ``monitor_probes`` -- 3.12+: lines and branches from ``sys.monitoring``;
- ``coverage_analysis`` -- coverage.py's per-file analysis, kept by content between runs;
- ``ahead``        -- a helper process on the other core for a cold run's per-file work:
  half the branch probes' compile-ahead, or coverage.py's analyses while the tests run;
- ``coverage_figures`` -- coverage.py's JSON report turned into ``test_coverage``;
- ``lint``         -- runs ruff (JSON output) into ``lint_score``;
- ``security``     -- runs bandit (JSON output) into ``security_score``; ``_bandit_files``
  mirrors bandit's file discovery so a warm run need not start it;
- ``tool_cache``   -- per-file tool results keyed by content, tool version and config;
- ``cache_trust``  -- every cache read and write: entries the project's code changed are not
  read and are swept at the end of the run; pickles restore only the classes a cache holds;
- ``runtime_audit`` -- a PEP 578 audit hook: what the project's code does to the gate's state,
  pytest and its own process, as ``test_integrity`` findings with file and line;
- ``runtime_snapshot`` -- what the plugin compares instead (no audit event): pytest's, the
  gate's and the builtins' functions and classes replaced, the real output streams moved;
- ``plugin_audit`` -- pytest plugins registered from project files other than conftests (or
  from no file), failed reports put in a passing category (counted failed, as pytest does);
- ``tests_audit`` -- single tests: skip/xfail marks added after collection, test methods
  swapped by the code under test, exceptions lost in threads, skips because a project
  module is missing;
- ``changes``      -- the change from git: files and lines since the merge base;
- ``tamper/``      -- the tamper analysis package, base vs head (``ast``/``tokenize``): tests
  deleted, skipped or weakened, suppressions and tool ignores added, reward-hacking patterns;
  for the gate and ``rank``. ``tamper/core`` is its pure core, ``tamper/reading`` reads git
  and checkouts; the package's ``__init__`` lists its parts;
- ``integrity``    -- ``test_integrity`` from the tamper analysis of the gate's change;
- ``unsuppressed`` -- findings behind a ``# noqa``/``# nosec`` the change added still count;
- ``symlinks``     -- a change to a symlink's target counts under the link's path too;
- ``provenance``   -- what the report is bound to: head commit, uncommitted changes, run id;
- ``checklist``    -- Markdown task lists in the PR body or a file;
- ``requirements`` -- requirement files and the tests linked to them;
- ``signoffs``     -- human sign-offs from the PR's reviews (or ``CONFGATE_SIGNOFFS``);
- ``sources``      -- finds what to measure when ``source:`` is not configured, tests left out;
- ``_tool``        -- runs one external tool with a timeout that kills its process group.

Collectors never raise for a tool's failure: a missing, crashing or garbled tool gives a
metric with ``status`` ``unavailable`` or ``error`` and a ``reason``, so the gate fails closed.
The engine decides *when* they run (lint and security start with the tests, in a helper
process: ``gate.background``).
"""

"""Evidence collection: the only stage that does IO (subprocesses, files, tracing).

Each module turns one source of evidence into an ``EvalMetric``:

- ``tests``        -- tallies pytest outcomes into ``test_pass_rate`` (fed by the plugin);
- ``coverage/``    -- the coverage engine package into ``test_coverage``: coverage.py's settings,
  files and figures, lines and branches recorded by ``sys.monitoring`` (3.12+), probes
  compiled into the measured modules (3.10/3.11) or coverage.py's tracer, chosen in one place;
  its ``__init__`` lists its parts and says where each engine lives;
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
- ``pytest_settings`` -- pytest's options (``addopts``, ``PYTEST_ADDOPTS``, the command line)
  read before the test process starts, e.g. pytest-cov's coverage floor (pure);
- ``changes``      -- the change from git: files and lines since the merge base, and the
  snapshot of the working tree (a git tree) the analyses after the run read;
- ``git_objects``  -- git objects read with their bytes checked against their names: the run
  can write ``.git``, so what it left there is never read as the change;
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

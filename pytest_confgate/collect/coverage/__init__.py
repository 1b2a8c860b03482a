"""The coverage engine: ``test_coverage`` with coverage.py's settings, files and figures.

One engine records a run's lines and branches; ``choice`` picks it, by Python version and by
what the run's configuration allows, in that one place. Each engine only fills the data of the
``coverage.Coverage`` object the session owns; what is measured, and the figures, are always
coverage.py's own, so they equal ``coverage run -m pytest`` + ``coverage json``.

The session (one measurement, start to figures):

- ``session``   -- ``CoverageSession``: start and stop, child processes, xdist workers' parts,
  pytest-cov's measurement adopted, a shard's data saved for ``confgate merge``;
- ``selection`` -- what is measured (the gate's ``source:``, the changed files, or coverage.py's
  ``source``/``source_pkgs``/``source_dirs``/``include``) and how the report names it;
  ``settings`` reads and sets those settings alike on every coverage.py it supports;
- ``reporting`` -- coverage.py's JSON report of the data into ``test_coverage``, made once;
- ``choice``    -- which engine measures the run.

The engines, one module each (a file an engine cannot measure exactly is traced by coverage.py
and ``details.engine_by_file`` names it):

- ``monitor_engine`` (3.12+) -- ``sys.monitoring``: no code object changed, no frame added;
  ``monitor_probes`` holds the callbacks, ``arc_resolver`` turns a branch event's offsets into
  coverage.py's arc (3.12 and 3.13 return with ``RETURN_CONST``, which coverage.py's own
  resolver does not know);
- ``probe_engine`` (3.10/3.11, where ``sys.monitoring`` does not exist and the tracer costs
  most) -- probes compiled into the measured modules: ``line_probes`` (``probe_import``
  finds and loads them with no frame of ours on the stack, ``probe_code`` strips fired ones
  and caches the instrumented code); with branch coverage ``branch_probes`` places arc probes
  where coverage.py's arc analysis says each exit goes (``branch_edits`` writes them into the
  tree, ``branch_finally`` follows the end of a ``finally`` block's exception copy); a file
  with an ``async with`` whose exit 3.11 locates on a ``raise`` (``aexit``) is traced instead;
- ``tracer`` -- coverage.py's own tracer, everyone's fallback, with its ``sysmon`` core where
  coverage.py can use it; ``children`` measures code in child processes by coverage.py's own
  start-up hooks (its ``patch`` and ``concurrency``; no coverage.py object the gate starts
  applies them itself); ``foreign_loaders`` sees a measured
  module another import hook executes, so the probe engine has coverage.py trace it.

Around them:

- ``files``     -- which files coverage.py would measure, asked of coverage.py itself;
- ``analysis``  -- coverage.py's per-file analysis, kept by content between runs;
- ``ahead``     -- a helper process on the other core for a cold run's per-file work;
- ``assert_rewrite`` -- pytest's assertion rewriting where no pytest configuration exists (the
  helper compiles test modules as the run will), and what keys rewritten code in the cache;
- ``figures``   -- coverage.py's JSON report turned into the ``test_coverage`` metric;
- ``data_copy`` -- part of another process's data, copied with its contexts (a report's
  ``contexts`` counts lines by them);
- ``early_start`` / ``early_restart`` -- measuring from the process start (``python -m
  pytest_confgate``, ``confgate gate``'s child), or starting once more when pytest imported a
  measured module first.
"""

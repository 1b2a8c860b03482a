"""Report writers: they render a finished ``GateReport`` and decide nothing.

- ``json_report`` -- the schema-versioned JSON file, written atomically inside the work tree;
- ``terminal``    -- the lines printed after pytest's own summary.
"""

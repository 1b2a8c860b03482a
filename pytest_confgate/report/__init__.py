"""Report writers: they render a finished ``GateReport`` and decide nothing.

- ``json_report`` -- the schema-versioned JSON file, written atomically inside the work tree,
  and the shipped ``schema.json`` (kept equal to the models by a test);
- ``terminal``    -- the lines printed after pytest's own summary;
- ``markdown``    -- the job summary and sticky PR comment (hidden marker, 1 MiB cap,
  untrusted text escaped);
- ``sarif``       -- SARIF 2.1.0 of lint and security findings, with the tools' own rule ids,
  within GitHub's upload limits (most severe results kept, the rest counted);
- ``html``        -- one self-contained page with inline SVG charts;
- ``writers``     -- format name -> writer, and ``load_report`` for saved reports;
- ``display``     -- how numbers read (a failing value never shows equal to its threshold);
- ``rows``        -- what every writer shows alike: a metric's row (the policy's ``passed`` and
  ``limit``), missing lines as ranges per file, findings most severe first, sign-offs in words;
- ``compare``     -- each metric against a saved report of the base branch (``--compare``).
- ``first_screen`` -- what a reviewer needs first, alike in every writer: what blocks (each
  failed condition's figure in the unit of its limit, the fix before any waiver), what
  ``test_integrity`` did to the tier, patch coverage;
- ``escape``      -- Markdown made inert, and break points for long ids in table cells.

Any saved report renders again: writers read only the ``GateReport``.
"""

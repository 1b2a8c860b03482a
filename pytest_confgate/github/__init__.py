"""The GitHub side: reading from and writing to github.com and the Actions runner.

- ``api``        -- a small stdlib REST client (token masked in every error, bounded retries,
  pagination only on GitHub's host);
- ``event``      -- the Actions event file (``GITHUB_EVENT_PATH``): the pull request's number,
  head and base commits, author, title and body, read once with a size cap; whether a run is
  a pull request's at all (``pull_request``, ``pull_request_review``, ...);
- ``reviews``    -- sign-offs from the pull request's reviews (latest per person, on the head
  commit, by an approver who is not the author, wrote no commit of it and is not a bot; the
  rest named with the reason);
- ``pulls``      -- a pull request's file list and a file's text at a commit (contents API);
- ``publish``    -- what ``confgate github publish`` writes: job summary, outputs with random
  delimiters, the one sticky PR comment, SARIF and HTML rendered again from its verdict;
- ``annotations`` -- the escaped workflow commands: tamper findings, findings on changed lines
  at SARIF's levels and columns, uncovered changed line ranges, within GitHub's caps;
- ``base_report`` -- the base branch's newest confgate report artifact, through the API;
- ``run_report`` -- a ``confgate run`` report to publish: its deciding gate report (inside the
  run's folder), whether it escalated, and its section of the summary;
- ``action_rank`` -- the Action's ``command: rank``: ``confgate rank`` run like the gate step
  (no token), then summary, sticky comment and outputs from its files;
- ``action_run`` -- the Action's gate step: old reports removed, the pytest argv from ``env:``
  values, tokens kept out of the tests' environment, the change's output kept from issuing
  workflow commands, pytest's status passed on (a report that only waits for a sign-off
  passes the step in ``mode: gate``).

It decides nothing: the gate reads sign-offs through ``collect.signoffs`` and re-counts them in
``gate.recount``; the ``confgate github`` command (``cli.github``) wires publishing together.
"""

"""The GitHub side: everything the Action and ``confgate github`` do on github.com.

- ``api``        -- a small stdlib REST client (token masked in every error, bounded retries,
  pagination only on GitHub's host);
- ``action_run`` -- the Action's gate step: builds the pytest argv from ``env:`` values and
  keeps the change's output from issuing workflow commands;
- ``publish``    -- ``confgate github publish``: recounts sign-offs from the PR's reviews,
  writes the job summary, outputs, annotations and the sticky comment, and exits with the
  verdict.

Above the gate: it reads finished reports and may re-decide sign-offs, never the evidence.
"""

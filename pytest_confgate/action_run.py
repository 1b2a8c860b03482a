"""``python -m pytest_confgate.action_run``: the GitHub Action's gate step, at its public path.

Workflows and the Action call this name; the step itself lives in ``github.action_run``.
"""

from __future__ import annotations

import sys

from pytest_confgate.github.action_run import main

__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover - the Action's entry point
    sys.exit(main())

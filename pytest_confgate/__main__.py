"""``python -m pytest_confgate [pytest arguments]``: ``pytest --confgate``, measured from the start.

Coverage starts before pytest is imported, so pytest plugins and the packages pytest imports
(pluggy, say) count their import-time lines, as under ``coverage run -m pytest``. The arguments
are pytest's, unchanged; ``--confgate`` is added when missing.

``pytest --confgate`` restarts itself this way when a measured module ran before it could start
(``collect.coverage.early_restart``); then pytest is run as it was started (``python -m pytest``
or the ``pytest`` script), so the tests see the ``sys.argv[0]`` and ``__main__`` of bare pytest.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    from pytest_confgate.collect.coverage import early_restart, early_start

    started_as = os.environ.pop(early_restart.RESTARTED_AS, None)
    early_start.begin()
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if started_as is not None and early_restart.pytest_entry(started_as):
            return _as_started(started_as, args)
        import pytest

        if "--confgate" not in args:
            args.insert(0, "--confgate")
        return int(pytest.main(args))
    finally:
        early_start.discard()


def _as_started(entry: str, args: list[str]) -> int:
    """Run pytest's own entry, as the restarted process was first started, with its arguments
    unchanged (``--confgate`` came with them, or from the settings file)."""
    import runpy

    sys.argv[1:] = args
    try:
        if entry in ("pytest", "py.test"):
            runpy.run_module(entry, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(entry, run_name="__main__")
    except SystemExit as done:
        code = done.code
        if code is None or isinstance(code, int):
            return int(code or 0)
        raise
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

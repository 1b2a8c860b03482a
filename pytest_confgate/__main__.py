"""``python -m pytest_confgate [pytest arguments]``: ``pytest --confgate``, measured from the start.

Coverage starts before pytest is imported, so pytest plugins and the packages pytest imports
(pluggy, say) count their import-time lines, as under ``coverage run -m pytest``. The arguments
are pytest's, unchanged; ``--confgate`` is added when missing.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from pytest_confgate.collect.coverage import early_start

    early_start.begin()
    import pytest

    args = list(sys.argv[1:] if argv is None else argv)
    if "--confgate" not in args:
        args.insert(0, "--confgate")
    try:
        return int(pytest.main(args))
    finally:
        early_start.discard()


if __name__ == "__main__":
    raise SystemExit(main())

"""``collect.coverage.foreign_loaders``: module bodies seen as they start, whatever runs them."""

from __future__ import annotations

from pathlib import Path
from types import CodeType

from pytest_confgate.collect.coverage import foreign_loaders


def test_a_module_body_from_a_file_is_seen_and_code_made_from_text_is_not(
    tmp_path: Path,
) -> None:
    """A dataclass's ``__init__``, attrs' and pytest's own generated code run ``exec`` on
    module-level code named ``<string>``: no file coverage.py measures. Each one walked the
    stack here (and set off the run-time audit's own walk): 34,000 times on click's suite,
    a tenth of a second."""
    seen: list[str] = []

    def handler(code: CodeType, _module: str, _loader: str) -> None:
        seen.append(code.co_filename)

    path = str(tmp_path / "mod.py")
    foreign_loaders.watch(handler)
    try:
        exec(compile("x = 1\n", "<string>", "exec"), {})  # noqa: S102 - our own constant text
        exec(compile("x = 1\n", path, "exec"), {})  # noqa: S102 - as runpy.run_path does
    finally:
        foreign_loaders.unwatch(handler)
    assert seen == [path]

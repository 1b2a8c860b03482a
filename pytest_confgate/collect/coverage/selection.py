"""What a coverage session measures and how the report names it.

The changed files (pull-request mode), the gate's ``source:`` (or, with none, the packages
``collect.sources`` finds, tests left out), or coverage.py's own ``source`` /
``source_pkgs`` / ``source_dirs`` / ``include`` when the project set them and the gate's
configuration did not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_confgate.collect.coverage.figures import relative
from pytest_confgate.collect.coverage.settings import SELECTION, option, set_selection
from pytest_confgate.collect.sources import tests_omit_patterns


class Selection:
    """The part of ``CoverageSession`` that chooses and names what is measured."""

    root: Path
    sources: list[Path]
    only: list[Path] | None
    _own_sources: bool
    _omit_tests: bool
    _cov: Any
    _selected_by: str

    def _select(self, cov: Any) -> str | None:
        """What is measured: the changed files, the gate's sources, or the project's choice.

        Returns why nothing can be measured, if so.
        """
        if self.only is not None:
            # Measuring only what changed is what makes a pull-request gate cheap.
            self._replace_selection(cov, include=[str(p) for p in self.only])
            return None
        if not self._own_sources and any(option(cov, name) for name in SELECTION):
            self._selected_by = "coverage.py configuration"
            return None
        if not self.sources:
            return (
                f"no source code found to measure under {self.root}; set `source:` in the "
                "confgate configuration (or `source` in coverage.py's)"
            )
        dirs = [str(p) for p in self.sources if p.is_dir()]
        modules = [p.stem for p in self.sources if p.is_file()]
        self._replace_selection(cov, source=dirs + modules)
        if self._omit_tests:
            omit = list(cov.get_option("run:omit") or [])
            cov.set_option("run:omit", omit + tests_omit_patterns(self.sources))
        return None

    @staticmethod
    def _replace_selection(
        cov: Any, *, source: list[str] | None = None, include: list[str] | None = None
    ) -> None:
        set_selection(cov, {"run:source": source or [], "run:include": include or []})

    def _chooser(self) -> str:
        """Who chose what is measured, as the report says it: the configuration's ``source:``
        is the user's choice, not the gate's guess."""
        if self._selected_by == "confgate" and self._own_sources:
            return "source: in the configuration"
        return self._selected_by

    def _source_names(self) -> list[str]:
        """What was measured, as the report names it."""
        if self._cov is not None and self._selected_by != "confgate":
            chosen = [*option(self._cov, "run:source"), *option(self._cov, "run:source_pkgs"),
                      *option(self._cov, "run:source_dirs")]
            named = [self._relative(Path(s)) if Path(s).exists() else s for s in chosen]
            return named or list(self._cov.get_option("run:include") or [])
        return [self._relative(p) for p in self.sources]

    def _relative(self, path: Path) -> str:
        return relative(path, self.root)

    def _names(self) -> str:
        """What is measured, for hints: coverage.py's own selection when it chose."""
        return ", ".join(self._source_names()) or "the measured code"

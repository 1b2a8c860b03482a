"""Which files coverage.py would measure, asked of coverage.py itself (for line probes).

Line probes replace coverage.py's tracer, not its judgement: the files they instrument must be
exactly the files the tracer would have recorded under the same configuration (``source``,
``source_pkgs``, ``include``, ``omit``, the stdlib and third-party exclusions), and files that
never ran must be reported at 0% as coverage.py reports them. Both answers come from
coverage.py's own ``InOrOut`` (the class its tracer consults), built from the ``Coverage``
object's configuration. If this coverage.py cannot give them, ``FileSelection.build`` says why
and the caller traces with coverage.py instead.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from pytest_confgate.collect.namespaces import module_file


@dataclass
class FileSelection:
    """coverage.py's answer to "is this file measured?", plus the files that could have run."""

    _inorout: Any
    _canonical: Any
    _cache: dict[str, bool] = field(default_factory=dict)

    @classmethod
    def build(cls, cov: Any) -> FileSelection | str:
        """The selection of ``cov`` (a ``coverage.Coverage``), or why there cannot be one."""
        config = cov.config
        if getattr(config, "plugins", None):
            return "coverage.py plugins are configured (their files need the tracer)"
        if getattr(config, "dynamic_context", None) not in (None, "", "none"):
            return "dynamic contexts are configured (they need the tracer)"
        try:
            from coverage.files import canonical_filename
            from coverage.inorout import InOrOut
            from coverage.plugin_support import Plugins

            inorout = InOrOut(
                config=config,
                warn=lambda msg, slug=None, once=False: None,  # the tracer run warns, not us
                debug=None,
                include_namespace_packages=config.include_namespace_packages,
            )
            inorout.plugins = Plugins()
        except Exception as exc:  # an internal API of coverage.py that may move: trace instead
            return f"this coverage.py cannot tell which files it measures ({exc})"
        return cls(inorout, canonical_filename)

    def wants(self, filename: str, module: str, canonical: str | None = None) -> bool:
        """Whether coverage.py's tracer would record ``filename``, imported as ``module``
        (``canonical``: its canonical name, when the caller knows it already)."""
        known = self._cache.get(filename)
        if known is None:
            frame = SimpleNamespace(f_globals={"__name__": module})
            canonical = canonical or self._canonical(filename)
            known = self._inorout.check_include_omit_etc(canonical, frame) is None
            self._cache[filename] = known
        return known

    def imported(self) -> dict[str, str]:
        """Measured modules imported already, ``{canonical file: module name}``.

        Hundreds of modules are imported by now, from a few dozen folders, and resolving
        each file's name walks every folder above it: each folder is resolved once instead.
        """
        found = {}
        folders: dict[str, str] = {}
        for name, module in list(sys.modules.items()):
            filename = module_file(module)
            if filename is None or not filename.endswith((".py", ".pyw")):
                continue
            canonical = self._canonical_by_folder(filename, folders)
            if self._outside_source_folders(canonical):
                self._cache.setdefault(filename, False)
            elif self.wants(filename, name, canonical):
                found[canonical] = name
        return found

    def _outside_source_folders(self, canonical: str) -> bool:
        """Whether a resolved name lies outside every ``source`` folder when only folders
        select (no ``source_pkgs``): coverage.py's own check would say so too, after
        resolving the name once more (its ``TreeMatcher``), for each of hundreds of modules.
        """
        inorout = self._inorout
        matcher = getattr(inorout, "source_match", None)
        paths = getattr(matcher, "paths", None)
        if getattr(inorout, "source_pkgs_match", None) or not matcher:
            return False  # anything else is asked of coverage.py itself
        if not isinstance(paths, list) or not all(isinstance(path, str) for path in paths):
            return False
        return not any(
            canonical.startswith(path) and (canonical == path or canonical[len(path)] == os.sep)
            for path in paths
        )

    def _canonical_by_folder(self, filename: str, folders: dict[str, str]) -> str:
        """coverage.py's canonical name of ``filename``: on a case-sensitive system, that of
        its folder and its own name unless the file itself is a symbolic link."""
        folder, name = os.path.split(filename)
        if sys.platform == "win32" or not os.path.isabs(filename) or os.path.islink(filename):
            return str(self._canonical(filename))
        real = folders.get(folder)
        if real is None:
            real = folders[folder] = str(self._canonical(folder))
        return os.path.join(real, name)

    def unexecuted_candidates(self) -> list[str]:
        """Every file coverage.py would report at 0% if it never ran (its own search)."""
        try:
            return sorted({self._canonical(path) for path, _ in self._find()})
        except Exception:  # the internal search failed: report the executed files only
            return []

    def package_files(self) -> list[str]:
        """The files of the top-level packages named in ``source`` (or ``source_pkgs``) that
        coverage.py would measure, found without importing them (its own search lists them
        only once imported)."""
        import importlib.util

        found = set()
        for package in getattr(self._inorout, "source_pkgs", []):
            if "." in package:  # finding a submodule imports its parent: leave it
                continue
            try:
                spec = importlib.util.find_spec(package)
            except (ImportError, ValueError):
                continue
            folders = list(getattr(spec, "submodule_search_locations", None) or [])
            for folder in folders:
                for where, _dirs, files in os.walk(folder):
                    parts = os.path.relpath(where, folder).split(os.sep)
                    prefix = ".".join([package, *(p for p in parts if p != ".")])
                    for name in files:
                        if not name.endswith(".py"):
                            continue
                        stem = name[:-3]
                        module = prefix if stem == "__init__" else f"{prefix}.{stem}"
                        path = os.path.join(where, name)
                        if self.wants(path, module):
                            found.add(self._canonical(path))
        return sorted(found)

    def archived_files(self) -> list[str]:
        """Python files inside zip archives under the source folders that coverage.py would
        measure: ``zipimport`` loads them, so probes never can; they need the tracer."""
        import zipfile

        found = set()
        for folder in getattr(self._inorout, "source_dirs", []):
            for where, _dirs, files in os.walk(folder):
                for name in files:
                    if not name.endswith((".zip", ".egg")):
                        continue
                    archive = os.path.join(where, name)
                    try:
                        with zipfile.ZipFile(archive) as opened:
                            members = [m for m in opened.namelist() if m.endswith(".py")]
                    except (OSError, zipfile.BadZipFile):
                        continue
                    for member in members:
                        module = member[:-3].replace("/", ".").removesuffix(".__init__")
                        path = os.path.join(archive, *member.split("/"))
                        if self.wants(path, module):
                            found.add(self._canonical(path))
        return sorted(found)

    def _find(self) -> Any:
        return self._inorout.find_possibly_unexecuted_files()


"""Lint and security beside the tests, in a helper process (issue 19).

They used to run in threads of the pytest process. A thread that runs Python while pytest
imports conftest files is not harmless: coverage.py (any tracer, pytest-cov's too) re-imports
``source`` packages when ``sys.path`` changes and then deletes every module imported
meanwhile, by any thread (coverage.py issue 2247), so a run failed with ``KeyError:
'conftest'`` or a module of ours vanishing. A helper process shares no ``sys.modules`` and no
tracer, and its Python work (hashing files for the cache, parsing the tools' JSON) no longer
competes with the tests for the GIL.

``python -m pytest_confgate.gate.background`` reads one JSON request on stdin (metric configs,
root, sources, cache folder, and the change the tamper analysis reads) and writes one JSON
object of ``EvalMetric``s on stdout, with the cache entries it wrote (the gate vouches for
them, ``cache_trust``). The helper builds its own ``ChangeAnalysis`` from the
change, so lint, security and ``test_integrity`` share one analysis there, as they did in
threads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_confgate.collect import cache_trust
from pytest_confgate.models import ChangeSet, EvalMetric, MetricStatus
from pytest_confgate.processes import installed_module, kill_process_group, tail

if TYPE_CHECKING:  # the tamper analysis is imported where a change is analysed, not before
    from pydantic import TypeAdapter

    from pytest_confgate.collect.tamper import ChangeAnalysis

_SCRUBBED = ("COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG", "COV_CORE_SOURCE")
"""Variables that would make coverage.py measure the helper itself."""
WRITTEN_KEY = "_cache_written"
"""The helper's answer lists the cache entries it wrote under this key (``cache_trust``)."""
_SLACK_S = 60.0
"""Start-up and parsing time allowed beyond the slowest tool's own ``timeout_s``."""


class BackgroundTools:
    """One helper process running the background collectors; ``result(kind)`` waits for it.

    What the per-file caches hold in full (a warm run: every file unchanged since its last
    scan, no change to analyse) is answered in this process and the helper is not started
    for it: its Python start-up would cost more than the tools' whole cached work.
    """

    def __init__(self, configs: Sequence[Any], root: Path, sources: list[Path],
                 cache_dir: Path | None, analysis: ChangeAnalysis | None = None) -> None:
        self.kinds = [config.type for config in configs]
        self._configs = list(configs)
        self._sources = sources
        self._cache_dir = cache_dir
        self._analysis = analysis
        self._deadline_s = max(float(getattr(c, "timeout_s", 300.0)) for c in configs) + _SLACK_S
        self._proc: subprocess.Popen[bytes] | None = None
        self._ready: dict[str, EvalMetric] = {}
        self.helper_kinds: list[str] = []
        """The kinds the helper measures (none when the caches answered them all)."""
        self._results: dict[str, EvalMetric] | None = None
        self._root = root
        self._started_at = time.monotonic()

    def start(self) -> None:
        """Answer what the caches hold; start the helper for the rest, if any."""
        for config in self._configs:
            cached = _from_cache(config, self._root, self._sources, self._cache_dir,
                                 self._analysis)
            if cached is not None:
                self._ready[config.type] = cached
        pending = [config for config in self._configs if config.type not in self._ready]
        self.helper_kinds = [config.type for config in pending]
        if pending:
            self._start_helper(pending)

    def _start_helper(self, configs: list[Any]) -> None:
        request = json.dumps({
            "configs": [config.model_dump(mode="json") for config in configs],
            "root": str(self._root),
            "sources": [str(p) for p in self._sources],
            "cache_dir": str(self._cache_dir) if self._cache_dir is not None else None,
            "analysis": _analysis_request(self._analysis),
            "cache_threshold_ns": cache_trust.threshold(),
            # What this process wrote or vouched for (an earlier session in it, say): the
            # helper may read exactly those bytes, whenever they were written.
            "cache_written": cache_trust.written(),
        }).encode()
        env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
        self._started_at = time.monotonic()
        try:
            self._proc = subprocess.Popen(  # an argv list, never a shell
                installed_module("pytest_confgate.gate.background"),
                cwd=self._root,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                process_group=0,  # ours: ``confgate gate`` ends the run's leftovers, not it
            )
        except OSError as exc:
            self._results = self._all_failed(f"could not start the helper process: {exc}")
            return
        stdin, self._proc.stdin = self._proc.stdin, None  # communicate() must not flush it
        try:
            if stdin is not None:
                stdin.write(request)
                stdin.close()
        except OSError:
            pass  # it died at once: its exit code and stderr say why in ``result``

    def running_for(self) -> float | None:
        """Seconds the helper has been running, while it still runs; None once it is done."""
        if self._proc is None or self._results is not None or self._proc.poll() is not None:
            return None
        return time.monotonic() - self._started_at

    def result(self, kind: str) -> EvalMetric:
        """The metric ``kind``, once the helper has finished (an error metric if it failed)."""
        if kind in self._ready:
            return self._ready[kind]
        if self._results is None:
            self._results = self._wait()
        return self._results.get(kind) or _error(kind, "the helper process returned nothing")

    def close(self) -> None:
        """Stop the helper (and the tools it started) if it is still running."""
        if self._proc is not None and self._proc.poll() is None:
            kill_process_group(self._proc)
            self._proc.communicate()

    def _wait(self) -> dict[str, EvalMetric]:
        if self._proc is None:
            return self._all_failed("the helper process was not started")
        try:
            out, err = self._proc.communicate(timeout=self._deadline_s)
        except subprocess.TimeoutExpired:
            self.close()
            return self._all_failed(f"did not finish within {self._deadline_s:g} s")
        if self._proc.returncode != 0:
            why = tail(err.decode("utf-8", errors="replace")) or f"exit {self._proc.returncode}"
            return self._all_failed(f"the helper process failed: {why}")
        try:
            raw = json.loads(out)
            cache_trust.trust(raw.pop(WRITTEN_KEY, None) or [])  # the helper's own writes
            return {kind: EvalMetric.model_validate(raw[kind]) for kind in raw}
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            return self._all_failed(f"the helper process answered garbage ({exc})")

    def _all_failed(self, reason: str) -> dict[str, EvalMetric]:
        return {kind: _error(kind, reason) for kind in self.kinds}


def _from_cache(
    config: Any, root: Path, sources: list[Path], cache_dir: Path | None,
    analysis: ChangeAnalysis | None,
) -> EvalMetric | None:
    """``config``'s metric from the per-file cache alone, exactly as the helper would report
    it (the same collector, read back through the same JSON), or None: the helper measures.

    A change to analyse (``# noqa`` it may have added) or a result that is not ``ok`` is
    left to the helper, as is any file the cache has no entry for.
    """
    from pytest_confgate.collect.tool_cache import CacheMiss
    from pytest_confgate.gate.collectors import CACHED

    tool = CACHED.get(config.type)
    if tool is None or cache_dir is None or analysis is not None:
        return None
    if not (cache_dir / f"{tool}.json").is_file():
        return None  # a cold run: no need to look any further
    from pytest_confgate.gate.collectors import BACKGROUND

    try:
        metric = BACKGROUND[config.type](config, root, sources, cache_dir, None, cached_only=True)
    except CacheMiss:
        return None
    except Exception:  # only a shortcut: whatever breaks it, the helper measures as before
        return None
    if metric.status is not MetricStatus.OK:
        return None
    return EvalMetric.model_validate(json.loads(json.dumps(metric.model_dump(mode="json"))))


def _error(kind: str, reason: str) -> EvalMetric:
    return EvalMetric(type=kind, status=MetricStatus.ERROR, reason=f"{kind}: {reason}")


@cache
def _changes() -> TypeAdapter[ChangeSet | None]:
    from pydantic import TypeAdapter

    return TypeAdapter(ChangeSet | None)


def _analysis_request(analysis: ChangeAnalysis | None) -> dict[str, Any] | None:
    if analysis is None:
        return None
    return {
        "changes": _changes().dump_python(analysis.changes, mode="json"),
        "error": analysis.error,
        "watch": list(analysis.watch),
    }


def _analysis_from(root: Path, raw: Mapping[str, Any] | None) -> ChangeAnalysis | None:
    if raw is None:
        return None
    from pytest_confgate.collect.tamper import ChangeAnalysis

    changes = _changes().validate_python(raw["changes"])
    return ChangeAnalysis(root, changes, raw["error"], watch=tuple(raw["watch"]))


def run_request(request: Mapping[str, Any]) -> dict[str, Any]:
    """In the helper: run every requested collector at once, as the threads used to."""
    from concurrent.futures import ThreadPoolExecutor

    from pydantic import TypeAdapter

    from pytest_confgate.config import MetricConfig
    from pytest_confgate.gate.collectors import BACKGROUND

    adapter: TypeAdapter[Any] = TypeAdapter(MetricConfig)
    configs = [adapter.validate_python(raw) for raw in request["configs"]]
    root = Path(request["root"])
    sources = [Path(p) for p in request["sources"]]
    cache = Path(request["cache_dir"]) if request.get("cache_dir") else None
    if isinstance(request.get("cache_threshold_ns"), int):  # the tests run beside us
        cache_trust.begin(request["cache_threshold_ns"])
    cache_trust.trust(request.get("cache_written") or [])
    analysis = _analysis_from(root, request.get("analysis"))
    with ThreadPoolExecutor(max_workers=max(1, len(configs))) as pool:
        futures = {
            c.type: pool.submit(BACKGROUND[c.type], c, root, sources, cache, analysis)
            for c in configs
        }
        return {kind: future.result().model_dump(mode="json") for kind, future in futures.items()}


def main() -> int:
    request = json.loads(sys.stdin.buffer.read())
    answer = run_request(request)
    answer[WRITTEN_KEY] = cache_trust.written()
    sys.stdout.write(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())

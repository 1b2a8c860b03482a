"""Part of a coverage.py data file, copied with the contexts its lines were recorded under.

coverage.py's ``[report] contexts`` counts only lines recorded under the contexts it names
(a static ``[run] context``, or the dynamic ones): a copy that added every line again under
the empty context would be filtered out of the report entirely.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any


def subset(data: Any, names: Iterable[str], *, arcs: bool) -> Any:
    """A new in-memory ``CoverageData`` holding ``names``' lines (or arcs) from ``data``,
    each under the context it was recorded with."""
    from coverage import CoverageData

    kept = CoverageData(no_disk=True)
    names = list(names)
    if not names:
        return kept  # nothing to add, and no kind of data to clash with another's
    contexts = sorted(data.measured_contexts()) or [""]
    try:
        for context in contexts:
            if len(contexts) > 1:
                data.set_query_contexts([f"^{re.escape(context)}$"])
            kept.set_context(context or None)
            if arcs:
                kept.add_arcs({name: data.arcs(name) or [] for name in names})
            else:
                kept.add_lines({name: data.lines(name) or [] for name in names})
    finally:
        if len(contexts) > 1:
            data.set_query_contexts(None)
    return kept

"""``requirement_coverage``: requirements with at least one passing linked test / all.

Requirements come from a YAML file (``[{id, title}]`` or ``{requirements: [...]}``) or from
Markdown headings that carry an ID. Tests link to them with
``@pytest.mark.requirement("REQ-1", ...)``; the plugin gathers those links and this module
only counts, so it runs without pytest.

A Markdown heading names a requirement when its text starts with an ID matching
``REQUIREMENT_ID`` (an uppercase prefix, a hyphen, a number: ``REQ-1``, ``SEC2-10``), either
bare or in brackets, then an optional ``:``, ``-``, en or em dash and the title::

    ## REQ-1: Users can log in
    ### [REQ-2] Passwords are hashed
    # REQ-3 — Sessions expire

Headings inside fenced code or HTML comments do not count. YAML IDs are any non-empty text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from pytest_confgate.collect.checklist import markdown_lines
from pytest_confgate.config import RequirementMetricConfig
from pytest_confgate.config.textfile import read_text_file
from pytest_confgate.exceptions import ConfigError
from pytest_confgate.models import EvalMetric, MetricStatus

METRIC_TYPE = "requirement_coverage"
MAX_REQUIREMENTS_BYTES = 4 * 1024 * 1024
YAML_SUFFIXES = (".yml", ".yaml")
MARKDOWN_SUFFIXES = (".md", ".markdown")
REQUIREMENT_ID = r"[A-Z][A-Z0-9]*-[0-9]+"
"""The ID pattern in Markdown headings (documented above)."""

# Anchored, no nested quantifiers, and each quantifier is followed by a character it cannot
# match, so a line is matched in linear time.
_HEADING = re.compile(
    rf"^ {{0,3}}#{{1,6}}[ \t]+(?:\[({REQUIREMENT_ID})\]|({REQUIREMENT_ID})(?=[ \t:]|$))"
    r"[ \t]*(?:[:\u2013\u2014-][ \t]*)?(.*)$"
)


@dataclass(frozen=True)
class Requirement:
    """One requirement: the ID tests cite and the title the report shows."""

    id: str
    title: str


def load_requirements(path: Path) -> list[Requirement]:
    """Read requirements from YAML or Markdown; raise ``ConfigError`` naming file, line and ID.

    A missing, unreadable, non-UTF-8 or oversized file, an entry without an ID and an ID
    listed twice are configuration errors: the gate cannot judge against a list it cannot read.
    """
    text = _read_text(path)
    if path.suffix.lower() in YAML_SUFFIXES:
        return _from_yaml(path, text)
    if path.suffix.lower() in MARKDOWN_SUFFIXES:
        return _from_markdown(path, text)
    raise ConfigError(
        f"{path}:1: requirements must be a YAML ({', '.join(YAML_SUFFIXES)}) or Markdown "
        f"({', '.join(MARKDOWN_SUFFIXES)}) file; rename it or convert it"
    )


def _read_text(path: Path) -> str:
    return read_text_file(
        path, MAX_REQUIREMENTS_BYTES, "requirements file", "check `requirements:`"
    )


def _from_markdown(path: Path, text: str) -> list[Requirement]:
    found: list[Requirement] = []
    lines: dict[str, int] = {}
    for number, line in markdown_lines(text):
        match = _HEADING.match(line)
        if match is None:
            continue
        req_id = match.group(1) or match.group(2)
        if req_id in lines:
            raise ConfigError(
                f"{path}:{number}: requirement {req_id} is listed twice "
                f"(first on line {lines[req_id]}); give each requirement its own ID"
            )
        lines[req_id] = number
        found.append(Requirement(id=req_id, title=_heading_title(match.group(3))))
    return found


def _heading_title(raw: str) -> str:
    title = raw.strip(" \t")
    # An ATX heading may close with a run of '#' after a space: "## REQ-1: Title ##".
    bare = title.rstrip("#")
    if bare != title and (not bare or bare[-1] in " \t"):
        title = bare.rstrip(" \t")
    return title


def _from_yaml(path: Path, text: str) -> list[Requirement]:
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        raise ConfigError(f"{path}:{line}: invalid YAML: {exc.problem or 'syntax error'}") from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise ConfigError(f"{path}:1: invalid YAML: {' '.join(str(exc).split())}") from None
    if data is None:
        return []
    entries = data.get("requirements") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise ConfigError(
            f"{path}:1: expected a list of {{id, title}} entries or a mapping with a "
            "`requirements:` list"
        )
    found: list[Requirement] = []
    first: dict[str, int] = {}
    for index, entry in enumerate(entries):
        req_id, title = _yaml_entry(path, text, index, entry)
        if req_id in first:
            raise ConfigError(
                f"{path}:{_yaml_line(text, index)}: requirement {req_id} is listed twice "
                f"(first as entry {first[req_id] + 1}); give each requirement its own ID"
            )
        first[req_id] = index
        found.append(Requirement(id=req_id, title=title))
    return found


def _yaml_entry(path: Path, text: str, index: int, entry: Any) -> tuple[str, str]:
    where = f"{path}:{_yaml_line(text, index)}: requirement entry {index + 1}"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: expected a mapping with `id` and `title`")
    # Other keys (description, owner, ...) are the file owner's business and are ignored.
    req_id, title = entry.get("id"), entry.get("title")
    if req_id is None or (isinstance(req_id, str) and not req_id.strip()):
        raise ConfigError(f"{where}: has no `id`; give it a non-empty ID such as REQ-1")
    # YAML reads `id: 12` as a number (fine) but `id: 1.10` as 1.1 and `id: yes` as True.
    if isinstance(req_id, bool) or not isinstance(req_id, (str, int)):
        raise ConfigError(f"{where}: `id: {req_id}` is not text; quote it")
    if title is not None and not isinstance(title, (str, int, float)):
        raise ConfigError(f"{where} ({req_id}): `title` must be text")
    return str(req_id).strip(), "" if title is None else str(title).strip()


def _yaml_line(text: str, index: int) -> int:
    """The line of entry ``index``, found only when reporting an error (compose keeps marks)."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecursionError):
        return 1
    if isinstance(node, yaml.MappingNode):
        node = next((v for k, v in node.value if k.value == "requirements"), None)
    if isinstance(node, yaml.SequenceNode) and index < len(node.value):
        return int(node.value[index].start_mark.line) + 1
    return 1


def requirement_metric(
    requirements: list[Requirement],
    links: Mapping[str, Sequence[tuple[str, bool]]],
    *,
    source: str,
) -> EvalMetric:
    """Covered requirements / all; a requirement is covered by one passing linked test.

    ``links`` maps a requirement ID to ``(test nodeid, passed)`` pairs. IDs that no
    requirement has are reported in ``details.unknown_ids`` with the tests that cite them.
    """
    known = {req.id for req in requirements}
    tests_by_requirement: dict[str, list[str]] = {}
    uncovered: list[str] = []
    for req in requirements:
        pairs = links.get(req.id, ())
        tests_by_requirement[req.id] = list(dict.fromkeys(nodeid for nodeid, _ in pairs))
        if not any(passed for _, passed in pairs):
            uncovered.append(req.id)
    titles = {req.id: req.title for req in requirements}
    details: dict[str, Any] = {
        "tool": "requirements",
        "source": source,
        "covered": len(requirements) - len(uncovered),
        "total": len(requirements),
        "uncovered": uncovered,
        "uncovered_titles": {req_id: titles[req_id] for req_id in uncovered},
        "unknown_ids": [
            {"id": req_id, "tests": list(dict.fromkeys(nodeid for nodeid, _ in links[req_id]))}
            for req_id in sorted(set(links) - known)
        ],
        "tests_by_requirement": tests_by_requirement,
    }
    if not requirements:
        return EvalMetric(
            type=METRIC_TYPE,
            status=MetricStatus.ERROR,
            reason=f"no requirements found in {source}; list them as YAML `{{id, title}}` "
            "entries or as Markdown headings such as `## REQ-1: Title`",
            details=details,
        )
    return EvalMetric(
        type=METRIC_TYPE, value=details["covered"] / len(requirements), details=details
    )


def collect_requirement_coverage(
    config: RequirementMetricConfig,
    root: Path,
    links: Mapping[str, Sequence[tuple[str, bool]]],
) -> EvalMetric:
    """Load ``config.requirements`` (relative to ``root``) and measure it against ``links``.

    Raises ``ConfigError`` for an unusable requirements file, as ``load_requirements`` does.
    """
    if config.requirements is None:
        raise ConfigError("requirement_coverage needs `requirements: PATH`")
    return requirement_metric(
        load_requirements(root / config.requirements), links, source=config.requirements
    )

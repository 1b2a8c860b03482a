"""A ``confidence_calculation`` block, loaded as written (issue 17): its key names mapped onto ours.

A team copies a ``confidence_calculation`` block (``method``, ``hybrid_settings``,
``llm_settings.provider``/``model``, ``formula_weights``) into ``confgate.yml`` as is, at the
top or under ``gate``. Before validation this module rewrites the raw data into today's
model and keeps, per confidence block, a note of what was spelled that way; the note
goes into the report's confidence breakdown (``seed_spelling``):

- ``confidence_calculation`` -> ``gate.confidence``, on (``enabled: true``) unless it says;
- ``hybrid_settings`` -> ``hybrid``;
- ``llm_settings.provider`` (+ ``model``) -> ``evaluator_agent``: the one agent under
  ``agents`` with that provider (and model), else a new agent named ``PROVIDER:MODEL``; with
  an ``evaluator_agent`` already named, the provider must be that agent's own and ``model``
  overrides its model for this call (``llm_settings.model``);
- ``formula_weights``: that spelling's retrieval weights (``similarity``, ``source_quality``,
  ``response_length``) have no counterpart in a code gate and are noted as unused; any other
  key is an error (a metric's weight is set on the metric).

Pure data in, data out; problems are (key path, message) pairs for the loader to place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

KeyPath = tuple[str | int, ...]

SEED_ALIASES: dict[str, tuple[str, ...]] = {
    "ConfgateConfig": ("confidence_calculation",),
    "GateConfig": ("confidence_calculation",),
    "ConfidenceConfig": ("hybrid_settings", "formula_weights"),
    "ConfidenceLoopConfig": ("hybrid_settings", "formula_weights"),
    "LlmSettings": ("provider",),
}
"""Model name -> the ``confidence_calculation`` key names it also accepts (and suggests)."""

RETRIEVAL_WEIGHTS = ("similarity", "source_quality", "response_length")
_PROVIDERS = ("openai", "anthropic")


@dataclass
class Spelling:
    """The rewritten data, where each seed key went, and what to say about it."""

    data: Any
    moved: list[tuple[KeyPath, KeyPath]] = field(default_factory=list)
    notes: dict[KeyPath, list[str]] = field(default_factory=dict)
    problems: list[tuple[KeyPath, str]] = field(default_factory=list)


def apply_seed_spelling(data: Any) -> Spelling:
    """Rewrite the ``confidence_calculation`` spelling in ``data`` (a fresh copy if it changes)."""
    found = Spelling(data)
    if not isinstance(data, dict):
        return found
    data = found.data = {**data}
    gate = data.get("gate")
    if "confidence_calculation" in data:
        gate = data["gate"] = {**gate} if isinstance(gate, dict) else ({} if gate is None else gate)
        if isinstance(gate, dict):
            _rename(found, gate, ("confidence_calculation",), "confidence", ("gate",))
    elif isinstance(gate, dict) and "confidence_calculation" in gate:
        gate = data["gate"] = {**gate}
        _rename(found, gate, ("gate", "confidence_calculation"), "confidence", ("gate",))
    blocks: list[tuple[KeyPath, dict[str, Any], str]] = []
    if isinstance(gate, dict) and isinstance(gate.get("confidence"), dict):
        blocks.append((("gate", "confidence"), gate, "confidence"))
    tasks = data.get("tasks")
    if isinstance(tasks, dict):
        for name, task in tasks.items():
            overlays = task.get("overlays") if isinstance(task, dict) else None
            if isinstance(overlays, dict) and isinstance(overlays.get("confidence_loop"), dict):
                at: KeyPath = ("tasks", name, "overlays", "confidence_loop")
                blocks.append((at, overlays, "confidence_loop"))
    for at, parent, key in blocks:
        block = parent[key] = {**parent[key]}
        _block(found, at, block)
    return found


def _rename(
    found: Spelling, parent: dict[str, Any], seed: KeyPath, today: str, at: KeyPath
) -> None:
    if today in parent:
        found.problems.append((seed, f"{'.'.join(map(str, (*at, today)))} is set too: write "
                               "the confidence settings once, under either name"))
        return
    holder = parent if len(seed) > 1 else found.data
    value = holder.pop(str(seed[-1]))
    if isinstance(value, dict) and "enabled" not in value:
        value = {**value, "enabled": True}  # that block is on by being there
    parent[today] = value
    found.moved.append((seed, (*at, today)))
    found.notes.setdefault((*at, today), []).append(f"{'.'.join(map(str, seed))} (gate.confidence)")


def _block(found: Spelling, at: KeyPath, block: dict[str, Any]) -> None:
    notes = found.notes.setdefault(at, [])
    if "hybrid_settings" in block:
        if "hybrid" in block:
            found.problems.append(((*at, "hybrid_settings"), "hybrid is set too: keep one"))
        else:
            block["hybrid"] = block.pop("hybrid_settings")
            found.moved.append(((*at, "hybrid_settings"), (*at, "hybrid")))
            notes.append("hybrid_settings (hybrid)")
    if "formula_weights" in block:
        _formula_weights(found, at, block.pop("formula_weights"), notes)
    settings = block.get("llm_settings")
    if isinstance(settings, dict) and "provider" in settings:
        block["llm_settings"] = settings = {**settings}
        _provider(found, at, block, settings, notes)
    if not notes:
        del found.notes[at]


def _formula_weights(found: Spelling, at: KeyPath, weights: Any, notes: list[str]) -> None:
    where = (*at, "formula_weights")
    if not isinstance(weights, dict):
        found.problems.append((where, "formula_weights must be a mapping of weights"))
        return
    for key in weights:
        if key not in RETRIEVAL_WEIGHTS:
            found.problems.append(((*where, key), (
                f"formula_weights.{key} has no counterpart: the formula here is the weighted "
                "mean of the metrics, each weighted by its own `weight`; set the weight on the "
                "metric (gate.metrics or the loop's metrics) instead"
            )))
    used = ", ".join(k for k in weights if k in RETRIEVAL_WEIGHTS)
    if used:
        notes.append(
            f"formula_weights ({used}: these retrieval weights have no counterpart in a "
            "code gate and were not used; the formula weighs each metric by its `weight`)"
        )


def _provider(
    found: Spelling, at: KeyPath, block: dict[str, Any], settings: dict[str, Any], notes: list[str]
) -> None:
    where = (*at, "llm_settings", "provider")
    provider = settings.pop("provider")
    model = settings.get("model")
    agents = found.data.get("agents")
    agents = agents if isinstance(agents, dict) else {}
    named = block.get("evaluator_agent")
    if isinstance(named, str):
        given = agents.get(named)
        if isinstance(given, dict) and given.get("provider") != provider:
            found.problems.append((where, (
                f"llm_settings.provider is {provider!r}, but evaluator_agent {named!r} is a "
                f"{given.get('provider')!r} agent; make them agree or drop the provider"
            )))
        notes.append("llm_settings.provider (the evaluator agent's own provider)")
        return
    if provider not in _PROVIDERS:
        found.problems.append((where, (
            f"llm_settings.provider {provider!r} cannot be built from this block alone: "
            "define the evaluator under agents (Azure: provider: openai with base_url and "
            "api_version) and name it in evaluator_agent"
        )))
        return
    matches = [
        name for name, agent in agents.items()
        if isinstance(agent, dict) and agent.get("provider") == provider
        and (model is None or agent.get("model") == model)
    ]
    if len(matches) > 1:
        found.problems.append((where, (
            f"several agents are {provider} {model or ''} ({', '.join(matches)}): name the "
            "evaluator in evaluator_agent"
        )))
        return
    if matches:
        block["evaluator_agent"] = matches[0]
        settings.pop("model", None)
    elif not isinstance(model, str):
        found.problems.append((where, f"llm_settings.model is needed to ask {provider}"))
        return
    else:
        name = f"{provider}:{model}"
        found.data["agents"] = {**agents, name: {"provider": provider, "model": model}}
        found.moved.append((where, ("agents", name)))
        block["evaluator_agent"] = name
        settings.pop("model")
    notes.append(
        f"llm_settings.provider/model (evaluator_agent {block['evaluator_agent']!r})"
    )


def moved_lines(lines: dict[KeyPath, int], moved: list[tuple[KeyPath, KeyPath]]) -> None:
    """Give each moved key (and what is under it) its line under today's name too."""
    for seed, today in moved:
        for key, line in list(lines.items()):
            if key[: len(seed)] == seed:
                lines.setdefault((*today, *key[len(seed) :]), line)


def attach_notes(config: Any, notes: dict[KeyPath, list[str]]) -> None:
    """Hand each confidence block its note, for the report's breakdown."""
    for at, said in notes.items():
        block: Any = config
        for part in at:
            block = block.get(part) if isinstance(block, dict) else getattr(block, str(part))
        block.note_seed_spelling(said)

"""What a task needs before it runs: its prompt (text or file) and the agents it may call."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pytest_confgate.config.textfile import read_text_file
from pytest_confgate.exceptions import ConfigError

if TYPE_CHECKING:
    from pytest_confgate.config import ConfgateConfig, TaskConfig

_PROMPT_SUFFIXES = (".md", ".txt", ".prompt", ".markdown")


def resolve_prompt(name: str, task: TaskConfig, root: Path, config_file: str) -> str:
    """The task's prompt: the file it names (under ``root``), else the text itself."""
    where = f"{config_file}: tasks.{name}.prompt"
    if task.prompt is None:
        raise ConfigError(f"{where}: not set; give the prompt text or the path of a file with it")
    text = task.prompt
    single = "\n" not in text and len(text) < 1024
    if single and (root / text).is_file():
        return read_text_file(
            root / text, limit=1024 * 1024, what="prompt file", fix=f"fix {where}"
        )
    if single and " " not in text and ("/" in text or text.endswith(_PROMPT_SUFFIXES)):
        raise ConfigError(f"{where}: file {text} not found under {root}; create it or fix the path")
    return text


def agents_needed(config: ConfgateConfig, names: list[str]) -> list[str]:
    """Every agent the tasks ``names`` may call, in a stable order, for preflight."""
    needed: list[str] = []
    for name in names:
        task = config.tasks[name]
        loop, pair = task.overlays.confidence_loop, task.overlays.paired_workflow
        wanted = [task.agent]
        if pair.enabled:
            wanted += [pair.driver_agent, pair.challenger_agent]
        if loop.enabled and loop.method != "formula":
            wanted.append(loop.evaluator_agent)
        needed += [w for w in wanted if w and w not in needed]
    return needed

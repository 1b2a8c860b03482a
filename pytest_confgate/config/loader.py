"""Find, read and validate the configuration, reporting every problem with its file and line.

Files are data: YAML is read with a safe loader that also refuses anchors, aliases, duplicate
keys and object-building tags; TOML with ``tomllib``. Every problem becomes one line
``FILE:LINE: key.path: message``, collected into a single ``ConfigError``.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from pytest_confgate.config import ConfgateConfig, cross_check
from pytest_confgate.config.key_path import TOO_DEEP, Path_, dotted
from pytest_confgate.config.seed_spelling import (
    SEED_ALIASES,
    apply_seed_spelling,
    attach_notes,
    moved_lines,
)
from pytest_confgate.config.textfile import read_text_file, tomllib
from pytest_confgate.exceptions import ConfigError

MAX_CONFIG_BYTES = 1024 * 1024
YAML_NAMES = ("confgate.yml", "confgate.yaml")


@dataclass(frozen=True)
class LoadedConfig:
    """A validated configuration and where it came from (``None``: built-in defaults)."""

    config: ConfgateConfig
    path: Path | None
    passed_over: tuple[str, ...] = ()
    """Other files in the rootdir that hold a configuration too, not read (``path`` wins)."""


def find_config(rootdir: Path, explicit: str | None) -> Path | None:
    """The file to read: ``explicit`` (the option or ``CONFGATE_CONFIG``), else the rootdir's."""
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"{explicit}: no such configuration file; check the path")
        return path
    found = config_candidates(rootdir)
    return _shown(found[0]) if found else None


def config_candidates(rootdir: Path) -> list[Path]:
    """Every file of the rootdir that holds a configuration, the one read first:
    ``confgate.yml``, ``confgate.yaml``, then ``pyproject.toml`` with ``[tool.confgate]``."""
    found = [rootdir / name for name in YAML_NAMES if (rootdir / name).is_file()]
    pyproject = rootdir / "pyproject.toml"
    if pyproject.is_file() and "confgate" in _read_text(pyproject):
        data, _ = _parse_toml(pyproject, _read_text(pyproject))
        if isinstance(data.get("tool"), dict) and "confgate" in data["tool"]:
            found.append(pyproject)
    return found


def _candidate_name(path: Path) -> str:
    return f"{path.name} [tool.confgate]" if path.suffix == ".toml" else path.name


def _shown(path: Path) -> Path:
    """The path as people should read it in messages: relative when under the cwd."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def load_config(rootdir: Path, explicit: str | None = None) -> LoadedConfig:
    """Find and validate the configuration; no file at all gives the defaults."""
    path = find_config(rootdir, explicit)
    if path is None:
        return LoadedConfig(ConfgateConfig(), None)
    others = () if explicit else config_candidates(rootdir)[1:]
    passed_over = tuple(_candidate_name(other) for other in others)
    return LoadedConfig(read_config_file(path), path, passed_over)


def read_config_file(path: Path) -> ConfgateConfig:
    """Validate one file, YAML or ``pyproject.toml``, raising one ``ConfigError`` for all issues."""
    return parse_config_text(path, _read_text(path))


def parse_config_text(path: Path, text: str) -> ConfgateConfig:
    """Validate configuration text; ``path`` names it in messages and picks YAML or TOML."""
    if len(text.encode("utf-8", "replace")) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}:1: the text is over the {MAX_CONFIG_BYTES} byte limit")
    if path.suffix == ".toml":
        data, lines = _parse_toml(path, text)
        tool = data.get("tool")
        if not isinstance(tool, dict) or "confgate" not in tool:
            raise ConfigError(
                f"{path}:1: there is no [tool.confgate] table; add one, or point "
                "--confgate-config at a confgate.yml"
            )
        data = tool["confgate"]
        prefix: Path_ = ("tool", "confgate")
        lines = {key[2:]: line for key, line in lines.items() if key[:2] == prefix}
        lines.setdefault((), _header_line(text))
    else:  # PyYAML is imported only to read YAML: zero config and pyproject never pay for it
        from pytest_confgate.config.yaml_text import parse_yaml

        data, lines = parse_yaml(path, text)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}:1: the configuration must be a mapping of keys, not {type(data).__name__}"
        )
    spelled = apply_seed_spelling(data)  # the `confidence_calculation` block, as written (issue 17)
    moved_lines(lines, spelled.moved)
    if spelled.problems:
        raise ConfigError([f"{path}:{_line_for(at, lines)}: {dotted(at)}: {message}"
                           for at, message in spelled.problems])
    try:
        config = ConfgateConfig.model_validate(spelled.data)
    except ValidationError as exc:
        raise ConfigError(_format_errors(path, exc, lines)) from None
    attach_notes(config, spelled.notes)
    found = sorted(
        ((_line_for(at, lines), dotted(at), message) for at, message in cross_check(config)),
        key=lambda item: item[0],
    )
    problems = [f"{path}:{line}: {key}: {message}" for line, key, message in found]
    if problems:
        raise ConfigError(problems)
    return config


def _read_text(path: Path) -> str:
    return read_text_file(path, MAX_CONFIG_BYTES, "configuration file", "check the path")


# --- TOML -------------------------------------------------------------------------------


def _parse_toml(path: Path, text: str) -> tuple[dict[str, Any], dict[Path_, int]]:
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise ConfigError(f"{path}:1: invalid TOML: {TOO_DEEP}") from None
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None) or _line_from_message(str(exc))
        raise ConfigError(f"{path}:{line}: invalid TOML: {str(exc).split(' (at')[0]}") from None
    return data, _toml_lines(text)


def _line_from_message(message: str) -> int:
    marker = "(at line "
    if marker in message:
        digits = message.split(marker, 1)[1].split(",")[0].split(")")[0]
        if digits.isdigit():
            return int(digits)
    return 1


def _toml_lines(text: str) -> dict[Path_, int]:
    """Best-effort key -> line map: tables, arrays of tables and ``key =`` lines."""
    lines: dict[Path_, int] = {}
    table: Path_ = ()
    counts: dict[Path_, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if stripped.startswith("[["):
            parts = stripped[2:].split("]]")[0].split(".")
            header: Path_ = tuple(p.strip().strip("\"'") for p in parts)
            index = counts.get(header, -1) + 1
            counts[header] = index
            table = (*header, index)
            lines.setdefault(header, number)
            lines[table] = number
        elif stripped.startswith("["):
            table = tuple(p.strip().strip("\"'") for p in stripped[1:].split("]")[0].split("."))
            lines.setdefault(table, number)
        elif "=" in stripped and not stripped.startswith("#"):
            key = stripped.split("=", 1)[0].strip().strip("\"'")
            lines.setdefault((*table, *key.split(".")), number)
    return lines


def _header_line(text: str) -> int:
    for number, raw in enumerate(text.splitlines(), start=1):
        if raw.strip().startswith("[tool.confgate"):
            return number
    return 1


# --- error messages ---------------------------------------------------------------------


def _format_errors(path: Path, exc: ValidationError, lines: dict[Path_, int]) -> list[str]:
    problems = []
    for error in exc.errors():
        data_path, allowed, aliases = _resolve(tuple(error["loc"]))
        line = _line_for(data_path, lines)
        key = dotted(data_path) or "<top>"
        message = _message(error, data_path, allowed, aliases)
        problems.append(f"{path}:{line}: {key}: {message}")
    return problems


def _message(
    error: Mapping[str, Any],
    data_path: Path_,
    allowed: list[str] | None,
    aliases: tuple[str, ...] = (),
) -> str:
    kind, value = error["type"], error.get("input")
    if kind == "extra_forbidden":
        name = str(data_path[-1])
        hint = _did_you_mean(name, [*(allowed or []), *aliases])  # confidence_calculation's too
        return f"unknown key {name!r}{hint}; allowed keys: {', '.join(allowed or [])}"
    if kind == "missing":
        return "this key is required"
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        tags = _union_tags(data_path)
        tag = error.get("ctx", {}).get("tag") if kind == "union_tag_invalid" else None
        what, key = ("agent", "provider") if "agents" in data_path else ("metric", "type")
        if tag is None:
            return f"each {what} needs a {key!r}; known {key}s: {', '.join(tags)}"
        hint = _did_you_mean(str(tag), tags)
        return f"unknown {what} {key} {tag!r}{hint}; known {key}s: {', '.join(tags)}"
    message = str(error["msg"]).removeprefix("Value error, ")
    if isinstance(value, (str, int, float, bool)) or value is None:
        return f"{message} (got {value!r})"
    return message


def _did_you_mean(name: str, choices: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _line_for(data_path: Path_, lines: dict[Path_, int]) -> int:
    for end in range(len(data_path), -1, -1):
        if data_path[:end] in lines:
            return lines[data_path[:end]]
    return 1


def _resolve(loc: Path_) -> tuple[Path_, list[str] | None, tuple[str, ...]]:
    """Map a pydantic location to the user's key path, the keys allowed at its parent and the
    ``confidence_calculation`` names it also takes (``seed_spelling``).

    pydantic puts a discriminated union's tag into the location (``metrics.0.lint_score.min``);
    users never wrote that part, so it is dropped.
    """
    current: Any = ConfgateConfig
    data_path: list[str | int] = []
    allowed: list[str] | None = None
    aliases: tuple[str, ...] = ()
    for part in loc:
        if part == "[key]":  # pydantic's marker for a bad dict key; the key is already there
            continue
        current = _unwrap(current)
        if isinstance(current, list):  # a union: the part is its tag
            current = next((m for m in current if _tag(m) == part), None)
            continue
        if isinstance(current, type) and issubclass(current, BaseModel):
            allowed = sorted(current.model_fields)
            aliases = SEED_ALIASES.get(current.__name__, ())
            field = current.model_fields.get(str(part))
            current = field.annotation if field else None
        elif typing.get_origin(current) in (list, dict):
            args = typing.get_args(current)
            current = args[-1] if args else None
        else:
            current = None
        data_path.append(part)
    return tuple(data_path), allowed, aliases


def _unwrap(annotation: Any) -> Any:
    """Strip ``Annotated`` and ``Optional``; a real union becomes the list of its models."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(members) == 1:
                annotation = members[0]
            else:
                return members
        else:
            return annotation


def _tag(model: Any) -> str | None:
    """The literal a union member is picked by: a metric's ``type``, an agent's ``provider``."""
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return None
    for name in ("type", "provider"):
        field = model.model_fields.get(name)
        args = typing.get_args(field.annotation) if field else ()
        if args:
            return str(args[0])
    return None


def _union_tags(data_path: Path_) -> list[str]:
    current: Any = ConfgateConfig
    for part in (*data_path, 0):
        current = _unwrap(current)
        if isinstance(current, list):
            return sorted(t for t in (_tag(m) for m in current) if t)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            current = field.annotation if field else None
        elif typing.get_origin(current) in (list, dict):
            current = typing.get_args(current)[-1]
    return []

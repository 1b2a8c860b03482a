"""Read a YAML configuration as plain data, with each key's line, refusing what is not data.

A safe loader that also refuses anchors, aliases, duplicate keys, object-building tags and
YAML 1.1's ``yes``/``no`` booleans. Its own module so that PyYAML (a C library to load) is
imported only when a YAML file is read: zero configuration and ``[tool.confgate]`` never pay.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from pytest_confgate.config.key_path import TOO_DEEP, Path_, dotted
from pytest_confgate.exceptions import ConfigError


class _StrictLoader(yaml.SafeLoader):
    """A safe loader that also refuses anchors and aliases (no billion laughs, no sharing)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise yaml.MarkedYAMLError(
                problem="anchors and aliases are not allowed; write the value out",
                problem_mark=event.start_mark,
            )
        return super().compose_node(parent, index)


_PLAIN_TAGS = {"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"}


def parse_yaml(path: Path, text: str) -> tuple[Any, dict[Path_, int]]:
    loader: _StrictLoader | None = None
    try:
        loader = _StrictLoader(text)  # the reader rejects control characters right here
        node = loader.get_single_node()
        if node is None:
            return None, {}
        lines: dict[Path_, int] = {}
        return _build(path, loader, node, (), lines), lines
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        problem = exc.problem or "invalid YAML"
        raise ConfigError(f"{path}:{line}: invalid YAML: {problem}") from None
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        raise ConfigError(
            f"{path}:{line}: invalid YAML: the character U+{code:04X} is not allowed "
            f"({exc.reason}); remove it"
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}:1: invalid YAML: {_one_line(str(exc))}") from None
    except RecursionError:
        raise ConfigError(f"{path}:1: invalid YAML: {TOO_DEEP}") from None
    finally:
        if loader is not None:
            loader.dispose()


def _one_line(message: str) -> str:
    return " ".join(message.split())


def _build(
    path: Path, loader: yaml.SafeLoader, node: Any, at: Path_, lines: dict[Path_, int]
) -> Any:
    """Turn a composed node into plain data, recording each key's line."""
    lines.setdefault(at, node.start_mark.line + 1)
    if isinstance(node, yaml.ScalarNode):
        return _scalar(path, loader, node, at)
    if node.tag not in _PLAIN_TAGS:
        raise ConfigError(f"{path}:{node.start_mark.line + 1}: {_tag_not_allowed(node, at)}")
    if isinstance(node, yaml.SequenceNode):
        return [_build(path, loader, item, (*at, i), lines) for i, item in enumerate(node.value)]
    result: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = _scalar(path, loader, key_node, at) if isinstance(key_node, yaml.ScalarNode) else None
        line = key_node.start_mark.line + 1
        if not isinstance(key, str):
            raise ConfigError(f"{path}:{line}: {dotted(at) or '<top>'}: keys must be text")
        if key in result:
            raise ConfigError(
                f"{path}:{line}: {dotted((*at, key))}: duplicate key; keep one of them"
            )
        lines[(*at, key)] = line
        result[key] = _build(path, loader, value_node, (*at, key), lines)
    return result


def _tag_not_allowed(node: Any, at: Path_) -> str:
    return (
        f"{dotted(at) or '<top>'}: the tag {node.tag!r} is not allowed; "
        "configuration is plain data"
    )


_BOOL_TAG = "tag:yaml.org,2002:bool"
_YAML11_BOOLEANS = frozenset({"yes", "no", "on", "off"})


def _scalar(path: Path, loader: yaml.SafeLoader, node: yaml.ScalarNode, at: Path_) -> Any:
    line = node.start_mark.line + 1
    if node.tag not in type(loader).yaml_constructors:  # e.g. !!python/name:os.system
        raise ConfigError(f"{path}:{line}: {_tag_not_allowed(node, at)}")
    if node.tag == _BOOL_TAG and node.value.lower() in _YAML11_BOOLEANS:
        # YAML 1.1 reads yes/no/on/off as booleans, YAML 1.2 and people do not (issue 17).
        raise ConfigError(
            f"{path}:{line}: {dotted(at) or '<top>'}: {node.value!r} is a boolean only in "
            "YAML 1.1; write true or false (quote it if it is text)"
        )
    try:
        return loader.construct_object(node, deep=True)
    except (ValueError, TypeError, LookupError, AttributeError, ArithmeticError):
        # PyYAML's own constructors crash on e.g. `2020-13-45`, `0b_` or `!!bool maybe`.
        raise ConfigError(
            f"{path}:{line}: {dotted(at) or '<top>'}: cannot read {node.value!r} as "
            f"{node.tag.rsplit(':', 1)[-1]}; quote it if it is text"
        ) from None


__all__ = ["parse_yaml"]

"""What a GitHub runner gives a step, read back strictly (outputs file syntax)."""

from __future__ import annotations

import re

OUTPUT_HEADER = re.compile(
    r"(?P<name>[A-Za-z_][A-Za-z0-9_-]*)<<(?P<delim>ghadelimiter_[0-9a-f]{32})"
)


def parse_github_output(text: str) -> dict[str, str]:
    """GitHub's multiline ``name<<DELIM`` syntax, strictly: anything else is an error."""
    lines = text.split("\n")
    assert lines.pop() == "", "the file ends with a newline"
    outputs: dict[str, str] = {}
    i = 0
    while i < len(lines):
        header = OUTPUT_HEADER.fullmatch(lines[i])
        assert header, f"not a name<<delimiter line: {lines[i]!r}"
        end = lines.index(header["delim"], i + 1)
        assert header["name"] not in outputs, f"output {header['name']} set twice"
        outputs[header["name"]] = "\n".join(lines[i + 1 : end])
        i = end + 1
    return outputs

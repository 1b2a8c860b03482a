"""Plain-text stock reports."""

import os


def render(quantities: dict[str, int]) -> str:
    width = max((len(name) for name in quantities), default=0)
    lines = [f"{name:<{width}}  {count:>5}" for name, count in sorted(quantities.items())]
    return "\n".join(lines)


def save(text: str, path: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text + os.linesep)

"""A module full of the statement shapes a line-coverage engine can get wrong."""

from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # never true at run time
    from collections.abc import Iterator

TOTAL = 0
LOOKUP = {
    "a": 1,
    "b": 2,
}


def tracked(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper


@tracked
@functools.lru_cache(
    maxsize=None,
)
def decorated(x):
    """A decorated function with a docstring."""
    if x > 10:
        return "big"
    elif x > 5:
        return "medium"
    else:
        return "small"


class Shape:
    """A class with a docstring."""

    sides = 0

    def __init__(self, name):
        self.name = name

    @property
    def label(self):
        return (
            f"{self.name}"
            f"-{self.sides}"
        )

    def never_called(self):
        x = 1
        return x


def loops(n):
    global TOTAL
    for i in range(n):
        if i == 3:
            break
    else:
        TOTAL += 1
    while n > 0:
        n -= 1
    else:
        TOTAL += 2
    squares = [
        i * i
        for i in range(n)
        if i % 2
    ]
    pick = (lambda v:
            v + 1)
    return squares, pick(1)


def errors(flag):
    try:
        if flag:
            raise ValueError("boom")
        value = 1
    except ValueError as exc:
        value = str(exc)
    else:
        value = 2
    finally:
        done = True
    assert done, \
        "never"
    return value


def matcher(command):
    match command.split():
        case ["go", direction]:
            return direction
        case ["stop"]:
            return "stopped"
        case _:
            return None


def counter():
    count = 0

    def bump():
        nonlocal count
        count += 1
        return count

    bump()
    return bump()


def gen(n):
    for i in range(n):
        yield i
    return


async def waiting(delay):
    await asyncio.sleep(delay)
    if delay:
        return "waited"
    return "no wait"


def walrus(items):
    if (n := len(items)) > 2:
        return n
    del items
    pass
    ...


def excluded():  # pragma: no cover
    return "not counted"


def chain(x):
    return x if x else \
        None


def handlers(kind):
    try:
        raise {"key": KeyError, "value": ValueError}[kind]("x")
    except (
        KeyError
    ):
        return "key"
    except ValueError:
        return "value"
    except:  # noqa: E722
        return "other"


def partial_match(point):
    match point:
        case (0, 0):
            return "origin"
        case (x, 0) if x > 0:
            return "positive x"
    return "elsewhere"


@functools.total_ordering
class Version:
    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return self.n == other.n

    def __lt__(self, other):
        return self.n < other.n

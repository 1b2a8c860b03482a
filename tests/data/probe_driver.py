"""Exercises part of probe_target, leaving some lines unrun on purpose."""

import asyncio

import probe_target as t

t.decorated(3)
t.decorated(20)
t.Shape("sq").label
t.loops(5)
t.loops(2)
t.errors(True)
t.matcher("go north")
t.matcher("jump")
t.counter()
list(t.gen(3))
asyncio.run(t.waiting(0))
t.walrus([1, 2, 3])
t.walrus([])
t.chain(0)
t.handlers("value")
t.partial_match((3, 1))
t.partial_match((-1, 0))
t.Version(1) <= t.Version(2)

"""`async for`, `async with`: no branch event ends an async loop on 3.12/3.13."""
import asyncio
import contextlib


async def agen(n):
    for i in range(n):
        await asyncio.sleep(0)
        if i:
            yield i


async def coro(n):
    out = []
    async for v in agen(n):
        out.append(v)
    async with contextlib.AsyncExitStack() as st:
        if n > 5:
            out.append(st)
    return out


def run(n):
    return asyncio.run(coro(n))

"""Tricky control flow whose arcs coverage.py measures (oracle for test_monitor_probes)."""
import contextlib
import functools


def ifs(x):
    if x > 10:
        r = "big"
    elif x > 5:
        r = "mid"
    else:
        r = "small"
    if x == 3: return "three"
    if (x > 100 and
            x < 200):
        r = "hundreds"
    return r


def loops(items):
    total = 0
    for i in items:
        if i < 0:
            break
        total += i
    else:
        total += 1000
    n = 0
    while n < 3:
        n += 1
        if n == items[0] if items else False:
            continue
    else:
        n = -n
    while True:
        n += 1
        if n > 2:
            break
    for j in range(2):
        pass
    return total, n


def trying(x):
    try:
        if x == 0:
            raise ValueError("zero")
        y = 10 / x
    except ValueError:
        y = -1
    except ZeroDivisionError:
        y = -2
    else:
        y += 1
    finally:
        y = y * 2
    try:
        return 1 / (x - 1)
    finally:
        y = 0


@contextlib.contextmanager
def managed(flag):
    yield flag


def withs(flag):
    with managed(flag) as f:
        if f:
            return "early"
    with managed(flag): pass
    return "late"


def matching(v):
    match v:
        case 0:
            return "zero"
        case [a, b]:
            return "pair"
        case {"k": k} if k > 1:
            return "dict"
        case str() | bytes():
            return "text"
        case _:
            return "other"


def comps(xs):
    a = [x for x in xs if x % 2]
    b = {x: x for x in xs}
    c = (x for x in xs if x)
    d = sum(c)
    f = lambda y: y if y else 0
    return a, b, d, f(0), f(1)


def gen(n):
    for i in range(n):
        if i % 2:
            yield i
    yield -1


def deco(fn):
    @functools.wraps(fn)
    def inner(*args):
        if args and args[0] is None:
            return None
        return fn(*args)
    return inner


@deco
def decorated(x):
    return x + 1


def early(x):
    if x is None:
        return
    for i in range(x):
        if i == 2:
            return i
    return -1


def raises_out(x):
    if x:
        raise KeyError(x)
    return 0


class K:
    a = 1
    def m(self, x):
        return x if x else None
    @property
    def p(self): return self.a


def nested(x):
    def inner(y):
        while y:
            y -= 1
            if y == 1:
                return "one"
        return "zero"
    return inner(x)

def loop_try(xs):
    out = []
    for x in xs:
        try:
            if x == 0:
                continue
            out.append(1 / x)
        except TypeError:
            out.append(None)
            continue
        finally:
            out.append("f")
        if x == 9:
            break
    return out


def multi_with(a):
    with contextlib.nullcontext(a) as x, contextlib.nullcontext() as y:
        if x:
            return x
    return y


def fin_return(x):
    try:
        if x:
            return "try"
    finally:
        if x == 2:
            print("finally")
    return "end"


def conds(a, b):
    assert a is not None
    v = a if b else -a
    w = [i for i in range(a) if i > 1 if i < 5]
    if not (a and b) or (a > 2):
        v += 1
    while a and b > 0:
        b -= 1
    return v, w


def except_star(x):
    try:
        raise ExceptionGroup("g", [ValueError(x)])
    except* ValueError:
        r = 1
    return r


def gen_send():
    total = 0
    while True:
        got = yield total
        if got is None:
            return total
        total += got


def one_liners(x):
    if x: y = 1
    else: y = 2
    for i in range(x): y += i
    while x > 0: x -= 1
    return y


def deep(x):
    for a in range(x):
        for b in range(a):
            if a == b + 1:
                break
        else:
            continue
    return x


def raise_in_if(x):
    if int(x):
        return 1

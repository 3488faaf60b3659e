"""Coroutines: await, async for, async with, async generators, async comprehensions.

No event loop is used: the awaitables below yield a value to the driver, which steps
coroutines with ``send(None)``.
"""

from ._support import cases, kw

LOG: list = []


class Tick:
    """Awaitable that suspends once (yielding its label) and returns its value."""

    def __init__(self, label, value=None):
        self.label = label
        self.value = value

    def __await__(self):
        yield ("tick", self.label)
        return self.value


class Fail:
    """Awaitable that raises after suspending once."""

    def __init__(self, exc):
        self.exc = exc

    def __await__(self):
        yield "about to fail"
        raise self.exc


class AsyncRange:
    """An async iterator that suspends before each item."""

    def __init__(self, n):
        self.i = 0
        self.n = n

    def __aiter__(self):
        return self

    async def __anext__(self):
        if self.i >= self.n:
            raise StopAsyncIteration
        await Tick(f"next {self.i}")
        self.i += 1
        return self.i - 1


class AsyncResource:
    def __init__(self, name, suppress=False):
        self.name = name
        self.suppress = suppress

    async def __aenter__(self):
        await Tick("enter " + self.name)
        LOG.append(("enter", self.name))
        return self.name

    async def __aexit__(self, exc_type, exc, tb):
        await Tick("exit " + self.name)
        LOG.append(("exit", self.name, exc_type and exc_type.__name__))
        return self.suppress


@cases((1,), (5,))
async def simple_await(x):
    value = await Tick("first", x)
    return value * 2


@cases((3,), (0,))
async def await_in_loop(n):
    total = 0
    for i in range(n):
        total += await Tick(i, i)
    return total


@cases((0,), (1,))
async def await_with_exception(fail):
    try:
        if fail:
            await Fail(ValueError("async failure"))
        await Tick("ok")
    except ValueError as e:
        LOG.append(str(e))
        return "handled"
    finally:
        LOG.append("finally")
    return "clean"


@cases((3,), (0,), (7,))
async def async_for_loop(n):
    seen = []
    async for i in AsyncRange(n):
        if i == 5:
            break
        seen.append(i)
    else:
        seen.append("no break")
    return seen


@cases((0,), (1,))
async def async_with_block(fail):
    async with AsyncResource("db") as name:
        LOG.append(("using", name))
        if fail:
            raise KeyError("inside async with")
    return "done"


@cases((0,), (1,))
async def async_with_suppress(fail):
    async with AsyncResource("a") as a, AsyncResource("b", suppress=True) as b:
        if fail:
            raise RuntimeError("suppressed")
        LOG.append(a + b)
    return len(LOG)


@cases((3,), (0,))
async def async_generator(n):
    for i in range(n):
        await Tick(("produce", i))
        yield i * 10
    LOG.append("agen done")


@cases(kw(3).sending("x", "y"), kw(1))
async def async_generator_send(n):
    received = []
    for i in range(n):
        got = yield i
        received.append(got)
    LOG.append(received)


@cases((4,),)
async def async_comprehensions(n):
    a = [i async for i in AsyncRange(n)]
    b = {i: i * i async for i in AsyncRange(n) if i % 2}
    c = [await Tick(i, i + 1) for i in range(2)]
    return a, b, c


@cases((3,),)
async def consume_async_generator(n):
    async def agen():
        for i in range(n):
            await Tick(i)
            yield i

    out = []
    async for value in agen():
        out.append(value)
    return out, [v async for v in agen()]


@cases((2,),)
async def nested_coroutines(n):
    async def fetch(k):
        await Tick(("fetch", k))
        if k < 0:
            raise LookupError(k)
        return {"id": k}

    results = []
    for k in range(-1, n):
        try:
            results.append(await fetch(k))
        except LookupError as e:
            results.append(("missing", e.args))
    return results


@cases((1,),)
async def await_in_expressions(n):
    x = await Tick("a", n) + await Tick("b", 2)
    y = [await Tick("c", 3), (await Tick("d", 4)) * 2]
    z = await Tick("e", n) if n else await Tick("f", -n)
    return x, y, z


@cases((3,),)
async def async_generator_with_return_in_try(n):
    try:
        for i in range(n):
            yield i
            if i == 1:
                return
    finally:
        LOG.append("agen finally")


@cases((2,),)
async def async_closure_and_lambda(n):
    async def double(v):
        return v * 2

    funcs = [lambda v: double(v), double]
    return [await f(n) for f in funcs]


@cases((0,), (1,))
async def async_for_with_try(fail):
    out = []
    async for i in AsyncRange(3):
        try:
            if fail and i == 1:
                raise ValueError(i)
            out.append(i)
        except ValueError:
            out.append("err")
            continue
    return out


@cases((2,),)
def sync_function_driving_coroutine(n):
    async def work():
        await Tick("w")
        return n * 3

    coro = work()
    try:
        while True:
            coro.send(None)
    except StopIteration as stop:
        return stop.value


@cases((3,),)
async def async_generator_aclose(n):
    async def agen():
        try:
            for i in range(n):
                yield i
        finally:
            LOG.append("closed")

    g = agen()
    first = await g.__anext__()
    await g.aclose()
    return first, list(LOG)


@cases((4,), (0,))
async def await_then_async_comprehension(n):
    # 3.12+ inlines the comprehension; the earlier await's clean-up is laid out inside it
    await Tick(n)
    return {i: i * 2 async for i in AsyncRange(n)}


@cases((3,), (0,))
async def async_for_inside_a_plain_for_in_a_comprehension(n):
    # 3.12+ lays the inner loop's end (END_ASYNC_FOR) out after the code that follows
    pairs = [(i, j) for i in range(n) async for j in AsyncRange(i)]
    return pairs, {(i, j) for i in range(n) for k in range(i) async for j in AsyncRange(k)}

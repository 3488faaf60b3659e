"""Generators: yield, yield from, send, return values, generator pipelines."""

from ._support import cases, kw

LOG: list = []


@cases((3,), (0,))
def count_up(n):
    i = 0
    while i < n:
        yield i
        i += 1


@cases(([1, 2, 3],), ([],))
def doubled(items):
    for item in items:
        yield item * 2
    LOG.append("exhausted")


@cases((3,), (0,))
def with_return_value(n):
    total = 0
    for i in range(n):
        total += i
        yield i
    return total


@cases(([[1, 2], [3]],), ([],))
def delegate(lists):
    for sub in lists:
        result = yield from sub
        LOG.append(result)
    yield from ()


@cases((2,), (4,))
def yield_from_generator_return(n):
    def inner(k):
        yield k
        return k * 10

    results = []
    for i in range(n):
        value = yield from inner(i)
        results.append(value)
    return results


@cases(kw().sending(10, 20, 30), kw().sending(5))
def running_average():
    total = 0.0
    count = 0
    average = None
    while True:
        value = yield average
        if value is None:
            break
        total += value
        count += 1
        average = total / count
    return count


@cases(kw(3).sending("a", "b", "c", "d"), kw(1).sending())
def echo(limit):
    received = []
    for _ in range(limit):
        received.append((yield len(received)))
    return received


@cases((5,), (-1,))
def raises_midway(n):
    yield "start"
    if n < 0:
        raise ValueError("negative")
    yield n
    yield "end"


@cases((3,),)
def try_finally_in_generator(n):
    try:
        for i in range(n):
            yield i
    finally:
        LOG.append("closed")


@cases(([3, 1, 4, 1, 5],), ([],))
def running_max(items):
    it = iter(items)
    try:
        best = next(it)
    except StopIteration:
        return
    yield best
    for x in it:
        if x > best:
            best = x
            yield best


@cases(("a b  c",), ("",))
def tokens(text):
    word = ""
    for ch in text:
        if ch == " ":
            if word:
                yield word
                word = ""
            continue
        word += ch
    if word:
        yield word


@cases((10,),)
def pipeline(n):
    def numbers():
        yield from range(n)

    def evens(src):
        return (x for x in src if x % 2 == 0)

    def squared(src):
        for x in src:
            yield x * x

    return list(squared(evens(numbers())))


@cases((4,),)
def generator_expression_returned(n):
    return (i * i for i in range(n))


@cases((3,),)
def yield_in_expression(n):
    x = yield
    y = (yield x) or n
    z = [(yield i), (yield -i)] if (i := n) else None
    yield x, y, z


@cases((5,),)
def send_driven_inside(n):
    def accumulator():
        total = 0
        while True:
            value = yield total
            if value is None:
                return total
            total += value

    acc = accumulator()
    next(acc)
    for i in range(n):
        acc.send(i)
    try:
        acc.send(None)
    except StopIteration as stop:
        return stop.value


@cases((3,),)
def generator_close_and_throw(n):
    def worker():
        try:
            while True:
                try:
                    value = yield
                    LOG.append(("got", value))
                except KeyError as e:
                    LOG.append(("handled", e.args))
        finally:
            LOG.append("worker done")

    w = worker()
    next(w)
    for i in range(n):
        w.send(i)
    w.throw(KeyError("k"))
    w.close()
    return list(LOG)


@cases((2,),)
def nested_yield_from(n):
    def leaf(k):
        yield k
        yield -k
        return k

    def branch(k):
        a = yield from leaf(k)
        b = yield from leaf(k + 1)
        return a + b

    result = yield from branch(n)
    yield result


@cases(([1, 2, 3, 4, 5, 6, 7],),)
def chunks(items, size=3):
    chunk = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


@cases((3,),)
def yield_in_with(n):
    import contextlib

    @contextlib.contextmanager
    def scope():
        LOG.append("enter")
        yield
        LOG.append("exit")

    with scope():
        for i in range(n):
            yield i


@cases(([1, 2, 3],), ([4],))
def yield_inside_except(items):
    for x in items:
        try:
            if x == 2:
                raise ValueError(x)
            yield x
        except ValueError as e:
            yield ("error", e.args)
        else:
            yield "ok"


@cases((4,),)
def generator_state_inspection(n):
    import inspect

    def g():
        yield 1

    gen = g()
    states = [inspect.getgeneratorstate(gen)]
    next(gen)
    states.append(inspect.getgeneratorstate(gen))
    list(gen)
    states.append(inspect.getgeneratorstate(gen))
    return states, n


@cases((3,),)
def infinite_generator_with_islice(n):
    import itertools

    def naturals():
        k = 0
        while True:
            yield k
            k += 1

    return list(itertools.islice(naturals(), n)), next(naturals())


@cases((2,),)
def return_in_try_in_generator(n):
    try:
        yield n
        return "done"
    finally:
        LOG.append("finally")


@cases(({"a": [1, 2], "b": [3]},),)
def walk_tree(tree):
    for key in sorted(tree):
        yield key
        yield from tree[key]


@cases(([1, 2, 3],), ([7],), ([],))
def generator_expression_of_a_constant(xs):
    # ``yield None``: the element is the constant (found by random programs, issue 13)
    a, *b = (None for _ in xs)
    return a, b, list(1 for _ in xs), sum(True for x in xs if x > 1)


@cases(([1, 2, 3],), ([],))
def comprehensions_behind_a_constant_false_condition(xs):
    # the compiler drops the element behind ``if 0``/``if None``: only the iteration stays
    seen = []

    def each():
        for x in xs:
            seen.append(x)
            yield x

    return ([x * 2 for x in each() if 0], {x: 1 for x in each() if None},
            list(x for x in each() if 0), {y for x in each() for y in (x, x) if 0}, seen)


@cases((1,), (None,))
def yield_only_after_return(x):
    # the yield cannot run, yet it makes this a generator
    return x
    yield x

"""List, set, dict comprehensions and generator expressions."""

from ._support import cases

LOG: list = []


@cases(([1, 2, 3],), ([],))
def squares(items):
    return [x * x for x in items]


@cases(([1, 2, 3, 4, 5, 6],), ([],))
def filtered(items):
    return [x for x in items if x % 2 == 0]


@cases(([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12],),)
def multiple_ifs(items):
    return [x for x in items if x % 2 == 0 if x % 3 == 0]


@cases((3,), (0,))
def nested_for(n):
    return [(i, j) for i in range(n) for j in range(i)]


@cases(([[1, 2], [3], []],),)
def flatten(matrix):
    return [x for row in matrix for x in row]


@cases(([[1, 2], [3, 4]],),)
def transpose(matrix):
    return [[row[i] for row in matrix] for i in range(len(matrix[0]))]


@cases(("hello",), ("",))
def set_comp(word):
    return {c.upper() for c in word if c not in "aeiou"}


@cases((["a", "bb", "ccc"],),)
def dict_comp(words):
    return {w: len(w) for w in words}


@cases(({"a": 1, "b": 2},),)
def invert_dict(d):
    return {v: k for k, v in d.items()}


@cases(([1, 2, 3],), ([],))
def generator_sum(items):
    return sum(x * 2 for x in items)


@cases(([1, 2, 3],),)
def genexp_consumed_later(items):
    gen = (x + 1 for x in items)
    LOG.append("created")
    first = next(gen)
    return first, list(gen)


@cases((2,), (5,))
def closure_in_comprehension(factor):
    offset = factor * 10
    return [x * factor + offset for x in range(3)]


@cases((3,),)
def comprehension_referencing_arg_in_condition(limit):
    return [x for x in range(10) if x < limit], {x: x for x in range(10) if x > 10 - limit}


@cases((3,),)
def lambdas_in_comprehension(n):
    funcs = [lambda x, i=i: x + i for i in range(n)]
    late = [lambda x: x + i for i in range(n)]  # noqa: B023
    return [f(10) for f in funcs], [g(10) for g in late]


@cases(([1, 2, 3],),)
def comprehension_with_walrus(items):
    return [y for x in items if (y := x * 3) > 3], y  # noqa: F821


@cases(([["a", "b"], ["c"]],),)
def comprehension_in_comprehension(groups):
    return {i: [s.upper() for s in g] for i, g in enumerate(groups)}


@cases(([3, 1, 2],), ([],))
def any_all(items):
    return any(x > 2 for x in items), all(x > 0 for x in items), min((x for x in items), default=0)


@cases(([1, 2, 3], 2),)
def comprehension_with_ternary(items, pivot):
    return [("low" if x < pivot else "high") for x in items]


@cases(([(1, "a"), (2, "b")],),)
def unpacking_target(pairs):
    return [f"{n}{s}" for n, s in pairs], {s: n for (n, s) in pairs}


@cases((4,),)
def comprehension_shadowing(x):
    values = [x for x in range(x)]
    return values, x


@cases(([1, 2, 3],),)
def comprehension_side_effects(items):
    return [LOG.append(x) or x for x in items]


@cases((["b", "a"],),)
def sorted_genexp(items):
    return sorted((s.upper() for s in items), reverse=True), tuple(s for s in items)


@cases(([0, 1, 2],),)
def comprehension_raises(items):
    return [10 // x for x in items]


@cases((3,),)
def nested_comprehension_closure(n):
    base = 100
    return [[base + i * j for j in range(n)] for i in range(n)]


@cases(({"x": [1, 2], "y": []},),)
def dict_comp_with_condition(d):
    return {k: sum(v) for k, v in d.items() if v}


@cases((5,),)
def set_of_tuples(n):
    return {(i % 2, i % 3) for i in range(n)}


@cases(("a b c",),)
def genexp_in_call_with_other_args(text):
    return ",".join(w.upper() for w in text.split()), dict((w, 1) for w in text.split())


@cases((3,),)
def class_body_comprehension(n):
    class Table:
        size = n
        rows = [i * 2 for i in range(3)]

    return Table.rows, Table.size


@cases(([1, 2, 3, 4],),)
def comprehension_over_zip(items):
    return [a * b for a, b in zip(items, items[1:])]


@cases(([[1, [2, 3]], [4, [5]]],),)
def deep_nesting(data):
    return [z for x, ys in data for z in [x, *ys] if z != 3]


@cases((4,),)
def comprehension_calls_function(n):
    def double(v):
        LOG.append(v)
        return v * 2

    return [double(i) for i in range(n) if double(i) > 2]


@cases(([1, 2, 3],),)
def genexp_first_iterable_evaluated_early(items):
    it = (x for x in items)
    items.append(4)
    return list(it)


@cases(([[], ()],), ([[], [1]],), ([[], 5],))
def empty_unpacking_targets(items):
    # ``for () in``: each item must be empty (an error otherwise), nothing is bound
    out = [len(items) for () in items]
    out.append({0 for [] in items})
    out.append(list(None for () in items if ()))
    return out


async def _aiter_of(items):
    for item in items:
        yield item


@cases(([[], ()],), ([[1]],))
def empty_unpacking_in_async_comprehension(items):
    import asyncio

    async def run():
        return [1 async for () in _aiter_of(items)], [x async for () in _aiter_of(items) if ()]

    x = 0
    return asyncio.run(run()) if x == 0 else None


@cases(([0, 1, 2, 3],), ([],))
def conditional_filter_before_a_dropped_element(items):
    def seen(v):
        LOG.append(v)
        return v % 2

    # the compiler drops the element behind ``if ()``; the conditional filter still runs
    listed = [x for x in items if (seen(x) if x > 1 else seen(x + 10)) if ()]
    genned = list(x for x in items if (x if seen(x) else not seen(x)) if 0)
    return listed, genned, {x: x for x in items if (seen(x) and x) if None}


@cases(([1, 2],),)
def async_generator_with_its_async_part_dropped(items):
    import inspect

    # ``async for`` after ``if ()`` is dropped, but it made the genexpr asynchronous
    gen = (x for x in items if () async for y in items)
    return inspect.isasyncgen(gen)


@cases(([1, 2],),)
def async_part_dropped_after_an_async_filter(items):
    import inspect

    async def source():
        yield 1

    # the filter's own ``async for`` is its own scope; the dropped one made this async
    gen = (x for x in items if (y async for y in source()) if () async for z in source())
    return inspect.isasyncgen(gen)


@cases(([1, 2],), ([],))
def dropped_loop_keeps_its_target_local(xs):
    # the loop after a false condition is dropped, but its target stays the generator's
    # local: reading it before is an UnboundLocalError, not a global lookup
    return list(a for a in xs if (b for b in y) if "" for y in xs)  # noqa: F821


@cases(([1, 2],), ([],))
def dropped_code_keeps_a_cell_of_an_inlined_comprehension(xs):
    # (3.12+ inlines the list: ``a`` is a cell of this function only because the
    # dropped generator expression reads it)
    return [0 for a in xs if () for b in xs if (a for _ in b)], len(xs)


@cases(([1, 2],), ([],))
def dropped_loop_of_an_inlined_comprehension(xs):
    return [a for a in xs if [] for b in xs], {a: 1 for a in xs if 0 for c in a}


@cases(([1, 2],), ([],))
def dropped_code_reads_a_free_variable_bound_inside(xs):
    # the generator's ``a`` is free (the parameter of the outer function); a
    # comprehension inlined in its dropped part binds an ``a`` of its own
    def outer(a):
        return list(a for _ in xs if () if [0 for a in xs])
    return outer(5)


@cases(([1, 2],), ([],))
def walrus_target_rebound_in_a_nested_comprehension(xs):
    gen = (0 for x in xs if (w := x) for () in "" if {0: 0 for w in xs} for y in x if ())
    return list(gen)


@cases(([1, 2, 3],), ([],), ([0, -4],))
def loops_over_one_item_bind_a_name(xs):
    # 'for y in [expr]' binds 'y' once: the compiler (3.9+) assigns instead of looping
    squares = [y for x in xs for y in [x * x]]
    pairs = {k: v for x in xs for k, v in [(x, -x)] if k}
    chained = [z for x in xs for y in (x + 1,) for z in [y * 2] if z > 2]
    lazy = list(y for x in xs for y in [str(x)] if y != "0")
    return squares, pairs, chained, lazy, {y % 2 for x in xs for y in [x]}


@cases(([1, 2],), ([],))
def loop_over_one_item_before_a_false_condition(xs):
    # the compiler drops what follows 'if ()': the assignment of the one item stays
    made = []
    return [y for x in xs for y in [made.append(x)] if ()], \
        list(z for x in xs for z in (x,) if 0), made

"""Unusual but valid code: empty bodies, unreachable code, odd control flow."""

from ._support import cases

LOG: list = []


@cases((1,),)
def only_pass(n):
    pass


@cases((1,),)
def only_docstring(n):
    """Nothing but a docstring."""


@cases((1,),)
def only_ellipsis(n):
    ...


@cases((2,),)
def unreachable_after_return(n):
    return n * 2
    LOG.append("never")  # noqa: B018
    return -1


@cases((2,),)
def unreachable_after_raise(n):
    raise ValueError(n)
    return n


@cases((5,),)
def unreachable_after_break(n):
    for i in range(n):
        break
        LOG.append(i)
    return i


@cases((3,),)
def unreachable_after_continue(n):
    out = []
    for i in range(n):
        continue
        out.append(i)
    return out


@cases((1,), (0,))
def while_false_and_if_false(n):
    while False:
        LOG.append("never")
    if False:
        return "dead"
    if 0:
        LOG.append("dead too")
    if True:
        LOG.append("always")
    return n


@cases((0,), (1,))
def while_one(n):
    count = 0
    while 1:
        count += 1
        if count > n:
            break
    return count


@cases((3,),)
def infinite_loop_with_return(n):
    i = 0
    while True:
        i += 1
        if i == n:
            return i


@cases((1,), (0,))
def return_in_every_branch(n):
    if n:
        return "yes"
    else:
        return "no"
    return "unreachable"  # noqa


@cases((1,), (0,))
def if_with_constant_test_and_else(n):
    if not True:
        x = "dead"
    else:
        x = "live"
    while n and False:
        x = "also dead"
    return x


@cases(([],), ([1],))
def empty_for_else(items):
    for _ in items:
        pass
    else:
        pass
    return len(items)


@cases((1,),)
def expression_statements(n):
    n + 1
    n == 2  # noqa: B015
    [n]
    (n,)
    n.bit_length()
    LOG.append(n) if n else None
    return n


@cases((1,), (0,))
def return_none_variants(n):
    if n:
        return
    return None


@cases((1,),)
def same_name_different_roles(n):
    list = [n]  # noqa: A001
    len = 3  # noqa: A001
    return list, len


@cases((2,),)
def redefined_function(n):
    def f():
        return 1

    first = f()

    def f():  # noqa: F811
        return 2

    return first, f(), n


@cases((3,),)
def shadowed_builtin_in_comprehension(n):
    range = lambda k: [k, k]  # noqa: E731, A001
    return [x for x in range(n)]


@cases((1,),)
def try_with_only_finally_pass(n):
    try:
        x = n
    finally:
        pass
    return x


@cases((1,), (0,))
def nested_empty_blocks(n):
    if n:
        for _ in range(2):
            while False:
                pass
            try:
                pass
            finally:
                pass
    return "ok"


@cases((4,), (20,))
def loop_else_with_return(n):
    for i in range(n):
        if i > 10:
            break
    else:
        return "no break"
    return "break"


@cases((0,), (1,))
def continue_in_finally(n):
    out = []
    for i in range(3):
        try:
            if n:
                raise KeyError(i)
        finally:
            out.append(i)
            continue  # noqa: B012
    return out


@cases((0,), (1,))
def break_in_finally(n):
    for i in range(3):
        try:
            if n:
                raise KeyError(i)
            LOG.append(i)
        finally:
            break  # noqa: B012
    return i


@cases((1,), (2,))
def lambda_that_is_never_called(n):
    f = lambda: 1 / 0  # noqa: E731
    return n, callable(f)


@cases((1,),)
def parenthesized_everything(n):
    x = (((n)))
    y = ((x) + ((1)))
    return ((y), (x))


@cases((1,), (-1,))
def conditional_import(n):
    if n > 0:
        import json as codec
    else:
        import pickle as codec
    return codec.__name__


@cases((3,),)
def function_attribute_use(n):
    def f():
        f.calls = getattr(f, "calls", 0) + 1
        return f.calls

    for _ in range(n):
        f()
    return f.calls


@cases((2,),)
def name_error_at_runtime(n):
    if n > 5:
        undefined_thing = 1  # noqa: F841
    return undefined_thing  # noqa: F821


@cases((1,), (0,), (7,))
def return_inside_while_else(n):
    while n:
        n -= 1
        if n == 5:
            return "five"
    else:
        return "exhausted"


@cases(([1, 2],), ([],))
def cell_read_only_by_a_dead_closure(items):
    # ``items`` is a cell (the lambda), though the only live nested scope that names it
    # binds a name of its own
    pairs = list((items, 1) for items in items)
    return pairs
    lambda: items  # noqa

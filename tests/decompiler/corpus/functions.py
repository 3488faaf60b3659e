"""Lambdas, closures, nonlocal and global, and functions made by factories."""

import functools

from ._support import cases, kw

LOG: list = []
COUNTER = 0
SETTINGS = {"scale": 2}

square = cases((2,), (-3,), (1.5,))(lambda x: x * x)
clamp = cases((5, 0, 3), (-1, 0, 3), (2, 0, 3))(lambda v, lo, hi: max(lo, min(v, hi)))
with_defaults = cases((1,), (1, 2), kw(1, c=5))(lambda a, b=10, *, c=100: a + b + c)
star_lambda = cases((), (1, 2), kw(1, x=2))(lambda *args, **kwargs: (args, sorted(kwargs)))
ternary_lambda = cases((3,), (-3,))(lambda n: "neg" if n < 0 else "pos")
nested_lambda = cases((2,), (5,))(lambda x: (lambda y: x * y)(x + 1))
logging_lambda = cases(("a",), ("b",))(lambda s: LOG.append(s) or len(LOG))


@cases((3,), (0,))
def make_adder_and_use(n):
    def make_adder(k):
        def add(x):
            return x + k

        return add

    add_n = make_adder(n)
    return add_n(1), make_adder(10)(n)


@cases((3,), (1,))
def counter_closure(n):
    def make_counter():
        count = 0

        def increment(step=1):
            nonlocal count
            count += step
            return count

        return increment

    counter = make_counter()
    results = [counter() for _ in range(n)]
    results.append(counter(10))
    return results


@cases((2,), (4,))
def nonlocal_in_nested_levels(n):
    total = 0

    def outer():
        def inner():
            nonlocal total
            total += n

        for _ in range(n):
            inner()

    outer()
    return total


@cases((1,), (5,))
def global_counter(step):
    global COUNTER
    COUNTER += step
    return COUNTER


@cases(("scale", 3), ("offset", 1))
def global_dict_update(key, value):
    SETTINGS[key] = value
    return dict(SETTINGS)


@cases((1,), (2,))
def global_declared_in_nested(value):
    def set_it():
        global COUNTER
        COUNTER = value * 100

    set_it()
    return COUNTER


@cases((2,),)
def closure_over_loop_variable(n):
    funcs = []
    for i in range(n):
        funcs.append(lambda: i)  # noqa: B023
    bound = [lambda i=i: i for i in range(n)]
    return [f() for f in funcs], [f() for f in bound]


@cases((5,), (0,))
def recursive_inner(n):
    def fact(k):
        return 1 if k <= 1 else k * fact(k - 1)

    return fact(n)


@cases((3,),)
def mutual_recursion(n):
    def is_even(k):
        return True if k == 0 else is_odd(k - 1)

    def is_odd(k):
        return False if k == 0 else is_even(k - 1)

    return [is_even(i) for i in range(n + 3)]


@cases(([3, 1, 2],), (["b", "A", "c"],))
def sort_with_lambda_key(items):
    return sorted(items, key=lambda v: str(v).lower()), sorted(items, key=str, reverse=True)


@cases((2, 3),)
def partial_application(a, b):
    def power(base, exp):
        return base**exp

    square_of = functools.partial(power, exp=2)
    return square_of(a), functools.partial(power, b)(a)


@cases((4,),)
def closure_cell_modified_after_creation(n):
    value = 1

    def get():
        return value

    first = get()
    value = n
    return first, get()


@cases((3,),)
def shared_cell_between_closures(n):
    def make():
        state = []

        def push(v):
            state.append(v)

        def size():
            return len(state)

        return push, size

    push, size = make()
    for i in range(n):
        push(i)
    return size()


@cases((1, 2),)
def lambda_default_captures(a, b):
    f = lambda x=a, y=b: x * 10 + y  # noqa: E731
    a = 100
    return f(), f(3), f(y=4)


@cases(("x",), ("y",))
def closure_reads_global_and_local(prefix):
    def label(v):
        return f"{prefix}:{v}:{SETTINGS['scale']}"

    return [label(i) for i in range(2)]


@cases((3,),)
def generator_closure(n):
    def gen():
        for i in range(n):
            yield i * n

    return list(gen())


@cases((2,), (0,))
def immediately_invoked(n):
    return (lambda: n * 2)(), (lambda *a: len(a))(1, 2, n)


@cases((5,),)
def nonlocal_rebinding_list(n):
    items = []

    def reset():
        nonlocal items
        items = [n]

    items.append(1)
    reset()
    items.append(2)
    return items


@cases((3,),)
def deep_closure_chain(n):
    a = n

    def level1():
        b = a + 1

        def level2():
            c = b + 1

            def level3():
                return a + b + c

            return level3()

        return level2()

    return level1()


def _make_scaled(factor):
    @cases((1,), (5,), ("ab",))
    def scaled(x):
        return x * factor

    return scaled


scaled = _make_scaled(3)


def _make_accumulator():
    total = []

    @cases((1,), (2,))
    def accumulate(value):
        total.append(value)
        LOG.append(len(total))
        return sum(total)

    return accumulate


accumulate = _make_accumulator()


def _make_checker(limit):
    seen = set()

    @cases((1,), (7,), (3,))
    def check(value):
        nonlocal limit
        if value in seen:
            return "seen"
        seen.add(value)
        if value > limit:
            limit = value
            return "raised limit"
        return "ok"

    return check


check = _make_checker(5)


@cases((2,),)
def class_in_closure(n):
    class Multiplier:
        def __init__(self):
            self.factor = n

        def __call__(self, v):
            return v * self.factor

    return Multiplier()(21)


@cases((3,),)
def global_without_declaration_read(n):
    return COUNTER + n, len(LOG)


@cases((1,),)
def del_nonlocal_cell(n):
    value = n

    def read():
        return value

    first = read()
    del value
    try:
        return first, read()
    except NameError as e:
        return first, type(e).__name__


@cases((1,), ("x",))
def lambda_as_a_statement_keeps_its_cell(value):
    # the lambda is made and dropped, but it makes ``value`` a cell of this function
    lambda *rest, **kw: value
    return [value for value in (value, value)]


@cases((int,), (str,))
def annotated_closure_with_defaults(kind):
    # 3.14 sets the closure, then the ``__annotate__`` function, then the defaults
    def inner(a=1, *, b=2) -> kind:
        return kind(a + b)

    return inner(), inner(3, b=4), inner.__annotations__

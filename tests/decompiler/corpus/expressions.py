"""Value-context boolean operators, conditional expressions and chained comparisons."""

from ._support import cases

LOG: list = []


def probe(tag, value):
    """Record evaluation order and pass the value through."""
    LOG.append(tag)
    return value


@cases((0, 5), (3, 5), ("", "x"), (None, 0), ([], [1]))
def or_default(value, default):
    return value or default


@cases((0, 5), (3, 5), ("", "x"), ([1], 0))
def and_value(a, b):
    return a and b


@cases((0, 0, 0), (1, 0, 3), (0, 2, 3), (1, 2, 0), ("", "b", ""))
def mixed_value(a, b, c):
    return a and b or c, a or b and c, (a or b) and c, a and (b or c), not a or b


@cases((0, 0, 0, 0), (1, 2, 3, 4), (0, 2, 0, 4), (1, 0, 3, 0))
def nested_value(a, b, c, d):
    return (a and b) or (c and d), (a or b) and (c or d), a or b or c or d, a and b and c and d


@cases((0, 1), (1, 0), (2, 3))
def bool_in_call(a, b):
    return str(a or b), [a and b, not a], max(a or 1, b and 2), dict(k=a or None)


@cases((0, 1), (5, 0), (None, None))
def evaluation_order_or(a, b):
    return probe("a", a) or probe("b", b) or probe("c", "fallback")


@cases((0, 1), (5, 0), (5, 7))
def evaluation_order_and(a, b):
    return probe("a", a) and probe("b", b) and probe("c", "last")


@cases((5,), (-5,), (0,))
def simple_ternary(x):
    return "positive" if x > 0 else "non-positive"


@cases((5,), (-5,), (0,))
def nested_ternary(x):
    return "pos" if x > 0 else "neg" if x < 0 else "zero"


@cases((1, 1), (1, 0), (0, 1), (0, 0))
def ternary_in_ternary_condition(a, b):
    return ("A" if a else "B") if (b if a else not b) else ("C" if b else "D")


@cases((3,), (12,), (-1,))
def ternary_in_expressions(n):
    items = [n if n > 0 else 0, n * 2 if n < 10 else n // 2]
    total = sum(items) + (1 if n % 2 else 2)
    label = f"{'big' if total > 10 else 'small'}:{total}"
    return items, total, label


@cases((1, [1, 2]), (None, [3]), (2, []))
def ternary_with_side_effects(flag, items):
    value = probe("yes", len(items)) if probe("cond", flag) else probe("no", -1)
    return value


@cases((0, 1, 2), (1, 1, 1), (2, 1, 0), (1, 2, 2), (0, 0, 5))
def chained_value(a, b, c):
    return a < b < c, a <= b <= c, a == b == c, a < b > c, a != b != c, a < b == c


@cases((1, 2, 3), (3, 2, 1), (1, 3, 2), (0, 0, 0))
def chained_condition(a, b, c):
    if a < b < c:
        return "ascending"
    elif a > b > c:
        return "descending"
    elif a == b == c:
        return "flat"
    return "mixed"


@cases((1, 2, 3, 4), (1, 3, 2, 4), (4, 3, 2, 1), (1, 2, 3, 3))
def long_chain(a, b, c, d):
    return a < b < c < d, a < b <= c < d


@cases((1, 2, 3), (2, 1, 3), (1, 2, 1))
def chain_evaluation_order(a, b, c):
    result = probe("a", a) < probe("b", b) < probe("c", c)
    return result


@cases((5,), (15,), (-3,), (10,))
def range_check(x):
    if 0 <= x < 10:
        return "digit"
    if not 0 <= x <= 20:
        return "out"
    return "teen"


@cases((3, [1, 2, 3]), (4, [1, 2]), (None, [None]))
def chained_in_is(x, items):
    return x in items in [items], x is not None in [True, False]


@cases((1, 5, 10), (1, 0, 10), (10, 5, 1))
def chain_with_calls(lo, x, hi):
    if probe("lo", lo) <= probe("x", x) <= probe("hi", hi):
        return "in"
    return "out"


@cases((2, 3), (0, 9), (7, 0))
def bool_result_types(a, b):
    return bool(a and b), not (a or b), (a > 1) == (b > 1), (a > 1) is (b > 1)


@cases(("", None), ("x", None), ("", "y"))
def or_chain_with_attribute(name, fallback):
    return (name or fallback or "anonymous").upper()


@cases((1, 2), (0, 2), (1, 0))
def and_or_assignment(a, b):
    x = a and b
    y = a or b
    z = not a
    w = x or y and z
    return x, y, z, w


@cases((0,), (1,), (2,), (3,))
def ternary_chain_returning_calls(n):
    return len("abc") if n == 0 else abs(-n) if n == 1 else str(n) if n == 2 else None


@cases((4,), (0,), (-2,))
def conditional_call_target(n):
    f = max if n > 0 else min
    return f(n, 1), (sorted if n else list)([3, 1, 2])


@cases((1, 2, 3), (0, 0, 0))
def not_of_comparisons(a, b, c):
    return not a < b, not a == c, not (a < b < c), not a in (b, c), not a is b


@cases(([1, 2, 3], 2), ([], 0), ([5], 9))
def and_or_short_circuit_guard(items, index):
    return index < len(items) and items[index] or "missing"


@cases((0,), (1,), (2,))
def ternary_as_statement(n):
    LOG.append("even") if n % 2 == 0 else LOG.append("odd")
    return len(LOG)


@cases((0, 0), (1, 0), (0, 1), (1, 1))
def or_in_return_with_not(a, b):
    return not a and not b or a and b


@cases((5, 3), (3, 5), (4, 4))
def ternary_assign_tuple(a, b):
    lo, hi = (a, b) if a < b else (b, a)
    return lo, hi, hi - lo


@cases((1.0, 2.0), (float("nan"), 1.0), (2.0, float("nan")))
def comparisons_with_nan(a, b):
    return a < b, a == a, a != b, max(a, b) if a == a and b == b else "nan"


@cases((None,), ([],), ([0],), ("0",))
def chained_truthiness(value):
    return value is not None and len(value) > 0 and value[0] or "default"


@cases((1, 2, 3, 4), (4, 3, 2, 1), (1, 2, 2, 3), (1, 1, 1, 1))
def long_chains_as_values(a, b, c, d):
    # each failed test shares one clean-up block; the value sits over other values
    pair = [a, a < b < c < d]
    triple = (b, c, a <= b <= c <= d != a)
    return pair, triple, str(a in [a, b] < [c, d] != 5)


def _collect(*args, **kwargs):
    return args, sorted(kwargs.items())


@cases((1, 2, 3), (3, 2, 1), (2, 2, 2))
def chains_in_call_arguments(a, b, c):
    # 3.12+ copies the call and its return into each arm of the comparison
    return _collect(a, b, a in (b, c) <= {1, 2, 3} < {1, 2, 3, 4}, key=a < b < c)


@cases(({"k": 1}, None, True), ({}, {"j": 2}, False))
def conditional_keyword_mapping(x, y, c):
    return _collect(x, **x if c else y)


@cases((0, 1, 2, 3), (1, 0, 2, 0), (1, 1, 0, 0), ("", [], 0, None), (1, "", 0, 5))
def mixed_boolean_values(a, b, c, d):
    # an inner ``or``/``and`` whose short-circuit meets the outer one's at the same join
    return [a and (b or c), a and (not b or c), a or (b and c) or d,
            a and (b or (c and d)), (a or b) and (c or d)]


@cases((["x", "y"], {"x": 1, "y": None}), (["x"], {}), ([], {}))
def mixed_boolean_generator(attrs, values):
    return all(a in values and (not callable(values.get(a)) or values[a] is not None)
               for a in attrs)


def _kw(*args, **kwargs):
    return args, kwargs


@cases((0, "", 3, None, True), (1, 2, 0, 4, False), (0, 0, 0, 0, False), (5, 0, "", 7, True))
def boolean_arms_of_a_conditional_argument(a, b, c, d, t):
    # 3.12+ jumps from each arm's ``or`` straight to the end of the whole expression
    first = _kw(a or b if t else c or d, k=a)
    second = _kw(1, a and b if t else c, k=[c or d if a else b])
    return first, second, [1, a or b if t else d]


@cases((1,), ([1],), (None,))
def function_in_the_middle_of_a_chain(a):
    # the chain drops its copy of the function on the way out; the comparison keeps it
    return a != (lambda: a) != a, a == (lambda: a) != a


@cases((2, 1, True, 1, 2), (2, 1, False, 1, 1), (1, 2, True, 1, 1), (2, 1, 0, 1, None))
def call_of_a_chain_ending_in_a_conditional(a, b, u, c, d):
    # (3.12 copies the call and return into both arms and into the chain's clean-up)
    return repr(a > b == (c if u else d))


@cases((0, 0, 0, 0), (1, 0, 0, 0), (1, 1, 1, 1), (0, 1, 1, 1), (0, 1, 1, 0))
def conditional_whose_test_ends_in_not(a, b, c, d):
    # the body is the arm laid out first: the test is written as the source had it
    return 1 if a and not b else 2 if c and d else 3, [x if a and not x else -x for x in (b, c)]


@cases((1, 0, 1, 0), (0, 1, 0, 1), (1, 1, 0, 0), (0, 0, 1, 1), (1, 0, 0, 1))
def conditional_as_the_test_of_a_conditional(q, r, s, t):
    # both arms of the inner conditional jump to the outer one's arms
    return _collect(q, k=q if (r if s else t) else -q), ("y" if (r if s else t) else "n")


@cases((0, 5), (3, 5), ([], [1]))
def walrus_in_an_arm_of_and_or(a, c, xs=(7,)):
    x = a or (b := c)
    y = a and (d := [c])
    return x, y, _collect(*xs, a or (a := c)), locals().get("b"), locals().get("d"), a


@cases((1, 2, 3), (3, 2, 1), (1, 1, 1))
def walrus_in_the_middle_of_a_chain(a, b, c):
    return a < (m := b + 1) <= c + 1, m


@cases(({"k": 1},), ({},))
def kept_test_whose_exit_is_copied(x):
    # 3.12+ copies the end of the call into both arms of ``x or {...}``
    return _collect(**x or {"default": 2})


@cases((None,), (5,))
def walrus_of_a_lambda_is_one_function(a):
    # the stored function and the argument are one object
    got = _collect(a, k=(a := (lambda *n: a)))
    return dict(got[1])["k"] is a, (f := lambda: 0) is f, a() is a


@cases(({"j": 1}, [2, 3]), ({}, []), ({"k": 0}, [1]))
def keywords_after_a_double_star(a, xs):
    # keywords after ``**a`` are merged as a mapping of their own, like ``**{'k': ...}``
    plain = _collect(**a, k=len(xs), m=1)
    chosen = _collect(**a, k=[x * 2 for x in xs] if xs else a)
    literal = _collect(p=1, **{"q": 2})
    return plain, chosen, literal


@cases((True, None), (True, "m"), (False, None))
def raise_of_a_conditional_over_two_lines(closed, msg):
    # (3.12+ copies the call and the raise into both arms)
    if closed:
        raise ValueError("closed"
                         if msg is None else msg)
    return msg


@cases(([1, 2], 0, 0), ([1], 1, 0), ([], 0, 1), ((3,), "", "d"))
def conditional_with_or_after_starred_args(a, c, d):
    # (3.12+ copies the call's end into both arms; the first arm is also where ``c``
    # goes when true)
    return _collect(*a, "x" if c or d else "y")


def _collect(*args):
    return args


@cases(("a", "b"), (1, [2]), ("%s", ""))
def percent_format_kept_by_an_f_string(a, b):
    # ('%s.%s' % (a, b) compiles to an f-string since 3.11: an f-string format keeps
    # the '%' operator)
    return f"%s.%s" % (a, b), "%s-%r" % (a, b), "%d" % (len(str(a)),)


def _dir_of(path):
    return ("dir", path)


def _file_of(path):
    return ("file", path)


@cases(("a/",), ("b",), ("",))
def calls_of_different_functions_in_a_conditional(path):
    # (the same arguments: the NULL a global call target pushes stays with its load)
    first = _dir_of(path) if path.endswith("/") else _file_of(path)
    second = (_dir_of if path else _file_of)(path)
    return first, second, _dir_of(path) if not path else _file_of(path)


class _Holder:
    level = 3

    def __setattr__(self, name, value):
        LOG.append((name, value))


@cases((None,), (0,), (5,))
def conditional_stored_to_an_attribute_at_the_end(level):
    # (the store and the implicit return are copied into both arms)
    holder = _Holder()
    holder.level = level if level is not None else _Holder.level


@cases((0, 0, 1, ()), (1, 0, 2, (3,)), (0, 5, 0, (4, 5)), ("", [], "z", ()))
def or_then_and_as_a_value_after_starred_args(b, c, d, rest):
    # (3.10, 3.11 thread ``b``'s jump when true past ``c``'s test straight to ``d``)
    x = (b or c) and d
    y = (probe("b", b) or probe("c", c)) and probe("d", d)

    class Made(*(rest and (object,)), (b or c) and object or object):
        pass
    return x, y, _collect(*rest, (b or c) and d), Made.__bases__, LOG[-3:]


@cases(("5",), ("a",), ("G",), ("",))
def or_of_chained_comparisons_returned_over_two_lines(c):
    # (3.10 copies the ``return`` into the last link's true side only)
    return c.isdigit() or \
        (65 <= ord(c[:1] or "0") <= 70) or (97 <= ord(c[:1] or "0") <= 102)


@cases(({"a": 1},), ({},), (None,))
def conditional_of_a_call_stored_at_the_end(mapping):
    # (3.10 copies the store and the implicit return into both arms; the arm that
    # calls has a stack effect of its own to find the value's end by)
    holder = _Holder()
    holder.level = dict(mapping) if mapping else None
    holder.other = None if not mapping else sorted(mapping, key=str)


@cases((1, 1, 0, 0, 5), (1, 0, 0, 0, 5), (0, 0, 1, 0, 5), (0, 0, 0, 0, 5), (0, 0, 0, 3, 5))
def return_whose_test_is_a_conditional(a, b, c, d, e):
    # (3.12+ copies the 'return 0' into the way 'b' runs on: both tests jump to the
    # one 'else')
    return 0 if (b if a else c) else d or e


@cases((1, 1, 0, 0), (1, 0, 0, 4), (0, 0, 1, 0), (0, 1, 0, 4))
def lambda_whose_test_is_a_conditional(a, b, c, d):
    f = lambda x: x if (b if a else c) else d  # noqa: E731
    return f(7), f(None)


@cases((1, 1, 0, 0), (1, 0, 0, 4), (0, 0, 1, 0), (0, 1, 0, 4))
def conditional_whose_arms_are_written_alike(a, b, c, d):
    # each inner test has an 'else' of its own: not one test of a conditional
    return (0 if b else d) if a else 0 if c else d


@cases((5,), (None,))
def lambda_whose_folded_test_read_a_closure_variable(p):
    # the compiler folds '1 or p' to 1 but keeps 'p' a free variable of the lambda
    f = lambda: 1 or p  # noqa: E731
    return f(), f.__code__.co_freevars, [c.cell_contents for c in f.__closure__]


@cases((1, 1), (1, 0), (0, 1), (0, 0), ([], [2]))
def arguments_tested_by_conditionals_with_a_constant_arm(u0, u1):
    # '(u1 if u0 else 0)' as a test: the compiler keeps the constant it knows in the
    # else arm as a jump of its own (or, for a true one, as a NOP the body arm jumps over)
    seen = []

    def both(*args, **kw):
        seen.append((args, kw))
        return args

    return (both("a" if (u1 if u0 else 0) else "b", **{"k": 1}),
            both(0 < u0 >= 0 if (u1 if u0 else False) else "c", **{}),
            both("d" if (u1 if u0 else 1) else "e", **{}), seen)


@cases((1, 1), (1, 0), (0, 1), (0, 0), ("", "x"))
def if_tested_by_a_conditional_with_a_true_constant_arm(u0, u1):
    seen = []
    if (u1 if u0 else True):
        seen.append("body")
    seen.append("after")
    return seen


@cases((1, 1, 1), (1, 0, 0), (0, 1, 1), (0, 0, 0), (1, 1, 0), ([], [0], ""))
def star_arguments_before_a_conditional_tested_by_a_conditional(a, b, c):
    # the argument list stays on the stack across both conditionals' blocks: a class
    # creation needs the list itself, not a temporary
    class A: pass  # noqa: E701
    class B: pass  # noqa: E701
    class D: pass  # noqa: E701
    class E: pass  # noqa: E701

    def both(*args):
        return args

    bases = (A,) if a else ()

    class C(*bases, (B if c else D) if (b if a else c) else E):
        pass

    return (both(*bases, (1 if c else 2) if (b if a else c) else 3),
            [k.__name__ for k in C.__mro__])

"""if / elif / else: nesting, compound conditions, not, early returns."""

from ._support import cases, kw

LOG: list = []


@cases((5,), (-5,), (0,))
def sign(x):
    if x > 0:
        return 1
    elif x < 0:
        return -1
    else:
        return 0


@cases((95,), (85,), (75,), (65,), (10,), (100,), ("x",))
def grade(score):
    if score >= 90:
        letter = "A"
    elif score >= 80:
        letter = "B"
    elif score >= 70:
        letter = "C"
    elif score >= 60:
        letter = "D"
    else:
        letter = "F"
    return letter


@cases((3,), (4,), (-1,))
def if_without_else(n):
    result = "small"
    if n > 3:
        result = "big"
    LOG.append(result)
    return result


@cases((1, 1), (1, 0), (0, 1), (0, 0))
def and_condition(a, b):
    if a and b:
        return "both"
    return "not both"


@cases((1, 1), (1, 0), (0, 1), (0, 0))
def or_condition(a, b):
    if a or b:
        return "some"
    return "none"


@cases((1, 1), (1, 0), (0, 1), (0, 0))
def not_and(a, b):
    if not (a and b):
        return "nand"
    return "and"


@cases((1, 1), (1, 0), (0, 1), (0, 0))
def not_or(a, b):
    if not (a or b):
        return "nor"
    return "or"


@cases((1, 0, 0), (0, 1, 1), (0, 1, 0), (0, 0, 1), (1, 1, 1), (0, 0, 0))
def mixed_and_or(a, b, c):
    if a or b and c:
        LOG.append("first")
    if (a or b) and c:
        LOG.append("second")
    if a and not b or c:
        LOG.append("third")
    if not a and not b and not c:
        LOG.append("fourth")
    return len(LOG)


@cases((1, 2, 3, 4), (0, 2, 0, 4), (1, 0, 0, 0), (0, 0, 3, 0), (0, 0, 0, 0))
def four_way(a, b, c, d):
    if (a and b) or (c and d):
        return "pair"
    elif (a or b) and not (c or d):
        return "left"
    elif not a and not b:
        return "right" if c or d else "nothing"
    return "other"


@cases((10, 20), (20, 10), (5, 5), (-1, 50), (10, 30), (-1, -5))
def nested_if(x, y):
    if x > 0:
        if y > x:
            if y > 2 * x:
                return "far above"
            return "above"
        else:
            if x == y:
                return "equal"
            return "below"
    else:
        if y > 0:
            return "negative x"
    return "fallthrough"


@cases(([],), ([1],), ([1, 2],), (None,), ("abc",))
def truthiness(value):
    if not value:
        return "empty"
    if len(value) == 1:
        return "single"
    return "many"


@cases((None,), (0,), ("",), (False,), (1,))
def is_none_checks(value):
    if value is None:
        kind = "none"
    elif value is False:
        kind = "false"
    elif value == 0 and value is not False:
        kind = "zero"
    elif value:
        kind = "truthy"
    else:
        kind = "falsy"
    return kind


@cases(("GET",), ("POST",), ("put",), ("DELETE",), ("PATCH",))
def dispatch_method(method):
    method = method.upper()
    if method in ("GET", "HEAD"):
        action = "read"
    elif method == "POST":
        action = "create"
    elif method in {"PUT", "PATCH"}:
        action = "update"
    else:
        raise ValueError(f"unsupported method {method}")
    LOG.append(action)
    return action


@cases((2000,), (1900,), (2024,), (2023,), (2400,))
def is_leap_year(year):
    if year % 4 != 0:
        return False
    elif year % 100 != 0:
        return True
    elif year % 400 != 0:
        return False
    else:
        return True


@cases((2000,), (1900,), (2024,), (2023,))
def is_leap_year_expr(year):
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


@cases((3, 4, 5), (1, 1, 3), (2, 2, 2), (2, 2, 3), (0, 1, 1), (5, 4, 3), (4, 5, 6))
def triangle_kind(a, b, c):
    a, b, c = sorted((a, b, c))
    if a <= 0 or a + b <= c:
        raise ValueError("not a triangle")
    if a == b == c:
        return "equilateral"
    if a == b or b == c:
        return "isosceles"
    if a * a + b * b == c * c:
        return "right"
    return "scalene"


@cases((1,), (-1,), (0,))
def early_return_guard(x):
    if x < 0:
        LOG.append("negative")
        return None
    if not x:
        return 0
    LOG.append("positive")
    return x * 10


@cases(({"debug": True, "level": 3},), ({"debug": False},), ({},), ({"level": 0},))
def config_flags(options):
    verbose = False
    if options.get("debug"):
        verbose = True
        if options.get("level", 1) > 2:
            LOG.append("very verbose")
    elif "level" in options and options["level"] == 0:
        LOG.append("silent")
    else:
        pass
    return verbose


@cases((0,), (1,), (2,), (3,), (4,), (5,), (6,), (7,), (8,))
def long_elif_chain(n):
    if n == 0:
        return "zero"
    elif n == 1:
        return "one"
    elif n == 2:
        return "two"
    elif n == 3:
        return "three"
    elif n == 4:
        return "four"
    elif n == 5:
        return "five"
    elif n == 6:
        return "six"
    elif n == 7:
        return "seven"
    return "many"


@cases((1, 2), (2, 1), (1, 1))
def if_else_assign_both(a, b):
    if a < b:
        lo, hi = a, b
    else:
        lo, hi = b, a
    return hi - lo, lo, hi


@cases((5, [1, 2]), (0, []), (3, []))
def condition_with_calls(n, items):
    def check(tag, value):
        LOG.append(tag)
        return value

    if check("a", n > 2) and check("b", len(items) > 0) or check("c", n == 0):
        return "yes"
    return "no"


@cases((1, 2, 3), (3, 2, 1), (2, 3, 1), (1, 1, 1), (2, 1, 3))
def max_of_three(a, b, c):
    if a >= b:
        if a >= c:
            largest = a
        else:
            largest = c
    elif b >= c:
        largest = b
    else:
        largest = c
    return largest


@cases((True, False), (False, True), (True, True), (False, False))
def xor_like(p, q):
    if (p and not q) or (not p and q):
        return True
    else:
        return False


@cases((15,), (9,), (10,), (7,), (0,))
def fizzbuzz_one(n):
    if n % 15 == 0:
        return "FizzBuzz"
    if n % 3 == 0:
        return "Fizz"
    if n % 5 == 0:
        return "Buzz"
    return str(n)


@cases((1, None), (None, 2), (None, None), (0, 3))
def first_not_none(a, b):
    if a is not None:
        return a
    elif b is not None:
        return b
    raise LookupError("both are None")


@cases((4, 4), (1, 9), (9, 1))
def if_in_else_if(x, y):
    result = []
    if x > y:
        result.append("x")
    else:
        if y > x:
            result.append("y")
        else:
            result.append("tie")
        result.append("checked")
    return result


@cases(("abc", 1), ("", 0), ("xyz", 0), ("q", 5))
def not_not(s, n):
    if not not s:
        LOG.append(s)
    if not (not s or n):
        return "s without n"
    if not s and not n:
        return "neither"
    return "other"


@cases((kw(1, strict=True)), kw(1), kw(-1, strict=True), kw(-1))
def keyword_condition(value, *, strict=False):
    if strict and value < 0:
        raise ValueError("negative value in strict mode")
    elif not strict and value < 0:
        return abs(value)
    return value


@cases((0.5,), (1.5,), (float("nan"),), (float("inf"),))
def float_ranges(x):
    if x != x:
        return "nan"
    if 0 <= x < 1:
        return "unit"
    if x == float("inf"):
        return "inf"
    return "other"


@cases(("linux", None), ("mac", 1), ("mac", None))
def separate_tests_returning_the_same(platform, level):
    if platform == "linux":
        return True
    if level is not None:
        return True
    return False


@cases(([0], 1, 1, 2), ([2], 0, 1, 2), ([2], 2, 1, 2), ([2], 2, 3, 2), ([3], 9, 9, 1))
def multi_line_test_before_the_implicit_return(counter, when, first, last):
    log = []
    counter[0] -= 1
    if (counter[0] <= 0 or
            when == first or
            when == last and (not log and
                              len(counter) is not None)):
        if counter is not None:
            log.append(1)
        if not log:
            log.append(2)


@cases(("",), ("a b",), ("x",))
def one_line_return_then_a_test(arg):
    aliases = {"x": 1}
    args = arg.split()
    if len(args) == 0: return  # noqa: E701
    if args[0] in aliases:
        del aliases[args[0]]
    return aliases


@cases((True, False), (True, True), (False, False))
def written_return_none_that_two_tests_share(started, alive):
    if started and not alive:
        return 0
    else:
        return None


@cases(("a", ["a"]), ("b", ["a"]), (3, []))
def else_raise_after_an_arm_that_ends_the_function(item, seen):
    if isinstance(item, str):
        if item not in seen:
            seen.append(item)
    else:
        raise TypeError("not a str: %r" % (item,))


@cases((1, 0), (0, 1), (0, 0))
def elif_raise_else_after_an_arm_that_ends_the_function(a, b):
    if a:
        LOG.append(a)
    elif b:
        raise ValueError(b)
    else:
        LOG.append(-1)


@cases((1,), (0,))
def else_return_of_a_value_after_an_arm_that_ends_the_function(a):
    if a:
        LOG.append(a)
    else:
        return 5


@cases((0, 1), (1, 1), (1, 0), (2, 0))
def same_value_returned_by_two_written_returns(a, b):
    # two ``return 8`` statements of the source: not one shared exit
    if a:
        if b:
            return 7
        else:
            return 8
    else:
        return 8


@cases(([], False), ([1], False), ([1], True), (["x"], True), ([2, 3], True))
def else_return_then_more_code(items, clean):
    # the body jumps over the ``else`` to the code after the ``if``
    if items and isinstance(items[0], int):
        first = items[0]
    else:
        return None
    if clean:
        first = -first
    return first


@cases((1, []), (0, []), (None, [2]))
def pass_then_else(a, b):
    if a:
        pass
    else:
        b.append(1)
    LOG.append(len(b))
    return b


@cases((None, None), (1, None), (None, 2), ("a", "a"))
def not_around_an_and_of_is_tests(default, factory):
    # the ``is`` tests stay ``is``: the ``not`` goes around the whole test
    if not (default is None and factory is None):
        return "has a default"
    elif default == factory:
        return "same"
    return "none"


@cases(([1, 2, 3], [2], [], False), ([1, 2, 3], [], [2], True), ([4, 5], [], [], False),
       (["a", "b"], ["b"], ["a"], True))
def pass_in_an_elif_of_an_in_test(names, missing, known, star):
    # ``elif x in y: pass``: the test jumps on true, its operator as written (no ``not in``)
    maybe = []
    for name in names:
        if name in missing:
            maybe.append(-1)
        elif name in known:
            pass
        elif star:
            maybe.append(name)
        else:
            missing.append(name)
    return maybe, missing


@cases(("k", {"k": 1}, True), ("k", {}, True), ("k", {}, False), (None, {None: 2}, False))
def pass_for_an_in_test_then_elif(key, cache, full):
    if key in cache:
        # the value was added meanwhile: nothing to do
        pass
    elif full:
        cache[key] = "full"
    else:
        cache[key] = "new"
    LOG.append(sorted(map(str, cache)))


@cases((1, {}), (0, {}), (None, {"y": 0}))
def pass_then_else_before_a_short_tail(key, cache):
    # (3.12 copies the short tail into both arms: the ``pass`` is a ``NOP`` on its own line)
    if key:
        pass
    else:
        cache["x"] = 1
    cache["y"] = 2


@cases(([1, 2, 3], None), ([2], None), ([1], "x"), ([], None), ([2, 2], None))
def assert_is_in_an_if_chain_in_a_loop(kinds, doctype):
    # 'assert a is b' jumps on true past its raise, as 'if a is b: pass' would: the
    # assert stays an assert
    out = []
    for k in kinds:
        out.append(k)
        if k == 1:
            assert doctype is None
        elif k == 2:
            assert doctype is None
            doctype = k
        out.append(-k)
    return out, doctype


@cases((1, [1, 2], []), (3, [1, 2], [1]), (None, [None], ()), (2, [], [2]))
def negated_membership_and_identity_tests(x, items, seen):
    # (3.14 keeps 'not x in items' in a test as written; before, it is 'x not in items')
    out = []
    if not x in items:
        out.append("not in")
    if x not in seen:
        out.append("not in seen")
    if not x is None:
        out.append("not None")
    while not x in items and len(items) < 3:
        items = [*items, x]
    if not (x in items and seen):
        out.append("not both")
    return out, [y for y in items if not y in seen], not x in seen


@cases((len, (), None, None), (len, [], None, None), (3, (), None, None),
       (len, (), {}, 5), (len, (), 5, {}), (len, (1,), {"a": 1}, {}))
def or_of_negated_tests_with_is_not(func, args, kwds, namespace):
    # (functools.partial.__setstate__: an 'is not' test stays one inside the 'or')
    if (not callable(func) or not isinstance(args, tuple) or
            (kwds is not None and not isinstance(kwds, dict)) or
            (namespace is not None and not isinstance(namespace, dict))):
        raise TypeError("invalid state")
    return args, kwds


@cases(([1, 2], 2, 2), ([1, 2], 3, 2), ([1, 3], 1, 2), ([], 1, 1))
def assert_under_a_membership_test(before, mark, last):
    # (pickletools.dis: 'if m in b: assert b[-1] is s' keeps its 'in'; as one assert
    # the negation would make it 'not in')
    if mark in before:
        assert before[-1] is last
    if mark not in before:
        assert mark is not last, "same"
    return len(before)


@cases(("",), ("a b",), ("x",), ("q r s",))
def one_line_return_before_an_if_at_the_end(arg):
    # (pdb.Pdb.do_unalias: 3.10 has lines only; the return the test falls into is the
    # source's, not a copy of the implicit one at the end)
    args = arg.split()
    if len(args) == 0: return
    if args[0] in ("a", "q"):
        LOG.append(args.pop())

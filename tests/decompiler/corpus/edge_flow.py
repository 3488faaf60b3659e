"""Control flow the compiler lays out in surprising ways (each found losing code or
failing once): code after a ``with`` that always returns, a ``with`` inside
``finally``, conditional expressions whose test is compound, filters that are
conditional expressions, tails the compiler copies into both arms."""

import contextlib

from ._support import cases

LOG: list = []


class Quiet:
    """Suppresses every exception when ``quiet``; logs enter and exit."""

    def __init__(self, quiet):
        self.quiet = quiet

    def __enter__(self):
        LOG.append("enter")
        return self

    def __exit__(self, *exc):
        LOG.append(("exit", exc[0].__name__ if exc[0] else None))
        return self.quiet


class Holder:
    def __init__(self, value=None):
        if value is not None:
            self.value = value


@cases((True, Holder()), (True, Holder(5)), (False, Holder(5)), (False, Holder()))
def after_with_that_returns(quiet, obj):
    with Quiet(quiet):
        return obj.value
    LOG.append("after")
    obj.value = "set"
    return obj.value


@cases((Holder(),), (Holder(3),))
def after_suppress_that_returns(obj):
    with contextlib.suppress(AttributeError):
        return obj.value
    obj.value = "default"
    return obj.value


class Cached(list):
    """``super()`` after a ``with`` whose body returns (zipfile's FastLookup)."""

    def names(self):
        with contextlib.suppress(AttributeError):
            return self.__names
        self.__names = super().copy()
        return self.__names


@cases(([1, 2],),)
def use_cached(items):
    c = Cached(items)
    first = c.names()
    return first, c.names() is first


@cases((1, True), (0, False), (0, True))
def with_in_finally(x, quiet):
    try:
        LOG.append(10 // x)
    except ZeroDivisionError:
        LOG.append("div")
    else:
        LOG.append("else")
    finally:
        with Quiet(quiet) as q:
            LOG.append(q.quiet)
        LOG.append("final")
    return len(LOG)


@cases((1, 0), (1, 1), (2, 0))
def compound_test_in_call(given, k):
    return "%d %s" % (given, "was" if given == 1 and not k else "were")


@cases((1, 2, None), (1, 2, 3), (None, 2, 3))
def compound_test_in_keyword(a, b, c):
    return dict(first=a, second=b if a is not None and c else -1)


class Field:
    def __init__(self, compare, hash_):
        self.compare = compare
        self.hash = hash_


@cases(([Field(True, None), Field(False, None), Field(False, True), Field(True, False)],),)
def conditional_filter(fields):
    return [f.compare for f in fields if (f.compare if f.hash is None else f.hash)]


@cases(([0, 1, 0x20202020, 7], True, True), ([0, 5], False, True))
def nested_conditional_elements(words, foldnuls, foldspaces):
    return [b"z" if foldnuls and not word else
            b"y" if foldspaces and word == 0x20202020 else
            str(word).encode()
            for word in words]


@cases(([1, 2, 3], {1, 3}), ([], set()))
def not_in_filter(items, excluded):
    return len([i for i in items if i not in excluded]), [i for i in items if not i in excluded]  # noqa: E713


@cases((0,), (1,), (5,))
def local_read_as_statement(n):
    if n:
        value = n
    try:
        value  # noqa: B018 - raises UnboundLocalError when n == 0
    except UnboundLocalError:
        return "unbound"
    return value


@cases((b"\r\nabc\r\n",), (b"\rab\n",), (b"x\n",), (b"",))
def returns_differing_in_a_slice(line):
    octets = len(line)
    if line[-2:] == b"\r\n":
        return line[:-2], octets
    if line[:1] == b"\r":
        return line[1:-1], octets
    return line[:-1], octets


@cases((None,), ("utf-8",), (3,))
def negated_compound_test(encoding):
    if encoding is not None and not isinstance(encoding, str):
        raise TypeError("invalid encoding: %r" % encoding)
    return encoding


@cases((5, [1, 2], 1), (0, [1, 2], 1), (5, [3], 3), (5, [9], 9))
def chained_in_conditions(i, res, b):
    out = []
    if i > b not in res:
        out.append("stable middle")
    if i > res[0] not in res[1:]:
        out.append("computed middle")
    out.append([r for r in res if i > r * 2 >= b])
    return out


@cases(([1, 2, 3],), ([],), ([0, 5],))
def builtins_over_generators(items):
    # 3.14 runs these in line when the names are the builtins
    return (any(i > 2 for i in items), all(i for i in items),
            tuple(i * 2 for i in items if i), sum(i for i in items))



# Module-level code whose last statements end the module in a loop's ``else`` and in an
# ``except`` clause's ``try``/``else`` (the compiler puts the module's ``return`` there).
for _n in range(2):
    try:
        LOG.append(_n)
    except ValueError:
        pass
try:
    import _no_such_module_  # noqa: F401
except ImportError:
    try:
        import math
    except ImportError:
        GOT = None
    else:
        GOT = math.pi
else:
    GOT = 0


class Loud:
    """Comparisons are logged: a chained comparison compares each pair once."""

    def __init__(self, v):
        self.v = v

    def __gt__(self, other):
        LOG.append(("gt", self.v))
        return self.v > other

    def __lt__(self, other):
        LOG.append(("lt", self.v))
        return self.v < other


@cases((5, [1, 2]), (0, [1, 2]), (5, [3]))
def chained_value_returned(i, res):
    return Loud(i) > res[0] not in res


@cases((["a", "#b", "c", "stop", "d"],), ([],), (["stop"],))
def loop_with_break_inside_with(lines):
    out = []
    with Quiet(False):
        for line in lines:
            if line.startswith("#"):
                continue
            if line == "stop":
                break
            out.append(line)
    return out


@cases((0, "", 3), (1, 2, 3), (0, [], None), (None, 0, 0))
def returned_or_chain(a, b, c):
    return a or b or c


@cases((0, 1, 2, 3), (1, 1, 1, 1), (3, 2, 1, 0), (2, 2, 5, 5))
def returned_long_chain(a, b, c, d):
    return a >= b is not c >= d is not a


@cases((1, 2), (3, 1))
def defaults_before_a_conditional_annotation(x, y):
    def inner(a=[x, y], *, b={"k": y}) -> (x if x > y else y):
        return a, b

    return inner(), inner.__annotations__["return"], inner.__defaults__[0] is inner()[0]


@cases((1, 2, 2, 2, "e"), (1, 2, 3, 3, "e"), (3, 2, 2, 2, "e"), (1, 2, 2, None, "e"))
def long_chain_as_if_test(a, b, c, d, e):
    # the clean-up that drops a middle value is shared by two links of the chain
    if a < b == c is d:
        return a
    return e


@cases((1, 2, 2, 2), (1, 2, 3, 3), (3, 2, 2, 2), (1, 2, 2, 5))
def long_chain_as_conditional_test(a, b, c, d):
    x = "in" if a < b <= c == d != a else "out"
    return x, a if Loud(a) < b == c < Loud(d) else d, LOG[-3:]


def _pair(*args, **kwargs):
    return args, kwargs


@cases((1, 2, 3, [4], {"k": 1}), (1, 1, 3, [], {}), (0, 2, 3, [3], {"j": 2}), (1, 2, 3, [3], {}))
def long_chain_in_an_arm_of_an_argument(a, b, c, d, kw):
    # the chain's clean-up jumps straight to the end of the conditional expression
    return _pair(a != b < c not in d if a else a, **kw)

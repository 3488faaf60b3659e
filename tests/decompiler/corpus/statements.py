"""Simple statements: assert, del, global, nonlocal, imports, pass, raise."""

from ._support import cases

LOG: list = []
STATE = {"count": 0}
TOTAL = 0


@cases((1,), (0,), (-1,))
def assert_plain(x):
    assert x >= 0
    return x


@cases((1,), (0,), (5,))
def assert_with_message(x):
    assert x != 0, f"x must be non-zero, got {x}"
    assert x < 5, ("too big", x)
    return 10 / x


@cases((1, [1, 2]), (3, [1, 2]))
def assert_complex_condition(x, items):
    assert x in items and len(items) > 1 or not items, "x not in items"
    return True


@cases((1,), (12,), (0,), (13,), ("a",))
def assert_chained_comparison(month):
    assert 1 <= month <= 12, month
    return month


@cases((1,), (0,), (5,), (9,))
def raise_unless_chained_comparison(n):
    if not 0 < n < 3 < n * 3:
        raise ValueError(n)
    assert 1 <= n <= 9
    return n


class Logged(int):
    """An int that logs each comparison: a chained comparison compares each pair once."""

    def __le__(self, other):
        LOG.append(("le", int(self), other))
        return int(self) <= other

    def __ge__(self, other):
        LOG.append(("ge", int(self), other))
        return int(self) >= other

    def __lt__(self, other):
        LOG.append(("lt", int(self), other))
        return int(self) < other

    def __gt__(self, other):
        LOG.append(("gt", int(self), other))
        return int(self) > other


def _logged(n):
    return Logged(n) if isinstance(n, int) else n


@cases((5,), (0,), (-1,), (86400,), ("a",), (2.5,))
def assert_test_and_chained_comparison(s):
    # the last link's failure runs into a copy of the raise the first test jumps to
    s = _logged(s)
    assert isinstance(s, int) and 0 <= s < 86400
    assert isinstance(s, int) and 0 <= s < 9000, "out of range"
    return s, LOG[-4:]


@cases((5,), (0,), (-1,), (10,), ("a",), (2.5,))
def assert_chained_comparison_and_test(s):
    # the clean-up after the first link runs into a copy of the raise after the test
    s = _logged(s) if not isinstance(s, str) else 3
    assert 0 <= s < 10 and isinstance(s, int), s
    return s, LOG[-2:]


@cases((5,), (-1,), (10,), ("a",))
def assert_chained_comparison_with_a_long_message(s):
    # (too long a message to copy: the last link jumps to the one raise)
    assert isinstance(s, int) and 0 <= s < 10, f"bad {s!r}: not in {0} to {10}"
    return s


@cases((5,), (-1,), (10,), ("a",))
def returns_after_a_test_and_a_chained_comparison(s):
    if isinstance(s, int) and 0 <= s < 10:
        return 1
    return 2


@cases((5,), (-1,), (10,), (0,))
def while_chained_comparison(s):
    # (the small return after the loop is copied into the first test's clean-up)
    s = _logged(s)
    while 0 <= s < 10:
        s = _logged(s + 3)
    return s


@cases((None, None), ((1, 2, 3, 4, 5, 6), 3), ((1, 2, 3, 4, 5, 1 << 50), None),
       ((1, 2, 3, 4, 300, 6), 2), ((1, 2, 3, 4, 5, 6), 9), ((1, 2), 1))
def range_checks_one_after_another(fields, version):
    # (each test explores the next; folding each again once its own chain folded used
    # to explore the rest of the function twice per statement, and ran out of budget)
    total = 0
    if fields is not None:
        (low, mid, high, seq_hi, seq_low, node) = fields
        if not 0 <= low < 1 << 32:
            raise ValueError("field 1 out of range")
        if not 0 <= mid < 1 << 16:
            raise ValueError("field 2 out of range")
        if not 0 <= high < 1 << 16:
            raise ValueError("field 3 out of range")
        if not 0 <= seq_hi < 1 << 8:
            raise ValueError("field 4 out of range")
        if not 0 <= seq_low < 1 << 8:
            raise ValueError("field 5 out of range")
        if not 0 <= node < 1 << 48:
            raise ValueError("field 6 out of range")
        total = low + mid + high + seq_hi + seq_low + node
    if version is not None:
        if not 1 <= version <= 5:
            raise ValueError("illegal version number")
        total |= version << 76
    return total


@cases((3,),)
def del_name(n):
    x = n
    del x
    try:
        return x  # noqa: F821
    except UnboundLocalError:
        return "deleted"


@cases((2,),)
def del_multiple(n):
    a, b, c = n, n + 1, n + 2
    del a, b
    return c, "a" in dir(), "c" in locals()


@cases(({"a": 1, "b": 2, "c": 3},), ({"a": 1},))
def del_subscripts(d):
    del d["a"]
    if "b" in d:
        del d["b"], d["c"]
    return d


@cases(([0, 1, 2, 3, 4, 5],),)
def del_slices(items):
    del items[0]
    del items[::2]
    del items[-1:]
    return items


@cases((1,),)
def del_attribute(n):
    class Bag:
        pass

    b = Bag()
    b.x = n
    b.y = n
    del b.x
    return hasattr(b, "x"), b.y


@cases((1,),)
def del_missing_raises(n):
    d = {}
    del d["missing"]


@cases((5,), (1,))
def global_statement(n):
    global TOTAL
    TOTAL += n
    LOG.append(TOTAL)
    return TOTAL


@cases((2,),)
def global_created_in_function(n):
    global CREATED_LATER
    CREATED_LATER = n * 2
    return CREATED_LATER


@cases((1,),)
def global_mutation_without_statement(n):
    STATE["count"] += n
    return STATE


@cases((3,),)
def nonlocal_statement(n):
    value = 0

    def bump():
        nonlocal value
        value += n

    bump()
    bump()
    return value


@cases((4,),)
def import_in_function(n):
    import math

    return math.factorial(n)


@cases(("a/b/c",),)
def import_dotted(path):
    import os.path

    return os.path.basename(path), os.path.dirname(path)


@cases(("a/b",),)
def import_dotted_as(path):
    import os.path as osp
    import xml.etree.ElementTree as ET

    return osp.join(path, "c"), ET.__name__


@cases(([3, 1, 2],),)
def from_import(items):
    from collections import Counter, deque
    from itertools import chain as concat

    d = deque(items, maxlen=2)
    return list(d), Counter(items).most_common(1), list(concat(items, d))


@cases((1,),)
def from_import_submodule(n):
    from os import path
    from xml.etree import ElementTree

    return path.join("x", str(n)), ElementTree.Element("t").tag


@cases((2,),)
def import_failing(n):
    try:
        import does_not_exist_anywhere  # noqa: F401
    except ImportError as e:
        return type(e).__name__, e.name
    return "imported"


@cases((2,),)
def from_import_failing(n):
    try:
        from os import does_not_exist  # noqa: F401
    except ImportError as e:
        return type(e).__name__
    return "imported"


@cases((1,),)
def import_then_rebind(n):
    import json
    import json as j2

    json = None  # noqa: F841
    return j2.dumps({"n": n})


@cases((0,),)
def pass_statements(n):
    if n:
        pass
    else:
        pass
    for _ in range(3):
        pass
    while False:
        pass
    try:
        pass
    except Exception:
        pass
    with open.__class__ and __import__("contextlib").nullcontext():
        pass
    return "passed"


@cases((1,), (2,))
def raise_variants(kind):
    if kind == 1:
        raise KeyError
    raise KeyError("message", kind)


@cases((1,),)
def raise_from_none_variant(n):
    try:
        raise ValueError(n)
    except ValueError:
        raise TypeError("replaced") from None


@cases((3,),)
def semicolons_and_one_liners(n):
    a = n; b = a + 1; c = b * 2  # noqa: E702
    if a: LOG.append(a)  # noqa: E701
    for i in range(2): LOG.append(i)  # noqa: E701
    return a, b, c


@cases((1,),)
def exec_and_eval(n):
    scope = {"n": n}
    exec("m = n * 10", scope)
    return scope["m"], eval("n + 1", scope)


@cases(("x",),)
def locals_and_vars(v):
    a = v
    b = v * 2
    names = sorted(locals())
    return names, a, b



# at module level the compiler ends a loop's ``else`` with the module's own return; what
# follows the loop runs only after a ``break`` (unveil once wrote ``return`` there)
_LOOP_SEEN: list = []
for _item in [0, 1, 2, 3]:
    if _item > 1:
        _LOOP_FOUND = _item
        break
else:
    _LOOP_FOUND = None
_LOOP_SEEN.append(_LOOP_FOUND)

for _item in ["x", "2", "3"]:
    try:
        _number = int(_item)
    except ValueError:
        _LOOP_SEEN.append(("not a number", _item))
    else:
        _LOOP_SEEN.append(_number)
        break
else:
    _number = None
_LOOP_SEEN.append(("after", _number))


@cases()
def module_loop_else_ending_the_module():
    return _LOOP_SEEN


@cases(([1], "k"), ([1, 2], "k"), ([1, 2], "other"))
def assert_under_an_is_test(buf, key):
    keymap = compiled = {"k": 1}
    if key == "other":
        keymap = {}
    if keymap is compiled:
        assert len(buf) == 1, "buffer not empty"
    assert keymap is None or len(buf) > 0
    return len(buf)


class _Padded:
    def __init__(self, read):
        self._read = read
        self._buffer = b"buf"


@cases((None, b"ab"), (5, b"ab"), (0, b""))
def if_is_none_whose_else_returns_then_more_code(read, data):
    # (gzip._PaddedFile.prepend) the test jumps to the else when the value is not None;
    # the body jumps over the else to the code after the statement
    obj = _Padded(read)
    if obj._read is None:
        obj._buffer = data
    else:
        obj._read -= len(data)
        return obj._read
    obj._length = len(obj._buffer)
    obj._read = 0
    return obj.__dict__

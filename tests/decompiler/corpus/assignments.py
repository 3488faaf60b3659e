"""Assignments: walrus, star-unpacking, augmented, chained, swaps, targets of all kinds."""

import re

from ._support import cases

LOG: list = []


class Obj:
    def __init__(self):
        self.n = 1
        self.items = [1, 2, 3]


@cases(("abc123",), ("none",))
def walrus_in_if(text):
    if (m := re.search(r"\d+", text)) is not None:
        return m.group()
    return None


@cases(([3, 0, 5, 7],), ([],))
def walrus_in_while(items):
    items = list(items)
    out = []
    while (n := len(items)) > 1:
        out.append((n, items.pop()))
    return out


@cases(([1, 2, 3, 4],),)
def walrus_in_comprehension(items):
    return [y for x in items if (y := x * x) > 4], [last := x for x in items], last


@cases((5,), (0,))
def walrus_in_expression(n):
    values = [(a := n * 2), a + 1, (b := a * 2) + b]
    return values, a, b


@cases(("key=value",), ("novalue",))
def walrus_and_or(line):
    return (eq := line.find("=")) >= 0 and (line[:eq], line[eq + 1:]) or None


@cases(([1, 2, 3, 4, 5],), ([1],), ([1, 2],))
def star_unpack_first(items):
    first, *rest = items
    return first, rest


@cases(([1, 2, 3, 4, 5],), ([1, 2],))
def star_unpack_middle(items):
    head, *middle, tail = items
    *init, last = items
    return head, middle, tail, init, last


@cases(([],), ([1, 2, 3],), ([1, 2],))
def star_unpack_error(items):
    a, b = items
    return a, b


@cases(((1, (2, 3), [4, 5]),),)
def nested_unpacking(value):
    a, (b, c), [d, e] = value
    (x, y), z = (a, b), c
    return a + b + c + d + e, x, y, z


@cases(([1, 2], [3], {"a": 1}, {"b": 2}),)
def star_in_displays(a, b, c, d):
    return [*a, *b], (*a, 0, *b), {*a, *b}, {**c, **d, "x": 1}, {**c, "a": 2}, [*"ab", *range(2)]


@cases((1, 2), ("x", "y"))
def swap(a, b):
    a, b = b, a
    return a, b


@cases((1, 2, 3),)
def rotate_three(a, b, c):
    a, b, c = b, c, a
    return a, b, c


@cases((0,), (5,))
def chained_assignment(n):
    a = b = c = n
    x = y = []
    x.append(1)
    return a, b, c, y, x is y


@cases((3,),)
def chained_assignment_targets(n):
    o = Obj()
    d = {}
    o.n = d["k"] = lst = [n]
    return o.n, d, lst


@cases((3,), (None,))
def chained_assignment_attribute_first(n):
    o = Obj()
    root = [n]
    o.n = o.items = root
    o.items = first = {}
    o.n = o.items[0:1] = lst = d = []
    first[0] = o.n
    return o.n is o.items, first, lst is d, root


@cases(([5, 1, 3], 4), ([], 1), ([0], 0))
def swap_into_items_and_attributes(heap, item):
    o = Obj()
    if heap and heap[0] < item:
        item, heap[0] = heap[0], item
    n = len(heap)
    for i in range(n // 2):
        heap[i], heap[n - i - 1] = heap[n - i - 1], heap[i]
    o.n, o.items, item = item, heap, o.n
    return item, heap, o.n, o.items


@cases((10, 3), (7, 2))
def augmented_names(a, b):
    a += b
    a -= 1
    a *= 2
    a //= b
    a **= 2
    a %= 100
    a <<= 1
    a >>= 1
    a |= 8
    a &= 0xFF
    a ^= 3
    c = float(a)
    c /= 4
    return a, c


@cases((2,),)
def augmented_attributes(k):
    o = Obj()
    o.n += k
    o.n *= 3
    o.items += [k]
    return o.n, o.items


@cases(({"a": 1},),)
def augmented_subscripts(d):
    d["a"] += 10
    d.setdefault("b", 0)
    d["b"] -= 1
    counts = [0, 0, 0]
    for i in [0, 2, 2, 1]:
        counts[i] += 1
    return d, counts


@cases(([1, 2, 3, 4, 5],),)
def augmented_slices(items):
    items[1:3] += ["x"]
    items[:] *= 1
    return items


@cases(([5, 6],),)
def augmented_evaluates_target_once(items):
    calls = []

    def index():
        calls.append(1)
        return 0

    items[index()] += 100
    return items, len(calls)


@cases(("abc",),)
def augmented_strings_and_tuples(s):
    s += "d"
    s *= 2
    t = (1,)
    t += (2,)
    return s, t


@cases(([0, 0, 0],),)
def subscript_and_slice_targets(items):
    items[0], items[-1] = "first", "last"
    items[1:2] = [7, 8]
    i = 0
    i, items[i] = 1, "changed"
    return items, i


@cases(({"a": 1, "b": 2},),)
def unpack_dict_items(d):
    (k1, v1), (k2, v2) = sorted(d.items())
    return k1 + k2, v1 + v2


@cases(([1, 2, 3],),)
def for_loop_star_targets(items):
    out = []
    for first, *rest in [items, items[1:]]:
        out.append((first, rest))
    return out


@cases((4,),)
def attribute_target_in_for(n):
    o = Obj()
    for o.n in range(n):
        LOG.append(o.n)
    return o.n


@cases((2,),)
def annotated_assignments(n):
    x: int = n
    y: list[int] = [x]
    o = Obj()
    o.n: int = 5
    d = {}
    d["k"]: str = "v"
    return x, y, o.n, d


@cases(([1, 2, 3],),)
def unpack_generator(items):
    a, b, c = (x * 2 for x in items)
    (d, *e), = [items]
    return a, b, c, d, e


@cases((1, 2), (3, 4))
def multiple_returns_assign(a, b):
    def pair():
        return a + b, a - b

    s, d = pair()
    s2 = pair()
    return s, d, s2


@cases((1,),)
def assign_to_underscore(x):
    _ = x * 2
    _, y = 1, 2
    return _, y


@cases(("a",), ("b",))
def conditional_assignment_paths(kind):
    if kind == "a":
        value = 1
    try:
        return value
    except UnboundLocalError as e:
        return type(e).__name__


@cases(([],), ([1],), ((),), ("",), ("ab",))
def assign_to_empty_targets(value):
    () = value
    [] = value
    for () in [value]:
        pass
    return "empty"


class _Ordered:
    """Attributes whose reads are logged, to show the order they run in."""

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        LOG.append(name)
        if name == "boom":
            raise AttributeError(name)
        return len(name)


@cases((_Ordered(),))
def pair_of_reads_stored_to_names(op):
    e, c = op.exp, op.integer
    a, b, d = op.first, op.second, op.third
    return e - c, a, b, d


@cases((_Ordered(),))
def pair_whose_second_read_raises(op):
    e = c = 0
    try:
        e, c = op.exp, op.boom
    except AttributeError:
        return e, c
    return c


class _Recorder:
    """Item and attribute stores logged, to show the order chained targets run in."""

    def __init__(self):
        self.__dict__["data"] = {}

    def __setitem__(self, key, value):
        LOG.append(("set", key, value))
        self.data[key] = value

    def __getitem__(self, key):
        LOG.append(("get", key))
        return self.data.setdefault(key, _Recorder())

    def __setattr__(self, name, value):
        LOG.append(("attr", name, value))
        self.data[name] = value


@cases(([1, 2, 3], 1), ([(4, 5, 6)], 0), ([1], 5), ((7, 8, 9), 2))
def chained_assignment_to_a_target_list_first(h, i):
    try:
        value, order, nxt = s = h[i]
    except (TypeError, ValueError, IndexError) as e:
        return type(e).__name__
    return value, order, nxt, s


@cases((1, "t"), (0, (1, 2)))
def chained_assignment_to_nested_items(i, temp):
    lst = _Recorder()
    lst[i - 1][-1] = lst[i][0] = temp
    rec = _Recorder()
    rec.size, rec.name = rec.state = temp if isinstance(temp, tuple) else (temp, i)
    a = (b, c) = d = rec.state
    first, *rest = whole = [i, temp, a]
    return LOG[-12:], a, b, c, d, first, rest, whole, rec.data, lst.data[i - 1].data


@cases(((1, 2, 3, 4, 5),), ((None, "n", [], {}, 0),))
def unpacking_to_the_same_name_twice_in_a_row(t):
    # (3.13 drops a store the next one overwrites: 'POP_TOP; STORE_FAST nil')
    nil, netloc, nil, nil, nil = t
    return netloc, nil

"""Straight-line code: arithmetic, calls, attributes, subscripts and slices."""

import math
import operator
from collections import namedtuple

from ._support import cases, kw

LOG: list = []

Point = namedtuple("Point", "x y")


class Box:
    """A tiny mutable record used by the attribute functions."""

    def __init__(self, value=0, label="box"):
        self.value = value
        self.label = label
        self.child = None

    def __repr__(self):
        return f"Box({self.value!r}, {self.label!r})"


@cases((1, 2), (0, 0), (-3, 7), (2.5, 0.5), ("a", "b"), (1, "x"))
def add(a, b):
    return a + b


@cases((10, 3), (-7, 2), (7, -2), (1, 0), (2.0, 3), (0, 5))
def arithmetic_mix(a, b):
    total = a * b + a - b
    quotient = a // b
    remainder = a % b
    return total, quotient, remainder, a / b, a**2, -a, +b, ~a if isinstance(a, int) else None


@cases((6, 3), (5, 12), (0b1010, 0b0110), (-1, 4))
def bit_ops(a, b):
    return a & b, a | b, a ^ b, a << 2, a >> 1, ~b & 0xFF


@cases((3, 4), (5, 12), (0, 0), (-3, -4))
def hypotenuse(a, b):
    return math.sqrt(a * a + b * b)


@cases((2, 3, 4), (1, 1, 1), (0, -1, 2))
def precedence(a, b, c):
    x = a + b * c
    y = (a + b) * c
    z = a - (b - c)
    w = a - b - c
    p = a ** b ** c if c < 4 else 0
    q = -a ** 2
    r = (-a) ** 2
    return x, y, z, w, p, q, r


@cases(("hello world",), ("",), ("  Mixed Case  ",))
def string_methods(s):
    words = s.split()
    return s.upper(), s.strip().lower(), len(words), "-".join(words), s.replace("o", "0")


@cases(([3, 1, 2],), ([],), (["b", "a"],))
def call_builtins(items):
    LOG.append(len(items))
    return sorted(items), list(reversed(items)), max(items, default=None), sum(
        1 for _ in items
    )


@cases((5,), (0,), (-2,))
def call_with_keywords(n):
    values = list(range(n))
    return sorted(values, key=lambda v: -v, reverse=True), print.__name__, dict(a=n, b=n * 2)


@cases((3, "x"), (0, "y"))
def attribute_access(value, label):
    box = Box(value, label)
    box.value += 1
    box.child = Box(label=label * 2)
    box.child.value = box.value * 10
    return box.value, box.label, box.child.value, box.child.label


@cases(([1, 2, 3, 4, 5],), ("abcdef",), ((9, 8, 7),))
def slicing(seq):
    return seq[1:], seq[:-1], seq[::2], seq[::-1], seq[1:4:2], seq[-2:], seq[:]


@cases(([0, 1, 2, 3, 4, 5, 6],), ([9],))
def slice_assignment(items):
    items[1:3] = ["a", "b", "c"]
    items[::2] = [None] * len(items[::2])
    del items[-1:]
    return items


@cases(({"a": {"b": [1, 2, {"c": 3}]}},), ({"a": {"b": [0, 0, {"c": None}]}},), ({},))
def nested_subscripts(data):
    inner = data["a"]["b"]
    inner[0] = inner[-1]["c"]
    return data["a"]["b"][2]["c"], inner


@cases(((1, 2),), ((-1, 5),))
def namedtuple_fields(pair):
    p = Point(*pair)
    q = p._replace(x=p.y)
    return p.x + p.y, q, p[0], tuple(p)


@cases((2, 3), (10, 0), ("a", 2))
def operator_module(a, b):
    return operator.add(a, b), operator.mul(a, b), operator.getitem([a, b], 1)


@cases((1,), (2,), ("s",))
def call_chain(x):
    return str(x).zfill(4).encode().decode("ascii").center(8, "*")


@cases((3,), (0,))
def method_on_literal(n):
    return "{}-{}".format(n, n + 1), ", ".join(["x"] * n), [1, 2, 3].index(2 if n else 1)


@cases(((1, 2, 3),), ((),), ((4,),))
def tuple_building(t):
    one = (t,)
    two = t + t
    nested = ((t, 1), [t, 2], {3: t})
    return one, two, nested, len(t) * 2


@cases((7, 2), (-7, 2), (7.5, 2))
def divmod_and_round(a, b):
    q, r = divmod(a, b)
    return q, r, round(a / b, 2), abs(a), pow(a, 2), int(a) % b


@cases(([4, 5, 6], 1), ([4, 5, 6], 5), ([], 0))
def subscript_errors(items, index):
    LOG.append(("get", index))
    value = items[index]
    LOG.append(("got", value))
    return value * 2


@cases(("3",), ("x",), ("",), ("  42 ",))
def conversions(text):
    number = int(text)
    return number, float(text), str(number), bool(number), complex(number)


@cases((1, 2, 3), (0, 0, 0))
def comparisons_as_values(a, b, c):
    return a < b, a <= b, a == c, a != c, a > b, a >= c, a is None, a is not b, a in (b, c)


@cases(([1, 2],), ([],))
def containment(items):
    s = set(items)
    return 1 in items, 3 not in items, 1 in s, "a" in "abc", 2 in {2: "x"}


@cases((2,), (5,))
def list_mutation(n):
    items = []
    items.append(n)
    items.extend([n + 1, n + 2])
    items.insert(0, -n)
    popped = items.pop()
    items.remove(n)
    items.sort(reverse=True)
    return items, popped


@cases(({"k": 1},), ({},))
def dict_mutation(d):
    d["new"] = d.get("k", 0) + 1
    d.setdefault("other", []).append(d["new"])
    removed = d.pop("k", None)
    d.update(extra=removed)
    return sorted(d.items(), key=str)


@cases((3,), (100,), (-4,))
def math_functions(x):
    return math.floor(x / 3), math.ceil(x / 3), math.gcd(x, 12), math.copysign(1.0, x), math.pi * x


@cases(("a,b,,c",), ("",), ("single",))
def multiline_expression(text):
    result = (
        text.split(",")
        + [
            "tail",
        ]
    )
    total = (
        len(result)
        * 2
        - 1
    )
    return result, total


@cases((Box(3),), (Box("s"),))
def getattr_setattr(box):
    setattr(box, "extra", getattr(box, "value") * 2)
    has = hasattr(box, "missing"), hasattr(box, "extra")
    return box.extra, has, getattr(box, "missing", "default")


@cases((1, 2), (3, 4))
def unused_and_reassigned(a, b):
    x = a
    x = x + b
    y = x
    x = 0
    unused = y * 2  # noqa: F841
    return x, y

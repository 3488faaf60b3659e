"""Structural pattern matching (``match``), Python 3.10+."""

from dataclasses import dataclass

from ._support import cases

LOG: list = []


@dataclass
class Point:
    x: int
    y: int


@dataclass
class Circle:
    center: Point
    radius: int


class Color:
    RED = "red"
    GREEN = "green"


@cases((200,), (404,), (500,), (301,), (999,))
def http_status(status):
    match status:
        case 200:
            return "ok"
        case 301 | 302:
            return "redirect"
        case 404:
            return "not found"
        case 500 | 502 | 503:
            return "server error"
        case _:
            return "unknown"


@cases((None,), (True,), (False,), (0,), ("",), (1.5,))
def singletons(value):
    match value:
        case None:
            return "none"
        case True:
            return "true"
        case False:
            return "false"
        case 0:
            return "zero"
        case "":
            return "empty string"
        case other:
            return f"other {other!r}"


@cases(([],), ([1],), ([1, 2],), ([1, 2, 3, 4],), ((5, 6),), ("ab",), ({"a": 1},))
def sequences(value):
    match value:
        case []:
            return "empty"
        case [x]:
            return ("one", x)
        case [x, y]:
            return ("two", x + y)
        case [first, *rest]:
            return ("many", first, rest)
        case _:
            return "not a sequence"


@cases(([1, 2, 3, 4, 5],), ([1, 2],), ([1],), ([0, 9],))
def star_in_middle(items):
    match items:
        case [first, *middle, last] if middle:
            return first, middle, last
        case [0, *_]:
            return "starts with zero"
        case [*_, last]:
            return ("last only", last)


@cases(({"action": "move", "x": 1, "y": 2},), ({"action": "stop"},),
       ({"action": "say", "text": "hi", "extra": 1},), ({"other": 1},), ({},))
def mappings(command):
    match command:
        case {"action": "move", "x": x, "y": y}:
            return ("move", x, y)
        case {"action": "say", "text": str(text), **rest}:
            return ("say", text, rest)
        case {"action": action}:
            return ("bare", action)
        case {}:
            return "empty or unknown"


@cases((Point(0, 0),), (Point(0, 5),), (Point(3, 0),), (Point(2, 2),), (Point(1, 4),))
def class_patterns(point):
    match point:
        case Point(x=0, y=0):
            return "origin"
        case Point(x=0, y=y):
            return f"on y axis at {y}"
        case Point(x=x, y=0):
            return f"on x axis at {x}"
        case Point(x=x, y=y) if x == y:
            return "diagonal"
        case Point():
            return "somewhere"


@cases((Circle(Point(0, 0), 1),), (Circle(Point(1, 2), 5),), (Point(1, 1),), ("circle",),
       (Circle(Point(1, 2), 1),), (3,))
def nested_class_patterns(shape):
    match shape:
        case Circle(center=Point(x=0, y=0), radius=r):
            return ("centered", r)
        case Circle(Point(x, y), r) if r > 3:
            return ("big", x, y)
        case Circle():
            return "small"
        case Point(x, y):
            return ("point", x, y)
        case str() as text:
            return ("text", text.upper())


@cases((1,), ("s",), (2.5,), ([1],), ((1,),), ({1: 2},), (None,))
def builtin_class_patterns(value):
    match value:
        case bool() | int():
            return "int"
        case str(s):
            return "str " + s
        case float(f) if f > 2:
            return "big float"
        case list() | tuple():
            return "sequence"
        case dict(d) if d:
            return "dict"
        case _:
            return "other"


@cases((("add", 1, 2),), (("neg", 5),), (("add", "a", "b"),), (("mul", 1, 2, 3),), ("x",))
def command_tuples(cmd):
    match cmd:
        case ("add", int(a), int(b)):
            return a + b
        case ("add", a, b):
            return str(a) + str(b)
        case ("neg", n):
            return -n
        case (op, *args):
            raise ValueError(f"unknown op {op} with {len(args)} args")
        case _:
            raise TypeError("not a command")


@cases(("red",), ("green",), ("blue",))
def value_patterns(color):
    match color:
        case Color.RED:
            return 1
        case Color.GREEN:
            return 2
        case _:
            return 0


@cases(([1, [2, 3]],), ([1, [2]],), ([1, 2],), ([[0, 0], [1, 1]],))
def nested_sequences(value):
    match value:
        case [[x1, y1], [x2, y2]]:
            return (x2 - x1, y2 - y1)
        case [a, [b, c]]:
            return a + b + c
        case [a, [b]]:
            return a * b
        case [a, b]:
            return a - b


@cases(((1, 2),), ((3, 3),), ([4, 5],), (7,), ("x",))
def as_patterns(value):
    match value:
        case (int() as a, int() as b) as pair if a == b:
            return ("same", pair)
        case [_, _] as pair:
            LOG.append(pair)
            return ("pair", list(pair))
        case (1 | 7) as n:
            return ("special", n)
        case _:
            return "nope"


@cases((5,), (-5,), (0,), (50,))
def guards_with_side_effects(n):
    match n:
        case x if LOG.append(("guard1", x)) or x < 0:
            return "negative"
        case x if x > 10:
            return "large"
        case 0:
            return "zero"
        case x:
            return x


@cases(("quit",), ("go north",), ("go",), ("look around now",), ("",))
def text_adventure(command):
    match command.split():
        case ["quit"]:
            return "bye"
        case ["go", direction]:
            return f"going {direction}"
        case ["go"]:
            return "go where?"
        case ["look", *objects]:
            return f"looking at {len(objects)} things"
        case []:
            return "say something"


@cases(({"type": "user", "name": "ann", "roles": ["admin"]},),
       ({"type": "user", "name": "bob", "roles": []},),
       ({"type": "group", "members": [{"name": "x"}, {"name": "y"}]},),
       ({"type": "bot"},))
def json_like(doc):
    match doc:
        case {"type": "user", "name": name, "roles": ["admin", *_]}:
            return f"admin {name}"
        case {"type": "user", "name": name}:
            return f"user {name}"
        case {"type": "group", "members": [{"name": first}, *others]}:
            return f"group led by {first} (+{len(others)})"
        case {"type": kind}:
            return f"unknown {kind}"


@cases((1,), (2,), (3,))
def match_without_match(n):
    match n:
        case 1:
            LOG.append("one")
        case 2:
            pass
    return len(LOG)


@cases((-1,), (1.0,), (1j,), (b"x",), (-0.0,))
def literal_kinds(value):
    match value:
        case -1:
            return "minus one"
        case 1.0:
            return "one float"
        case 1j:
            return "imaginary"
        case b"x":
            return "bytes"
        case -0.0:
            return "zero"


@cases(([1, 2, 3],), ([4],), (5,))
def match_in_loop(values):
    out = []
    for v in values if isinstance(values, list) else [values]:
        match v:
            case 1:
                continue
            case 3:
                break
            case _:
                out.append(v)
    return out


@cases(((1, "a"),), ((2, "b"),), ((3, "c"),))
def or_patterns_with_bindings(pair):
    match pair:
        case (1, x) | (2, x):
            return x * 2
        case (n, ("c" | "d") as s):
            return s * n


@cases(({"k": 1, "v": 2},), ({"k": 1},))
def mapping_rest(d):
    match d:
        case {"k": 1, **rest} if rest:
            return rest
        case {"k": 1}:
            return "only k"


class Counted:
    """Attribute reads are logged: a class pattern must read each once."""

    __match_args__ = ("a", "b")

    def __init__(self, a, b):
        self._a, self._b = a, b

    @property
    def a(self):
        LOG.append("read a")
        return self._a

    @property
    def b(self):
        LOG.append("read b")
        return self._b


@cases((Counted(0, 5),), (Counted(1, 2),), (Counted(0, 0),), ({"k": 1, "z": 2},), (3,))
def class_pattern_reads_once(value):
    match value:
        case Counted(0, b) if b > 1:
            return ("zero", b)
        case Counted(a=1, b=b):
            return ("one", b)
        case {"k": k, **rest}:
            return ("map", k, rest)
        case _:
            return None


class Keys:
    A = "a"
    B = 2


@cases(([1, 2],), ([2, 1],), ((3, 3),), ([1, 9, 9],), ("12",), (7,))
def or_captures_in_different_orders(value):
    match value:
        case [1, x] | [x, 1]:
            return ("one", x)
        case (a, b) | [a, b, _] if a == b:
            return ("same", a, b)
        case [a, *rest] | (a, *rest) as whole if rest:
            return ("rest", a, rest, whole)
    return "none"


@cases(({"a": 1, 2: "b"},), ({"a": 1},), ({"a": 2, 2: 3, "z": 0},), ([],))
def mapping_with_dotted_keys(d):
    match d:
        case {Keys.A: 1, Keys.B: "b"}:
            return "exact"
        case {Keys.A: 1 | 2 as n, **others} if others:
            return ("others", n, sorted(map(str, others)))
        case {Keys.A: n}:
            return ("just a", n)
        case _:
            return None


@cases(([5],), ([5, 6],), (5,), ([[5]],))
def subject_rebound_by_capture(x):
    match x:
        case [x] if x > 10:
            return "never"
        case [x, *_] if isinstance(x, int):
            return ("first", x)
        case [[x]]:
            return ("nested", x)
    return ("after", x)


@cases((1,), (2,), (3,), (4,))
def or_as_last_case(n):
    out = []
    match n:
        case 1:
            out.append("one")
        case 2 | 3 as m:
            out.append(("two or three", m))
    out.append("end")
    return out


@cases(((1, 2, 3, 4),), ((1, 2),), ((1,),), ([],))
def sequence_wildcards(seq):
    match seq:
        case [_, _, *_, last]:
            return ("long", last)
        case [first, _]:
            return ("pair", first)
        case [_]:
            return "single"
        case [*_]:
            return "empty"


@cases((Point(1, 2),), (Point(0, 0),), (Circle(Point(1, 1), 2),), ("p",))
def class_positional_and_keyword(shape):
    match shape:
        case Point(0, y=0):
            return "origin"
        case Point(x, y=yy) if x < yy:
            return ("rising", x, yy)
        case Circle(Point(x=cx) as c, radius=r) | Circle(center=Point(x=cx) as c, radius=r):
            return ("circle", cx, c.y, r)
        case _:
            return "other"


@cases((-1,), (0,), (2.5,), (1 + 2j,), ("s",), (True,), (None,))
def literals_and_singletons(v):
    match v:
        case -1 | 0:
            kind = "small int"
        case 2.5:
            kind = "float"
        case 1 + 2j:
            kind = "complex"
        case True | None:
            kind = "singleton"
        case str() if v:
            kind = "text"
        case _:
            kind = "unknown"
    return kind


@cases(("go north",), ("go",), ("",), ("look",))
async def match_in_coroutine(cmd):
    match cmd.split():
        case ["go", where]:
            return where
        case ["go"]:
            return "nowhere"
        case []:
            return None
    return "?"


# a module-level match, its captures module globals
match sorted({"b": 2, "a": 1}.items()):
    case [("a", MODULE_A), *MODULE_REST]:
        MODULE_KIND = "starts with a"
    case _:
        MODULE_KIND = "other"


@cases(())
def use_module_match():
    return MODULE_KIND, MODULE_A, MODULE_REST


@cases(("a",), ("b",), ("c",), ("d",), ("e",), (1,))
def cases_that_return_then_cases_that_fall_through(name):
    # (the cases that fall through go on to the code after the match: one match)
    out = []
    match name:
        case "a":
            return "A"
        case "b":
            out.append("b")
            return out
        case "c":
            if len(out) > 5:
                return "never"
        case "d":
            out.append("d")
    out.append("after")
    return out

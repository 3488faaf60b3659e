"""The plain-Python stand-ins for ``MATCH_*`` instructions, against CPython's own ``match``.

Each stand-in (``unveil.decompiler.render.primitives``) is compiled as the decompiler writes it
and run on many subjects next to a ``match`` statement that executes the instruction it
stands for: same result, or the same exception (type and message), and the same
attribute look-ups. (The ``except*`` stand-ins run in every forced-fallback corpus case of
``v311_except_star``: ``test_fallback.py``.)"""

from __future__ import annotations

import ast
import collections
import sys
from typing import Any

import pytest

from unveil.decompiler.render.primitives import primitive

pytestmark = pytest.mark.skipif(sys.version_info < (3, 10), reason="match needs 3.10")


def stand_in(kind: str, *args: Any) -> Any:
    names = [f"a{i}" for i in range(len(args))]
    node = ast.Expression(primitive(kind, [ast.Name(id=n, ctx=ast.Load()) for n in names],
                                    sys.version_info[:2]))  # (this Python runs it)
    code = compile(ast.fix_missing_locations(node), f"<{kind}>", "eval")
    return eval(code, {}, dict(zip(names, args, strict=True)))


def outcome(f: Any, *args: Any) -> tuple[str, Any]:
    try:
        return "value", f(*args)
    except Exception as exc:  # noqa: BLE001 - compared as data
        return type(exc).__name__, str(exc)


class Seq(collections.abc.Sequence):  # type: ignore[type-arg]
    def __getitem__(self, i: int) -> int:
        return [1, 2][i]

    def __len__(self) -> int:
        return 2


class Registered:
    pass


collections.abc.Sequence.register(Registered)


class Map(collections.abc.Mapping):  # type: ignore[type-arg]
    def __init__(self, data: dict[Any, Any]) -> None:
        self.data, self.gets = data, 0

    def __getitem__(self, k: Any) -> Any:
        return self.data[k]

    def __iter__(self) -> Any:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    def get(self, k: Any, default: Any = None) -> Any:
        self.gets += 1
        return self.data.get(k, default)


class StrSub(str):
    pass


class IntSub(int):
    pass


SUBJECTS = [[], [1], (1, 2), "ab", StrSub("x"), b"x", bytearray(b"x"), range(3),
            memoryview(b"ab"), {1: 2}, set(), 1, None, collections.deque([1]), Seq(),
            Registered(), Map({"a": 1}), collections.OrderedDict(a=1), IntSub(3), 2.5]


def _match_sequence(s: Any) -> bool:
    match s:
        case [*_]:
            return True
    return False


def _match_mapping(s: Any) -> bool:
    match s:
        case {}:
            return True
    return False


@pytest.mark.parametrize("subject", SUBJECTS, ids=lambda s: type(s).__name__)
def test_sequence_and_mapping(subject: Any) -> None:
    assert stand_in("match_sequence", subject) == _match_sequence(subject)
    assert stand_in("match_mapping", subject) == _match_mapping(subject)


class Keys:
    a = "k"
    b = "k"  # the same key twice: a ValueError


@pytest.mark.parametrize("data", [{"a": 1, "b": 2}, {"a": 1}, {"b": 2}, {}, {"a": None, "b": 0}])
def test_keys_and_rest(data: dict[str, Any]) -> None:
    def real(m: Any) -> Any:
        match m:
            case {"a": x, "b": y, **rest}:
                return (x, y), rest
        return None

    keys = stand_in("match_keys", Map(data), ("a", "b"))
    expected = real(Map(data))
    assert keys == (None if expected is None else expected[0])
    if keys is not None:
        assert stand_in("dict_without_keys", Map(data), ("a", "b")) == expected[1]
    # the look-ups stop at the first missing key, as MATCH_KEYS does (the pattern tests
    # the length first: MATCH_KEYS runs only on a mapping that long)
    m1, m2 = Map(data), Map(data)
    stand_in("match_keys", m1, ("a", "b"))
    real(m2)
    assert m1.gets == m2.gets or len(data) < 2


def test_duplicate_keys() -> None:
    def real(m: Any) -> Any:
        match m:
            case {Keys.a: x, Keys.b: y}:
                return x, y
        return None

    data = {"k": 1, "j": 2}
    assert outcome(stand_in, "match_keys", data, ("k", "k")) == outcome(real, data)


class Point:
    __match_args__ = ("x", "y")

    def __init__(self, x: Any = 1, y: Any = 2, z: Any = 3) -> None:
        self.x, self.y, self.z = x, y, z
        self.reads: list[str] = []

    def __getattribute__(self, name: str) -> Any:
        if not name.startswith("_") and name != "reads":
            object.__getattribute__(self, "reads").append(name)
        return object.__getattribute__(self, name)


class NoArgs:
    x = 1


class ListArgs:
    __match_args__ = ["x"]  # noqa: RUF012 - wrong on purpose
    x = 1


class BadArgs:
    __match_args__ = (1,)


class Twice:
    __match_args__ = ("x", "x")
    x = 1


def _class_cases() -> list[tuple[str, Any, Any]]:
    """(pattern source, class, subject): each pattern binds its sub-patterns to names."""
    out = []
    for cls, subjects in ((Point, [Point(), Point(5, 6, 7), 3, None]),
                          (int, [3, IntSub(4), 2.5, True, "x"]),
                          (IntSub, [IntSub(4), 4]),
                          (str, ["ab", StrSub("y"), 1]),
                          (NoArgs, [NoArgs(), 1]),
                          (ListArgs, [ListArgs()]),
                          (BadArgs, [BadArgs()]),
                          (Twice, [Twice()])):
        for pattern in ("C()", "C(a)", "C(a, b)", "C(a, b, c)", "C(z=a)", "C(a, x=b)",
                        "C(x=a, y=b)", "C(q=a)", "C(real=a)"):
            for subject in subjects:
                out.append((pattern, cls, subject))
    return out


@pytest.mark.parametrize("pattern, cls, subject", _class_cases(),
                         ids=lambda v: v if isinstance(v, str) else type(v).__name__)
def test_class(pattern: str, cls: type, subject: Any) -> None:
    tree = ast.parse(f"match s:\n    case {pattern}:\n        pass").body[0]
    class_pattern = tree.cases[0].pattern  # type: ignore[attr-defined]
    count = len(class_pattern.patterns)
    names = [p.name for p in class_pattern.patterns] + [p.name for p in
                                                         class_pattern.kwd_patterns]
    namespace: dict[str, Any] = {}
    exec(f"def real(s, C):\n    match s:\n        case {pattern}:\n"
         f"            return ({', '.join(names)}{',' if names else ''})\n    return None",
         namespace)
    kw = tuple(class_pattern.kwd_attrs)
    fresh = (lambda: Point(subject.x, subject.y, subject.z)) if isinstance(subject, Point) \
        else (lambda: subject)
    s1, s2 = fresh(), fresh()
    assert outcome(stand_in, "match_class", s1, cls, count, kw) == \
        outcome(namespace["real"], s2, cls)
    if isinstance(subject, Point):  # the same attributes read, in the same order
        assert s1.reads == s2.reads


def test_class_pattern_must_be_a_class() -> None:
    def real(s: Any, C: Any) -> Any:
        match s:
            case C():
                return ()
        return None

    assert outcome(stand_in, "match_class", 1, len, 0, ()) == outcome(real, 1, len)

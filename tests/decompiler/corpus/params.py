"""Parameters: defaults, keyword-only, positional-only, *args/**kwargs, annotations."""

from typing import Optional

from ._support import cases, kw

LOG: list = []
_MISSING = object()


@cases((1,), (1, 2), (1, 2, 3), kw(a=5, c=1))
def defaults(a, b=2, c=None):
    if c is None:
        c = []
    return a, b, c


@cases((1,), kw(1, flag=True), kw(1, 2, flag=False), kw(a=3))
def keyword_only(a, b=0, *, flag=False):
    return a + b if flag else a - b


@cases(kw(1, key="k"), kw(2, 3, key="z", extra=1), (1,))
def required_keyword_only(x, y=None, *, key, extra=0):
    return x, y, key, extra


@cases((1, 2), (1,), kw(1, b=2), kw(a=1, b=2))
def positional_only(a, /, b=5):
    return a * b


@cases((1, 2, 3), (1, 2), kw(1, 2, c=3, d=4))
def all_kinds(a, /, b, *, c=0, d=1):
    return a, b, c, d


@cases((), (1,), (1, 2, 3))
def varargs(*args):
    return len(args), sum(args), args


@cases(kw(), kw(a=1), kw(b=2, a=1))
def varkwargs(**kwargs):
    return sorted(kwargs.items())


@cases((1,), (1, 2, 3), kw(1, 2, x=9), kw(1, key=2))
def everything(first, *rest, key=None, **options):
    return first, rest, key, options


@cases(kw(1, e=5), kw(1, 2, 3, 4, 5, 6, e=7, f=8, z=9), (1,))
def mega_signature(a, b=2, /, c=3, *args, d=4, e, **kwargs):
    return a, b, c, args, d, e, kwargs


@cases((1,), (None,), ())
def sentinel_default(value=_MISSING):
    if value is _MISSING:
        return "missing"
    return value


@cases((1,), (2,))
def mutable_default_accumulates(x, acc=[]):  # noqa: B006
    acc.append(x)
    LOG.append(list(acc))
    return len(acc)


@cases((3, 4), (1.5, 2.0))
def annotated(x: int, y: float = 1.0) -> float:
    result: float = x * y
    return result


@cases((["a"],), (None,))
def annotated_optional(items: Optional[list] = None, *, sep: str = ",") -> str:
    return sep.join(items or [])


@cases((1,),)
def annotation_only_statement(n: int) -> "list[int]":
    count: int
    values: list = [n]
    return values


@cases((1, 2), (3, 4))
def call_with_star_args(a, b):
    def target(*args, **kwargs):
        return args, kwargs

    args = [a, b]
    kwargs = {"x": a}
    return (
        target(*args),
        target(**kwargs),
        target(0, *args, 9, *args, y=1, **kwargs),
        target(*args, **kwargs, z=2),
    )


@cases((1, 2), (5, 6))
def keyword_argument_order(a, b):
    def record(**kw):
        return list(kw)

    return record(b=b, a=a), record(**{"z": 1}, a=a), record(a=a, **{"b": b})


@cases(kw(x=1), kw(x=1, y=2), kw())
def kwargs_get(**kwargs):
    x = kwargs.get("x", 0)
    y = kwargs.pop("y", None)
    return x, y, kwargs


@cases((1, 2, 3), (1, 2, 3, 4, 5))
def args_slicing(*args):
    head, *tail = args
    return head, tail, args[-1], args[1:-1]


@cases((1,), ("a",))
def default_expression(x, y=2 ** 10, z=(1, 2), w="de" "fault"):
    return x, y, z, w


@cases((1,), (2, 3))
def lambda_signature_variety(a, b=0):
    f1 = lambda x, /, y=b: (x, y)  # noqa: E731
    f2 = lambda *, k=a: k  # noqa: E731
    f3 = lambda *a, **k: (a, k)  # noqa: E731
    return f1(a), f1(a, 5), f2(), f2(k=9), f3(a, b, c=1)


@cases((1,), (2,))
def defaults_evaluated_once(n):
    calls = []

    def factory():
        calls.append(1)
        return len(calls)

    def f(x=factory()):
        return x

    return f(), f(), f(n), len(calls)


@cases((5,),)
def nested_signatures(n):
    def inner(a, /, b, *args, c, d=2, **kw):
        return a + b + sum(args) + c + d + len(kw)

    return inner(1, 2, 3, 4, c=n), inner(0, b=1, c=2, e=3)


@cases((1, 2), (1,))
def wrong_arguments(*values):
    def two(a, b):
        return a + b

    return two(*values)


@cases(({"a": 1, "b": 2},), ({"a": 1, "c": 3},))
def unexpected_keyword(options):
    def f(a, b=0):
        return a + b

    return f(**options)


@cases((1,),)
def kwdefaults_inspected(n):
    def f(a, *, b=n, c="c"):
        return a

    return f.__kwdefaults__, f.__defaults__, f.__code__.co_kwonlyargcount


@cases((2,),)
def inner_annotations(n):
    def f(a: int, b: "str" = "x", *args: int, c: list = None, **kw: dict) -> tuple:
        return a, b

    ann = f.__annotations__
    return sorted(ann), ann["b"], ann["return"].__name__, f(n)

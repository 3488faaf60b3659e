"""PEP 696 type parameter defaults (Python 3.13+)."""

from ._support import cases

LOG: list = []


@cases((1,),)
def type_param_defaults(n):
    def f[T = int, U = str](x: T) -> U:
        return str(x)

    t, u = f.__type_params__
    return t.__default__.__name__, u.__default__.__name__, f(n)


@cases((2,),)
def class_with_default_param(n):
    class Box[T = list[int]]:
        def __init__(self, item):
            self.item = item

    (t,) = Box.__type_params__
    return str(t.__default__), Box(n).item


@cases((3,),)
def alias_with_default(n):
    type Vec[T = float] = list[T]
    return Vec.__type_params__[0].__default__.__name__, n

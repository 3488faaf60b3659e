"""Classes in every form, for ``tests/decompiler/test_classes.py`` (not a corpus module:
``decompile(cls)`` reads this file's code)."""
# pyodide-compatible

import abc
import dataclasses
import enum


class Meta(type):
    def __new__(mcs, name, bases, ns, **kw):
        ns["made_by"] = "Meta"
        cls = super().__new__(mcs, name, bases, ns)
        cls.kw = kw
        return cls


def deco(cls):
    cls.decorated = True
    return cls


@deco
class WithMeta(dict, metaclass=Meta, flag=3):
    """Doc."""
    x: int = 1
    y = x + 1

    def m(self, a):
        return a + self.y


@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: int = 0

    def norm(self):
        return abs(self.x) + abs(self.y)


class Colour(enum.Enum):
    RED = 1
    GREEN = 2

    @property
    def lower(self):
        return self.name.lower()


class Base(abc.ABC):
    @abc.abstractmethod
    def f(self): ...

    class Inner:
        z = 3


def factory(n):
    class Local:
        k = n
    return Local


"""A module compiled with ``from __future__ import annotations`` (string annotations)."""

from __future__ import annotations

from ._support import cases

LOG: list = []


@cases((1, 2), (3, 4))
def annotated_pair(a: int, b: UndefinedName = 0) -> tuple[int, int]:  # noqa: F821
    return a, b


@cases(("x",),)
def annotations_are_strings(name: str) -> dict[str, object]:
    def inner(v: list[int], *args: Missing, key: int | None = None) -> None:  # noqa: F821
        return None

    return {"name": name, "inner": inner.__annotations__}


@cases((2,),)
def local_variable_annotations(n: int) -> list[int]:
    values: list[int] = []
    total: int
    for i in range(n):
        values.append(i)
    return values


@cases((3,),)
def class_annotations_inside(n: int) -> object:
    class Record:
        x: int
        y: list[Undefined] = []  # noqa: F821

    return Record.__annotations__, n


@cases((1,),)
def lambda_in_annotated_module(n: float) -> float:
    f = lambda v: v * 2  # noqa: E731
    return f(n)

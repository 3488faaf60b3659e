"""Template strings (PEP 750) and unparenthesized ``except`` (PEP 758), Python 3.14+."""

from string.templatelib import Interpolation, Template

from ._support import cases

LOG: list = []


def render(template: Template) -> str:
    parts = []
    for item in template:
        if isinstance(item, Interpolation):
            value = item.value
            if item.conversion == "r":
                value = repr(value)
            parts.append(format(value, item.format_spec))
        else:
            parts.append(item)
    return "".join(parts)


@cases(("ann", 3),)
def simple_template(name, count):
    t = t"{name} has {count} items"
    return t.strings, [i.value for i in t.interpolations], render(t)


@cases((3.14159,),)
def template_specs_and_conversions(x):
    t = t"{x:.2f} {x!r} {x=}"
    return [(i.expression, i.conversion, i.format_spec) for i in t.interpolations], render(t)


@cases(("a", 5),)
def nested_template_spec(s, width):
    t = t"{s:>{width}}"
    return t.interpolations[0].format_spec, render(t)


@cases((0,), (1,), (2,))
def except_without_parentheses(kind):
    try:
        if kind == 1:
            raise KeyError(kind)
        if kind == 2:
            raise IndexError(kind)
    except KeyError, IndexError:
        return "lookup"
    return "none"


@cases((1,),)
def template_concatenation(n):
    t = t"a{n}" t"b{n + 1}"
    return t.strings, render(t)


@cases((1,),)
def empty_template(n):
    # ``t""`` has no interpolations: the compiler loads an empty tuple constant
    empty = t""
    return type(empty).__name__, empty.strings, empty.interpolations, n


@cases((1, 2), (3, 1))
def lazy_annotations_that_branch(x, y):
    # PEP 649: annotations live in __annotate__ functions; a conditional one returns a
    # whole dict from each arm, a class body's builds its dict item by item
    def inner(a: int = x, *, b: "str" = "k") -> (x if x > y else y):
        return a, b

    class Fields:
        first: list[int]
        second: x if x < y else y = 3

    return (inner(), inner.__annotations__, Fields.__annotations__, Fields.second)

"""Where the two sides of a test meet: their stacks compared and merged into one value
(``a or b``, ``a and b``, ``x if c else y``)."""

from __future__ import annotations

import ast

from ..ir.exprs import Marker, Shared, Slot, Special, negate
from ..ir.facts import KIND, REFS, TARGETS, fact
from .machine import stamp


def same_value(a: ast.expr, b: ast.expr) -> bool:
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    # (``b`` is of ``a``'s type: each isinstance of it below holds)
    if isinstance(a, ast.Constant) and isinstance(b, ast.Constant):
        return type(a.value) is type(b.value) and a.value == b.value
    if isinstance(a, ast.Name) and isinstance(b, ast.Name):
        return a.id == b.id and fact(a, KIND, "") == fact(b, KIND, "") \
            and fact(a, KIND, "") in ("fast", "temp")
    if isinstance(a, Slot) and isinstance(b, Slot):
        return a.index == b.index
    if isinstance(a, Special) and isinstance(b, Special):
        return a.kind == b.kind and a.value is b.value
    return False


def same_stack(side: list[ast.expr], base: list[ast.expr], test: ast.expr | None,
                side_test: ast.expr | None) -> bool:
    """Did a branch leave the stack as it found it (a kept test may be replaced)?"""
    if len(side) != len(base):
        return False
    for i, (x, y) in enumerate(zip(side, base, strict=True)):
        if i == len(base) - 1 and test is not None and y is test:
            if x is side_test:
                continue
            return False
        if not same_value(x, y):
            return False
    return True


def merge_values(test: ast.expr, then_stack: list[ast.expr], else_stack: list[ast.expr],
                 else_first: bool, folded: bool) -> list[ast.expr] | None:
    """The stack where both sides of ``test`` meet, the top values merged; ``else_first``:
    the false side is laid out first, so a conditional expression has it as its body
    (``a if c and not d else b`` tests ``c``, then ``d`` with a jump to ``b``);
    ``folded``: see :func:`~..ir.exprs.negate`."""
    if len(then_stack) != len(else_stack) or not then_stack:
        return None
    for x, y in zip(then_stack[:-1], else_stack[:-1], strict=True):
        if not same_value(x, y):
            return None
    vt, vf = then_stack[-1], else_stack[-1]
    if vt is vf and (isinstance(vt, Marker) and not isinstance(vt, Shared)
                     or isinstance(vt, ast.Constant) and isinstance(vt.value, (str, tuple))):
        # a test read only for its effect (``(0 if u else 0)``), nothing pushed since:
        # ``v if u else v`` would hide a value its consumer reads as it is (a class's
        # name, a function, keyword names); the test stays a branch of its own
        return None
    if vt is test:
        value = boolop(ast.Or, test, vf)
    elif vf is test:
        value = boolop(ast.And, test, vt)
    else:
        value = conditional(test, vt, vf, else_first, folded)
    return [*then_stack[:-1], value]


def conditional(test: ast.expr, then_v: ast.expr, else_v: ast.expr,
                else_first: bool, folded: bool) -> ast.expr:
    """``then_v if test else else_v``, with the arm laid out first as its body."""
    if else_first:
        return stamp(ast.IfExp(negate(test, folded), else_v, then_v))
    return stamp(ast.IfExp(test, then_v, else_v))


def boolop(op: type[ast.boolop], left: ast.expr, right: ast.expr) -> ast.expr:
    values: list[ast.expr] = []
    for side in (left, right):
        # a kept test (COPY 1 + jump) is referenced only by the test and the kept copy,
        # and the merge consumes both: its value can stand in place
        inner = side.value if isinstance(side, Shared) and side.name is None \
            and fact(side, REFS, 2) == 2 and not fact(side, TARGETS, None) else side
        if isinstance(inner, ast.BoolOp) and isinstance(inner.op, op):
            values.extend(inner.values)
        else:
            values.append(inner)
    return stamp(ast.BoolOp(op(), values))

"""Source idioms recovered from structured statements.

``tidy_raw`` works on the structurer's trees (custom nodes still in place):
chained comparisons, augmented assignment, ``assert``. ``tidy`` works on plain
``ast`` after rendering: ``elif``/``else`` shapes the compiler cannot tell apart,
trailing ``continue``, merged ``with``/``try``, single-use temporaries.
Every rewrite keeps evaluation order and effects exactly.
"""

from __future__ import annotations

import ast
import copy
import re
from types import CodeType
from typing import Any, cast

from ... import bytecode
from ..ir.compare import Key, expr_key
from ..ir.exprs import Shared, negate
from ..ir.facts import (
    AS_TESTED,
    BACK_KEPT,
    COMMON,
    CONTAINER_OP,
    EXPLICIT,
    FLIPPED,
    INPLACE,
    KIND,
    LINE,
    POSITION,
    TARGETS,
    WRITTEN,
    WRITTEN_ELSE,
    WRITTEN_FLAT,
    fact,
)
from ..ir.nodes import (
    SCOPES,
    catches_all,
    ends_in_implicit_return,
    ends_in_jump,
    leaves_function,
    loop_breaks,
    names_from_outside,
    names_in,
    same,
    stmt_blocks,
    walk,
)

# ---------------------------------------------------------------- before rendering


#: Statements with no statements in them (no ``body``, ``orelse``, ``finalbody``,
#: ``handlers`` nor ``cases``): the walks over blocks below pass them by.
SIMPLE = frozenset({ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Raise,
                     ast.Pass, ast.Break, ast.Continue, ast.Import, ast.ImportFrom, ast.Global,
                     ast.Nonlocal, ast.Delete, ast.Assert})


def tidy_raw(stmts: list[ast.stmt], folded: bool, chains: bool = True) -> list[ast.stmt]:
    """``chains``: there may be ``and``s to read as chained comparisons; ``folded``: the
    code's version folds ``not a in b`` in a test (see ``ir.exprs.negate``)."""
    return _merge_return_copies([_raw_stmt(s, chains, folded) for s in _asserts(stmts, folded)])


def _raw_stmt(s: ast.stmt, chains: bool, folded: bool) -> ast.stmt:
    if type(s) not in SIMPLE:
        for field in _blocks(type(s)):
            value = getattr(s, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(s, field, tidy_raw(value, folded, chains))
        if isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
            for h in s.handlers:  # type: ignore[attr-defined]  # a Try or TryStar
                h.body = tidy_raw(h.body, folded, chains)
    if chains:
        _walk_exprs(s)
    if isinstance(s, ast.Assign) and len(s.targets) == 1:
        aug = _augmented(s.targets[0], s.value)
        if aug is not None:
            return aug
    return s


def _walk_exprs(node: ast.AST) -> None:
    """Rewrite chained comparisons everywhere under ``node`` (in place)."""
    todo: list[ast.AST] = [node]
    seen: set[int] = set()
    while todo:
        n = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        for field in n._fields:
            value = getattr(n, field, None)
            if isinstance(value, ast.BoolOp):
                setattr(n, field, _chain(value))
                todo.append(getattr(n, field))
            elif isinstance(value, ast.AST):
                if not _bare(value):
                    todo.append(value)
            elif isinstance(value, list):
                for i, v in enumerate(value):
                    if isinstance(v, ast.BoolOp):
                        value[i] = _chain(v)
                        todo.append(value[i])
                    elif isinstance(v, ast.AST) and not isinstance(v, ast.stmt) \
                            and not _bare(v):
                        todo.append(v)
        if isinstance(n, Shared):
            todo.append(n.value)


#: The classes of the nodes with no fields (contexts and operators): nothing to walk in
_LEAVES = frozenset(c for base in (ast.expr_context, ast.boolop, ast.operator, ast.unaryop,
                                   ast.cmpop) for c in base.__subclasses__() if not c._fields)


def _bare(node: ast.AST) -> bool:
    """Is there nothing for :func:`_walk_exprs` to walk in ``node``: a context or an
    operator, a name, a constant of no nodes?"""
    kind = type(node)
    if kind is ast.Name:
        name = cast(ast.Name, node)
        return type(name.id) is str and type(name.ctx) in _LEAVES
    if kind is ast.Constant:
        value: object = cast(ast.Constant, node).value
        spec: object = cast(ast.Constant, node).kind
        return not isinstance(value, ast.AST | list) and not isinstance(spec, ast.AST | list)
    return kind in _LEAVES


def _chain(node: ast.BoolOp) -> ast.expr:
    """``a < b and b < c`` where ``b`` is one value pushed once is ``a < b < c``."""
    if not isinstance(node.op, ast.And):
        return node
    values = list(node.values)
    out: list[ast.expr] = []
    for v in values:
        cur = v
        prev = out[-1] if out else None
        if isinstance(prev, ast.Compare) and isinstance(cur, ast.Compare) \
                and cur.left is prev.comparators[-1] \
                and getattr(cur.left, "name", None) is None:
            shared = prev.comparators[-1]
            # (a middle value named by a walrus keeps its name: ``a < (b := f()) < c``)
            middle = shared.value if isinstance(shared, Shared) \
                and not fact(shared, TARGETS, None) else shared
            merged = ast.Compare(left=prev.left, ops=[*prev.ops, *cur.ops],
                                 comparators=[*prev.comparators[:-1], middle,
                                              *cur.comparators])
            out[-1] = merged
            continue
        out.append(cur)
    if len(out) == 1:
        return out[0]
    return ast.BoolOp(op=node.op, values=out)


def _same_target(target: ast.expr, operand: ast.expr) -> bool:
    if isinstance(operand, Shared) and operand.name is None:
        operand = operand.value
    if isinstance(target, ast.Name) and isinstance(operand, ast.Name):
        return target.id == operand.id
    if isinstance(target, ast.Attribute) and isinstance(operand, ast.Attribute):
        return target.attr == operand.attr and _same_ref(target.value, operand.value)
    if isinstance(target, ast.Subscript) and isinstance(operand, ast.Subscript):
        return _same_ref(target.value, operand.value) and _same_ref(target.slice, operand.slice)
    return False


def _same_ref(a: ast.expr, b: ast.expr) -> bool:
    if a is b:
        return True
    if isinstance(a, ast.Name) and isinstance(b, ast.Name):
        return a.id == b.id and fact(a, KIND, "") == fact(b, KIND, "") \
            and fact(a, KIND, "fast") in ("fast", "temp")
    if isinstance(a, ast.Constant) and isinstance(b, ast.Constant):
        return type(a.value) is type(b.value) and a.value == b.value
    if isinstance(a, ast.Slice) and isinstance(b, ast.Slice):
        return all(_same_opt(getattr(a, f), getattr(b, f)) for f in ("lower", "upper", "step"))
    return False


def _same_opt(a: ast.expr | None, b: ast.expr | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return _same_ref(a, b)


def _augmented(target: ast.expr, value: ast.expr) -> ast.stmt | None:
    if not isinstance(value, ast.BinOp) or not fact(value, INPLACE, False):
        return None
    if not _same_target(target, value.left):
        return None
    place = cast(ast.Name | ast.Attribute | ast.Subscript, target)  # (_same_target holds)
    return ast.AugAssign(target=place, op=value.op, value=value.right)


def _asserts(stmts: list[ast.stmt], folded: bool) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for s in stmts:
        if not isinstance(s, ast.If | ast.Raise):  # (no assertion: the tests below say so)
            out.append(s)
            continue
        a = _assert_of(s, folded)
        if a is None:
            # the builtin AssertionError raised with no test left (``assert False, msg``,
            # or a test the structure kept apart): ``raise AssertionError`` would look the
            # name up in globals
            msg = _assertion_raised(s)
            out.append(s if msg is None else ast.Assert(test=ast.Constant(False), msg=msg[0]))
        else:
            out.append(a)
            out.extend(_asserts(cast(ast.If, s).orelse, folded))  # (an If: _assert_of says so)
    return out


def _assertion_raised(r: ast.stmt) -> tuple[ast.expr | None] | None:
    """``(message,)`` when ``r`` raises the builtin AssertionError (the interpreter's own,
    not a global of that name), else None."""
    if not isinstance(r, ast.Raise) or r.cause is not None or r.exc is None:
        return None
    exc = r.exc
    msg = None
    if isinstance(exc, ast.Call) and len(exc.args) == 1 and not exc.keywords:
        msg = exc.args[0]
        exc = exc.func
    if not (isinstance(exc, ast.Name) and fact(exc, COMMON, False)
            and exc.id == "AssertionError"):
        return None
    return (msg,)


def _assert_of(s: ast.stmt, folded: bool) -> ast.stmt | None:
    if not isinstance(s, ast.If) or len(s.body) != 1:
        return None
    raised = _assertion_raised(s.body[0])
    if raised is None:
        return None
    msg = raised[0]
    test = negate(s.test, folded)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) \
            and isinstance(s.test, ast.BoolOp) and isinstance(s.test.op, ast.And):
        # ``if a and not b: raise AssertionError`` is ``if a: assert b`` (the test
        # cannot be negated as a whole without changing an ``is``/``in`` operator)
        first = s.test.values[:-1]
        guard = first[0] if len(first) == 1 else ast.BoolOp(op=ast.And(), values=first)
        return ast.If(test=guard, body=[ast.Assert(test=negate(s.test.values[-1], folded), msg=msg)],
                      orelse=[])
    inner = s.test.operand if isinstance(s.test, ast.UnaryOp) \
        and isinstance(s.test.op, ast.Not) else None
    if isinstance(inner, ast.BoolOp) and isinstance(inner.op, ast.Or) \
            and any(fact(v, FLIPPED, False) for v in inner.values[:-1]):
        # ``if not (a or b): raise AssertionError`` whose ``a`` is an ``is``/``in``
        # test a negation flipped: ``if not a: assert b`` gives it its operator back
        rest = inner.values[:-1]
        guard = negate(rest[0] if len(rest) == 1 else ast.BoolOp(op=ast.Or(), values=rest),
                       folded)
        return ast.If(test=guard, body=[ast.Assert(test=inner.values[-1], msg=msg)],
                      orelse=[])
    return ast.Assert(test=test, msg=msg)


# ---------------------------------------------------------------- after rendering


def tidy(stmts: list[ast.stmt], code: CodeType | None = None,
         temps: set[str] | None = None) -> list[ast.stmt]:
    # (how the code's version folds ``not a in b``; without a code, this Python's)
    folded = bytecode.layout_of(code).folded_not_tests if code is not None \
        else bytecode.HOST.folded_not_tests
    body = _tidy_block(stmts, folded, in_loop=False)
    slots = _conditional_values(body, set(code.co_varnames) if code is not None else set())
    if slots:
        temps = (temps or set()) | slots
    if temps:
        locals_: set[str] = set()
        if code is not None:
            locals_ = set(code.co_varnames) - set(code.co_cellvars)
        slot_names = {n for n in names_in(body) if _slot_name(n)}
        _inline_temps(body, temps, locals_ | temps | (slot_names - set(locals_)))
        _returns_into_try(body, temps)
    return body


# ---------------------------------------------------------------- conditional values


def _conditional_values(stmts: list[ast.stmt], locals_: set[str]) -> set[str]:
    """``if c: _s = a`` / ``else: _s = b`` (a conditional expression whose test the
    translator could not fold) back to ``_s = a if c else b``; returns the stack-slot
    variables so assigned once, for temporary inlining."""
    done: set[str] = set()
    for i, s in enumerate(stmts):
        if type(s) in SIMPLE:
            continue
        for field in _blocks(type(s)):
            inner = getattr(s, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                done |= _conditional_values(inner, locals_)
        for h in getattr(s, "handlers", None) or ():
            done |= _conditional_values(h.body, locals_)
        for c in getattr(s, "cases", None) or ():
            done |= _conditional_values(c.body, locals_)
        if isinstance(s, ast.If):
            value = _as_conditional(s, locals_)
            if value is not None:
                stmts[i] = ast.Assign(targets=[ast.Name(id=value[0], ctx=ast.Store())],
                                      value=value[1])
                done.add(value[0])
    return done


#: Whether a name is a stack slot's variable (``_s3``, ``__s3``...): a match or None
_slot_name = re.compile(r"_*_s\d+").fullmatch

_BLOCKS: dict[type, tuple[str, ...]] = {}


def _blocks(kind: type) -> tuple[str, ...]:
    """Which of ``body``, ``orelse`` and ``finalbody`` (in that order) a ``kind`` node has:
    the others read None (looked up once a type)."""
    fields = _BLOCKS.get(kind)
    if fields is None:
        own = getattr(kind, "_fields", ())
        fields = _BLOCKS[kind] = tuple(f for f in ("body", "orelse", "finalbody") if f in own)
    return fields


def _as_conditional(s: ast.If, locals_: set[str]) -> tuple[str, ast.expr] | None:
    arms: list[tuple[str, ast.expr] | None] = []
    for arm in (s.body, s.orelse):
        if len(arm) != 1:
            return None
        inner = arm[0]
        if isinstance(inner, ast.If):
            arms.append(_as_conditional(inner, locals_))
        elif isinstance(inner, ast.Assign) and len(inner.targets) == 1 \
                and isinstance(inner.targets[0], ast.Name) \
                and _slot_name(inner.targets[0].id) \
                and inner.targets[0].id not in locals_:
            arms.append((inner.targets[0].id, inner.value))
        else:
            return None
    a, b = arms
    if a is None or b is None or a[0] != b[0]:
        return None
    return a[0], ast.IfExp(test=s.test, body=a[1], orelse=b[1])


# ---------------------------------------------------------------- single-use temporaries


def _inline_temps(body: list[ast.stmt], temps: set[str], stable: set[str]) -> None:
    """``_t = value`` right before the one statement that uses ``_t`` first thing: the
    value goes in place (the statement evaluates nothing with effects before it)."""
    loads: dict[str, int] = {}
    stores: dict[str, int] = {}
    for node in walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Name) and node.id in temps:
            counter = loads if isinstance(node.ctx, ast.Load) else stores
            counter[node.id] = counter.get(node.id, 0) + 1
    _inline_in(body, temps, stable, loads, stores)


def _inline_in(stmts: list[ast.stmt], temps: set[str], stable: set[str],
               loads: dict[str, int], stores: dict[str, int]) -> None:
    for s in stmts:
        if type(s) in SIMPLE:
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(s, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                _inline_in(inner, temps, stable, loads, stores)
        for h in [*(getattr(s, "handlers", []) or []), *(getattr(s, "cases", []) or [])]:
            _inline_in(h.body, temps, stable, loads, stores)
    i = len(stmts) - 2
    while i >= 0:
        s, nxt = stmts[i], stmts[i + 1]
        if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                and isinstance(s.targets[0], ast.Name) and s.targets[0].id in temps:
            name = s.targets[0].id
            if loads.get(name) == 1 and stores.get(name) == 1 \
                    and _replace_first_use(nxt, name, s.value, stable):
                del stmts[i]
        i -= 1


def _replace_first_use(stmt: ast.stmt, name: str, value: ast.expr, stable: set[str]) -> bool:
    if isinstance(stmt, ast.While | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
                  | ast.Try):
        return False
    for parent, field, index, node in _evaluation_order(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id == name:
                if index is None:
                    setattr(parent, field, value)
                else:
                    getattr(parent, field)[index] = value
                return True
            if node.id in stable:
                continue
            return False
        if isinstance(node, ast.Constant):
            continue
        return False
    return False


def _evaluation_order(stmt: ast.stmt) -> Any:
    """(parent, field, index, leaf) for the leaves a statement evaluates, in order; an
    operation with effects is yielded as itself once its operands are done."""
    def expr(parent: ast.AST, field: str, index: int | None, node: ast.expr) -> Any:
        if isinstance(node, ast.Name | ast.Constant):
            yield parent, field, index, node
            return
        if isinstance(node, ast.Call) and fact(node, CONTAINER_OP, None) \
                and isinstance(node.func, ast.Attribute):
            # ``LIST_APPEND`` and friends: the container, the value, then the operation
            # (no attribute is looked up)
            yield from expr(node.func, "value", None, node.func.value)
            for k, item in enumerate(node.args):
                yield from expr(node, "args", k, item)
            yield parent, field, index, node
            return
        if isinstance(node, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp
                      | ast.GeneratorExp | ast.IfExp | ast.BoolOp | ast.NamedExpr):
            if isinstance(node, ast.IfExp):
                yield from expr(node, "test", None, node.test)
            elif isinstance(node, ast.BoolOp):
                yield from expr(node, "values", 0, node.values[0])
            yield parent, field, index, node
            return
        for f in node._fields:
            v = getattr(node, f, None)
            if isinstance(v, ast.expr):
                yield from expr(node, f, None, v)
            elif isinstance(v, list):
                for k, item in enumerate(v):
                    if isinstance(item, ast.expr):
                        yield from expr(node, f, k, item)
                    elif isinstance(item, ast.keyword):
                        yield from expr(item, "value", None, item.value)
        yield parent, field, index, node

    if isinstance(stmt, ast.Assign):
        yield from expr(stmt, "value", None, stmt.value)
        return
    if isinstance(stmt, ast.Return | ast.Expr) and stmt.value is not None:
        yield from expr(stmt, "value", None, stmt.value)
        return
    if isinstance(stmt, ast.If):
        yield from expr(stmt, "test", None, stmt.test)
        return
    if isinstance(stmt, ast.For | ast.AsyncFor):
        yield from expr(stmt, "iter", None, stmt.iter)
        return
    if isinstance(stmt, ast.With | ast.AsyncWith) and stmt.items:
        yield from expr(stmt.items[0], "context_expr", None, stmt.items[0].context_expr)
        return
    if isinstance(stmt, ast.Raise) and stmt.exc is not None:
        yield from expr(stmt, "exc", None, stmt.exc)
        return


def _returns_into_try(stmts: list[ast.stmt], temps: set[str]) -> None:
    """``try: ...; _t = value`` then ``return _t``: the compiler leaves ``RETURN_VALUE``
    out of the protected range, but the source had ``return value`` in the ``try``."""
    i = 0
    while i < len(stmts):
        s = stmts[i]
        if type(s) in SIMPLE:
            i += 1
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(s, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                _returns_into_try(inner, temps)
        for h in [*(getattr(s, "handlers", []) or []), *(getattr(s, "cases", []) or [])]:
            _returns_into_try(h.body, temps)
        if isinstance(s, ast.Try) and not s.finalbody and s.body and len(s.orelse) == 1:
            last = s.body[-1]
            nxt = s.orelse[0]
            if isinstance(last, ast.Assign) and len(last.targets) == 1 \
                    and isinstance(last.targets[0], ast.Name) and last.targets[0].id in temps \
                    and isinstance(nxt, ast.Return) and isinstance(nxt.value, ast.Name) \
                    and nxt.value.id == last.targets[0].id:
                s.body[-1] = ast.Return(value=last.value)
                s.orelse = []
        if isinstance(s, ast.Try) and not s.orelse and s.body and i + 1 < len(stmts) \
                and (not s.finalbody or not s.handlers and not _names_any(s.finalbody, temps)):
            # (with ``finally``: ``return value`` evaluates it, runs the clean-up, returns)
            last = s.body[-1]
            nxt = stmts[i + 1]
            if isinstance(last, ast.Assign) and len(last.targets) == 1 \
                    and isinstance(last.targets[0], ast.Name) and last.targets[0].id in temps \
                    and isinstance(nxt, ast.Return) and isinstance(nxt.value, ast.Name) \
                    and nxt.value.id == last.targets[0].id:
                s.body[-1] = ast.Return(value=last.value)
                del stmts[i + 1]
        if isinstance(s, ast.Try):
            _merge_nested_try(s)
        i += 1


def _merge_nested_try(s: ast.Try) -> None:
    """``try: (try: ... except: ...) finally: ...`` as one ``try``/``except``/``finally``."""
    if s.finalbody and not s.handlers and len(s.body) == 1 \
            and isinstance(s.body[0], ast.Try) and s.body[0].handlers \
            and not s.body[0].finalbody:
        inner = s.body[0]
        s.body, s.handlers, s.orelse = inner.body, inner.handlers, inner.orelse


def _names_any(stmts: list[ast.stmt], names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for s in stmts for n in walk(s))


def _tidy_block(stmts: list[ast.stmt], folded: bool, in_loop: bool,
                loop_body: bool = False) -> list[ast.stmt]:
    if loop_body:
        stmts = _trim_trailing_continue(stmts)
    out: list[ast.stmt] = []
    for s in stmts:
        out.extend(_tidy_stmt(s, folded, in_loop))
    if loop_body:
        out = _trim_trailing_continue(out)
    _drop_duplicated_tails(out)
    return out


def _merge_return_copies(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """``if c: return f(x, a)`` / ``return f(x, b)`` where ``f`` and ``x`` are the very
    values computed before the test (the same objects in both arms): the compiler copied
    the end of ``return f(x, a if c else b)`` into both arms of the conditional
    expression. Runs on raw statements, where object identity says what was computed
    before the branch."""
    if not stmts:
        return stmts
    last = stmts[-1]
    if isinstance(last, ast.If) and len(last.body) == 1 and len(last.orelse) == 1:
        a, b, cut = last.body[0], last.orelse[0], 1
    elif len(stmts) >= 2 and isinstance(stmts[-2], ast.If) and len(stmts[-2].body) == 1 \
            and not stmts[-2].orelse:
        last, a, b, cut = stmts[-2], stmts[-2].body[0], stmts[-1], 2
    else:
        return stmts
    if not (isinstance(a, ast.Return) and isinstance(b, ast.Return)
            and a.value is not None and b.value is not None):
        return stmts
    merged = _merge_one_difference(last.test, a.value, b.value, False)
    if merged is None:
        return stmts
    return stmts[:-cut] + [ast.Return(value=cast(ast.expr, merged))]  # (two values merged)


#: Nodes whose own operation comes after all their operands (so a conditional
#: expression among the operands is evaluated before it).
_AFTER_OPERANDS = (ast.Call, ast.BinOp, ast.Subscript, ast.Tuple, ast.List, ast.Set,
                   ast.Attribute, ast.UnaryOp, ast.Compare, ast.JoinedStr, ast.FormattedValue)


def _merge_one_difference(test: ast.expr, a: ast.AST, b: ast.AST,
                          anchored: bool) -> ast.AST | None:
    """``a`` with ``a_part if test else b_part`` where ``a`` and ``b`` differ, or None.
    Everything evaluated before that place must be one object in both (computed before
    the test), at least one such value must exist on the way (``anchored``), and what
    comes after must read the same."""
    if type(a) is not type(b) or not isinstance(a, _AFTER_OPERANDS):
        return None
    parts: list[tuple[str, int | None, Any, Any]] = []
    for field in a._fields:
        x, y = getattr(a, field, None), getattr(b, field, None)
        if isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                return None
            for k, (p, q) in enumerate(zip(x, y, strict=True)):
                if isinstance(p, ast.keyword) and isinstance(q, ast.keyword) \
                        and p.arg != q.arg:
                    return None
                parts.append((field, k, p, q))
        elif isinstance(x, ast.expr) and isinstance(y, ast.expr):
            parts.append((field, None, x, y))
        elif isinstance(x, ast.AST) and isinstance(y, ast.AST):
            if type(x) is not type(y):  # an operator
                return None
        elif x != y:
            return None
    spot = next((i for i, (_, _, x, y) in enumerate(parts) if x is not y), None)
    if spot is None:
        return None
    anchored = anchored or spot > 0
    for _, _, x, y in parts[spot + 1:]:
        if x is not y and _text(x) != _text(y):
            return None
    field, index, x, y = parts[spot]
    keyword = None
    if isinstance(x, ast.keyword):
        keyword, x, y = x.arg, x.value, y.value
    if isinstance(x, ast.Slice | ast.Starred) or not isinstance(x, ast.expr):
        return None
    if _text(x) == _text(y):
        return None  # the same code computed in each arm: nothing to merge here
    part: ast.AST | None = _merge_one_difference(test, x, y, anchored)
    if part is None:
        if not anchored:
            return None
        part = ast.IfExp(test=test, body=x, orelse=y)
    if keyword is not None or isinstance(parts[spot][2], ast.keyword):
        part = ast.keyword(arg=keyword, value=cast(ast.expr, part))  # (x and y are values)
    new = copy.copy(a)
    if index is None:
        setattr(new, field, part)
    else:
        items = list(getattr(a, field))
        items[index] = part
        setattr(new, field, items)
    return new


def _text(node: Any) -> Key:
    return expr_key(node)


def _drop_duplicated_tails(stmts: list[ast.stmt]) -> None:
    """The compiler copies a short ``return`` tail into branches that jump to it; when a
    loop's ``else`` or an ``if`` ends with a copy of the statements after it, drop the copy."""
    for i in range(max(0, len(stmts) - 4), len(stmts) - 1):  # (tails of 1 to 3 statements)
        s = stmts[i]
        tail = stmts[i + 1:]
        if not isinstance(tail[-1], ast.Return | ast.Raise):
            continue
        if isinstance(s, ast.For | ast.AsyncFor | ast.While) and s.orelse:
            _cut_tail(s.orelse, tail, keep_one=False)
        elif isinstance(s, ast.If) and not s.orelse:
            _cut_tail(s.body, tail, keep_one=True)


def _written_twice(a: ast.stmt, b: ast.stmt) -> bool:
    """Are ``a`` and ``b``, alike, two statements of the source rather than the
    compiler's copies of one? Copies keep the position of what they copy, but those of
    the implicit ``return None`` (which has none) take the position of their jump."""
    if isinstance(a, ast.Return) and a.value is None and not fact(a, EXPLICIT, False):
        return False
    for name in (POSITION, LINE):
        here, there = fact(a, name, None), fact(b, name, None)
        if here is not None and there is not None:
            return here != there
    return False


def _cut_tail(body: list[ast.stmt], tail: list[ast.stmt], keep_one: bool) -> None:
    n = len(tail)
    if len(body) < n or not same(body[-n:], tail):
        return
    if any(_written_twice(a, b) for a, b in zip(body[-n:], tail, strict=True)):
        return
    if keep_one and len(body) == n:
        return
    del body[-n:]


def _tidy_stmt(s: ast.stmt, folded: bool, in_loop: bool) -> list[ast.stmt]:
    if type(s) in SIMPLE:
        return [s]
    if isinstance(s, ast.For | ast.AsyncFor | ast.While):
        s.body = _tidy_block(s.body, folded, True, loop_body=True) or [ast.Pass()]
        s.orelse = _tidy_block(s.orelse, folded, in_loop)
        return [s]
    if isinstance(s, ast.If):
        s.body = _tidy_block(s.body, folded, in_loop)
        s.orelse = _tidy_block(s.orelse, folded, in_loop)
        if _is_pass_only(s.body) and s.orelse and not fact(s, AS_TESTED, False):
            s.test = negate(s.test, folded)
            s.body, s.orelse = s.orelse, []
        if not s.body:
            s.body = [ast.Pass()]
        if s.orelse and fact(s, WRITTEN_FLAT, False) \
                and (leaves_function(s.body) or _endless(s.body)):
            rest, s.orelse = s.orelse, []  # (3.8/3.9's layout says no ``else`` was written)
            return [s, *rest]
        if s.orelse and ends_in_jump(s.body) and not fact(s, WRITTEN_ELSE, False):
            if in_loop or not ends_in_implicit_return(s.body) \
                    or len(s.body) > 1 and len(s.orelse) > 1 and same(s.body[-2:], s.orelse[-2:]):
                # (arms that end in copies of the code after the ``if``: that code)
                rest = s.orelse
                s.orelse = []
                return [s, *rest]
            # (an arm that ends the function without a ``return``: the rest was the
            # ``else`` of an ``if``/``elif`` chain)
            s.orelse = _as_elif_chain(s.orelse)
        return [s]
    if isinstance(s, ast.Match):
        for c in s.cases:
            c.body = _tidy_block(c.body, folded, in_loop) or [ast.Pass()]
        return _flat_match(s)
    if isinstance(s, ast.With | ast.AsyncWith):
        s.body = _tidy_block(s.body, folded, in_loop) or [ast.Pass()]
        if len(s.body) == 1 and type(s.body[0]) is type(s):
            inner = s.body[0]
            s.items = [*s.items, *inner.items]
            s.body = inner.body
        return [s]
    if isinstance(s, ast.Try):
        s.body = _tidy_block(s.body, folded, in_loop) or [ast.Pass()]
        for h in s.handlers:
            h.body = _tidy_block(h.body, folded, in_loop) or [ast.Pass()]
        s.orelse = _tidy_block(s.orelse, folded, in_loop)
        s.finalbody = _tidy_block(s.finalbody, folded, in_loop)
        _merge_nested_try(s)
        return [s]
    return [s]


def _flat_match(s: ast.Match) -> list[ast.stmt]:
    """``match x: ...; case _: match x: <cases>`` then more, where every case before
    leaves (returns, raises...): one ``match`` with all the cases, then the rest (the
    cases that fall through go on to it)."""
    last = s.cases[-1] if s.cases else None
    if last is None or not catches_all(last) or last.pattern.name is not None:  # type: ignore[attr-defined]  # a MatchAs (catches_all)
        return [s]
    inner = last.body[0]
    if not isinstance(inner, ast.Match) or not same(inner.subject, s.subject) \
            or not isinstance(s.subject, ast.Name) \
            or not all(ends_in_jump(c.body) for c in s.cases[:-1]):
        return [s]
    s.cases = [*s.cases[:-1], *inner.cases]
    return [s, *last.body[1:]]


def _as_elif_chain(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """``if c: <leaves>`` then the rest, as ``if c: ... else: rest`` (an ``elif``)."""
    if len(stmts) > 1 and isinstance(stmts[0], ast.If) and not stmts[0].orelse \
            and ends_in_jump(stmts[0].body):
        first = stmts[0]
        first.orelse = _as_elif_chain(stmts[1:])
        return [first]
    return stmts


def _endless(stmts: list[ast.stmt]) -> bool:
    """Do ``stmts`` end in a ``while True:`` loop nothing leaves by a ``break``?"""
    last = stmts[-1] if stmts else None
    return isinstance(last, ast.While) and isinstance(last.test, ast.Constant) \
        and bool(last.test.value) and not last.orelse and not loop_breaks(last.body)


def _is_pass_only(stmts: list[ast.stmt]) -> bool:
    return all(isinstance(s, ast.Pass) for s in stmts)


def _trim_trailing_continue(stmts: list[ast.stmt], keep_written: bool = False
                            ) -> list[ast.stmt]:
    """``stmts`` without the ``continue`` statements that end them (the end of a loop's
    body goes on anyway); ``keep_written``: not a ``continue`` the source wrote (in an
    arm that more code follows, ``if c: ...; continue`` then more code, and in the arms
    of the last ``if``: 3.10 and 3.11 give a written one a jump of its own)."""
    while stmts and isinstance(stmts[-1], ast.Continue) \
            and not (keep_written and fact(stmts[-1], WRITTEN, False)) \
            and not fact(stmts[-1], BACK_KEPT, False):
        stmts = stmts[:-1]
    if stmts and isinstance(stmts[-1], ast.If):
        last = stmts[-1]
        if not (last.orelse and last.body and isinstance(last.body[-1], ast.Continue) and (
                len(last.body) == 1 and fact(last, AS_TESTED, False)
                or fact(last.body[-1], WRITTEN, False))):
            # (``if c: ...; continue`` then more code, as written: the test jumps over
            # the arm)
            last.body = _trim_trailing_continue(last.body, True) or [ast.Pass()]
        last.orelse = _trim_trailing_continue(last.orelse, True)
    elif stmts and isinstance(stmts[-1], ast.For | ast.AsyncFor | ast.While):
        # (an inner loop's ``else`` goes on with the outer loop: 3.9 threads its ``break``
        # to the outer loop's head, where the ``else`` also goes)
        stmts[-1].orelse = _trim_trailing_continue(stmts[-1].orelse, True)
    elif stmts and isinstance(stmts[-1], ast.Match):
        for c in stmts[-1].cases:  # (a case that only continues says so)
            c.body = _trim_trailing_continue(c.body) or c.body
    elif stmts and isinstance(stmts[-1], ast.Try):
        tried = stmts[-1]
        # (in a ``try`` with a ``finally``, only the compiler's: a written ``continue``
        # runs its own copy of the ``finally`` and jumps back from there)
        keep = keep_written or bool(tried.finalbody)
        if tried.finalbody and tried.body and fact(tried.body[-1], EXPLICIT, False):
            return stmts
        tried.orelse = _trim_trailing_continue(tried.orelse, keep)
        for h in tried.handlers:
            # (a clause's own jump back: ``except E: continue`` as written; the end
            # of the clause jumps to the end of the try statement instead)
            if not (h.body and fact(h.body[-1], EXPLICIT, False)):
                h.body = _trim_trailing_continue(h.body, keep) or [ast.Pass()]
        if not tried.orelse:
            tried.body = _trim_trailing_continue(tried.body, keep) or [ast.Pass()]
    return stmts


def _unused(x: Any) -> None:
    return None


# ---------------------------------------------------------------- module and class bodies


def tidy_scope(stmts: list[ast.stmt], future_annotations: bool = False) -> list[ast.stmt]:
    """Module and class bodies: the docstring and annotated assignments."""
    first = stmts[0] if stmts else None
    if isinstance(first, ast.Assign) and _is_name(first.targets, "__doc__") \
            and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        stmts = [ast.Expr(value=first.value), *stmts[1:]]
    return _annotated(stmts, future_annotations)


def _annotated(stmts: list[ast.stmt], future_annotations: bool) -> list[ast.stmt]:
    """``x = v`` then ``__annotations__['x'] = T`` as ``x: T = v`` (in nested blocks
    of the body too)."""
    out: list[ast.stmt] = []
    for s in stmts:
        if type(s) not in SIMPLE and not isinstance(s, SCOPES):  # (nested scopes have
            for block in stmt_blocks(s):  # bodies of their own)
                block[:] = _annotated(block, future_annotations)
        ann = _annotation_store(s)
        if ann is not None:
            name, annotation = ann
            annotation = annotation_expr(annotation, future_annotations)
            prev = out[-1] if out else None
            if isinstance(prev, ast.Assign) and len(prev.targets) == 1 \
                    and isinstance(prev.targets[0], ast.Name) and prev.targets[0].id == name:
                out[-1] = ast.AnnAssign(target=ast.Name(id=name, ctx=ast.Store()),
                                        annotation=annotation, value=prev.value, simple=1)
            else:
                out.append(ast.AnnAssign(target=ast.Name(id=name, ctx=ast.Store()),
                                         annotation=annotation, value=None, simple=1))
            continue
        out.append(s)
    return out


def _is_name(targets: list[ast.expr], ident: str) -> bool:
    return len(targets) == 1 and isinstance(targets[0], ast.Name) and targets[0].id == ident


def _annotation_store(s: ast.stmt) -> tuple[str, ast.expr] | None:
    """``__annotations__['x'] = ann`` (what ``x: ann`` compiles to in a module or class)."""
    if not isinstance(s, ast.Assign) or len(s.targets) != 1:
        return None
    t = s.targets[0]
    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) \
            and t.value.id == "__annotations__" and isinstance(t.slice, ast.Constant) \
            and isinstance(t.slice.value, str) and t.slice.value.isidentifier():
        return t.slice.value, s.value
    return None


def annotation_expr(node: ast.expr, future: bool) -> ast.expr:
    """Under ``from __future__ import annotations`` annotations are strings of source."""
    if future and isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            parsed = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return node
        if ast.unparse(parsed) == node.value:
            return parsed
        # (3.8's: ``...`` written as ``Ellipsis``, read back as the constant)
        for candidate in (parsed, _Dots().visit(copy.deepcopy(parsed))):
            if _as_38_writes(candidate) == node.value:
                return candidate
    return node


class _Dots(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name) -> ast.expr:
        return ast.Constant(Ellipsis) if node.id == "Ellipsis" else node


class _As38(ast.NodeTransformer):
    """What 3.8's compiler writes differently in an annotation's string: it folds a tuple
    of constants first and writes constants by ``repr`` (``Callable[..., None]`` as
    ``Callable[(Ellipsis, None)]``)."""

    def visit_Constant(self, node: ast.Constant) -> ast.expr:
        return ast.Name(id="Ellipsis", ctx=ast.Load()) if node.value is Ellipsis else node

    def visit_Tuple(self, node: ast.Tuple) -> ast.expr:
        items = [_folded(e) for e in node.elts]
        if items and all(e is not _NOT_CONSTANT for e in items):
            return ast.Name(id=repr(tuple(items)), ctx=ast.Load())
        self.generic_visit(node)
        return node


_NOT_CONSTANT = object()


def _folded(node: ast.expr) -> object:
    """The value 3.8's constant folding makes of ``node``: a constant, a tuple of them."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Tuple):
        items = [_folded(e) for e in node.elts]
        return tuple(items) if all(e is not _NOT_CONSTANT for e in items) else _NOT_CONSTANT
    return _NOT_CONSTANT


def _as_38_writes(node: ast.expr) -> str:
    """The string 3.8 makes of annotation ``node`` under ``from __future__ import
    annotations`` (the same source it reads back writes it again): a file of 3.8's keeps
    it as an expression on any host."""
    return ast.unparse(_As38().visit(copy.deepcopy(node)))


def scope_value(stmts: list[ast.stmt], free: tuple[str, ...]) -> ast.expr | None:
    """The expression of the body of a lambda or of a lazily evaluated scope (see
    :func:`lambda_body`), naming the free variables ``free`` of its code that it no longer
    reads: the compiler folded away the code that did (``1 or P``) but kept them free;
    ``1 if True else P`` compiles to the same."""
    value = lambda_body(stmts)
    if value is None:
        return None
    named = names_from_outside(value)
    lost: list[ast.expr] = [ast.Name(id=f, ctx=ast.Load()) for f in free
            if f.isidentifier() and not f.startswith("__class") and f not in named]
    if not lost:
        return value
    return ast.IfExp(test=ast.Constant(True), body=value,
                     orelse=lost[0] if len(lost) == 1 else ast.Tuple(elts=lost, ctx=ast.Load()))


def lambda_body(stmts: list[ast.stmt]) -> ast.expr | None:
    """The expression of a lambda body: ``return e``, or returns in if/else branches (the
    compiler turns ``c and x or y``-like conditional expressions into branches)."""
    if not stmts:
        return ast.Constant(None)
    first = stmts[0]
    if isinstance(first, ast.Return) and len(stmts) == 1:
        return first.value or ast.Constant(None)
    if isinstance(first, ast.If):
        rest = lambda_body(first.orelse + stmts[1:]) if (first.orelse or stmts[1:]) else None
        # (a test that decides nothing, ``x if (y if c else y) else z``: tested all the same)
        body = rest if all(isinstance(s, ast.Pass) for s in first.body) and not first.orelse \
            else lambda_body(first.body)
        if body is not None and rest is not None:
            return ast.IfExp(test=first.test, body=body, orelse=rest)
    return None

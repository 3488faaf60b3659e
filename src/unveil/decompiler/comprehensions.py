"""Comprehensions and generator expressions from the loop the compiler made of them.

A comprehension's body decompiles to ``acc = []; for x in it: if c: acc.append(e)``
(or ``acc.add``, ``acc[k] = v``, ``yield e``); this module folds that loop nest back
into ``[e for x in it if c]``.
"""

from __future__ import annotations

import ast
from types import CodeType

from ..codeobj import COMPREHENSIONS as KINDS
from ..codeobj import CodeFlag
from ..errors import DecompilationError
from .exprs import negate
from .nodes import walk


def comprehension_from_code(code: CodeType, stmts: list[ast.stmt],
                            iterable: ast.expr) -> ast.expr:
    """The comprehension a comprehension's code object makes, given its body
    (``stmts``) and the iterable it is called on."""
    arg = code.co_varnames[0] if code.co_argcount else ".0"
    node = comprehension_from_body(stmts, KINDS[code.co_name], iterable, arg,
                                   getattr(code, "co_qualname", code.co_name))
    gens = node.generators  # type: ignore[attr-defined]
    dropped = gens[-1].ifs and _is_false(gens[-1].ifs[-1])
    # (the first iterable is evaluated outside, in the enclosing scope)
    inside = [n for n in walk(node) if n is not gens[0].iter]
    outer = {id(n) for n in walk(gens[0].iter)}
    missing = [f for f in code.co_freevars if f.isidentifier() and f not in {
        n.id for n in inside if isinstance(n, ast.Name) and id(n) not in outer}]
    field = "key" if isinstance(node, ast.DictComp) else "elt"
    if dropped and missing:
        # names only the dropped element read: it is never evaluated, so it may name them
        # and keep them free variables, as they were
        names = [ast.Name(id=f, ctx=ast.Load()) for f in missing]
        setattr(node, field, names[0] if len(names) == 1 else
                ast.Tuple(elts=names, ctx=ast.Load()))
    bound = {n.id for g in gens for n in walk(g.target) if isinstance(n, ast.Name)}
    unbound = [v for v in code.co_varnames[code.co_argcount:]
               if v.isidentifier() and v not in bound and v not in code.co_cellvars]
    if dropped and unbound:
        # the targets of loops the compiler dropped (after the false condition) stay
        # locals: a dropped loop binds them again (``... if False for x in ()``)
        targets = [ast.Name(id=v, ctx=ast.Store()) for v in unbound]
        gens.append(ast.comprehension(
            target=targets[0] if len(targets) == 1 else ast.Tuple(elts=targets,
                                                                  ctx=ast.Store()),
            iter=ast.Tuple(elts=[], ctx=ast.Load()), ifs=[], is_async=0))
    if dropped and code.co_flags & (CodeFlag.ASYNC_GENERATOR | CodeFlag.COROUTINE) \
            and not _awaits(node):
        # the ``async for``/``await`` that made it asynchronous was dropped: the element
        # (never evaluated) awaits instead
        setattr(node, field, ast.Await(value=getattr(node, field)))
    return node


def _awaits(node: ast.expr) -> bool:
    """Is the comprehension ``node`` asynchronous by what it holds itself (an ``async
    for`` or ``await``; a nested generator expression or lambda is its own scope)?"""
    todo: list[ast.AST] = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Await) or isinstance(n, ast.comprehension) and n.is_async:
            return True
        if n is node or not isinstance(n, ast.GeneratorExp | ast.Lambda):
            todo.extend(ast.iter_child_nodes(n))
    return False


def _is_false(test: ast.expr) -> bool:
    return isinstance(test, ast.Constant) and test.value is False


def comprehension_from_body(stmts: list[ast.stmt], kind: str, iterable: ast.expr,
                            arg: str, where: str = "?") -> ast.expr:
    def fail(why: str) -> DecompilationError:
        return DecompilationError(f"comprehension not recognised: {why}", code_name=where)

    body = list(stmts)
    acc: str | None = None
    if kind != "gen":
        if not body or not isinstance(body[0], ast.Assign) or len(body[0].targets) != 1 \
                or not isinstance(body[0].targets[0], ast.Name):
            raise fail("no accumulator")
        acc = body[0].targets[0].id
        body = body[1:]
        if not body or not isinstance(body[-1], ast.Return):
            raise fail("no result")
        ret = body[-1].value
        if not (isinstance(ret, ast.Name) and ret.id == acc):
            raise fail("result is not the accumulator")
        body = body[:-1]
    elif body and isinstance(body[-1], ast.Return) and body[-1].value is None:
        body = body[:-1]
    if len(body) != 1 or not isinstance(body[0], ast.For | ast.AsyncFor):
        raise fail("not a single loop")
    loop = body[0]
    it = loop.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "iter" \
            and len(it.args) == 1:
        it = it.args[0]
    if not (isinstance(it, ast.Name) and it.id == arg):
        raise fail("outer loop does not iterate over the argument")
    generators: list[ast.comprehension] = []
    node: ast.stmt = loop
    element: tuple[ast.expr, ...] | None = None
    first = True
    while True:
        if isinstance(node, ast.For | ast.AsyncFor):
            if node.orelse:
                raise fail("loop with else")
            generators.append(ast.comprehension(
                target=node.target, iter=iterable if first else node.iter, ifs=[],
                is_async=int(isinstance(node, ast.AsyncFor))))
            first = False
            inner = node.body
        elif isinstance(node, ast.If) and node.orelse:
            # tests whose arms all end in nothing: a filter (a conditional expression)
            # before a body the compiler dropped behind a constant false condition
            test = _passes([node])
            if not isinstance(test, ast.expr) or not _no_element(node):
                raise fail("condition with else")
            generators[-1].ifs += [test, ast.Constant(False)]
            element = (ast.Constant(None),) * (2 if kind == "dict" else 1)
            break
        elif isinstance(node, ast.If):
            test = node.test
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test = negate(test.operand)  # ``not a not in b`` is ``a in b``
            generators[-1].ifs.append(test)
            inner = node.body
        elif isinstance(node, ast.Pass):
            # the compiler dropped a body behind a constant false condition (``if None``,
            # ``if 0``): nothing is evaluated, so any element and ``if False`` compile the same
            generators[-1].ifs.append(ast.Constant(False))
            element = (ast.Constant(None),) * (2 if kind == "dict" else 1)
            break
        else:
            element = _element(node, kind, acc)
            if element is None:
                raise fail("no element")
            break
        inner = _continue_guards(inner)
        if len(inner) != 1:
            raise fail("loop body is not one statement")
        node = inner[0]
    if kind == "list":
        return ast.ListComp(elt=element[0], generators=generators)
    if kind == "set":
        return ast.SetComp(elt=element[0], generators=generators)
    if kind == "dict":
        return ast.DictComp(key=element[0], value=element[1], generators=generators)
    return ast.GeneratorExp(elt=element[0], generators=generators)


def _element(node: ast.stmt, kind: str, acc: str | None) -> tuple[ast.expr, ...] | None:
    if kind == "gen":
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Yield):
            # (a bare ``yield`` is ``yield None``: the element of ``(None for x in xs)``)
            return (node.value.value or ast.Constant(None),)
        return None
    if kind == "dict":
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Subscript) \
                and isinstance(node.targets[0].value, ast.Name) \
                and node.targets[0].value.id == acc:
            return (node.targets[0].slice, node.value)
        return None
    method = "append" if kind == "list" else "add"
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        if isinstance(call.func, ast.Attribute) and call.func.attr == method \
                and isinstance(call.func.value, ast.Name) and call.func.value.id == acc \
                and len(call.args) == 1 and not call.keywords:
            return (call.args[0],)
    return None


def _continue_guards(body: list[ast.stmt]) -> list[ast.stmt]:
    """``if not c: continue`` followed by the rest is ``if c: <rest>``; so is any
    ``if``/``else`` whose arms only ``continue`` or fall through (a conditional
    expression as the filter: ``if (a if t else b)``)."""
    if len(body) >= 2 and isinstance(body[0], ast.If):
        test = _passes([body[0]])
        if isinstance(test, ast.expr):
            return [ast.If(test=test, body=_continue_guards(body[1:]), orelse=[])]
    return body


def _no_element(node: ast.stmt) -> bool:
    """Is ``node`` only tests, ``pass`` and ``continue``?"""
    if isinstance(node, ast.If):
        return all(_no_element(s) for s in (*node.body, *node.orelse))
    return isinstance(node, ast.Pass | ast.Continue)


def _passes(stmts: list[ast.stmt]) -> ast.expr | bool | None:
    """When flow gets through ``stmts`` rather than ``continue``: an expression, always
    (True), never (False), or None when ``stmts`` do more than that."""
    if not stmts:
        return True
    if len(stmts) > 1:  # one guard after the other: all of them pass
        first, rest = _passes(stmts[:1]), _passes(stmts[1:])
        if first is None or rest is None or rest is False:
            return None
        if first is False or rest is True:
            return first
        if first is True:
            return rest
        return ast.BoolOp(op=ast.And(), values=[first, rest])
    s = stmts[0]
    if isinstance(s, ast.Continue):
        return False
    if isinstance(s, ast.Pass):
        return True
    if not isinstance(s, ast.If):
        return None
    a, b = _passes(s.body), _passes(s.orelse)
    if a is None or b is None:
        return None
    t = s.test
    if a is b:  # the test is made, and its outcome does not matter
        if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
            t = t.operand
        return ast.BoolOp(op=ast.Or() if a else ast.And(), values=[t, ast.Constant(a)])
    if a is True and b is False:
        return t
    if a is False and b is True:
        return negate(t)
    if b is False:
        return ast.BoolOp(op=ast.And(), values=[t, a])  # type: ignore[list-item]
    if a is False:
        return ast.BoolOp(op=ast.And(), values=[negate(t), b])  # type: ignore[list-item]
    if a is True:
        return ast.BoolOp(op=ast.Or(), values=[t, b])  # type: ignore[list-item]
    if b is True:
        return ast.BoolOp(op=ast.Or(), values=[negate(t), a])  # type: ignore[list-item]
    return ast.IfExp(test=t, body=a, orelse=b)  # type: ignore[arg-type]

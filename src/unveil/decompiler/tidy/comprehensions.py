"""Comprehensions and generator expressions from the loop the compiler made of them.

A comprehension's body decompiles to ``acc = []; for x in it: if c: acc.append(e)``
(or ``acc.add``, ``acc[k] = v``, ``yield e``); this module folds that loop nest back
into ``[e for x in it if c]``.
"""

from __future__ import annotations

import ast
from types import CodeType
from typing import TypeAlias

from ... import bytecode
from ...bytecode import Instr
from ...codeobj import COMPREHENSIONS as KINDS
from ...codeobj import CodeFlag
from ...errors import DecompilationError
from ..ir.exprs import negate
from ..ir.nodes import no_arguments, walk


def comprehension_from_code(code: CodeType, stmts: list[ast.stmt],
                            iterable: ast.expr) -> ast.expr:
    """The comprehension a comprehension's code object makes, given its body
    (``stmts``) and the iterable it is called on."""
    arg = code.co_varnames[0] if code.co_argcount else ".0"
    node = comprehension_from_body(stmts, KINDS[code.co_name], iterable, arg,
                                   getattr(code, "co_qualname", code.co_name),
                                   folded=bytecode.layout_of(code).folded_not_tests)
    gens = node.generators  # type: ignore[attr-defined]  # a comprehension node
    dropped = is_dropped(node)
    inlines = bytecode.layout_of(code).inlined_comprehensions
    if dropped:
        # (the first iterable is evaluated outside, in the enclosing scope)
        outer = {id(n) for n in walk(gens[0].iter)}
        # (not reads in comprehensions inlined in it: where another one binds the same
        # name, 3.12+ takes those for reads of that local)
        read = {n.id for n in _own_reads(node, inlines, inlined=False) if id(n) not in outer}
        # (a cell the kept part binds and a scope nested in it reads stays one)
        kept = _own_targets(node, inlines) & _nested_names(node, inlines)
        cells = [c for c in code.co_cellvars if c.isidentifier() and c not in kept]
        keep_dropped_names(
            node, reads=[f for f in code.co_freevars if f.isidentifier() and f not in read],
            cells=cells, bound=[*(v for v in code.co_varnames[code.co_argcount:]
                                  if v.isidentifier() and v not in code.co_cellvars),
                                *cells],
            apart=read_apart(bytecode.read(code).instrs, code) | set(code.co_freevars),
            inlines=inlines)
    if dropped and code.co_flags & (CodeFlag.ASYNC_GENERATOR | CodeFlag.COROUTINE) \
            and not _awaits(node):
        # the ``async for``/``await`` that made it asynchronous was dropped: the element
        # (never evaluated) awaits instead
        field = "key" if isinstance(node, ast.DictComp) else "elt"
        setattr(node, field, ast.Await(value=getattr(node, field)))
    return node


def is_dropped(node: ast.expr) -> bool:
    """Did the compiler drop the element of comprehension ``node`` (and what follows
    its last test), behind a condition that is always false?"""
    gens = node.generators  # type: ignore[attr-defined]  # a comprehension node
    return bool(gens[-1].ifs) and _is_false(gens[-1].ifs[-1])


def read_apart(instrs: list[Instr], code: CodeType) -> set[str]:
    """The names ``instrs`` (of ``code``) read as globals or free variables."""
    return {str(i.argval) for i in instrs if i.op in _GLOBAL_READS
            or i.op in _DEREF_READS and i.argval in code.co_freevars}


_GLOBAL_READS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS"})
_DEREF_READS = frozenset({"LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF"})


def keep_dropped_names(node: ast.expr, *, reads: list[str], cells: list[str],
                       bound: list[str], apart: set[str], inlines: bool) -> None:
    """Make the dropped part of comprehension ``node`` (see :func:`is_dropped`) use the
    names the dropped code used, so that they keep their scopes: ``reads`` (free
    variables only it read) and a lambda reading ``cells`` (read by a scope nested in
    it) are the element; ``bound`` (locals only its loops bound, other
    than the ones ``node`` binds) are the targets of a loop after the false condition.
    A loop would make every read of the name in ``node`` local: a name the code reads
    ``apart`` from that local (as a global or free variable; so does a scope nested in
    ``node`` that reads it, unless it is one of ``cells``), or that is a walrus target,
    is bound by a comprehension inlined in the dropped part instead (3.12+)."""
    gens = node.generators  # type: ignore[attr-defined]  # a comprehension node
    field = "key" if isinstance(node, ast.DictComp) else "elt"
    # (the free variables are read right there: in a lambda, 3.13+ would take one that
    # a comprehension inlined in ``node`` binds for that comprehension's cell)
    parts: list[ast.expr] = [ast.Name(id=f, ctx=ast.Load()) for f in reads if f not in cells]
    if cells:
        loads: list[ast.expr] = [ast.Name(id=c, ctx=ast.Load()) for c in cells]
        parts.append(ast.Lambda(args=no_arguments(), body=loads[0] if len(loads) == 1
                                else ast.Tuple(elts=loads, ctx=ast.Load())))
    if parts:
        setattr(node, field, parts[0] if len(parts) == 1
                else ast.Tuple(elts=parts, ctx=ast.Load()))
    # (a comprehension inlined in ``node`` binds a name of its own: the name is taken
    # only where ``node`` itself neither reads it nor keeps it a cell)
    level = {t.id for g in gens for t in walk(g.target)
             if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
    read_here = {n.id for n in _own_reads(node, inlines)} | set(cells)
    taken = level | {v for v in _own_targets(node, inlines) - level if v not in read_here}
    walrus = {n.target.id for n in walk(node)
              if isinstance(n, ast.NamedExpr)}
    apart = apart | walrus | (_nested_names(node, inlines) - set(cells))
    loose = [v for v in bound if v not in taken]
    # (in the order of ``bound``, which is the order the locals are listed in: runs of
    # loop targets and of names an inlined comprehension binds)
    runs: list[tuple[bool, list[str]]] = []
    for v in loose:
        if v in walrus and not (inlines and v in apart):
            continue
        inlined = inlines and v in apart
        if runs and runs[-1][0] == inlined:
            runs[-1][1].append(v)
        else:
            runs.append((inlined, [v]))
    for inlined, names in runs:
        loop = ast.comprehension(target=_targets(names, ast.Store()),
                                 iter=ast.Tuple(elts=[], ctx=ast.Load()), ifs=[], is_async=0)
        if inlined:
            gens[-1].ifs.append(ast.ListComp(elt=ast.Constant(None), generators=[loop]))
        else:
            gens.append(loop)


def _nested_names(node: ast.expr, inlines: bool) -> set[str]:
    """The names the scopes nested in comprehension ``node`` use from around them."""
    scopes = _own_scopes(inlines)
    out: set[str] = set()
    todo: list[ast.AST] = [node]
    while todo:
        n = todo.pop()
        if n is not node and isinstance(n, scopes):
            # (but what the enclosing scope evaluates for it: the first iterable, the
            # defaults)
            outer = [n.generators[0].iter] if not isinstance(n, ast.Lambda) else [
                d for d in (*n.args.defaults, *n.args.kw_defaults) if d is not None]
            skip = {id(x) for o in outer for x in walk(o)}
            # (not the names it binds itself: its loop targets, its parameters)
            own = _own_targets(n, inlines) if not isinstance(n, ast.Lambda) else {
                a.arg for a in ast.walk(n.args) if isinstance(a, ast.arg)}
            out.update(x.id for x in walk(n) if isinstance(x, ast.Name)
                       and id(x) not in skip and x.id not in own)
            todo.extend(outer)
        else:
            todo.extend(ast.iter_child_nodes(n))
    return out


def _children_but(node: ast.AST, skip: ast.AST) -> list[ast.AST]:
    """The nodes right under ``node`` (and under its comprehension clauses), but ``skip``."""
    out: list[ast.AST] = []
    for c in ast.iter_child_nodes(node):
        if isinstance(c, ast.comprehension):
            out.extend(x for x in ast.iter_child_nodes(c) if x is not skip)
        elif c is not skip:
            out.append(c)
    return out


def _targets(names: list[str], ctx: ast.expr_context) -> ast.expr:
    nodes: list[ast.expr] = [ast.Name(id=v, ctx=ctx) for v in names]
    return nodes[0] if len(nodes) == 1 else ast.Tuple(elts=nodes, ctx=ctx)


def _own_reads(node: ast.expr, inlines: bool, *, inlined: bool = True) -> list[ast.Name]:
    """The names comprehension ``node`` reads in its own scope, not where a
    comprehension inlined in it binds the same name (3.12+), nor in the scopes nested
    in it (but what it evaluates for them: a first iterable, defaults); with
    ``inlined`` false, nothing of what an inlined comprehension evaluates in its loops.
    (``inlines``: the code's version inlines list, set and dict comprehensions.)"""
    scopes = _own_scopes(inlines)
    out: list[ast.Name] = []
    todo: list[tuple[ast.AST, frozenset[str]]] = [(node, frozenset())]
    while todo:
        n, hidden = todo.pop()
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Load) and n.id not in hidden:
                out.append(n)
            continue
        if n is not node and isinstance(n, scopes):
            outer = [n.generators[0].iter] if not isinstance(n, ast.Lambda) else [
                d for d in (*n.args.defaults, *n.args.kw_defaults) if d is not None]
            todo.extend((o, hidden) for o in outer)
            continue
        if n is not node and isinstance(n, ast.ListComp | ast.SetComp | ast.DictComp) \
                and inlines:
            first = n.generators[0].iter  # (read where the comprehension stands)
            todo.append((first, hidden))
            if inlined:
                inner = hidden | _own_targets(n, inlines)
                todo.extend((c, inner) for c in _children_but(n, first))
            continue
        todo.extend((c, hidden) for c in ast.iter_child_nodes(n))
    return out


_Scope: TypeAlias = "ast.GeneratorExp | ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp"


def _own_scopes(inlines: bool) -> tuple[type[_Scope], ...]:
    """The comprehensions inside a comprehension that are scopes of their own: generator
    expressions and lambdas, and list, set and dict comprehensions unless the code's
    version inlines them (3.12+: their loop targets are locals of the code around them,
    PEP 709)."""
    return _SCOPES_INLINING if inlines else _SCOPES


_SCOPES_INLINING: tuple[type[_Scope], ...] = (ast.GeneratorExp, ast.Lambda)
_SCOPES: tuple[type[_Scope], ...] = (*_SCOPES_INLINING, ast.ListComp, ast.SetComp, ast.DictComp)


def _own_targets(node: ast.expr, inlines: bool) -> set[str]:
    """The names the loops of comprehension ``node`` bind in its own scope (its loops
    and those of the comprehensions inlined in it)."""
    scopes = _own_scopes(inlines)
    out: set[str] = set()
    todo: list[ast.AST] = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.comprehension):  # (``x[i]``: ``i`` is read, not bound)
            out.update(t.id for t in walk(n.target) if isinstance(t, ast.Name)
                       and isinstance(t.ctx, ast.Store))
        if n is node or not isinstance(n, scopes):
            todo.extend(ast.iter_child_nodes(n))
    return out


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
                            arg: str, where: str = "?", *, folded: bool) -> ast.expr:
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
            test = _passes([node], folded)
            if not isinstance(test, ast.expr) or not _no_element(node):
                raise fail("condition with else")
            generators[-1].ifs += [test, ast.Constant(False)]
            element = (ast.Constant(None),) * (2 if kind == "dict" else 1)
            break
        elif isinstance(node, ast.If):
            test = node.test
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test = negate(test.operand, folded)  # ``not a not in b`` is ``a in b``
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
        inner = _continue_guards(inner, folded)
        while len(inner) > 1 and isinstance(inner[-1], ast.Continue):
            inner = inner[:-1]  # (a written ``continue`` kept at an arm's end: a no-op)
        while inner and _assigned_once(inner[0], kind, acc):
            # ``for y in [x]``: the compiler assigns the one item (3.9+)
            bind = inner.pop(0)
            assert isinstance(bind, ast.Assign)
            generators.append(ast.comprehension(
                target=bind.targets[0], iter=ast.List(elts=[bind.value], ctx=ast.Load()),
                ifs=[], is_async=0))
            inner = _continue_guards(inner, folded)
        if not inner:
            # (what followed it, the compiler dropped behind a constant false condition)
            inner = [ast.Pass()]
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


def _assigned_once(node: ast.stmt, kind: str, acc: str | None) -> bool:
    """Is ``node`` the assignment a loop over one item compiles to, not the element?"""
    return isinstance(node, ast.Assign) and len(node.targets) == 1 \
        and (kind != "dict" or _element(node, kind, acc) is None)


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


def _continue_guards(body: list[ast.stmt], folded: bool) -> list[ast.stmt]:
    """``if not c: continue`` followed by the rest is ``if c: <rest>``; so is any
    ``if``/``else`` whose arms only ``continue`` or fall through (a conditional
    expression as the filter: ``if (a if t else b)``)."""
    if len(body) >= 2 and isinstance(body[0], ast.If):
        test = _passes([body[0]], folded)
        if isinstance(test, ast.expr):
            return [ast.If(test=test, body=_continue_guards(body[1:], folded), orelse=[])]
    return body


def _no_element(node: ast.stmt) -> bool:
    """Is ``node`` only tests, ``pass`` and ``continue``?"""
    if isinstance(node, ast.If):
        return all(_no_element(s) for s in (*node.body, *node.orelse))
    return isinstance(node, ast.Pass | ast.Continue)


def _passes(stmts: list[ast.stmt], folded: bool) -> ast.expr | bool | None:
    """When flow gets through ``stmts`` rather than ``continue``: an expression, always
    (True), never (False), or None when ``stmts`` do more than that."""
    if not stmts:
        return True
    if len(stmts) > 1:  # one guard after the other: all of them pass
        first, rest = _passes(stmts[:1], folded), _passes(stmts[1:], folded)
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
    a, b = _passes(s.body, folded), _passes(s.orelse, folded)
    if a is None or b is None:
        return None
    t = s.test
    if a is b:  # the test is made, and its outcome does not matter
        if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
            t = t.operand
        # (both True or both False: each arm's expression is a node of its own)
        return ast.BoolOp(op=ast.Or() if a else ast.And(),
                          values=[t, ast.Constant(a)])  # type: ignore[arg-type]  # a bool
    if a is True and b is False:
        return t
    if a is False and b is True:
        return negate(t, folded)
    if b is False:
        return ast.BoolOp(op=ast.And(), values=[t, a])  # type: ignore[list-item]  # a is an expression here
    if a is False:
        return ast.BoolOp(op=ast.And(), values=[negate(t, folded), b])  # type: ignore[list-item]  # b is an expression here
    if a is True:
        return ast.BoolOp(op=ast.Or(), values=[t, b])  # type: ignore[list-item]  # b is an expression here
    if b is True:
        return ast.BoolOp(op=ast.Or(), values=[negate(t, folded), a])
    return ast.IfExp(test=t, body=a, orelse=b)

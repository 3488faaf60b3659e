"""PEP 695 type parameters (3.12+): ``def f[T]``, ``class C[T]``, ``type A[T] = ...``.

The compiler wraps a generic definition in a hidden function, ``<generic parameters
of NAME>``, called on the spot: it creates the type parameters with intrinsics
(``INTRINSIC_TYPEVAR``, ``..._WITH_BOUND``, ``INTRINSIC_SET_TYPEPARAM_DEFAULT`` ...),
binds them as its locals, then builds the function (``INTRINSIC_SET_FUNCTION_TYPE_PARAMS``),
the class (with ``Generic[*params]`` as a hidden last base) or the alias
(``INTRINSIC_TYPEALIAS``). Bounds, constraints, defaults and alias values are lazily
evaluated, so each is a tiny function of its own whose body is the expression.

The executor turns the intrinsics into :class:`TypeParam` / :class:`TypeAliasValue`
markers; :func:`generic_value` reads the hidden function and returns what it builds,
with its type parameters attached, for the caller to store like any definition.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from ... import bytecode
from ...codeobj import GENERIC_PREFIX
from ...errors import DecompilationError
from ..ir.exprs import Func, Slot
from ..ir.facts import SLOT, fact
from ..ir.markers import (
    ClassBuild,
    GenericBase,
    TypeAliasValue,
    TypeParam,
    clone_marker,
    param_list,
    unshared,
)

if TYPE_CHECKING:
    from ..scope import Scope
from ..ir import syntax
from ..ir.nodes import same, walk
from .annotations import is_format_check
from .idioms import scope_value


def generic_value(dec: Scope, func: Func, args: list[ast.expr]) -> ast.expr:
    """What a call of the hidden ``<generic parameters of ...>`` function builds."""
    code = func.code
    child = dec.child(code)
    stmts = _choices_folded(child.raw_statements())
    # straight-line code: the parameters, then what it builds and returns
    if not stmts or not isinstance(stmts[-1], ast.Return) or stmts[-1].value is None \
            or not all(isinstance(s, ast.Assign) for s in stmts[:-1]):
        raise DecompilationError("unrecognised type parameter scope", code_name=child.qualname)
    value = _choice_inside(unshared(stmts[-1].value))
    bound_args = dict(zip(code.co_varnames[:code.co_argcount], args, strict=False))
    if isinstance(value, Func) and getattr(value, "type_params", None) is not None:
        value = clone_marker(value)
        value.defaults = _argument(value.defaults, bound_args)
        value.kwdefaults = _argument(value.kwdefaults, bound_args)
        return value
    if isinstance(value, TypeAliasValue):
        return value
    if isinstance(value, ClassBuild):
        params = None
        assigned: dict[str, ast.expr] = {}
        for s in stmts[:-1]:
            if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                    and isinstance(s.targets[0], ast.Name):
                assigned[s.targets[0].id] = unshared(s.value)
        base = assigned.get(".generic_base")
        if isinstance(base, GenericBase):
            arg = base.params
            if isinstance(arg, ast.Name):
                arg = assigned.get(arg.id, arg)
            params = param_list(arg)
        slots = {fact(s.targets[0], SLOT, None): s.value for s in stmts[:-1]
                 if isinstance(s, ast.Assign) and len(s.targets) == 1}
        bases = [_slots_filled(b, slots) for b in value.bases]
        if params is None or not bases or not _is_name(bases[-1], ".generic_base"):
            raise DecompilationError("generic class without its Generic base",
                                     code_name=child.qualname)
        new = clone_marker(value)
        new.bases = bases[:-1]
        new.type_params = params
        return new
    raise DecompilationError("unrecognised type parameter scope", code_name=child.qualname)


def _choice_inside(value: ast.expr) -> ast.expr:
    """``C(a, ...) if t else C(b, ...)``, two builds of one class that differ in one base
    or keyword (the compiler copied the ``__build_class__`` call into each arm of a
    conditional expression there), as ``C(a if t else b, ...)``."""
    if not isinstance(value, ast.IfExp):
        return value
    body, orelse = _choice_inside(value.body), _choice_inside(value.orelse)
    if not (isinstance(body, ClassBuild) and isinstance(orelse, ClassBuild)
            and body.func.code is orelse.func.code and body.cname == orelse.cname
            and len(body.bases) == len(orelse.bases)
            and [k.arg for k in body.keywords] == [k.arg for k in orelse.keywords]):
        return value
    ours = [*body.bases, *(k.value for k in body.keywords)]
    theirs = [*orelse.bases, *(k.value for k in orelse.keywords)]
    differ = [i for i, (x, y) in enumerate(zip(ours, theirs, strict=True)) if not same(x, y)]
    if len(differ) != 1:
        return value
    (i,) = differ
    choice = ast.IfExp(test=value.test, body=ours[i], orelse=theirs[i])
    new = clone_marker(body)
    new.bases = list(body.bases)
    new.keywords = [ast.keyword(arg=k.arg, value=k.value) for k in body.keywords]
    if i < len(new.bases):
        new.bases[i] = choice
    else:
        new.keywords[i - len(new.bases)].value = choice
    return new


def _choices_folded(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """``if t: _s1 = a`` / ``else: _s1 = b`` (a conditional expression among the class's
    bases, whose ``__build_class__`` call the compiler copied into each arm) is
    ``_s1 = a if t else b``."""
    out: list[ast.stmt] = []
    for s in stmts:
        if isinstance(s, ast.If) and s.orelse:
            body, orelse = _choices_folded(s.body), _choices_folded(s.orelse)
            if len(body) == len(orelse) == 1 and all(
                    isinstance(x, ast.Assign) and len(x.targets) == 1
                    and fact(x.targets[0], SLOT, None) is not None for x in (*body, *orelse)):
                then, other = cast(ast.Assign, body[0]), cast(ast.Assign, orelse[0])
                if fact(then.targets[0], SLOT) == fact(other.targets[0], SLOT):
                    value = ast.IfExp(test=s.test, body=then.value, orelse=other.value)
                    out.append(ast.Assign(targets=then.targets, value=value))
                    continue
        out.append(s)
    return out


def _slots_filled(node: ast.expr, slots: dict[Any, ast.expr]) -> ast.expr:
    """``node`` with each stack slot ``_s<k>`` replaced by the value assigned to it."""
    if isinstance(node, Slot):
        return slots.get(node.index, node)
    if not any(isinstance(n, Slot) for n in walk(node)):
        return node
    new = copy.copy(node)
    for field in new._fields:
        value = getattr(new, field, None)
        if isinstance(value, ast.expr):
            setattr(new, field, _slots_filled(value, slots))
        elif isinstance(value, list):
            setattr(new, field, [_slots_filled(v, slots) if isinstance(v, ast.expr) else v
                                 for v in value])
    return new


def type_param_nodes(dec: Scope, params: list[TypeParam]) -> list[Any]:
    """``ast`` type parameters (``ast.TypeVar`` ...) with bounds and defaults (of a
    stand-in class where this Python's ``ast`` has none: see ``ir.syntax``)."""
    return [syntax.type_param(
        p.kind, p.pname,
        bound=_lazy(dec, p.bound) if p.kind == "TypeVar" and p.bound is not None else None,
        default=_lazy(dec, p.default, p.kind == "TypeVarTuple") if p.default is not None
        else None) for p in params]


def alias_statement(dec: Scope, target: ast.Name, alias: TypeAliasValue) -> ast.stmt:
    """``type NAME[params] = value``."""
    return syntax.type_alias(target.id, type_param_nodes(dec, alias.params),
                             _lazy(dec, alias.value))


def _lazy(dec: Scope, func: Func, starred: bool = False) -> ast.expr:
    """The expression a lazily evaluated bound/default/value function returns."""
    code = func.code
    child = dec.child(code)
    bc = bytecode.read(code)
    if starred:
        # ``*Ts = *tuple[int]`` evaluates to the one item of the unpacking
        ops = [i.op for i in bc.instrs]
        if len(ops) < 2 or ops[-2:] != ["UNPACK_SEQUENCE", "RETURN_VALUE"]:
            raise DecompilationError("unrecognised TypeVarTuple default",
                                     code_name=child.qualname)
        last = bc.instrs[-1]
        bc = replace(bc, instrs=bc.instrs[:-2] + [last], handlers=bc.handlers[:-1])
    stmts = child.region_statements(bc, [])
    if code.co_argcount == 1 and stmts and isinstance(stmts[0], ast.If) \
            and is_format_check(stmts[0]):
        stmts = stmts[1:]  # 3.14: the lazy function takes an annotation format
    value = scope_value(stmts, code.co_freevars)
    if value is None:
        raise DecompilationError("lazily evaluated type expression is not one expression",
                                 code_name=child.qualname)
    return ast.Starred(value=value, ctx=ast.Load()) if starred else value


def lazy_value(dec: Scope, code: Any) -> ast.expr:
    """The expression a lazily evaluated scope (bound, default, alias value) returns."""
    return _lazy(dec, Func(code, None, None, None, None))


def _argument(node: ast.expr | None, bound: dict[str, ast.expr]) -> ast.expr | None:
    if isinstance(node, ast.Name) and node.id in bound:
        return bound[node.id]
    return node


def _is_name(node: ast.expr | None, *idents: str) -> bool:
    return isinstance(node, ast.Name) and node.id in idents


def hidden_scope_statement(dec: Scope, code: Any) -> ast.stmt:
    """The definition a ``<generic parameters of NAME>`` code object belongs to, for
    decompiling that code object on its own. Its arguments (the defaults) come from the
    caller, so the definition gets ``...`` as stand-in defaults: the hidden scope
    compiles the same whatever they are."""
    target = code.co_name[len(GENERIC_PREFIX):-1]
    params = code.co_varnames[:code.co_argcount]
    args: list[ast.expr] = [ast.Name(id=p, ctx=ast.Load()) for p in params]
    value = generic_value(dec, Func(code, None, None, None, None), args)
    if isinstance(value, Func):
        inner = value.code
        if _is_name(value.defaults, *params):
            value.defaults = ast.Tuple(elts=[ast.Constant(...)], ctx=ast.Load())
        if _is_name(value.kwdefaults, *params) and inner.co_kwonlyargcount:
            first = inner.co_varnames[inner.co_argcount]
            value.kwdefaults = ast.Dict(keys=[ast.Constant(first)], values=[ast.Constant(...)])
    name = ast.Name(id=target, ctx=ast.Store())
    stmt = dec.renderer().definition(name, value)
    if stmt is None:
        raise DecompilationError("unrecognised type parameter scope", code_name=code.co_name)
    return stmt

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
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .. import bytecode
from ..errors import DecompilationError
from .exprs import Func, Marker, Shared

if TYPE_CHECKING:
    from .functions import CodeDecompiler

PREFIX = "<generic parameters of "

_KINDS = {
    "INTRINSIC_TYPEVAR": "TypeVar",
    "INTRINSIC_TYPEVARTUPLE": "TypeVarTuple",
    "INTRINSIC_PARAMSPEC": "ParamSpec",
    "INTRINSIC_TYPEVAR_WITH_BOUND": "TypeVar",
    "INTRINSIC_TYPEVAR_WITH_CONSTRAINTS": "TypeVar",
}


class TypeParam(Marker):
    """A type parameter being created: kind, name, lazy bound/constraints and default."""

    _fields = ()
    stable = True  # creating one has no effect; identity is kept by ``Shared``

    def __init__(self, kind: str, pname: str, bound: Func | None = None,
                 default: Func | None = None) -> None:
        super().__init__()
        self.kind = kind
        self.pname = pname
        self.bound = bound
        self.default = default


class GenericBase(Marker):
    """``Generic[*params]``: the hidden base of a generic class."""

    _fields = ("params",)

    def __init__(self, params: ast.expr) -> None:
        super().__init__()
        self.params = params


class TypeAliasValue(Marker):
    """A ``type NAME[params] = value`` alias object before it is stored."""

    _fields = ()

    def __init__(self, aname: str, params: list[TypeParam], value: Func) -> None:
        super().__init__()
        self.aname = aname
        self.params = params
        self.value = value


def intrinsic(op: str, args: list[ast.expr]) -> ast.expr | None:
    """The marker for a type-parameter intrinsic, or None for any other intrinsic."""
    if op in ("INTRINSIC_TYPEVAR", "INTRINSIC_TYPEVARTUPLE", "INTRINSIC_PARAMSPEC"):
        if len(args) == 1 and _is_str(args[0]):
            return TypeParam(_KINDS[op], args[0].value)  # type: ignore[attr-defined]
    elif op in ("INTRINSIC_TYPEVAR_WITH_BOUND", "INTRINSIC_TYPEVAR_WITH_CONSTRAINTS"):
        if _is_str(args[0]) and isinstance(args[1], Func):
            param = TypeParam("TypeVar", args[0].value, args[1])  # type: ignore[attr-defined]
            param.constraints = op.endswith("CONSTRAINTS")  # type: ignore[attr-defined]
            return param
    elif op == "INTRINSIC_SET_TYPEPARAM_DEFAULT":
        param = _unshare(args[0])
        if isinstance(param, TypeParam) and isinstance(args[1], Func):
            new = _clone(param)
            new.default = args[1]
            return new
    elif op == "INTRINSIC_SET_FUNCTION_TYPE_PARAMS":
        func, params = _unshare(args[0]), _params(args[1])
        if isinstance(func, Func) and params is not None:
            new_func = _clone(func)
            new_func.type_params = params  # type: ignore[attr-defined]
            return new_func
    elif op == "INTRINSIC_SUBSCRIPT_GENERIC":
        return GenericBase(args[0])
    elif op == "INTRINSIC_TYPEALIAS":
        items = args[0].elts if isinstance(args[0], ast.Tuple) else []
        if len(items) == 3 and _is_str(items[0]) and isinstance(items[2], Func):
            none = isinstance(items[1], ast.Constant) and items[1].value is None
            params = [] if none else _params(items[1])
            if params is not None:
                return TypeAliasValue(items[0].value, params, items[2])  # type: ignore
    return None


def generic_value(dec: CodeDecompiler, func: Func, args: list[ast.expr]) -> ast.expr:
    """What a call of the hidden ``<generic parameters of ...>`` function builds."""
    from . import cfg as cfg_mod
    from .executor import ClassBuild, Context
    from .idioms import tidy_raw
    from .inline_comprehensions import fold
    from .structure import Structurer, Unstructurable
    from .tails import merge_tails, split_clean_ups
    from .translate import Translator

    code = func.code
    child = dec.child(code)
    ctx = Context(code, child.names, make_comprehension=child.make_comprehension)
    ctx.make_generic = child.make_generic
    ir = Translator(cfg_mod.build(split_clean_ups(merge_tails(fold(bytecode.read(code), child)))), ctx, []).run()
    try:
        stmts = tidy_raw(Structurer(ir).run())
    except Unstructurable as exc:
        raise DecompilationError(f"type parameter scope: {exc}",
                                 code_name=child.qualname) from None
    # straight-line code: the parameters, then what it builds and returns
    if not stmts or not isinstance(stmts[-1], ast.Return) or stmts[-1].value is None \
            or not all(isinstance(s, ast.Assign) for s in stmts[:-1]):
        raise DecompilationError("unrecognised type parameter scope", code_name=child.qualname)
    value = _unshare(stmts[-1].value)
    bound_args = dict(zip(code.co_varnames[:code.co_argcount], args, strict=False))
    if isinstance(value, Func) and getattr(value, "type_params", None) is not None:
        value = _clone(value)
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
                assigned[s.targets[0].id] = _unshare(s.value)
        base = assigned.get(".generic_base")
        if isinstance(base, GenericBase):
            arg = base.params
            if isinstance(arg, ast.Name):
                arg = assigned.get(arg.id, arg)
            params = _params(arg)
        bases = list(value.bases)
        if params is None or not bases or not _is_name(bases[-1], ".generic_base"):
            raise DecompilationError("generic class without its Generic base",
                                     code_name=child.qualname)
        new = _clone(value)
        new.bases = bases[:-1]
        new.type_params = params  # type: ignore[attr-defined]
        return new
    raise DecompilationError("unrecognised type parameter scope", code_name=child.qualname)


def type_param_nodes(dec: CodeDecompiler, params: list[TypeParam]) -> list[Any]:
    """``ast`` type parameters (``ast.TypeVar`` ...) with bounds and defaults."""
    out = []
    for p in params:
        node_type = getattr(ast, p.kind)
        fields: dict[str, Any] = {"name": p.pname}
        if p.kind == "TypeVar":
            fields["bound"] = _lazy(dec, p.bound) if p.bound is not None else None
        if "default_value" in node_type._fields:
            fields["default_value"] = (_lazy(dec, p.default, p.kind == "TypeVarTuple")
                                       if p.default is not None else None)
        elif p.default is not None:
            raise DecompilationError("type parameter default on a version without them")
        out.append(node_type(**fields))
    return out


def alias_statement(dec: CodeDecompiler, target: ast.Name, alias: TypeAliasValue) -> ast.stmt:
    """``type NAME[params] = value``."""
    return ast.TypeAlias(name=ast.Name(id=target.id, ctx=ast.Store()),  # type: ignore
                         type_params=type_param_nodes(dec, alias.params),
                         value=_lazy(dec, alias.value))


def _lazy(dec: CodeDecompiler, func: Func, starred: bool = False) -> ast.expr:
    """The expression a lazily evaluated bound/default/value function returns."""
    from .annotations import is_format_check
    from .functions import lambda_body

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
    value = lambda_body(stmts)
    if value is None:
        raise DecompilationError("lazily evaluated type expression is not one expression",
                                 code_name=child.qualname)
    return ast.Starred(value=value, ctx=ast.Load()) if starred else value


def lazy_value(dec: CodeDecompiler, code: Any) -> ast.expr:
    """The expression a lazily evaluated scope (bound, default, alias value) returns."""
    return _lazy(dec, Func(code, None, None, None, None))


def _argument(node: ast.expr | None, bound: dict[str, ast.expr]) -> ast.expr | None:
    if isinstance(node, ast.Name) and node.id in bound:
        return bound[node.id]
    return node


def _params(node: ast.expr) -> list[TypeParam] | None:
    node = _unshare(node)
    if isinstance(node, ast.Tuple):
        items = [_unshare(e) for e in node.elts]
        if all(isinstance(e, TypeParam) for e in items):
            return items  # type: ignore[return-value]
    return None


def _clone(node: Any) -> Any:
    """A shallow copy of a marker (``copy.copy`` would call its ``__init__``)."""
    new = type(node).__new__(type(node))
    new.__dict__.update(node.__dict__)
    return new


def _unshare(node: Any) -> Any:
    while isinstance(node, Shared):
        node = node.value
    return node


def _is_str(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _is_name(node: ast.expr | None, *idents: str) -> bool:
    return isinstance(node, ast.Name) and node.id in idents


def hidden_scope_statement(dec: CodeDecompiler, code: Any) -> ast.stmt:
    """The definition a ``<generic parameters of NAME>`` code object belongs to, for
    decompiling that code object on its own. Its arguments (the defaults) come from the
    caller, so the definition gets ``...`` as stand-in defaults: the hidden scope
    compiles the same whatever they are."""
    target = code.co_name[len(PREFIX):-1]
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

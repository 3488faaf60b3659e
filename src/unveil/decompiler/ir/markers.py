"""The decompiler's own nodes: what the executor leaves in expression trees and statement
lists for the later phases (rendering, structuring) to turn into plain ``ast``.

Expression-level helpers every phase shares (``Marker``, ``Func``, ``Shared``...) live in
:mod:`.exprs`; the markers here are the ones that stand for a whole construct being
built: an import, a class, a PEP 695 generic, an exception-handling step.
"""

from __future__ import annotations

import ast
import copy
import sys
import warnings
from types import CodeType
from typing import Any, Literal, TypeAlias, TypeVar

from .exprs import Func, Marker, Shared, rebuilt


class ImportValue(Marker):
    """The module pushed by ``IMPORT_NAME`` while its names are stored."""

    _fields = ("module", "fromlist", "level")

    def __init__(self, module: str, fromlist: Any, level: int) -> None:
        self.module = module
        self.fromlist = fromlist
        self.level = level
        self.aliases: list[ast.alias] = []


class ImportItem(Marker):
    """``IMPORT_FROM name`` of an :class:`ImportValue` (or a submodule for ``import a.b as c``)."""

    _fields = ("source", "attr")

    def __init__(self, source: ast.expr, attr: str) -> None:
        self.source = source
        self.attr = attr


class ClassBuild(Marker):
    """``__build_class__(func, name, *bases, **keywords)`` before it is stored."""

    _fields = ("func", "cname", "bases", "keywords")

    def __init__(self, func: Func, cname: str, bases: list[ast.expr],
                 keywords: list[ast.keyword]) -> None:
        self.func = func
        self.cname = cname
        self.bases = bases
        self.keywords = keywords
        self.type_params: list[TypeParam] | None = None  # PEP 695, see generics.py


#: what an :class:`ExcMarker` marks
MarkerKind: TypeAlias = Literal["push_exc_info", "pop_except", "with", "annotate",
                                "setup_annotations"]


class ExcMarker(ast.stmt):
    """A statement-level marker: ``push_exc_info``, ``pop_except``, ``with`` (set-up)...
    (It sets its fields itself, as a :class:`~.exprs.Marker` does.)"""

    _fields = ("kind", "value", "flag")

    def __init__(self, kind: MarkerKind, value: ast.expr | None = None,
                 flag: bool = False) -> None:
        self.kind: MarkerKind = kind
        self.value = value
        self.flag = flag

    def __reduce__(self) -> tuple[Any, ...]:
        return rebuilt, (type(self),), self.__dict__


def is_marker(stmt: ast.stmt, kind: MarkerKind) -> bool:
    """Is ``stmt`` the marker ``kind`` (``push_exc_info``, ``pop_except``...)?"""
    return isinstance(stmt, ExcMarker) and stmt.kind == kind


# ---------------------------------------------------------------- PEP 695 generics

#: the class a PEP 695 type parameter is made with
TypeParamKind: TypeAlias = Literal["TypeVar", "TypeVarTuple", "ParamSpec"]

_KINDS: dict[str, TypeParamKind] = {
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

    def __init__(self, kind: TypeParamKind, pname: str, bound: Func | None = None,
                 default: Func | None = None) -> None:
        self.kind: TypeParamKind = kind
        self.pname = pname
        self.bound = bound
        self.default = default
        self.constraints = False  # ``bound`` gives the constraints (``T: (int, str)``)


class GenericBase(Marker):
    """``Generic[*params]``: the hidden base of a generic class."""

    _fields = ("params",)

    def __init__(self, params: ast.expr) -> None:
        self.params = params


class TypeAliasValue(Marker):
    """A ``type NAME[params] = value`` alias object before it is stored."""

    _fields = ()

    def __init__(self, aname: str, params: list[TypeParam], value: Func) -> None:
        self.aname = aname
        self.params = params
        self.value = value


def intrinsic(op: str, args: list[ast.expr]) -> ast.expr | None:
    """The marker for a type-parameter intrinsic, or None for any other intrinsic."""
    if op in ("INTRINSIC_TYPEVAR", "INTRINSIC_TYPEVARTUPLE", "INTRINSIC_PARAMSPEC"):
        if len(args) == 1 and _is_str(args[0]):
            return TypeParam(_KINDS[op], args[0].value)  # type: ignore[attr-defined]  # a str
    elif op in ("INTRINSIC_TYPEVAR_WITH_BOUND", "INTRINSIC_TYPEVAR_WITH_CONSTRAINTS"):
        if _is_str(args[0]) and isinstance(args[1], Func):
            param = TypeParam("TypeVar", args[0].value, args[1])  # type: ignore[attr-defined]  # a str constant (_is_str)
            param.constraints = op.endswith("CONSTRAINTS")
            return param
    elif op == "INTRINSIC_SET_TYPEPARAM_DEFAULT":
        param = unshared(args[0])
        if isinstance(param, TypeParam) and isinstance(args[1], Func):
            new = clone_marker(param)
            new.default = args[1]
            return new
    elif op == "INTRINSIC_SET_FUNCTION_TYPE_PARAMS":
        func, params = unshared(args[0]), param_list(args[1])
        if isinstance(func, Func) and params is not None:
            new_func = clone_marker(func)
            new_func.type_params = params
            return new_func
    elif op == "INTRINSIC_SUBSCRIPT_GENERIC":
        return GenericBase(args[0])
    elif op == "INTRINSIC_TYPEALIAS":
        items = args[0].elts if isinstance(args[0], ast.Tuple) else []
        if len(items) == 3 and _is_str(items[0]) and isinstance(items[2], Func):
            none = isinstance(items[1], ast.Constant) and items[1].value is None
            params = [] if none else param_list(items[1])
            if params is not None:
                return TypeAliasValue(items[0].value,  # type: ignore[attr-defined]  # a str
                                      params, items[2])
    return None


def param_list(node: ast.expr) -> list[TypeParam] | None:
    node = unshared(node)
    if isinstance(node, ast.Tuple):
        items = [unshared(e) for e in node.elts]
        if all(isinstance(e, TypeParam) for e in items):
            return items
    return None


_M = TypeVar("_M", bound=ast.AST)


def clone_marker(node: _M) -> _M:
    """A shallow copy of a marker (``copy.copy`` would call its ``__init__``)."""
    new = type(node).__new__(type(node))
    new.__dict__.update(node.__dict__)
    return new


#: values ``copy.deepcopy`` hands back as they are (its atomic types that trees hold)
_ATOMS = frozenset({type(None), bool, int, float, complex, str, bytes, type(...), CodeType})
#: per node class: the fields that ``deepcopy``'s rebuilding of a node sets when the node
#: lacks them (3.13+: ``ast`` classes are rebuilt by calling them, which gives missing
#: optional fields their defaults); ``None``: copied by ``deepcopy`` itself
_REBUILT_SETS: dict[type, frozenset[str] | None] = {}


def _rebuilt_sets(cls: type) -> frozenset[str] | None:
    reduce: object = cls.__reduce__
    if reduce in (Marker.__reduce__, ExcMarker.__reduce__):
        return frozenset()  # (``rebuilt``: a bare instance, then its ``__dict__``)
    if reduce is not ast.AST.__reduce__ or hasattr(cls, "__deepcopy__") \
            or hasattr(cls, "__setstate__"):
        return None
    if sys.version_info < (3, 13):
        return frozenset()  # (``cls()`` sets nothing, then the ``__dict__`` is copied)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (required fields missing)
        return frozenset(cls().__dict__)


def copy_tree(value: Any, memo: dict[int, Any]) -> Any:
    """``copy.deepcopy(value, memo)`` of statement and expression trees, about twice as
    fast: nodes, lists and atoms are copied here (a node or list reached twice is copied
    once, as ``deepcopy`` does); anything else, and a node that ``deepcopy`` would not copy
    field for field, is left to ``deepcopy`` with the same ``memo``."""
    cls = value.__class__
    if cls in _ATOMS:
        return value
    known = memo.get(id(value), memo)
    if known is not memo:
        return known
    if cls is list:
        new_list: list[Any] = []
        memo[id(value)] = new_list
        new_list.extend([copy_tree(v, memo) for v in value])
        return new_list
    if isinstance(value, ast.AST):
        sets = _REBUILT_SETS.get(cls, memo)
        if sets is memo:
            sets = _REBUILT_SETS[cls] = _rebuilt_sets(cls)
        fields = value.__dict__
        if sets is not None and fields.keys() >= sets:
            new = cls.__new__(cls)
            memo[id(value)] = new
            new.__dict__.update({k: copy_tree(v, memo) for k, v in fields.items()})
            return new
    return copy.deepcopy(value, memo)


def unshared(node: Any) -> Any:
    while isinstance(node, Shared):
        node = node.value
    return node


def _is_str(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)



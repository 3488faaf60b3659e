"""Nodes of syntax newer than this Python, for writing another version's code.

PEP 695 type parameters and aliases (3.12+), PEP 696 defaults (3.13+) and PEP 750
t-strings (3.14+) have ``ast`` classes only on the Pythons that have the syntax. A 3.12
file decompiled by 3.11 still needs them: where this Python's ``ast`` has the class with
every field a node needs, the node is of that class; otherwise it is of a stand-in class
of the same name and fields, which the printer (``render.emit``) writes as the newer
Python writes it. A stand-in is never compiled by this Python (it could not compile the
syntax anyway).
"""

from __future__ import annotations

import ast

_TYPE_PARAM_FIELDS = {"TypeVar": ("name", "bound", "default_value"),
                      "ParamSpec": ("name", "default_value"),
                      "TypeVarTuple": ("name", "default_value")}


def _stand_in(name: str, base: type[ast.AST], fields: tuple[str, ...]) -> type[ast.AST]:
    return type(name, (base,), {"_fields": fields, "__module__": __name__,
                                "__doc__": f"``ast.{name}`` of a newer Python."})


_TYPE_PARAM_BASE: type[ast.AST] = getattr(ast, "type_param", ast.AST)
_STAND_INS: dict[str, type[ast.AST]] = {
    name: _stand_in(name, _TYPE_PARAM_BASE, fields)
    for name, fields in _TYPE_PARAM_FIELDS.items()}
#: ``type NAME[params] = value`` (the host's class from 3.12)
TypeAlias: type[ast.AST] = getattr(ast, "TypeAlias", None) \
    or _stand_in("TypeAlias", ast.stmt, ("name", "type_params", "value"))
#: a t-string, ``t"..."`` (PEP 750, the host's class from 3.14)
TemplateStr: type[ast.AST] = getattr(ast, "TemplateStr", None) \
    or _stand_in("TemplateStr", ast.expr, ("values",))
#: a t-string's ``{value!r:spec}``; ``str`` is the expression's text
Interpolation: type[ast.AST] = getattr(ast, "Interpolation", None) \
    or _stand_in("Interpolation", ast.expr, ("value", "str", "conversion", "format_spec"))


def type_param(kind: str, name: str, bound: ast.expr | None = None,
               default: ast.expr | None = None) -> ast.AST:
    """A type parameter: ``kind`` is ``TypeVar``, ``ParamSpec`` or ``TypeVarTuple``;
    ``bound`` (a ``TypeVar``'s bound or constraints), ``default`` (PEP 696)."""
    fields: dict[str, object] = {"name": name}
    if kind == "TypeVar":
        fields["bound"] = bound
    own = getattr(ast, kind, None)
    if own is not None and (default is None or "default_value" in own._fields):
        if "default_value" in own._fields:
            fields["default_value"] = default
        return own(**fields)  # type: ignore[no-any-return, unused-ignore]  # an ast class
    fields["default_value"] = default
    return _STAND_INS[kind](**fields)


def type_alias(name: str, params: list[ast.AST], value: ast.expr) -> ast.stmt:
    """``type name[params] = value``."""
    node: ast.stmt = TypeAlias(name=ast.Name(id=name, ctx=ast.Store()),  # type: ignore[call-arg, assignment, unused-ignore]  # ast.TypeAlias's fields (3.12+) or the stand-in's
                               type_params=params, value=value)
    return node

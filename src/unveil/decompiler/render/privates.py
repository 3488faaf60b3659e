"""Private names (``__x`` inside a class): the compiler stores them mangled, ``_C__x``.

Bytecode holds only the mangled spelling. Inside a ``class`` statement the source can
spell it as written, ``__x``, and the compiler mangles it back to the same name, so
:func:`unmangle` rewrites the identifiers of every class body (and of the functions in
it, but not of nested classes, which mangle with their own name).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from types import CodeType
from typing import TypeGuard, cast

from ...codeobj import is_code


def mangle(owner: str, name: str) -> str:
    """``name`` as the compiler stores it inside class ``owner`` (CPython's rule)."""
    if not name.startswith("__") or name.endswith("__") or "." in name:
        return name
    stripped = owner.lstrip("_")
    if not stripped:
        return name
    return f"_{stripped}{name}"


def unmangled(owner: str, name: str) -> str:
    """The spelling that mangles to ``name`` inside class ``owner`` (``name`` if none)."""
    prefix = f"_{owner.lstrip('_')}"
    if prefix == "_" or not name.startswith(prefix + "__"):
        return name
    short = name[len(prefix):]
    return short if mangle(owner, short) == name else name


def unmangle(tree: ast.AST, code: CodeType | None = None) -> None:
    """Write private names as the source had them inside each ``class`` statement.
    ``code``: what ``tree`` was decompiled from, whose names tell when there are none."""
    if code is not None and not _mangled_names(code):
        return
    todo = [tree]
    while todo:  # (statements only: a class statement is never inside an expression)
        node = todo.pop()
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                _rename(stmt, node.name)
        for field in _blocks(type(node)):
            value = getattr(node, field, None)
            if isinstance(value, list):
                todo.extend(n for n in value if isinstance(n, _HOLDS_STATEMENTS))


_HOLDS_STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)
#: the fields of a statement (or a module, handler, case) that hold statements, handlers
#: or cases, in their order
_BLOCK_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})
_BLOCKS: dict[type[ast.AST], tuple[str, ...]] = {}


def _blocks(kind: type[ast.AST]) -> tuple[str, ...]:
    """The fields of a ``kind`` node that may hold statements (looked up once a type)."""
    fields = _BLOCKS.get(kind)
    if fields is None:
        fields = _BLOCKS[kind] = tuple(f for f in kind._fields if f in _BLOCK_FIELDS)
    return fields


def _mangled_names(code: CodeType) -> bool:
    """Whether a name of ``code`` or of code nested in it (or a string constant: a
    keyword's name) has a mangled name's shape, ``_C__x``."""
    codes = [code]
    for c in codes:  # (the list grows while it is read: the nested code, in any order)
        names = (c.co_name, *c.co_names, *c.co_varnames, *c.co_cellvars, *c.co_freevars)
        if any(map(_shaped, filter(_is_str, names))):
            return True
        consts = c.co_consts
        if any(map(_shaped, filter(_is_str, consts))):
            return True
        for k in consts:
            if isinstance(k, tuple | frozenset):
                if _shaped_inside(k):
                    return True
            elif not isinstance(k, str) and is_code(k):
                codes.append(k)
    return False


#: Whether a string has a mangled name's shape: ``_``, not ``_`` again, then ``__``
#: somewhere after it (a match or None); with ``_is_str`` (``isinstance(x, str)``), the
#: test runs in C for each name
_shaped = re.compile(r"_[^_].*__", re.DOTALL).match
_is_str = cast("Callable[[object], TypeGuard[str]]", str.__instancecheck__)


def _shaped_inside(items: tuple[object, ...] | frozenset[object]) -> bool:
    """Whether a string in ``items`` (or in a tuple or frozenset inside) has a mangled
    name's shape."""
    groups = [items]
    for group in groups:  # (the list grows while it is read)
        if any(map(_shaped, filter(_is_str, group))):
            return True
        groups.extend(k for k in group if isinstance(k, tuple | frozenset))
    return False


def _rename(node: ast.AST, owner: str) -> None:
    mangled = f"_{owner.lstrip('_')}__"
    if mangled == "___":
        return  # (an owner of underscores only mangles nothing)

    def fix(name: str) -> str:
        return unmangled(owner, name) if name.startswith(mangled) else name

    todo = [node]
    while todo:
        n = todo.pop()
        if type(n) is ast.Name:  # (the commonest node; its context holds no names)
            n.id = fix(n.id)
            continue
        if isinstance(n, _NAMING):  # (one test for the nodes that name nothing)
            if isinstance(n, ast.Name):
                n.id = fix(n.id)
            elif isinstance(n, ast.Attribute):
                n.attr = fix(n.attr)
            elif isinstance(n, ast.arg):
                n.arg = fix(n.arg)
            elif isinstance(n, ast.keyword) and n.arg is not None:
                n.arg = fix(n.arg)
            elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
                n.name = fix(n.name)
            elif isinstance(n, ast.Global | ast.Nonlocal):
                n.names = [fix(x) for x in n.names]
            elif isinstance(n, ast.ExceptHandler) and n.name is not None:
                n.name = fix(n.name)
            if isinstance(n, ast.ClassDef):
                # its name, decorators, bases and keywords belong to the enclosing class
                n.name = fix(n.name)
                todo.extend([*n.decorator_list, *n.bases, *n.keywords])
                continue  # (its body mangles with its own name: unmangle() visits it)
        for field in n._fields:  # (``ast.iter_child_nodes``, less contexts and operators)
            value = getattr(n, field, None)
            if isinstance(value, ast.AST):
                if type(value) not in _NO_FIELDS:
                    todo.append(value)
            elif isinstance(value, list):
                todo.extend([v for v in value
                             if isinstance(v, ast.AST) and type(v) not in _NO_FIELDS])


#: The nodes that name something (``_rename`` fixes the name) or hold a class
_NAMING = (ast.Name, ast.Attribute, ast.arg, ast.keyword, ast.FunctionDef, ast.AsyncFunctionDef,
           ast.Global, ast.Nonlocal, ast.ExceptHandler, ast.ClassDef)
#: Contexts and operators: nodes without fields, so without names
_NO_FIELDS = frozenset(c for base in (ast.expr_context, ast.boolop, ast.operator, ast.unaryop,
                                      ast.cmpop) for c in base.__subclasses__() if not c._fields)

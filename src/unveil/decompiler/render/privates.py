"""Private names (``__x`` inside a class): the compiler stores them mangled, ``_C__x``.

Bytecode holds only the mangled spelling. Inside a ``class`` statement the source can
spell it as written, ``__x``, and the compiler mangles it back to the same name, so
:func:`unmangle` rewrites the identifiers of every class body (and of the functions in
it, but not of nested classes, which mangle with their own name).
"""

from __future__ import annotations

import ast
from types import CodeType

from ...codeobj import is_code, iter_code_objects


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
        todo.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, _HOLDS_STATEMENTS))


_HOLDS_STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)


def _mangled_names(code: CodeType) -> bool:
    """Whether a name of ``code`` or of code nested in it (or a string constant: a
    keyword's name) has a mangled name's shape, ``_C__x``."""
    def shaped(s: object) -> bool:
        return isinstance(s, str) and s[:1] == "_" and s[1:2] != "_" and "__" in s[2:]

    for entry in iter_code_objects(code):
        c = entry.code
        if shaped(c.co_name) or any(shaped(n) for n in (
                *c.co_names, *c.co_varnames, *c.co_cellvars, *c.co_freevars)):
            return True
        todo = [k for k in c.co_consts if not is_code(k)]
        while todo:
            k = todo.pop()
            if shaped(k):
                return True
            if isinstance(k, tuple | frozenset):
                todo.extend(k)
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
        todo.extend(ast.iter_child_nodes(n))

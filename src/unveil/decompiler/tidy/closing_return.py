"""3.8/3.9: a function's last statement is a ``return`` or not as its code says.

Those compilers close a function whose last statement is not a ``return`` with a
``return None`` that nothing may reach (``bytecode.last_statement_returns``), so
``if c: return a`` + ``return b`` and ``if c: return a`` / ``else: return b`` compile
differently there (alike on 3.10+). :func:`fit_closing_return` moves the statements
after a final ``if``, ``try`` or loop whose other ways out leave the function into its
``else`` (the last statement is then not a ``return``), or takes them out of it.
"""

from __future__ import annotations

import ast
from typing import Any

from ..ir.facts import WRITTEN_ELSE, WRITTEN_FLAT, fact
from ..ir.nodes import leaves_function, loop_breaks


def fit_closing_return(body: list[ast.stmt], returns: bool | None,
                       dead: tuple[str, Any] | None = None) -> None:
    """End the function body ``body`` in a ``return`` if ``returns``, else not (None:
    either), where an ``else`` clause can be added or taken out without changing what
    runs; ``dead``: what the ``return`` the code ends in, that nothing reaches, returns
    (``bytecode.dead_final_return``), written after the rest."""
    if returns is None or not body:
        return
    if returns:
        _flatten_last(body)
        if dead is not None and not isinstance(body[-1], ast.Return):
            kind, value = dead
            body.append(ast.Return(value=ast.Constant(value) if kind == "const"
                                   else ast.Name(id=value, ctx=ast.Load())))
    elif isinstance(body[-1], ast.Return) or _loop_else_returns(body[-1]):
        _into_else(body)
    elif isinstance(body[-1], ast.If):
        target = _last_if(body[-1])
        if target is not None:  # (nothing falls out of it: its ``else`` was ``return None``)
            if fact(target, WRITTEN_FLAT, False):
                # (the layout says it had none: the ``return None`` after it was written,
                # in the ``else`` of a statement before it)
                body.append(ast.Return(value=ast.Constant(value=None)))
                _into_else(body)
                if not isinstance(body[-1], ast.Return):
                    return
                body.pop()
            target.orelse = [ast.Return(value=ast.Constant(value=None))]


def _into_else(body: list[ast.stmt]) -> None:
    """``...; S; rest`` (``rest`` ending in a ``return``) -> ``...; S else: rest`` for the
    last statement ``S`` that ``rest`` can be the ``else`` of (an ``if`` whose arms all
    leave the function, a ``try`` whose handlers do)."""
    for k in range(len(body) - 2, -1, -1):
        s = body[k]
        if isinstance(s, ast.If) and not fact(s, WRITTEN_FLAT, False) \
                and (target := _last_if(s)) is not None:  # (not one the layout says has none)
            target.orelse = body[k + 1:]
            del body[k + 1:]
            return
        if isinstance(s, ast.Try) and not s.orelse and not s.finalbody and s.handlers \
                and all(leaves_function(h.body) for h in s.handlers):
            s.orelse = body[k + 1:]
            del body[k + 1:]
            return
        # (any other statement goes into the ``else`` with the return: the code after
        # a statement whose ways out all leave the function is what its ``else`` runs;
        # a loop's ``else`` is not it: nothing jumps to its end, so the compiler's
        # closing return after a return there is dropped)


def _loop_else_returns(s: ast.stmt) -> bool:
    """Is ``s`` a loop without ``break`` whose ``else`` clause ends in a ``return`` (its
    end is no jump target, so the compiler's closing return after it is dropped)?"""
    return isinstance(s, ast.For | ast.AsyncFor | ast.While) and bool(s.orelse) \
        and isinstance(s.orelse[-1], ast.Return) and not loop_breaks(s.body)


def _last_if(s: ast.If) -> ast.If | None:
    """The ``if`` of an ``if``/``elif`` chain without ``else`` whose arms all leave the
    function (None: none such)."""
    while True:
        if not leaves_function(s.body):
            return None
        if not s.orelse:
            return s
        if len(s.orelse) == 1 and isinstance(s.orelse[0], ast.If):
            s = s.orelse[0]
            continue
        return None


def _flatten_last(body: list[ast.stmt]) -> None:
    """``if c: ...return`` / ``else: rest`` at the end -> ``if c: ...`` + ``rest`` while
    the end is not a ``return``."""
    while body and not isinstance(body[-1], ast.Return):
        s = body[-1]
        if isinstance(s, ast.If) and s.orelse and leaves_function(s.body):
            if fact(s, WRITTEN_ELSE, False) and len(s.orelse) > 1 \
                    and isinstance(s.orelse[-1], ast.Return):
                # (the layout says an ``else`` was written: it ends before the return)
                body.append(s.orelse.pop())
                return
            rest, s.orelse = s.orelse, []
            body.extend(rest)
        elif isinstance(s, ast.Try) and s.orelse and not s.finalbody and s.handlers \
                and all(leaves_function(h.body) for h in s.handlers):
            rest, s.orelse = s.orelse, []
            body.extend(rest)
        elif isinstance(s, ast.For | ast.AsyncFor | ast.While) and s.orelse \
                and not loop_breaks(s.body):
            rest, s.orelse = s.orelse, []
            body.extend(rest)
        else:
            return

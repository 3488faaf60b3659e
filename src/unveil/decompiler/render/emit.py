"""Print plain ``ast`` as source: ``ast.unparse``, with tuples written as people write them.

``ast.unparse`` parenthesises a tuple wherever it appears as a whole value
(``return (a, b)``, ``x = (1, 2)``, ``for k, v in (pairs)``) and a generator expression
that is a call's only argument (``f((x for x in y))``); the printer here leaves the
parentheses out where the grammar does not need them. Everything else is the standard
library's own unparser.
"""

from __future__ import annotations

import ast
import copy
import dis
from typing import Any, TypeGuard, cast

try:  # 3.14 moved the unparser out of ``ast``
    from _ast_unparse import Unparser as _Base  # type: ignore[import-not-found]  # 3.14+
    from _ast_unparse import _Precedence
except ImportError:  # pragma: no cover - depends on the version
    _Base = getattr(ast, "_Unparser", None)
    _Precedence = getattr(ast, "_Precedence", None)


def _bare_tuple(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Tuple) and bool(node.elts) and not any(
        isinstance(e, ast.Starred) for e in node.elts)


if _Base is not None and _Precedence is not None:
    class _Printer(_Base):
        def get_type_comment(self, node: ast.AST) -> str | None:
            # (the base reads ``lineno``, which the decompiler's nodes do not have)
            comment = getattr(node, "type_comment", None)
            if self._type_ignores and hasattr(node, "lineno"):
                comment = self._type_ignores.get(node.lineno) or comment
            return None if comment is None else f" # type: {comment}"

        def _write_constant(self, value: Any) -> None:
            if isinstance(value, int) and not isinstance(value, bool):
                try:
                    repr(value)
                except ValueError:  # over ``sys.get_int_max_str_digits()``: hex has no limit
                    self.write(hex(value))
                    return
            super()._write_constant(value)

        def visit_Return(self, node: ast.Return) -> None:
            if _bare_tuple(node.value):
                self.set_precedence(_Precedence.TUPLE, node.value)
            super().visit_Return(node)

        def visit_Assign(self, node: ast.Assign) -> None:
            if _bare_tuple(node.value):
                self.set_precedence(_Precedence.TUPLE, node.value)
            super().visit_Assign(node)

        def visit_Call(self, node: ast.Call) -> None:
            if len(node.args) == 1 and not node.keywords \
                    and isinstance(node.args[0], ast.GeneratorExp):
                # ``f(x for x in y)``: the call's parentheses are the generator's
                gen = node.args[0]
                self.set_precedence(_Precedence.ATOM, node.func)
                self.traverse(node.func)
                with self.delimit("(", ")"):
                    self.traverse(gen.elt)
                    for comp in gen.generators:
                        self.traverse(comp)
                return
            super().visit_Call(node)

        def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
            # older unparsers get some backslash and quote mixes in f-strings wrong: check
            # the text parses back to the same string, else spell the f-string out
            if getattr(self, "_plain", False):
                super().visit_JoinedStr(node)
                return
            printer = _Printer()
            printer._plain = True
            printer.traverse(node)
            text = "".join(printer._source)
            same = _same_code(text, node)
            if same:
                self.write(text)
            else:
                self.write("(")
                self.traverse(_spelled_out(node))
                self.write(")")

        def visit_BinOp(self, node: ast.BinOp) -> None:
            if isinstance(node.op, ast.Pow) and _negative_number(node.left):
                node.left = _signed(node.left)  # ``(-1) ** n``, not ``-1 ** n``
            super().visit_BinOp(node)

        def visit_Attribute(self, node: ast.Attribute) -> None:
            if _negative_number(node.value):
                node.value = _signed(node.value)  # ``(-1).real``, not ``-1 .real``
            super().visit_Attribute(node)

        def visit_AugAssign(self, node: ast.AugAssign) -> None:
            if _bare_tuple(node.value):
                self.set_precedence(_Precedence.TUPLE, node.value)
            super().visit_AugAssign(node)
else:  # pragma: no cover
    _Printer = None  # type: ignore[misc, assignment]  # no unparser to subclass


def _negative_number(node: ast.expr) -> TypeGuard[ast.Constant]:
    """A constant int or float whose literal starts with a minus sign."""
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) \
        and repr(node.value).startswith("-")


def _signed(node: ast.Constant) -> ast.expr:
    """``-x`` as the unary minus it is, so the printer knows its precedence."""
    return ast.copy_location(
        ast.UnaryOp(op=ast.USub(), operand=ast.copy_location(
            ast.Constant(-cast("int | float", node.value)), node)),
        node)


def _same_code(text: str, node: ast.expr) -> bool:
    """Whether ``text`` compiles to what ``node`` compiles to (constant folding makes
    ``-1`` and ``Constant(-1)`` alike, which comparing trees would not; 3.14 folds
    ``x[1:-1]`` of constants into one slice constant only where ``-1`` is a constant
    already, so the trees, with negative numbers folded, are compared first)."""
    try:
        if _folded_dump(ast.parse(text, mode="eval").body) == _folded_dump(node):
            return True
    except SyntaxError:
        return False
    try:
        expected = compile(ast.fix_missing_locations(ast.Expression(body=node)), "<f-string>",
                           "eval", dont_inherit=True)
    except (SyntaxError, ValueError, TypeError):  # e.g. ``await`` inside: compare trees
        try:
            return ast.dump(ast.parse(text, mode="eval").body) == ast.dump(node)
        except SyntaxError:
            return False
    try:
        parsed = compile(text, "<f-string>", "eval", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return _code_key(parsed) == _code_key(expected)


def _folded_dump(node: ast.AST) -> str:
    """``ast.dump`` with ``-<number>`` read as the constant it folds to."""
    class _Fold(ast.NodeTransformer):
        def visit_UnaryOp(self, op: ast.UnaryOp) -> ast.AST:
            self.generic_visit(op)
            if isinstance(op.op, ast.USub) and isinstance(op.operand, ast.Constant) \
                    and type(op.operand.value) in (int, float, complex):
                return ast.Constant(-cast("int | float | complex", op.operand.value))
            return op

    return ast.dump(_Fold().visit(copy.deepcopy(node)))


def _code_key(code: Any) -> tuple:
    """What ``code`` does, by instruction (not by constant index: 3.14 appends the
    constants it folds, so ``-1`` written and ``-1`` given differ there only)."""
    return tuple((i.opname, _code_key(i.argval) if hasattr(i.argval, "co_code")
                  else (type(i.argval), i.argval)) for i in dis.get_instructions(code)) \
        + (code.co_varnames, code.co_freevars)


def _spelled_out(node: ast.JoinedStr) -> ast.expr:
    """``'lit' + format(conv(value), spec) + ...``: what an f-string evaluates to."""
    parts: list[ast.expr] = []
    for v in node.values:
        if isinstance(v, ast.FormattedValue):
            value = v.value
            conv = {115: "str", 114: "repr", 97: "ascii"}.get(v.conversion or -1)
            if conv is not None:
                value = ast.Call(func=ast.Name(id=conv, ctx=ast.Load()), args=[value],
                                 keywords=[])
            spec: ast.expr = ast.Constant("")
            if v.format_spec is not None:
                spec = _spelled_out(v.format_spec) if isinstance(v.format_spec, ast.JoinedStr) \
                    else v.format_spec
            parts.append(ast.Call(func=ast.Name(id="format", ctx=ast.Load()),
                                  args=[value, spec], keywords=[]))
        else:
            parts.append(v)
    if not parts:
        return ast.Constant("")
    out = parts[0]
    if not isinstance(out, ast.Constant):
        out = ast.BinOp(left=ast.Constant(""), op=ast.Add(), right=out)
    for p in parts[1:]:
        out = ast.BinOp(left=out, op=ast.Add(), right=p)
    return out


def unparse(node: Any) -> str:
    """Source text of ``node`` (no locations needed)."""
    if _Printer is None:
        return ast.unparse(node)
    return _Printer().visit(node)

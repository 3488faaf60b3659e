"""Print plain ``ast`` as source: ``ast.unparse``, with tuples written as people write them.

``ast.unparse`` parenthesises a tuple wherever it appears as a whole value
(``return (a, b)``, ``x = (1, 2)``, ``for k, v in (pairs)``) and a generator expression
that is a call's only argument (``f((x for x in y))``); the printer here leaves the
parentheses out where the grammar does not need them. Everything else is the standard
library's own unparser.
"""

from __future__ import annotations

import ast
import dis
from typing import Any, TypeGuard, cast

from ..ir import syntax
from .printable import escaped as _escaped
from .printable import printable, string_repr

try:  # 3.14 moved the unparser out of ``ast``
    from _ast_unparse import Unparser as _Base  # type: ignore[import-not-found]  # 3.14+
    from _ast_unparse import _Precedence
except ImportError:  # pragma: no cover - depends on the version
    _Base = getattr(ast, "_Unparser", None)
    _Precedence = getattr(ast, "_Precedence", None)


_ALL_QUOTES = ("'", '"', '"""', "'''")
_MULTI_QUOTES = ('"""', "'''")


def _literal(string: str, quote_types: tuple[str, ...] | list[str] = _ALL_QUOTES,
             escape_special_whitespace: bool = False) -> tuple[str, list[str]]:
    """The body of a string literal for ``string`` with as few escapes as can be, and the
    quotes that may enclose it (the rules of 3.11's ``ast.unparse``, with what
    :func:`.printable.printable` prints)."""
    def escape(c: str) -> str:
        if not escape_special_whitespace and c in "\n\t":
            return c
        if c == "\\" or not printable(c):
            return _escaped(c)
        return c

    if string.isascii() and "\\" not in string and (
            string.isprintable() if escape_special_whitespace
            else string.replace("\n", "").replace("\t", "").isprintable()):
        escaped = string  # (nothing to escape: the common case, without a call per character)
    else:
        escaped = "".join(map(escape, string))
    possible = list(quote_types)
    if "\n" in escaped:
        possible = [q for q in possible if q in _MULTI_QUOTES]
    possible = [q for q in possible if q not in escaped]
    if not possible:  # (then the repr, in a quote it allows)
        text = string_repr(string)
        return text[1:-1], [next((q for q in quote_types if text[0] in q), text[0])]
    if escaped:
        possible.sort(key=lambda q: q[0] == escaped[-1])  # ('''"''' rather than """\"""")
        if possible[0][0] == escaped[-1]:
            escaped = escaped[:-1] + "\\" + escaped[-1]
    return escaped, possible


def _avoiding_backslashes(string: str) -> str:
    """A string literal for ``string`` without a backslash where one can do without."""
    body, quotes = _literal(string)
    return f"{quotes[0]}{body}{quotes[0]}"


def _bare_tuple(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Tuple) and bool(node.elts) and not any(
        isinstance(e, ast.Starred) for e in node.elts)


class _Delimit:
    """``with printer.delimit(start, end):`` as the base's generator does it (``start``
    on entry, ``end`` on a normal exit), without a generator per use."""

    __slots__ = ("printer", "start", "end")

    def __init__(self, printer: Any, start: str, end: str) -> None:
        self.printer, self.start, self.end = printer, start, end

    def __enter__(self) -> None:
        self.printer.write(self.start)

    def __exit__(self, kind: object, value: object, tb: object) -> None:
        if kind is None:
            self.printer.write(self.end)


class _Block:
    """``with printer.block(extra=...):`` as the base's generator does it: ``:`` and
    ``extra`` on entry, one more indentation level inside."""

    __slots__ = ("printer", "extra")

    def __init__(self, printer: Any, extra: str | None) -> None:
        self.printer, self.extra = printer, extra

    def __enter__(self) -> None:
        printer = self.printer
        printer.write(":")
        if self.extra:
            printer.write(self.extra)
        printer._indent += 1

    def __exit__(self, kind: object, value: object, tb: object) -> None:
        if kind is None:
            self.printer._indent -= 1


class _Nothing:
    """``contextlib.nullcontext()``, one for all."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, value: object, tb: object) -> None:
        return None


_NOTHING = _Nothing()
_NAME = ast.Name


if _Base is not None and _Precedence is not None:
    class _Printer(_Base):
        """The standard library's unparser with people's tuples and generator arguments,
        f-strings by 3.11's rules, and newer syntax (PEP 695, t-strings) written also
        where this Python's unparser has none. (Its dispatch and its ``with`` helpers
        are the base's, done without a ``getattr`` per node and a generator per use.)"""

        _source: list[str]  # (the base's text so far)
        _visitors: dict[type, Any] = {}  # (node type -> visitor, per printer class)

        def __init_subclass__(cls, **kwargs: Any) -> None:
            super().__init_subclass__(**kwargs)
            cls._visitors = {}

        def traverse(self, node: Any) -> None:
            kind = type(node)
            if kind is _NAME:  # (``visit_Name`` writes the id: the commonest node)
                self._source.append(node.id)
                return
            visitor = self._visitors.get(kind)
            if visitor is None:  # (the base's ``NodeVisitor.visit``, looked up once)
                visitor = self._visitors[kind] = _Printer._traverse_items \
                    if issubclass(kind, list) else getattr(
                        type(self), "visit_" + kind.__name__, type(self).generic_visit)
            visitor(self, node)

        def _traverse_items(self, nodes: list[Any]) -> None:
            """``traverse`` of a list: of each item in turn."""
            for item in nodes:
                self.traverse(item)

        def delimit(self, start: str, end: str) -> _Delimit:
            return _Delimit(self, start, end)

        def delimit_if(self, start: str, end: str, condition: bool) -> _Delimit | _Nothing:
            return _Delimit(self, start, end) if condition else _NOTHING

        def require_parens(self, precedence: Any, node: ast.AST) -> _Delimit | _Nothing:
            return _Delimit(self, "(", ")") if self.get_precedence(node) > precedence \
                else _NOTHING

        def block(self, *, extra: str | None = None) -> _Block:
            return _Block(self, extra)

        def get_type_comment(self, node: ast.AST) -> str | None:
            # (the base reads ``lineno``, which the decompiler's nodes do not have)
            comment = getattr(node, "type_comment", None)
            if self._type_ignores and hasattr(node, "lineno"):
                comment = self._type_ignores.get(node.lineno) or comment
            return None if comment is None else f" # type: {comment}"

        def _str_literal_helper(self, string: str, *,
                                quote_types: tuple[str, ...] | list[str] = _ALL_QUOTES,
                                escape_special_whitespace: bool = False
                                ) -> tuple[str, list[str]]:
            # (docstrings: what prints is the same on every host)
            return _literal(string, quote_types, escape_special_whitespace)

        def _write_constant(self, value: Any) -> None:
            if self._in_fstring and isinstance(value, str):
                self.write(_avoiding_backslashes(value))
                return
            if isinstance(value, str) and not getattr(self, "_avoid_backslashes", False):
                self.write(string_repr(value))
                return
            if isinstance(value, int) and not isinstance(value, bool):
                try:
                    text = repr(value)  # (what the base writes for an int)
                except ValueError:  # over ``sys.get_int_max_str_digits()``: hex has no limit
                    text = hex(value)
                self.write(text)
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

        _plain = False  # (writing an f-string: not checked again)
        _in_fstring = False  # (writing an f-string's expression part: no backslashes)

        def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
            # every Python writes an f-string here as 3.11 does: quotes that differ from
            # those around it, no backslash in an expression part (so the text is the
            # same whatever Python decompiles, and compiles on 3.8 to 3.14); check the text
            # parses back to the same string, else spell the f-string out
            if self._plain:
                self._joined_str(node)
                return
            printer = type(self)()
            printer._plain = True
            try:
                printer.traverse(node)
                text: str | None = "".join(printer._source)
            except ValueError:  # (an expression part that needs a backslash)
                text = None
            if text is not None and _same_code(text, node):
                self.write(text)
            else:
                self.write("(")
                self.traverse(_spelled_out(node))
                self.write(")")

        def _joined_str(self, node: ast.JoinedStr) -> None:
            self.write("f")
            if self._in_fstring:
                self.write(_avoiding_backslashes(self._fstring_inner(node)))
                return
            parts = [(self._fstring_inner(v), isinstance(v, ast.Constant)) for v in node.values]
            written: list[str] = []
            quotes = list(_ALL_QUOTES)
            for text, constant in parts:
                text, allowed = _literal(text, quotes, escape_special_whitespace=constant)
                written.append(text)
                if set(allowed).isdisjoint(quotes):  # (no quote suits every part: repr's)
                    quotes = ["'''"]
                    written = [repr('"' + t)[2:-1] for t, _ in parts]
                    break
                quotes = allowed
            self.write(f"{quotes[0]}{''.join(written)}{quotes[0]}")

        def _fstring_inner(self, node: ast.expr) -> str:
            if isinstance(node, ast.JoinedStr):  # (the f-string, or a format spec)
                return "".join(self._fstring_inner(v) for v in node.values)
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                return node.value.replace("{", "{{").replace("}", "}}")
            if isinstance(node, ast.FormattedValue):
                inner = type(self)()
                inner._plain = inner._in_fstring = True
                inner.set_precedence(_Precedence.TEST.next(), node.value)
                expr = inner.visit(node.value)
                if "\\" in expr:
                    raise ValueError("Unable to avoid backslash in f-string expression part")
                text = "{" + (" " if expr.startswith("{") else "") + expr
                if node.conversion != -1:
                    text += f"!{chr(node.conversion)}"
                if node.format_spec:
                    text += ":" + self._fstring_inner(node.format_spec)
                return text + "}"
            raise ValueError(f"Unexpected node inside JoinedStr, {node!r}")

        def visit_BinOp(self, node: ast.BinOp) -> None:
            if isinstance(node.op, ast.Pow) and _negative_number(node.left):
                node.left = _signed(node.left)  # ``(-1) ** n``, not ``-1 ** n``
            super().visit_BinOp(node)

        def visit_Attribute(self, node: ast.Attribute) -> None:
            if isinstance(node.value, ast.Constant) and _negative_number(node.value):
                node.value = _signed(node.value)  # ``(-1).real``, not ``-1 .real``
            super().visit_Attribute(node)

        def visit_AugAssign(self, node: ast.AugAssign) -> None:
            if _bare_tuple(node.value):
                self.set_precedence(_Precedence.TUPLE, node.value)
            super().visit_AugAssign(node)

        # PEP 695 type parameters and aliases, PEP 696 defaults: written as 3.13 writes
        # them, also where this Python's printer has none (a newer file's stand-in
        # nodes, see ``syntax``)
        def visit_TypeVar(self, node: Any) -> None:
            self.write(node.name)
            if node.bound:
                self.write(": ")
                self.traverse(node.bound)
            self._type_param_default(node)

        def visit_TypeVarTuple(self, node: Any) -> None:
            self.write("*" + node.name)
            self._type_param_default(node)

        def visit_ParamSpec(self, node: Any) -> None:
            self.write("**" + node.name)
            self._type_param_default(node)

        def _type_param_default(self, node: Any) -> None:
            default = getattr(node, "default_value", None)
            if default:
                self.write(" = ")
                self.traverse(default)

        def visit_TypeAlias(self, node: Any) -> None:
            self.fill("type ")
            self.traverse(node.name)
            self._type_params(node.type_params)
            self.write(" = ")
            self.traverse(node.value)

        def _type_params(self, type_params: list[ast.AST] | None) -> None:
            if type_params:
                with self.delimit("[", "]"):
                    self.interleave(lambda: self.write(", "), self.traverse, type_params)

        if not hasattr(_Base, "_type_params_helper"):  # (before 3.12: no type parameters)
            def _function_helper(self, node: Any, fill_suffix: str) -> None:
                self.maybe_newline()
                for deco in node.decorator_list:
                    self.fill("@")
                    self.traverse(deco)
                self.fill(fill_suffix + " " + node.name)
                self._type_params(getattr(node, "type_params", None))
                with self.delimit("(", ")"):
                    self.traverse(node.args)
                if node.returns:
                    self.write(" -> ")
                    self.traverse(node.returns)
                with self.block(extra=self.get_type_comment(node)):
                    self._write_docstring_and_traverse_body(node)

            def visit_ClassDef(self, node: ast.ClassDef) -> None:
                self.maybe_newline()
                for deco in node.decorator_list:
                    self.fill("@")
                    self.traverse(deco)
                self.fill("class " + node.name)
                self._type_params(getattr(node, "type_params", None))
                with self.delimit_if("(", ")", condition=bool(node.bases or node.keywords)):
                    self.interleave(lambda: self.write(", "), self.traverse,
                                    [*node.bases, *node.keywords])
                with self.block():
                    self._write_docstring_and_traverse_body(node)

        if not hasattr(_Base, "visit_TemplateStr"):  # (before 3.14: no t-strings)
            # a 3.14 file's t-strings, written by 3.14's rules (its ``_write_ftstring``)
            def visit_TemplateStr(self, node: Any) -> None:
                self.write("t")
                parts: list[tuple[str, bool]] = []
                for value in node.values:
                    saved: list[str] = self._source
                    self._source = []  # (a buffer of its own: 3.10's has no buffered())
                    try:
                        self._template_inner(value)
                        text = "".join(self._source)
                    finally:
                        self._source = saved
                    parts.append((text, isinstance(value, ast.Constant)))
                self._template_parts(parts)

            def _template_parts(self, parts: list[tuple[str, bool]]) -> None:
                out: list[str] = []
                quotes = list(_ALL_QUOTES)
                fallback = False
                for value, constant in parts:
                    if constant:
                        value, allowed = _literal(value, quotes, escape_special_whitespace=True)
                        if set(allowed).isdisjoint(quotes):
                            fallback = True
                            break
                        quotes = allowed
                    else:
                        if "\n" in value:
                            quotes = [q for q in quotes if q in _MULTI_QUOTES]
                        quotes = [q for q in quotes if q not in value] or quotes
                    out.append(value)
                if fallback:  # (no quote fits every part: the repr's, in triple quotes)
                    quotes = ["'''"]
                    out = [repr('"' + value)[2:-1] if constant else value
                           for value, constant in parts]
                self.write(f"{quotes[0]}{''.join(out)}{quotes[0]}")

            def _template_inner(self, node: Any, spec: bool = False) -> None:
                if isinstance(node, ast.JoinedStr):
                    for part in node.values:
                        self._template_inner(part, spec)
                elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                    text = node.value.replace("{", "{{").replace("}", "}}")
                    if spec:
                        text = text.replace("\\", "\\\\").replace("'", "\\'") \
                            .replace('"', '\\"').replace("\n", "\\n")
                    self.write(text)
                elif isinstance(node, ast.FormattedValue | syntax.Interpolation):
                    field: Any = node  # (a stand-in's fields are not typed)
                    source = getattr(field, "str", None)
                    with self.delimit("{", "}"):
                        if source is None:
                            inner = type(self)()
                            inner.set_precedence(_Precedence.TEST.next(), field.value)
                            source = inner.visit(field.value)
                        if source.startswith("{"):
                            self.write(" ")  # (``{ {``: not an escaped brace)
                        self.write(source)
                        if field.conversion != -1:
                            self.write(f"!{chr(field.conversion)}")
                        if field.format_spec:
                            self.write(":")
                            self._template_inner(field.format_spec, spec=True)
                else:
                    raise ValueError(f"unexpected node inside a t-string: {node!r}")

    class _Printer310(_Printer):
        """3.10's code written as 3.10's ``ast.unparse`` writes it, on any Python (the text
        is the one 3.10 gives): every tuple in parentheses, a walrus bare where a tuple may
        stand, ``lambda :`` without parameters, a subscript's tuple with a star in
        parentheses."""

        def visit_Tuple(self, node: ast.Tuple) -> None:
            with self.delimit("(", ")"):
                self.items_view(self.traverse, node.elts)

        def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
            with self.require_parens(_Precedence.TUPLE, node):
                self.set_precedence(_Precedence.ATOM, node.target, node.value)
                self.traverse(node.target)
                self.write(" := ")
                self.traverse(node.value)

        def visit_Lambda(self, node: ast.Lambda) -> None:
            with self.require_parens(_Precedence.TEST, node):
                self.write("lambda ")
                self.traverse(node.args)
                self.write(": ")
                self.set_precedence(_Precedence.TEST, node.body)
                self.traverse(node.body)

        def visit_Subscript(self, node: ast.Subscript) -> None:
            index = node.slice
            if isinstance(index, ast.Tuple) and any(isinstance(e, ast.Starred)
                                                    for e in index.elts):
                self.set_precedence(_Precedence.ATOM, node.value)
                self.traverse(node.value)
                with self.delimit("[", "]"):
                    self.traverse(index)
                return
            super().visit_Subscript(node)
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
    already, so the trees, with negative numbers folded and empty f-string parts left
    out, are compared first)."""
    try:
        if _folded_alike(ast.parse(text, mode="eval").body, node):
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


def _folded_alike(a: ast.AST, b: ast.AST) -> bool:
    """Whether ``ast.dump`` tells the same of ``a`` and ``b`` (types, fields, constants by
    type and repr), with ``-<number>`` read as the constant it folds to and empty f-string
    parts left out (3.12+ keeps one where a format spec ends with a replacement field,
    ``f"{x:<{w}}"``, which earlier versions do not). Read only: neither is changed."""
    number = _number(a)
    if number is not None or _number(b) is not None:  # (a constant, or a negated one)
        other = _number(b)
        if number is None or other is None:
            return False
        return type(number) is type(other) and repr(number) == repr(other) \
            and _constant_kind(a) == _constant_kind(b)
    if isinstance(a, ast.Constant) or isinstance(b, ast.Constant):  # (not a number)
        return isinstance(a, ast.Constant) and isinstance(b, ast.Constant) \
            and type(a.value) is type(b.value) and repr(a.value) == repr(b.value) \
            and getattr(a, "kind", None) == getattr(b, "kind", None)
    if type(a).__name__ != type(b).__name__ or len(a._fields) != len(b._fields):
        return False
    for name_a, name_b in zip(a._fields, b._fields, strict=True):
        x, y = _dumped_field(a, name_a), _dumped_field(b, name_b)
        if isinstance(x, ast.AST) or isinstance(y, ast.AST):
            if not (isinstance(x, ast.AST) and isinstance(y, ast.AST) and _folded_alike(x, y)):
                return False
        elif isinstance(x, list) or isinstance(y, list):
            if not (isinstance(x, list) and isinstance(y, list) and len(x) == len(y)):
                return False
            for p, q in zip(x, y, strict=True):
                if isinstance(p, ast.AST) or isinstance(q, ast.AST):
                    if not (isinstance(p, ast.AST) and isinstance(q, ast.AST)
                            and _folded_alike(p, q)):
                        return False
                elif not _same_repr(p, q):
                    return False
        elif not _same_repr(x, y):
            return False
    return True


def _dumped_field(node: ast.AST, name: str) -> object:
    """The field ``name`` of ``node`` as :func:`_folded_alike` compares it."""
    value = getattr(node, name, None)
    if isinstance(node, ast.JoinedStr) and name == "values":
        return [v for v in node.values if not (isinstance(v, ast.Constant) and v.value == "")]
    return value


def _same_repr(x: object, y: object) -> bool:
    """``repr(x) == repr(y)`` (two strings have the same repr only when equal)."""
    if type(x) is str and type(y) is str:
        return x == y
    return repr(x) == repr(y)


def _constant_kind(node: ast.AST) -> object:
    """What the dump of a (folded) constant shows besides its value: a ``Constant``'s
    ``kind``, None for a negated number."""
    return getattr(node, "kind", None) if isinstance(node, ast.Constant) else None


def _number(node: ast.AST) -> int | float | complex | None:
    """The number ``node`` is, negations folded (None: not a number)."""
    if isinstance(node, ast.Constant):
        value = node.value
        return value if isinstance(value, int | float | complex) \
            and type(value) is not bool else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _number(node.operand)
        return None if value is None else -value
    return None


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


def unparse(node: Any, version: tuple[int, int] | None = None) -> str:
    """Source text of ``node`` (no locations needed), written for the code of ``version``
    (by default this Python's): 3.10's as 3.10 writes it."""
    if _Printer is None:
        return ast.unparse(node)
    printer = _Printer310() if version is not None and version < (3, 11) else _Printer()
    return printer.visit(node)

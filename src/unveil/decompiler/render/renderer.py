"""Turn the decompiler's trees into plain ``ast`` that ``ast.unparse`` can print.

Custom nodes become source forms: stack slots become ``_s<k>`` variables, a shared
value becomes an assignment expression where it is first evaluated and its name
elsewhere, constants without a literal form become references the caller can bind,
and function objects become lambdas or ``def`` statements (through callbacks).
Traversal follows Python's evaluation order, so the assignment expression always
comes before the uses of its name.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from types import CodeType, UnionType
from typing import Any, TypeAlias, cast

from ...codeobj import HOST_VERSION
from ...errors import DecompilationError
from ..ir.exprs import (
    Cell,
    ExcMatch,
    Func,
    Iterator,
    Marker,
    MatchCase,
    MethodSelf,
    Names,
    Null,
    Shared,
    Slot,
    Special,
    UnpackItem,
    float_constant,
    set_items,
)
from ..ir.facts import (
    AS_TESTED,
    BIND_FIRST,
    COUNT,
    DISPLAY,
    EXIT_SELF,
    EXPLICIT,
    FLIPPED,
    IMPLICIT,
    INPLACE,
    LINE,
    POSITION,
    SLOT,
    TARGETS,
    WALRUS,
    WRITTEN_ELSE,
    WRITTEN_FLAT,
    attach,
    fact,
)
from ..ir.markers import ClassBuild, ExcMarker, ImportItem, ImportValue, TypeAliasValue
from ..ir.nodes import LOAD, STORE, no_arguments
from .primitives import primitive
from .privates import mangle

_LITERAL_TYPES = (str, bytes, int, float, complex, bool, type(None), type(Ellipsis))
_Target: TypeAlias = "ast.Name | ast.Attribute | ast.Subscript"  # what a statement stores to
_NAME = ast.Name


class Renderer:
    """Render statements of one code object."""

    def __init__(self, names: Names, slot_prefix: str | None = None,
                 make_lambda: Callable[[Func], ast.expr] | None = None,
                 make_def: Callable[[Func, str, list[ast.expr]], ast.stmt] | None = None,
                 make_class: Callable[[ClassBuild, str, list[ast.expr]], ast.stmt] | None = None,
                 make_alias: Callable[[ast.Name, Any], ast.stmt] | None = None,
                 constant: Callable[[Any], ast.expr] | None = None,
                 code_name: str = "?", special_names: dict[int, str] | None = None,
                 exact_constant: Callable[[Any], ast.expr | None] | None = None,
                 private_owner: str | None = None,
                 version: tuple[int, int] = HOST_VERSION) -> None:
        self.names = names
        #: the CPython version of the code rendered (a primitive's error messages are its)
        self.version = version
        #: the class whose body this is: ``def __f`` in it stores ``_Class__f``
        self.private_owner = private_owner
        self.slot_prefix = names.slot_prefix if slot_prefix is None else slot_prefix
        self.make_lambda = make_lambda
        self.make_def = make_def
        self.make_class = make_class
        self.make_alias = make_alias
        self.constant = constant
        self.exact_constant = exact_constant  # (a constant the source spells as a call)
        self.code_name = code_name
        self.special_names = special_names  # the state-machine fallback names them all
        self.counts: dict[int, int] = {}
        self.seen: set[int] = set()
        self.hoisted: list[ast.stmt] = []

    # ------------------------------------------------------------ entry points

    def body(self, stmts: list[ast.stmt], shares: bool = True) -> list[ast.stmt]:
        """``stmts`` rendered; ``shares``: they may hold ``Shared`` values."""
        self.counts = {}
        if shares:
            _count_shared(stmts, self.counts)
        return self.stmts(stmts)

    def stmts(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        hoisted = self.hoisted  # (a statement's hoisted definitions go before it)
        for s in stmts:
            mark = len(hoisted)
            rendered = self.stmt(s)
            if len(hoisted) > mark:
                out.extend(hoisted[mark:])
                del hoisted[mark:]
            if rendered is None:
                continue
            if isinstance(rendered, list):
                out.extend(rendered)
            else:
                # (facts are instance attributes: ``hasattr`` without its exception)
                if _LINE not in rendered.__dict__ and _LINE in s.__dict__:
                    attach(rendered, line=fact(s, LINE, None))  # the source line
                out.append(rendered)
        return out

    def fail(self, message: str) -> DecompilationError:
        return DecompilationError(message, code_name=self.code_name)

    # ------------------------------------------------------------ statements

    def stmt(self, s: ast.stmt) -> ast.stmt | list[ast.stmt] | None:
        kind = type(s)
        method = _STATEMENTS.get(kind)
        if method is None:
            method = _STATEMENTS[kind] = _statement_renderer(kind)
        return method(self, s)

    def s_ExcMarker(self, s: ExcMarker) -> ast.stmt | None:
        if s.kind == "setup_annotations":
            return None
        if s.kind == "annotate":
            return s  # the module or class body reads it back
        raise self.fail(f"unmatched {s.kind.replace('_', ' ')}")

    def s_Assign(self, s: ast.Assign) -> ast.stmt:
        if len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            made = self.definition(s.targets[0], s.value)
            if made is not None:
                return made
        value = self.expr(s.value)
        targets = [self.target(t) for t in s.targets]
        return _copy_pos(ast.Assign(targets, value), s)

    def s_AugAssign(self, s: ast.AugAssign) -> ast.stmt:
        target = self.target(s.target)
        return _copy_pos(ast.AugAssign(cast(_Target, target), s.op,
                                       self.expr(s.value)), s)

    def s_Expr(self, s: ast.Expr) -> ast.stmt:
        return _copy_pos(ast.Expr(self.expr(s.value)), s)

    def s_Return(self, s: ast.Return) -> ast.stmt:
        if s.value is None or isinstance(s.value, Cell) or (
                isinstance(s.value, ast.Constant) and s.value.value is None):
            # (a class body returns its cell)
            return _copy_pos(ast.Return(None), s)
        return _copy_pos(ast.Return(self.expr(s.value)), s)

    def s_Raise(self, s: ast.Raise) -> ast.stmt:
        return ast.Raise(exc=None if s.exc is None else self.expr(s.exc),
                         cause=None if s.cause is None else self.expr(s.cause))

    def s_Delete(self, s: ast.Delete) -> ast.stmt:
        return ast.Delete(targets=[self.target(t) for t in s.targets])

    def s_If(self, s: ast.If) -> ast.stmt:
        match = self.match_stmt(s)
        if match is not None:
            return match
        test = self.expr(s.test)
        node = ast.If(test=test, body=self.stmts(s.body) or [ast.Pass()],
                      orelse=self.stmts(s.orelse))
        if fact(s, WRITTEN_ELSE, False):
            attach(node, written_else=True)
        elif fact(s, WRITTEN_FLAT, False):
            attach(node, written_flat=True)
        return attach(node, as_tested=True) if fact(s, AS_TESTED, False) else node

    def s_While(self, s: ast.While) -> ast.stmt:
        test = self.expr(s.test)
        return ast.While(test=test, body=self.stmts(s.body) or [ast.Pass()],
                         orelse=self.stmts(s.orelse))

    def s_For(self, s: ast.For | ast.AsyncFor) -> ast.stmt:
        it = self.expr(s.iter, iterable=True)
        target = self.target(s.target)
        return type(s)(target=target, iter=it, body=self.stmts(s.body) or [ast.Pass()],
                       orelse=self.stmts(s.orelse))

    def s_With(self, s: ast.With | ast.AsyncWith) -> ast.stmt:
        items = [ast.withitem(context_expr=self.expr(i.context_expr),
                              optional_vars=None if i.optional_vars is None
                              else self.target(i.optional_vars)) for i in s.items]
        return type(s)(items=items, body=self.stmts(s.body) or [ast.Pass()])

    def s_Try(self, s: ast.Try) -> ast.stmt:  # (or a TryStar: the same fields)
        handlers = []
        for h in s.handlers:
            handlers.append(ast.ExceptHandler(
                type=None if h.type is None else self.expr(h.type), name=h.name,
                body=self.stmts(h.body) or [ast.Pass()]))
        return type(s)(body=self.stmts(s.body) or [ast.Pass()],
                       handlers=handlers, orelse=self.stmts(s.orelse),
                       finalbody=self.stmts(s.finalbody))

    def s_Match(self, s: ast.Match) -> ast.stmt:
        return ast.Match(subject=self.expr(s.subject),
                         cases=[ast.match_case(pattern=c.pattern,
                                               guard=None if c.guard is None
                                               else self.expr(c.guard),
                                               body=self.stmts(c.body) or [ast.Pass()])
                                for c in s.cases])

    def s_kept(self, s: ast.stmt) -> ast.stmt:
        return s  # (a definition, an import, ...: already plain)

    def s_AnnAssign(self, s: ast.AnnAssign) -> ast.stmt:
        return ast.AnnAssign(target=cast(_Target, self.target(s.target)),
                             annotation=self.expr(s.annotation),
                             value=None if s.value is None else self.expr(s.value),
                             simple=s.simple)

    def s_Assert(self, s: ast.Assert) -> ast.stmt:
        return ast.Assert(test=self.expr(s.test),
                          msg=None if s.msg is None else self.expr(s.msg))

    def s_unknown(self, s: ast.stmt) -> ast.stmt:
        raise self.fail(f"cannot render statement {type(s).__name__}")

    def match_stmt(self, s: ast.If) -> ast.Match | None:
        """``if <case matches>: ... else: ...`` as ``match subject: case ...: ...``; a
        guard is the rest of an ``and`` test."""
        test, body, orelse = s.test, s.body, s.orelse
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) \
                and isinstance(test.operand, MatchCase):
            test, body, orelse = test.operand, orelse, body
        guard: ast.expr | None = None
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) \
                and isinstance(test.values[0], MatchCase):
            rest = test.values[1:]
            guard = rest[0] if len(rest) == 1 else ast.BoolOp(ast.And(), rest)
            test = test.values[0]
        if not isinstance(test, MatchCase):
            return None
        subject = self.expr(test.subject)
        cases = [ast.match_case(pattern=test.pattern,
                                guard=None if guard is None else self.expr(guard),
                                body=self.stmts(body) or [ast.Pass()])]
        rendered_else = self.stmts(orelse)
        if rendered_else:
            cases.append(ast.match_case(pattern=ast.MatchAs(), guard=None, body=rendered_else))
        return ast.Match(subject=subject, cases=cases)

    def r_MatchCase(self, node: MatchCase) -> ast.expr:
        raise self.fail("a match case tested outside an if statement")

    def definition(self, target: ast.Name, value: ast.expr) -> ast.stmt | None:
        """``name = <function or class>`` as a ``def``/``class`` statement, with decorators."""
        decorators: list[ast.expr] = []
        inner = value
        while isinstance(inner, ast.Call) and len(inner.args) == 1 and not inner.keywords \
                and isinstance(inner.args[0], Func | ClassBuild | ast.Call):
            decorators.append(inner.func)
            inner = inner.args[0]
        if isinstance(inner, Func) and self.make_def is not None:
            code: CodeType = inner.code
            if self.stored_as(code.co_name) == target.id and code.co_name != "<lambda>":
                return self.make_def(inner, code.co_name, [self.expr(d) for d in decorators])
        if isinstance(inner, ClassBuild) and self.make_class is not None \
                and self.stored_as(inner.cname) == target.id:
            return self.make_class(inner, inner.cname, [self.expr(d) for d in decorators])
        if isinstance(inner, TypeAliasValue) and not decorators and inner.aname == target.id \
                and self.make_alias is not None:
            return self.make_alias(target, inner)
        return None

    def stored_as(self, name: str) -> str:
        """The name a ``def``/``class`` statement called ``name`` stores to here."""
        return name if self.private_owner is None else mangle(self.private_owner, name)

    def target(self, node: ast.expr) -> ast.expr:
        if isinstance(node, ast.Name):
            return ast.Name(self.slot_name(node) if fact(node, SLOT, None) is not None
                            else node.id, node.ctx)
        if isinstance(node, ast.Attribute):
            return ast.Attribute(self.expr(node.value), node.attr, node.ctx)
        if isinstance(node, ast.Subscript):
            return ast.Subscript(self.expr(node.value),
                                 self.subscript_slice(node.slice), node.ctx)
        if isinstance(node, ast.Tuple | ast.List):
            return type(node)(elts=[self.target(e) for e in node.elts], ctx=node.ctx)
        if isinstance(node, ast.Starred):
            return ast.Starred(self.target(node.value), node.ctx)
        raise self.fail(f"cannot render target {type(node).__name__}")

    def slot_name(self, node: ast.Name) -> str:
        return f"{self.slot_prefix}{getattr(node, 'slot', None)}"

    # ------------------------------------------------------------ expressions

    def expr(self, node: ast.expr, iterable: bool = False) -> ast.expr:
        kind = type(node)
        if kind is _NAME:  # (``r_Name``, for the commonest node, without a call)
            return _NAME(node.id, LOAD)  # type: ignore[attr-defined]  # a Name
        method = _RENDERERS.get(kind, _UNKNOWN)
        if method is _UNKNOWN:
            method = _RENDERERS[kind] = getattr(Renderer, "r_" + kind.__name__, None)
        if method is not None:
            return method(self, node)
        if isinstance(node, Marker):
            raise self.fail(f"internal value {type(node).__name__} left in the output")
        return self.generic(node)

    def generic(self, node: ast.expr) -> ast.expr:
        new = type(node).__new__(type(node))
        for field in node._fields:
            setattr(new, field, self.field(getattr(node, field, None)))
        return _copy_place(new, node)

    def field(self, value: Any) -> Any:
        """A field's value rendered: an expression, a list of expressions, keywords and
        comprehensions (anything else as it is)."""
        if isinstance(value, ast.expr):
            return self.expr(value)
        if isinstance(value, list):
            return [self.expr(v) if isinstance(v, ast.expr) else
                    self.keyword(v) if isinstance(v, ast.keyword) else
                    self.comprehension(v) if isinstance(v, ast.comprehension) else v
                    for v in value]
        return value

    def r_Attribute(self, node: ast.Attribute) -> ast.expr:
        # (``generic``'s work for the commonest nodes it would get, without the loop)
        return _copy_place(ast.Attribute(self.field(node.value), node.attr, node.ctx), node)

    def r_Call(self, node: ast.Call) -> ast.expr:
        return _copy_place(ast.Call(self.field(node.func), self.field(node.args),
                                    self.field(node.keywords)), node)

    def keyword(self, kw: ast.keyword) -> ast.keyword:
        return ast.keyword(kw.arg, self.expr(kw.value))

    def comprehension(self, c: ast.comprehension) -> ast.comprehension:
        return ast.comprehension(self.target(c.target), self.expr(c.iter),
                                 [self.expr(i) for i in c.ifs], c.is_async)

    def r_Name(self, node: ast.Name) -> ast.expr:
        return ast.Name(node.id, LOAD)

    def r_Constant(self, node: ast.Constant) -> ast.expr:
        return self.literal(node.value, in_set=bool(fact(node, DISPLAY, False)))

    def subscript_slice(self, node: ast.expr) -> ast.expr:
        """The key of a subscript: slices in their ``a:b`` form (3.14 folds constant ones:
        ``x[1:]`` loads ``slice(1, None, None)``), in a tuple too."""
        if isinstance(node, ast.Constant) and isinstance(node.value, slice):
            sl = node.value
            return ast.Slice(None if sl.start is None else self.literal(sl.start),
                             None if sl.stop is None else self.literal(sl.stop),
                             None if sl.step is None else self.literal(sl.step))
        if isinstance(node, ast.Slice):
            return ast.Slice(*(None if part is None else self.expr(part)
                               for part in (node.lower, node.upper, node.step)))
        if isinstance(node, ast.Tuple) and any(isinstance(e, ast.Slice) for e in node.elts):
            return ast.Tuple([self.subscript_slice(e) for e in node.elts], LOAD)
        return self.expr(node)

    def r_Slice(self, node: ast.Slice) -> ast.expr:
        # a slice anywhere but a subscript's key (kept as a value: Dynamo's code) is the
        # object ``slice(a, b)``; ``a:b`` is only syntax there. Of constants, it is one
        # constant (the code builds it without calling the global ``slice``)
        parts = [None if part is None else self.expr(part)
                 for part in (node.lower, node.upper, node.step)]
        if self.exact_constant is not None and all(
                p is None or isinstance(p, ast.Constant) and type(p.value) in _LITERAL_TYPES
                for p in parts):
            name = self.exact_constant(slice(*(
                None if p is None else p.value  # type: ignore[attr-defined]  # a Constant
                for p in parts)))
            if name is not None:
                return name
        return _nameable(ast.Slice(*parts))

    def r_Subscript(self, node: ast.Subscript) -> ast.expr:
        return ast.Subscript(self.expr(node.value), self.subscript_slice(node.slice),
                             LOAD)

    def literal(self, value: Any, in_set: bool = False) -> ast.expr:
        kind = type(value)  # exact types: a subclass (torch.Size, an IntEnum) is no literal
        if kind is slice:
            return ast.Call(ast.Name("slice", LOAD),
                            [self.literal(value.start), self.literal(value.stop),
                                  self.literal(value.step)], [])
        if kind is float:
            return float_constant(value)
        if kind is complex:
            if math.isnan(value.real) or math.isnan(value.imag) or value.real != 0 \
                    or math.isinf(value.imag) or math.copysign(1.0, value.real) < 0:
                return ast.Call(ast.Name("complex", LOAD),
                                [float_constant(value.real), float_constant(value.imag)],
                                [])
            return ast.Constant(value)
        if kind in _LITERAL_TYPES:
            return ast.Constant(value)
        if kind is tuple:
            return ast.Tuple([self.literal(v) for v in value], LOAD)
        if kind is frozenset:  # a set display where the compiler folds one (``in {1, 2}``)
            elts = [self.literal(v) for v in set_items(value)]
            if in_set and elts:
                return ast.Set(elts)
            exact = self.exact_constant(value) if self.exact_constant is not None else None
            if exact is not None:  # (``frozenset(...)`` calls the global ``frozenset``)
                return exact
            return ast.Call(ast.Name("frozenset", LOAD),
                            [ast.Set(elts)] if elts else [], [])
        if self.constant is not None:
            return self.constant(value)
        raise self.fail(f"constant without a literal form: {type(value).__name__}")

    def r_Slot(self, node: Slot) -> ast.expr:
        return ast.Name(f"{self.slot_prefix}{node.index}", LOAD)

    def r_Shared(self, node: Shared) -> ast.expr:
        if node.name is not None:
            if fact(node, BIND_FIRST, False) and id(node) not in self.seen:
                self.seen.add(id(node))  # named after a statement had evaluated it
                return ast.NamedExpr(ast.Name(node.name, STORE),
                                     _nameable(self.expr(node.value)))
            return ast.Name(node.name, LOAD)
        targets = fact(node, TARGETS, None)
        count = self.counts.get(id(node), 1)
        if targets:
            value = _nameable(self.expr(node.value))
            for t in targets:
                if not isinstance(t, ast.Name):
                    raise self.fail("assignment expression to a non-name")
                value = ast.NamedExpr(ast.Name(t.id, STORE), value)
            if count > 1:
                if id(node) in self.seen:
                    return ast.Name(cast(ast.Name, targets[-1]).id, LOAD)
                self.seen.add(id(node))
            return value
        if count <= 1:
            return self.expr(node.value)
        if id(node) in self.seen:
            return ast.Name(cast(str, fact(node, WALRUS, None)), LOAD)
        self.seen.add(id(node))
        tmp = self.names.fresh()
        attach(node, walrus=tmp)
        return ast.NamedExpr(ast.Name(tmp, STORE),
                             _nameable(self.expr(node.value)))

    def r_Iterator(self, node: Iterator) -> ast.expr:
        fn = "aiter" if node.kind == "aiter" else "iter"
        return ast.Call(ast.Name(fn, LOAD), [self.expr(node.value)],
                        [])

    def r_Func(self, node: Func) -> ast.expr:
        if self.make_lambda is None:
            raise self.fail("function object without a renderer")
        if node.code.co_name == "<lambda>":
            try:
                return self.make_lambda(node)
            except DecompilationError:
                pass
        if self.make_def is None:
            raise self.fail("function object without a renderer")
        fname = self.names.fresh("_f")
        self.hoisted.append(self.make_def(node, fname, []))
        self.hoisted.extend(_renamed(fname, node.code.co_name))
        return ast.Name(fname, LOAD)

    def r_ClassBuild(self, node: ClassBuild) -> ast.expr:
        if self.make_class is None:
            raise self.fail("class creation without a renderer")
        cname = self.names.fresh("_C")
        stmt = self.make_class(node, cname, [])
        self.hoisted.append(stmt)
        self.hoisted.extend(_renamed(cname, node.cname))
        return ast.Name(cname, LOAD)

    def r_BinOp(self, node: ast.BinOp) -> ast.expr:
        left = self.expr(node.left)
        right = self.expr(node.right)
        if fact(node, INPLACE, False):
            opname = _INPLACE_NAMES[type(node.op)]
            return ast.Call(ast.Attribute(
                ast.Call(ast.Name("__import__", LOAD),
                               [ast.Constant("operator")], []),
                opname, LOAD), [left, right], [])
        return ast.BinOp(left, node.op, right)

    def r_Dict(self, node: ast.Dict) -> ast.expr:
        keys: list[ast.expr | None] = []
        values: list[ast.expr] = []
        for k, v in zip(node.keys, node.values, strict=True):
            keys.append(None if k is None else self.expr(k))
            values.append(self.expr(v))
        return ast.Dict(keys, values)

    def r_NamedExpr(self, node: ast.NamedExpr) -> ast.expr:
        value = self.expr(node.value)
        return ast.NamedExpr(ast.Name(node.target.id, STORE), value)

    def r_Compare(self, node: ast.Compare) -> ast.expr:
        left = self.expr(node.left)
        comparators = []
        for c in node.comparators:
            if isinstance(c, ast.Constant) and isinstance(c.value, frozenset) and c.value:
                comparators.append(self.literal(c.value, in_set=True))
            else:
                comparators.append(self.expr(c))
        new = ast.Compare(left, node.ops, comparators)
        if fact(node, FLIPPED, False):
            attach(new, flipped=True)
        return new

    def r_Special(self, node: Special) -> ast.expr:
        if node.kind == "stopiteration_error":
            return self.expr(node.value)  # type: ignore[arg-type]  # set for this kind
        kind = _PRIMITIVES.get(node.kind)
        if kind is not None:
            args = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            args = [self.expr(a) for a in args]  # type: ignore[arg-type]  # a primitive's is set
            if node.kind == "match_class":
                args.insert(2, ast.Constant(fact(node, COUNT, 0)))
            return primitive(kind, args, self.version)
        names = self.special_names
        if names is not None:
            if id(node) in names:
                return ast.Name(names[id(node)], LOAD)
            if node.kind in ("prev_exc", "lasti", "prev_tb", "prev_value", "prev_type"):
                return ast.Constant(None)  # bookkeeping only the interpreter reads
            if node.kind == "with_exit_result":
                exc = self.expr(node.value)  # type: ignore[arg-type]  # set for this kind
                args = [
                    ast.Call(ast.Name("type", LOAD), [exc], []),
                    exc, ast.Attribute(exc, "__traceback__", LOAD)]
                self_arg = fact(node, EXIT_SELF, None)
                if self_arg is not None:
                    args.insert(0, self.expr(self_arg))
                return ast.Call(self.expr(node.exit),  # type: ignore[attr-defined]  # a fact
                                args, [])
            if node.kind == "anext_value":
                return ast.Await(ast.Call(
                    ast.Name("anext", LOAD),
                    [self.expr(node.value)],  # type: ignore[arg-type]  # set for anext
                    []))
        raise self.fail(f"interpreter value '{node.name or node.kind}' left in the output")

    def r_ExcMatch(self, node: ExcMatch) -> ast.expr:
        if self.special_names is not None and not node.star:
            # 3.10 tests the exception's type, 3.11+ the exception itself
            exc = node.exc
            while isinstance(exc, Shared) and exc.name is None:
                exc = exc.value
            check = "issubclass" if isinstance(exc, Special) and exc.kind == "exc_type" \
                else "isinstance"
            return ast.Call(ast.Name(check, LOAD),
                            [self.expr(node.exc), self.expr(node.types)], [])
        raise self.fail("exception test outside an except clause")

    def r_UnpackItem(self, node: UnpackItem) -> ast.expr:
        unpack = node.unpack
        if len(unpack.targets) == 1 and unpack.star is None:
            # ``*Ts`` (PEP 646, ``def f(*args: *Ts)``): the one item of an unpacking, used
            # as the value of a star annotation (what a compiler makes of nothing else)
            return ast.Starred(self.expr(unpack.value), LOAD)
        raise self.fail("unpacked item used outside an assignment")

    def r_Null(self, node: Null) -> ast.expr:
        raise self.fail("NULL left in the output")

    def r_MethodSelf(self, node: MethodSelf) -> ast.expr:
        raise self.fail("method self left in the output")

    def r_Cell(self, node: Cell) -> ast.expr:
        # the cell object itself, as a value: ``(lambda: x).__closure__[0]``
        probe = ast.Lambda(args=no_arguments(), body=ast.Name(node.name, LOAD))
        return ast.Subscript(ast.Attribute(probe, "__closure__",
                                                 LOAD),
                             ast.Constant(0), LOAD)

    def r_ImportValue(self, node: ImportValue) -> ast.expr:
        return ast.Call(ast.Name("__import__", LOAD),
                        [ast.Constant(node.module)], [])

    def r_ImportItem(self, node: ImportItem) -> ast.expr:
        return ast.Attribute(self.expr(node.source), node.attr, LOAD)


_INPLACE_NAMES = {
    ast.Add: "iadd", ast.Sub: "isub", ast.Mult: "imul", ast.Div: "itruediv",
    ast.FloorDiv: "ifloordiv", ast.Mod: "imod", ast.Pow: "ipow", ast.LShift: "ilshift",
    ast.RShift: "irshift", ast.BitAnd: "iand", ast.BitOr: "ior", ast.BitXor: "ixor",
    ast.MatMult: "imatmul",
}


# Special values that are an instruction of their own (the primitives' names)
_PRIMITIVES = {
    "match_sequence": "match_sequence", "match_mapping": "match_mapping",
    "match_keys": "match_keys", "match_class": "match_class",
    "dict_without_keys": "dict_without_keys", "reraise_star": "prep_reraise_star",
    "eg_split": "exception_group_split",
}


def _nameable(value: ast.expr) -> ast.expr:
    """A value an assignment expression can name: a subscript's slice ``a:b`` (or a
    tuple with slices) becomes the ``slice(a, b)`` object it stands for."""
    if isinstance(value, ast.Slice):
        parts = [value.lower, value.upper] + ([value.step] if value.step else [])
        return ast.Call(ast.Name("slice", LOAD),
                        [p or ast.Constant(None) for p in parts], [])
    if isinstance(value, ast.Tuple) and any(isinstance(e, ast.Slice) for e in value.elts):
        return ast.Tuple([_nameable(e) for e in value.elts], LOAD)
    return value


#: the ``r_<type>`` method that renders an expression of each type (None: ``generic``)
_RENDERERS: dict[type, Callable[..., ast.expr] | None] = {}
_UNKNOWN: Callable[..., ast.expr] = Renderer.generic

#: the ``s_<kind>`` method that renders each statement type, by the first of these its
#: type is a subclass of
_STATEMENT_KINDS: list[tuple[type | UnionType, Callable[..., Any]]] = [
    (ExcMarker, Renderer.s_ExcMarker),
    (ast.Assign, Renderer.s_Assign),
    (ast.AugAssign, Renderer.s_AugAssign),
    (ast.Expr, Renderer.s_Expr),
    (ast.Return, Renderer.s_Return),
    (ast.Raise, Renderer.s_Raise),
    (ast.Delete, Renderer.s_Delete),
    (ast.If, Renderer.s_If),
    (ast.While, Renderer.s_While),
    (ast.For | ast.AsyncFor, Renderer.s_For),
    (ast.With | ast.AsyncWith, Renderer.s_With),
    (ast.Try, Renderer.s_Try),
    (ast.Match, Renderer.s_Match),
    (ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Import | ast.ImportFrom
     | ast.Pass | ast.Break | ast.Continue | ast.Global | ast.Nonlocal, Renderer.s_kept),
    (ast.AnnAssign, Renderer.s_AnnAssign),
    (ast.Assert, Renderer.s_Assert),
]
_STATEMENTS: dict[type, Callable[..., Any]] = {}  # (filled as types are met)


def _statement_renderer(kind: type) -> Callable[..., Any]:
    """The method that renders a statement of type ``kind``."""
    for base, method in _STATEMENT_KINDS:
        if issubclass(kind, base) or (base is ast.Try and kind.__name__ == "TryStar"):
            return method
    return Renderer.s_unknown


def _copy_pos(new: ast.stmt, old: ast.stmt) -> ast.stmt:
    known = old.__dict__  # (facts are instance attributes: what ``fact`` reads)
    line = known.get(_LINE)
    if line is not None:
        attach(new, line=line)
    for name in _PLACES:
        value = known.get(name)
        if value:
            attach(new, **{name: value})
    return new


_LINE = str(LINE)
_PLACES = (str(EXPLICIT), str(IMPLICIT), str(POSITION))  # (what ``_copy_pos`` copies when set)


def _copy_place(new: ast.expr, node: ast.expr) -> ast.expr:
    """``new`` with the position ``node`` has and its ``container_op`` fact."""
    known = node.__dict__
    for attr in ("lineno", "col_offset"):
        if attr in known:
            setattr(new, attr, known[attr])
    new.end_lineno = node.end_lineno  # (these two: class attributes, None by default)
    new.end_col_offset = node.end_col_offset
    if "container_op" in known:
        attach(new, container_op=known["container_op"])
    return new


def _count_shared(stmts: list[ast.stmt], counts: dict[int, int]) -> None:
    todo: list[Any] = list(stmts)
    while todo:
        n = todo.pop()
        if type(n) in _NO_SHARED:
            continue
        if isinstance(n, Shared):
            counts[id(n)] = counts.get(id(n), 0) + 1
            if counts[id(n)] > 1:
                continue
            todo.append(n.value)
            continue
        if isinstance(n, ast.AST):
            for field in n._fields:
                v = getattr(n, field, None)
                if isinstance(v, ast.AST):
                    todo.append(v)
                elif isinstance(v, list):
                    todo.extend([x for x in v if isinstance(x, ast.AST)])


#: Nodes with nothing inside that ``_count_shared`` counts: a name (its context), a
#: context, an operator
_NO_SHARED = frozenset({ast.Name}) | frozenset(
    c for base in (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
    for c in base.__subclasses__() if not c._fields)


def _renamed(temp: str, name: str) -> list[ast.stmt]:
    """A function or class defined under a temporary name gets its own name back:
    ``_f0.__name__ = 'f'`` and the same for the last part of ``__qualname__``."""
    if temp == name:
        return []

    def attr(a: str, ctx: ast.expr_context) -> ast.Attribute:
        return ast.Attribute(ast.Name(temp, LOAD), a, ctx)

    qualname = ast.BinOp(ast.Call(ast.Attribute(attr("__qualname__", LOAD),
                                                           "removesuffix", LOAD),
                                       [ast.Constant(temp)], []),
                         ast.Add(), ast.Constant(name))
    return [ast.Assign([attr("__name__", STORE)], ast.Constant(name)),
            ast.Assign([attr("__qualname__", STORE)], qualname)]

"""Whole code objects: function signatures, bodies, lambdas, comprehensions, classes, modules.

:class:`CodeDecompiler` runs the stages of :mod:`.pipeline` for one code object's body,
writes the signature, class or module around it, and decompiles the code objects nested
in it through the same class.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Sequence
from types import CodeType
from typing import Any, cast

from .. import bytecode
from ..codeobj import COMPREHENSIONS as KINDS
from ..codeobj import CodeFlag, code_kind, code_version, is_code, iter_code_objects
from ..errors import DecompilationError
from .ir import syntax
from .ir.exprs import Func, Iterator, Names
from .ir.facts import EXPLICIT, ORIGIN, RETURNS, attach, fact
from .ir.markers import ClassBuild, copy_tree
from .ir.nodes import SCOPES, children, drop_implicit_returns, names_in, no_arguments, walk
from .pipeline import Pipeline, Unit
from .render.emit import unparse
from .render.renderer import Renderer
from .rewrite import patterns
from .rewrite.inline_comprehensions import fold
from .tidy.annotations import apply_to_scope, items_of
from .tidy.body_returns import without_scope_returns
from .tidy.closing_return import fit_closing_return
from .tidy.comprehensions import comprehension_from_code
from .tidy.generics import alias_statement, generic_value, type_param_nodes
from .tidy.idioms import annotation_expr, scope_value, tidy_scope
from .translate.machine import Context

COMPREHENSIONS = {name: {"list": ast.ListComp, "set": ast.SetComp, "dict": ast.DictComp,
                         "gen": ast.GeneratorExp}[kind] for name, kind in KINDS.items()}


class Constants:
    """Constants without a literal form, referenced by name in the source. ``exact``: so
    are the values source can only spell as a call (a slice of constants is
    ``slice(None, None)``, which calls the global ``slice``), for code compiled from the
    source to hold the constant itself (``recompile``)."""

    def __init__(self, exact: bool = False, lowered: CodeType | None = None) -> None:
        self.values: dict[str, Any] = {}
        self._ids: dict[int, str] = {}
        self.imported: set[str] = set()  # global names the code uses as imported modules
        self.exact = exact
        # a code object whose body is written as the state machine even where it has a
        # structured form (to test the fallback: ``force_fallback``)
        self.lowered = lowered
        # comprehension bodies decompiled so far, by code object (the translator may run
        # a block more than once: each run makes the comprehension again)
        self.comprehensions: dict[int, tuple[CodeType, list[ast.stmt]]] = {}
        # names a nested scope declares ``global`` only for the module's sake (it reads
        # them, and the module's own code reads and stores them as explicit globals),
        # by code object: ``module_globals``
        self.globals_for: dict[int, tuple[CodeType, list[str]]] = {}
        # every name of each code object and the code nested in it (``all_names``), by
        # code object: each nested code's decompiler asks for its own again
        self.names_of: dict[int, tuple[CodeType, frozenset[str]]] = {}

    def exact_reference(self, value: Any) -> ast.expr | None:
        """A reference to ``value`` where the source must hold it exactly, else None."""
        return self.reference(value) if self.exact else None

    def reference(self, value: Any) -> ast.expr:
        key = self._ids.get(id(value))
        if key is None:
            key = f"_unveil_const_{len(self.values)}"
            self._ids[id(value)] = key
            self.values[key] = value
        return ast.Name(id=key, ctx=ast.Load())


def all_names(code: CodeType,
              memo: dict[int, tuple[CodeType, frozenset[str]]] | None = None) -> set[str]:
    """Every name ``code`` and the code nested in it use (``memo``: those found so far,
    by code object)."""
    if memo is not None:
        known = memo.get(id(code))
        if known is not None and known[0] is code:
            return set(known[1])
    names = set(code.co_varnames) | set(code.co_names) | set(code.co_cellvars) \
        | set(code.co_freevars)
    for c in code.co_consts:
        if is_code(c):
            names |= all_names(c, memo)
    if memo is not None:
        memo[id(code)] = (code, frozenset(names))
    return names


class CodeDecompiler:
    """Decompile the body of one code object."""

    def __init__(self, code: CodeType, constants: Constants | None = None,
                 names: Names | None = None) -> None:
        self.code = code
        self.constants = constants or Constants()
        self.names = names or Names(all_names(code, self.constants.names_of))
        self.qualname = getattr(code, "co_qualname", code.co_name)
        self.pipeline = Pipeline(Unit(code, self.names, self.qualname,
                                      self.constants.lowered is code, self.context,
                                      self.renderer))

    # ------------------------------------------------------------ pipeline

    def statements(self) -> list[ast.stmt]:
        """The body as plain ``ast`` statements."""
        code = self.code
        if code_kind(code) == "function":
            enclosed_globals(code, self.constants)
        return self.region_statements(bytecode.read(code), [])

    def raw_statements(self) -> list[ast.stmt]:
        """The body structured but not rendered, without the state-machine fallback: a
        type-parameter scope's straight-line code, read for the markers it builds."""
        return self.pipeline.raw(fold(bytecode.read(self.code), self))

    def region_statements(self, bc: bytecode.Bytecode,
                          entry: list[ast.expr]) -> list[ast.stmt]:
        """Statements of ``bc`` (all of a code object, or a region of it) run from
        ``entry`` as the initial stack."""
        return self.pipeline.region(bc, entry, lambda bc: fold(bc, self))

    def context(self, imported: bool) -> Context:
        """A translation context for this code object (see :class:`pipeline.Unit`)."""
        ctx = Context(self.code, self.names, make_comprehension=self.make_comprehension)
        if imported:
            ctx.imported = self.constants.imported
        ctx.make_generic = self.make_generic
        return ctx

    def renderer(self) -> Renderer:
        return Renderer(self.names, make_lambda=self.make_lambda, make_def=self.make_def,
                        make_class=self.make_class, make_alias=self.make_alias, constant=self.constants.reference,
                        exact_constant=self.constants.exact_reference, code_name=self.qualname,
                        private_owner=self.code.co_name if code_kind(self.code) == "class"
                        else None, version=code_version(self.code))

    def child(self, code: CodeType) -> CodeDecompiler:
        return CodeDecompiler(code, self.constants)

    # ------------------------------------------------------------ nested objects

    def make_comprehension(self, func: Func, iterable: ast.expr) -> ast.expr:
        if isinstance(iterable, Iterator):
            iterable = iterable.value
        memo = self.constants.comprehensions
        known = memo.get(id(func.code))
        if known is None or known[0] is not func.code:
            child = self.child(func.code)
            known = memo[id(func.code)] = (func.code, child.statements())
        node = comprehension_from_code(func.code, copy_tree(known[1], {}), iterable)
        if func.code.co_flags & CodeFlag.COROUTINE and func.code.co_name != "<genexpr>":
            attach(node, async_comprehension=True)
        return node

    def make_lambda(self, func: Func) -> ast.expr:
        child = self.child(func.code)
        value = scope_value(child.statements(), func.code.co_freevars)
        if value is None:
            raise DecompilationError("lambda body is not one expression",
                                     code_name=child.qualname)
        return ast.Lambda(args=self.arguments(func), body=value)

    def make_def(self, func: Func, name: str, decorators: list[ast.expr]) -> ast.stmt:
        return function_def(func.code, name, self, func, decorators)

    def make_class(self, cb: ClassBuild, name: str, decorators: list[ast.expr]) -> ast.stmt:
        r = self.renderer()
        child = self.child(cb.func.code)
        code = self.code
        # (what the class body would read from around it: a function's variables, what
        # a class passes through)
        around = {*code.co_varnames, *code.co_cellvars, *code.co_freevars} \
            if code.co_flags & CodeFlag.NEWLOCALS else set(code.co_freevars)
        body = class_body(child, around)
        params = cb.type_params
        return ast.ClassDef(name=name, bases=[r.expr(b) for b in cb.bases],  # type: ignore[call-arg, unused-ignore]  # 3.12 field
                            keywords=[ast.keyword(arg=k.arg, value=r.expr(k.value))
                                      for k in cb.keywords],
                            body=body or [ast.Pass()], decorator_list=decorators,
                            type_params=type_param_nodes(self, params) if params else [])

    def make_generic(self, func: Func, args: list[ast.expr]) -> ast.expr:
        return generic_value(self, func, args)

    def make_alias(self, target: ast.Name, alias: Any) -> ast.stmt:
        return alias_statement(self, target, alias)

    def arguments(self, func: Func | None) -> ast.arguments:
        return build_arguments(self.code if func is None else func.code, func,
                               self.renderer(), bool(self.code.co_flags & CodeFlag.FUTURE_ANNOTATIONS),
                               self)


def build_arguments(code: CodeType, func: Func | None, r: Renderer,
                    future_annotations: bool = False,
                    parent: CodeDecompiler | None = None) -> ast.arguments:
    names = code.co_varnames
    npos = code.co_argcount
    nposonly = code.co_posonlyargcount
    nkw = code.co_kwonlyargcount
    pos = list(names[:npos])
    kwonly = list(names[npos:npos + nkw])
    i = npos + nkw
    vararg = None
    kwarg = None
    if code.co_flags & CodeFlag.VARARGS:
        vararg = names[i]
        i += 1
    if code.co_flags & CodeFlag.VARKEYWORDS:
        kwarg = names[i]
    annotations: dict[str, ast.expr] = {}
    defaults: list[ast.expr] = []
    kw_defaults: dict[str, ast.expr] = {}
    if func is not None:
        annotations = _annotations(func.annotations, r)
        if func.annotate is not None and isinstance(func.annotate, Func) and parent is not None:
            annotations = {name: ann for name, ann, _ in items_of(func.annotate, parent)}
        if future_annotations:
            annotations = {k: annotation_expr(v, True) for k, v in annotations.items()}
        if func.defaults is not None:
            defaults = _tuple_items(func.defaults, r)
        if func.kwdefaults is not None:
            kw_defaults = _dict_items(func.kwdefaults, r)

    def arg(n: str) -> ast.arg:
        return ast.arg(arg=n, annotation=annotations.get(n))

    args = ast.arguments(
        posonlyargs=[arg(n) for n in pos[:nposonly]],
        args=[arg(n) for n in pos[nposonly:]],
        vararg=arg(vararg) if vararg else None,
        kwonlyargs=[arg(n) for n in kwonly],
        kw_defaults=[kw_defaults.get(n) for n in kwonly],
        kwarg=arg(kwarg) if kwarg else None,
        defaults=defaults,
    )
    attach(args, returns=annotations.get("return"))
    return args


def _tuple_items(node: ast.expr, r: Renderer) -> list[ast.expr]:
    origin = fact(node, ORIGIN, None)
    if isinstance(node, ast.Name) and isinstance(origin, ast.Tuple) \
            and not any(isinstance(e, ast.Starred) for e in origin.elts):
        # defaults computed before a branch and named: each is an item of that tuple
        return [ast.Subscript(value=ast.Name(id=node.id, ctx=ast.Load()), slice=ast.Constant(i),
                              ctx=ast.Load()) for i in range(len(origin.elts))]
    if isinstance(node, ast.Tuple):
        return [r.expr(e) for e in node.elts]
    if isinstance(node, ast.Constant) and isinstance(node.value, tuple):
        return [r.literal(v) for v in node.value]
    raise DecompilationError("defaults are not a tuple")


def _dict_items(node: ast.expr, r: Renderer) -> dict[str, ast.expr]:
    origin = fact(node, ORIGIN, None)
    if isinstance(node, ast.Name) and isinstance(origin, ast.Dict) \
            and all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                    for k in origin.keys):
        return {k.value: ast.Subscript(value=ast.Name(id=node.id, ctx=ast.Load()),  # type: ignore[union-attr]  # Constants
                                       slice=ast.Constant(k.value), ctx=ast.Load())  # type: ignore[union-attr]  # Constants
                for k in origin.keys}
    if isinstance(node, ast.Dict):
        out: dict[str, ast.expr] = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if not isinstance(k, ast.Constant):
                raise DecompilationError("keyword defaults with computed names")
            out[cast(str, k.value)] = r.expr(v)
        return out
    raise DecompilationError("keyword defaults are not a dict")


def _annotations(node: ast.expr | None, r: Renderer) -> dict[str, ast.expr]:
    if node is None:
        return {}
    if isinstance(node, ast.Tuple):
        items = node.elts
        out = {}
        for k, v in zip(items[0::2], items[1::2], strict=True):
            if isinstance(k, ast.Constant):
                out[cast(str, k.value)] = r.expr(v)
        return out
    if isinstance(node, ast.Constant) and isinstance(node.value, tuple):
        vals = node.value
        return {k: ast.Constant(v) for k, v in zip(vals[0::2], vals[1::2], strict=True)}
    if isinstance(node, ast.Dict):
        return {cast(str, k.value): r.expr(v) for k, v in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant)}
    return {}


def docstring_of(code: CodeType) -> str | None:
    if code.co_name in ("<lambda>", "<module>") or code.co_name in COMPREHENSIONS:
        return None
    if code_version(code) >= (3, 14):
        if code.co_flags & CodeFlag.HAS_DOCSTRING and code.co_consts \
                and isinstance(code.co_consts[0], str):
            return code.co_consts[0]
        return None
    if code.co_consts and isinstance(code.co_consts[0], str):
        return code.co_consts[0]
    return None


_DECLARING = ("STORE_GLOBAL", "DELETE_GLOBAL", "STORE_DEREF", "DELETE_DEREF")


def declarations(code: CodeType, constants: Constants | None = None) -> list[ast.stmt]:
    """``global``/``nonlocal`` statements the body needs to compile the same way (and
    those the module needs of it: ``constants.globals_for``)."""
    known = constants.globals_for.get(id(code)) if constants is not None else None
    globals_: list[str] = list(known[1]) if known is not None and known[0] is code else []
    nonlocals: list[str] = []
    if not bytecode.has_opcode(code, _DECLARING):
        return [ast.Global(names=globals_)] if globals_ else []
    for ins in bytecode.read_listing(code):
        if ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL") and ins.argval not in globals_:
            globals_.append(ins.argval)
        elif ins.opname in ("STORE_DEREF", "DELETE_DEREF") and ins.argval in code.co_freevars \
                and ins.argval not in nonlocals:
            nonlocals.append(ins.argval)
    out: list[ast.stmt] = []
    if globals_:
        out.append(ast.Global(names=globals_))
    if nonlocals:
        out.append(ast.Nonlocal(names=nonlocals))
    return out


def _dead_reference(names: list[str], bound: set[str] | frozenset[str] = frozenset()
                    ) -> ast.stmt:
    """``if False: x``: compiles to nothing but makes ``x`` free (``nonlocal x`` is not
    allowed for a type parameter, nor in a class body). A name in ``bound`` (a class body
    binds it too, so its own reads are of that) is read by a lambda: ``lambda: x``."""
    def read(n: str) -> ast.expr:
        name = ast.Name(id=n, ctx=ast.Load())
        if n not in bound:
            return name
        return ast.Lambda(args=no_arguments(), body=name)
    return ast.If(test=ast.Constant(False), body=[ast.Expr(value=read(n)) for n in names],
                  orelse=[])


class ScopeNames:
    """The names a scope's body uses, found in one walk (see :func:`scope_names`); those
    of its nested scopes (``nested``, and so ``anywhere``) only when asked: a scope
    without cells or free variables never asks, and walking every nested scope again
    at each level of nesting was the walk's main cost."""

    def __init__(self, ids: set[str], own: set[str], bound: set[str],
                 scopes: list[ast.AST]) -> None:
        self._ids = ids
        self.own = own  # read or written by the scope itself, and its ``nonlocal`` names
        self.bound = bound  # bound or declared by the scope itself
        self._scopes = scopes  # (the nested scopes' nodes, and the parts of type aliases)
        self._nested: set[str] | None = None

    @property
    def nested(self) -> set[str]:
        """Named inside its nested scopes (see ``_NESTED_SCOPES``)."""
        if self._nested is None:
            self._nested = names_in(self._scopes)
        return self._nested

    @property
    def anywhere(self) -> set[str]:
        """Every ``Name`` id, nested scopes included."""
        return self._ids | self.nested


def scope_names(body: list[ast.stmt], inlined: bool) -> ScopeNames:
    """The names ``body`` uses, as a scope: its own (not the bodies of functions, classes
    and lambdas in it, whose decorators, defaults and bases belong to it), the names it
    binds (comprehension targets included, which 3.12+ inlines) and those its nested
    scopes name (``inlined``: list, set and dict comprehensions are not scopes of their
    own, as in the code of 3.12+)."""
    kinds = _WALK_KINDS[inlined]
    ids: set[str] = set()
    declared: set[str] = set()
    bound: set[str] = set()
    scopes: list[ast.AST] = []  # (their names: ``ScopeNames.nested``, when asked)
    todo: list[ast.AST] = list(body)  # (the walk of _own_scope, inlined: it is hot)
    while todo:
        node = todo.pop()
        kind = kinds.get(type(node))
        if kind is None:
            kind = kinds[type(node)] = _walk_kind(type(node), inlined)
        if kind == _EXPR:
            todo.extend(children(node))
            continue
        if kind == _NAME:
            ids.add(node.id)  # type: ignore[attr-defined]  # a Name
            if not isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]  # a Name
                bound.add(node.id)  # type: ignore[attr-defined]  # a Name
            continue
        if kind == _LEAF:
            continue  # (a context or an operator: no names, no children)
        if kind == _SCOPE:
            scopes.append(node)
            if isinstance(node, SCOPES):
                if not isinstance(node, ast.Lambda):
                    bound.add(node.name)
                if not getattr(node, "type_params", None):
                    todo.extend(_scope_parts(node))
                continue
            # a comprehension with a scope of its own: the scope evaluates its first
            # iterable and binds the targets of its walruses, not its loop targets
            todo.append(node.generators[0].iter)  # type: ignore[attr-defined]  # a comprehension node
            inner: list[ast.AST] = [node]
            while inner:
                n = inner.pop()
                if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
                    ids.add(n.target.id)
                    bound.add(n.target.id)
                if not isinstance(n, SCOPES):
                    inner.extend(children(n))
            continue
        if kind == _ALIAS:
            # (3.12+: its value and type parameters are scopes of their own)
            ids.add(node.name.id)  # type: ignore[attr-defined]  # ast.TypeAlias, 3.12+
            bound.add(node.name.id)  # type: ignore[attr-defined]  # ast.TypeAlias, 3.12+
            scopes += [*node.type_params, node.value]  # type: ignore[attr-defined]  # ast.TypeAlias, 3.12+
            continue
        if isinstance(node, ast.Nonlocal):
            declared.update(node.names)
            bound.update(node.names)
        elif isinstance(node, ast.Global):
            bound.update(node.names)
        elif isinstance(node, ast.alias):
            bound.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
            if node.name:
                bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
        todo.extend(children(node))
    # (every Name is in the scope's own nodes or inside one of its nested scopes)
    return ScopeNames(ids, ids | declared, bound, scopes)


_TYPE_ALIAS: tuple[type[ast.AST], ...] = (syntax.TypeAlias,)
# what :func:`scope_names` does with a node, by its type (the isinstance tests, once a type)
_EXPR, _NAME, _SCOPE, _ALIAS, _LEAF, _OTHER = range(6)
_WALK_KINDS: dict[bool, dict[type, int]] = {False: {}, True: {}}


def _walk_kind(kind: type, inlined: bool) -> int:
    if issubclass(kind, ast.Name):
        return _NAME
    if issubclass(kind, _NESTED_SCOPES if inlined else _NESTED_SCOPES + _COMPREHENSIONS):
        return _SCOPE
    if issubclass(kind, _TYPE_ALIAS):
        return _ALIAS
    if not kind._fields:  # type: ignore[attr-defined]  # an ``ast`` class
        return _LEAF
    return _EXPR if issubclass(kind, ast.expr) else _OTHER


def unused_free_variables(code: CodeType, body: list[ast.stmt],
                          names: ScopeNames | None = None) -> list[str]:
    """Free variables the body never names (hand-made bytecode, or reads only in code
    that cannot run), which a dead reference keeps free."""
    names = names or scope_names(body, bytecode.layout_of(code).inlined_comprehensions)
    # (``super()`` reads ``__class__`` without naming it; Dynamo's code for a method keeps
    # the cell where the call went into the graph)
    candidates = [f for f in code.co_freevars if f.isidentifier() and (
        not f.startswith("__class") or f == "__class__" and "super" not in names.anywhere)]
    if not candidates:
        return []
    # a free variable the scope also binds: bound only by an inlined comprehension's
    # loop (3.12+), which is a variable of its own; the scope may not read it at all
    rebound = [f for f in candidates if f in names.own and f in names.bound]
    unread = set(rebound) - _free_through_nested(code, body, rebound) if rebound else set()
    missing = [f for f in candidates if f not in names.own or f in unread]
    if not missing:
        return []
    nested = [f for f in missing if f in names.anywhere]
    if nested:  # named only inside nested scopes, which may bind the name themselves
        free = _free_through_nested(code, body, nested)
        missing = [f for f in missing if f not in free]
    return missing


def unused_cells(code: CodeType, body: list[ast.stmt], names: ScopeNames) -> list[str]:
    """Cell variables of the original that no nested scope of the body reads. Dynamo
    keeps the cells of the frame it transforms (it checks ``co_cellvars``) even where its
    code no longer makes the closures that needed them, and the closure that read one may
    have been code that cannot run; a dead closure keeps them cells."""
    candidates = [c for c in code.co_cellvars
                  if c.isidentifier() and not c.startswith("__class")]
    named = [c for c in candidates if c in names.nested]
    cells = _cells_through_nested(code, body, named) if named else set()
    return [c for c in candidates if c not in cells]


def unbound_locals(code: CodeType, names: ScopeNames) -> list[str]:
    """Locals of the original that the body reads but never binds (their only bindings
    were in code that cannot run, such as the handlers of an empty ``try``): without a
    binding the recompiled function would read them as globals or free variables."""
    # (a local named like a free variable, which bytecode allows (Dynamo's resume
    # functions have both): the name in source is the free variable)
    skip = set(code.co_varnames[:argument_count(code)]) | set(code.co_freevars)
    candidates = [n for n in (*code.co_varnames[argument_count(code):], *code.co_cellvars)
                  if n.isidentifier() and n not in skip and not n.startswith("__class")]
    # (not a name only nested scopes read, when the original keeps no cell for it: an
    # inlined comprehension's variable in code that cannot run, which they read as a
    # global)
    # (nor one the scope reads as a global: a local only because an inlined
    # comprehension that the compiler dropped as dead code bound it)
    cells = set(code.co_cellvars)
    found = [n for n in dict.fromkeys(candidates) if n in names.anywhere
             and n not in names.bound and (n in names.own or n in cells)]
    if found and bytecode.layout_of(code).inlined_comprehensions:
        ops = _name_ops(code)
        found = [n for n in found if "LOAD_GLOBAL" not in ops.get(n, ())]
    if found:  # (nor one a nested scope reads as a global: not a local it could see)
        nested = _nested_global_reads(code)
        found = [n for n in found if n in cells or n not in nested]
    return found


def _nested_global_reads(code: CodeType) -> set[str]:
    """Names the scopes nested in ``code`` read as globals."""
    out: set[str] = set()
    todo = [c for c in code.co_consts if is_code(c)]
    while todo:
        c = todo.pop()
        out.update(n for n in c.co_names if n not in c.co_varnames)
        todo.extend(k for k in c.co_consts if is_code(k))
    return out


def _global_cells(code: CodeType, body: list[ast.stmt]) -> list[str]:
    """Cells of the original that ``body`` does not bind, though it reads them (bound
    only in code that cannot run, or by a comprehension's variable of the same name).
    Not one that is a free variable too: the cell is an inlined comprehension's (3.12+),
    the scope's own reads are the free variable's."""
    skip = set(code.co_varnames[:argument_count(code)]) | set(code.co_freevars)
    cells = [n for n in code.co_cellvars if n.isidentifier() and n not in skip
             and not n.startswith("__class")]
    scope = _body_table(code, body, [], bind=False) if cells else None
    if scope is None:
        return []
    found = []
    for n in cells:
        try:
            symbol = scope.lookup(n)
        except KeyError:
            continue
        if not symbol.is_local():
            found.append(n)
    return found


def _dead_code(locals_: list[str], cells: list[str], listed: Sequence[str] = ()) -> ast.stmt:
    """``if False: x = None; lambda: y``: compiles to nothing but makes ``x`` local and
    ``y`` a cell; ``[None for z in ()]`` first lists the cells ``listed`` among the
    locals too (3.12+: an inlined comprehension's), which orders them first."""
    body: list[ast.stmt] = []
    if listed:
        body.append(ast.Expr(value=ast.ListComp(elt=ast.Constant(None), generators=[
            ast.comprehension(target=ast.Name(id=n, ctx=ast.Store()),
                              iter=ast.Tuple(elts=[], ctx=ast.Load()), ifs=[], is_async=0)
            for n in listed])))
    if locals_:
        body.append(ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store()) for n in locals_],
                               value=ast.Constant(None)))
    if cells:
        value: ast.expr = ast.Name(id=cells[0], ctx=ast.Load()) if len(cells) == 1 else \
            ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Load()) for n in cells], ctx=ast.Load())
        body.append(ast.Expr(value=ast.Lambda(args=no_arguments(), body=value)))
    return ast.If(test=ast.Constant(False), body=body, orelse=[])


def argument_count(code: CodeType) -> int:
    """How many of ``co_varnames`` are parameters."""
    return code.co_argcount + code.co_kwonlyargcount \
        + bool(code.co_flags & CodeFlag.VARARGS) + bool(code.co_flags & CodeFlag.VARKEYWORDS)


# scopes whose reads of a name make it a cell of the enclosing function: generator
# expressions stay functions; list, set and dict comprehensions too before 3.12, which
# inlines them
_NESTED_SCOPES: tuple[type[ast.AST], ...] = (*SCOPES, ast.GeneratorExp)
_COMPREHENSIONS: tuple[type[ast.AST], ...] = (ast.ListComp, ast.SetComp, ast.DictComp)


def _scope_parts(node: ast.AST) -> list[ast.AST]:
    """What of a function, class or lambda (without type parameters, which everything
    after the decorators sees) the enclosing scope evaluates: decorators, defaults, bases."""
    parts: list[ast.AST] = list(getattr(node, "decorator_list", ()))
    if isinstance(node, ast.ClassDef):
        return parts + node.bases + node.keywords
    args = node.args  # type: ignore[attr-defined]  # a function or lambda
    return parts + [d for d in (*args.defaults, *args.kw_defaults) if d]


def _free_through_nested(code: CodeType, body: list[ast.stmt], names: list[str]) -> set[str]:
    """Which of ``names`` are free in the scope because a nested scope reads them."""
    scope = _body_table(code, body, names, bind=False)
    if scope is None:
        return set(names)  # cannot tell: keep the names as they are
    return {n for n in names if _symbol(scope, n, "is_free")}


def _cells_through_nested(code: CodeType, body: list[ast.stmt], names: list[str]) -> set[str]:
    """Which of ``names``, bound in the scope, are cells because a nested scope reads
    them (a nested scope that only binds the same name, such as a generator's loop
    target, does not make it a cell)."""
    scope = _body_table(code, body, names, bind=True)
    if scope is None:
        return set(names)  # cannot tell: keep the names as they are
    inlined = bytecode.layout_of(code).inlined_comprehensions
    cells = {n for n in names if any(_free_below(c, n, inlined) for c in scope.get_children())}
    if bytecode.HOST.inlined_comprehensions and not inlined:
        # (code of 3.11 or before read by 3.12+, whose symtable has no scope for a
        # comprehension: the code's version makes it a function, which reads the cell)
        read = {n.id for s in body for node in walk(s) if isinstance(node, _COMPREHENSIONS)
                for n in walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        cells |= {n for n in names if n in read}
    return cells


def _free_below(table: Any, name: str, inlined: bool) -> bool:
    """Is ``name`` free in ``table`` or in a scope inside it that sees it from outside?
    (``inlined``: the code's version, 3.12+, inlines list, set and dict comprehensions:
    their cells are the function's.)"""
    if name in table.get_identifiers():
        comprehension = table.get_name() in _INLINED
        if _symbol(table, name, "is_free") and not (
                comprehension and inlined and not bytecode.HOST.inlined_comprehensions):
            return True
        if not inlined or not comprehension:
            return False
    return any(_free_below(c, name, inlined) for c in table.get_children())


_INLINED = ("listcomp", "setcomp", "dictcomp")


def _symbol(scope: Any, name: str, test: str) -> bool:
    try:
        return bool(getattr(scope.lookup(name), test)())
    except KeyError:
        return False


def _body_table(code: CodeType, body: list[ast.stmt], names: list[str],
                bind: bool) -> Any:
    """``symtable``'s table of ``body`` set in a scope of ``code``'s kind, inside a
    function that binds ``names`` (``bind``: the scope binds them itself, at its end,
    after any ``nonlocal`` of them); ``None`` when it cannot tell."""
    import symtable

    binding = [ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store()) for n in names],
                          value=ast.Constant(None))]
    # (with the scope's ``global``/``nonlocal`` statements, which its caller may not
    # have put in the body yet)
    present = {n for d in body if isinstance(d, ast.Global | ast.Nonlocal) for n in d.names}
    head = [d for d in declarations(code) if not present & set(d.names)]  # type: ignore[attr-defined]  # Global or Nonlocal
    inner_body = [*head, *body, *binding] if bind else [*head, *body]
    is_class = not code.co_flags & CodeFlag.NEWLOCALS
    inner = ast.ClassDef(name="_unveil_scope", bases=[], keywords=[],  # type: ignore[call-arg, unused-ignore]  # 3.12 field
                         body=inner_body or [ast.Pass()], decorator_list=[],
                         type_params=[]) if is_class else ast.AsyncFunctionDef(  # type: ignore[call-arg, unused-ignore]  # 3.12 field
        name="_unveil_scope", args=no_arguments(),
        body=inner_body or [ast.Pass()], decorator_list=[], returns=None, type_params=[])
    outer = ast.FunctionDef(name="_unveil_outer", args=no_arguments(),  # type: ignore[call-arg, unused-ignore]  # 3.12 field
                            body=[*binding, inner], decorator_list=[], returns=None,
                            type_params=[])
    try:
        # (printed as it is: giving every node of the body locations costs their memory)
        table = symtable.symtable(unparse(outer), "<unveil>", "exec")
        # (3.14 lists the module's annotation scope among the children too)
        outer_table = next(c for c in table.get_children() if c.get_name() == "_unveil_outer")
        return next(c for c in outer_table.get_children() if c.get_name() == "_unveil_scope")
    except (SyntaxError, StopIteration, ValueError):
        return None


def function_def(code: CodeType, name: str, parent: CodeDecompiler | None = None,
                 func: Func | None = None, decorators: list[ast.expr] | None = None,
                 dec: CodeDecompiler | None = None,
                 statements: list[ast.stmt] | None = None
                 ) -> ast.FunctionDef | ast.AsyncFunctionDef:
    """``def name(...)`` for ``code``; ``dec`` and its ``statements``, when the caller
    has decompiled the body already."""
    if dec is None:
        dec = parent.child(code) if parent is not None else CodeDecompiler(code)
    body = dec.statements() if statements is None else statements
    if body and isinstance(body[-1], ast.Return) and body[-1].value is None \
            and not fact(body[-1], EXPLICIT, False):
        body = body[:-1]
    drop_implicit_returns(body)
    patterns.drop_final_return(body)
    fit_closing_return(body, bytecode.last_statement_returns(code),  # (3.8/3.9)
                       bytecode.dead_final_return(code))
    doc = docstring_of(code)
    head: list[ast.stmt] = []
    if doc is not None:
        head.append(ast.Expr(value=ast.Constant(doc)))
    head.extend(declarations(code, dec.constants))
    names = scope_names(body, bytecode.layout_of(code).inlined_comprehensions)
    unused = unused_free_variables(code, body, names)
    if unused:
        head.append(_dead_reference(unused))
    unbound = unbound_locals(code, names)
    cells = unused_cells(code, body, names)
    if cells:  # a cell needs a binding in the function too
        bound = names.bound.union(code.co_varnames[:argument_count(code)])
        unbound += [c for c in cells if c not in bound and c not in unbound]
    unbound += [n for n in _global_cells(code, body) if n not in unbound]
    if unbound or cells:
        # (a cell among the locals: an inlined comprehension's variable, which only
        # the dead code bound)
        locals_ = code.co_varnames[argument_count(code):]
        head.append(_dead_code(unbound, cells, [
            c for c in code.co_cellvars if c in locals_ and (c in unbound or c in cells)]
            if bytecode.layout_of(code).inlined_comprehensions else ()))
    if code.co_flags & (CodeFlag.GENERATOR | CodeFlag.ASYNC_GENERATOR) and not _yields(body):
        # its only ``yield`` could not run (after a ``return``): ``if False: yield`` keeps
        # it a generator
        head.append(ast.If(test=ast.Constant(False), body=[ast.Expr(value=ast.Yield())],
                           orelse=[]))
    body = head + body
    if parent is not None and func is not None:
        args = parent.arguments(func)
    else:
        args = build_arguments(code, None, dec.renderer())
    returns = fact(args, RETURNS, None)
    is_async = bool(code.co_flags & (CodeFlag.COROUTINE | CodeFlag.ASYNC_GENERATOR)) and \
        not _is_plain_generator(code)
    cls = ast.AsyncFunctionDef if is_async else ast.FunctionDef
    params: list[Any] = []  # ast.type_param (3.12+)
    if func is not None and func.type_params and parent is not None:
        params = type_param_nodes(parent, func.type_params)
    node = cls(name=name, args=args, body=body or [ast.Pass()],  # type: ignore[call-arg, unused-ignore]  # 3.12 field
               decorator_list=decorators or [], returns=returns, type_params=params)
    return node


def _yields(body: list[ast.stmt]) -> bool:
    """Does the scope of ``body`` itself ``yield`` (not a nested function or class)?"""
    todo: list[ast.AST] = list(body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Yield | ast.YieldFrom):
            return True
        if not isinstance(n, (*SCOPES, ast.GeneratorExp)):
            todo.extend(children(n))
    return False


def _is_plain_generator(code: CodeType) -> bool:
    return False


def class_body(dec: CodeDecompiler, around: Collection[str] = ()) -> list[ast.stmt]:
    """The statements of a class body; ``around``: the names of the functions around the
    class (a read of one of them as the class's own name needs a binding in the body)."""
    body = dec.statements()
    # (first: the body's copied ends are returns then, and the docstring is the first
    # statement after the stores)
    _drop_hidden_stores(body)
    body = without_scope_returns(body)
    body = apply_to_scope(body, dec)
    body = tidy_scope(body, bool(dec.code.co_flags & CodeFlag.FUTURE_ANNOTATIONS))
    out: list[ast.stmt] = []
    header = {"__module__", "__qualname__", "__firstlineno__"}
    for s in body:
        name = s.targets[0].id if isinstance(s, ast.Assign) and len(s.targets) == 1 \
            and isinstance(s.targets[0], ast.Name) else None
        if not out and name in header and _header_value(name, s.value):  # type: ignore[attr-defined]  # an Assign where name is set
            header.discard(name)  # (the compiler's; a later ``__module__ = 're'`` is not)
            continue
        if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                and isinstance(s.targets[0], ast.Name) and s.targets[0].id == "__doc__" \
                and isinstance(s.value, ast.Constant) and not out:
            out.append(ast.Expr(value=s.value))
            continue
        out.append(s)
    while out and isinstance(out[-1], ast.Return):
        out.pop()
    # ``global``/``nonlocal`` (a class body reads and stores names with LOAD_NAME and
    # STORE_NAME unless they are declared)
    ops = _name_ops(dec.code)
    declared = declarations(dec.code, dec.constants)
    read_global = [n for n in _global_reads(out, ops)
                   if not any(n in d.names for d in declared)]  # type: ignore[attr-defined]  # Global or Nonlocal
    if read_global:
        glob = next((d for d in declared if isinstance(d, ast.Global)), None)
        if glob is None:
            declared.insert(0, ast.Global(names=read_global))
        else:
            glob.names += read_global
    if declared:
        at = 1 if out and isinstance(out[0], ast.Expr) and isinstance(out[0].value, ast.Constant) \
            and isinstance(out[0].value.value, str) else 0
        out[at:at] = declared
    names = scope_names(out, bytecode.layout_of(dec.code).inlined_comprehensions)
    # names the body reads and the original binds only in code that cannot run (the
    # handlers of an empty ``try``): bound nowhere, a function around the class would
    # hand them in as free variables
    # (or a name of a function around the class that the body reads as its own: the
    # body binds it only in code that cannot run, after a ``raise``)
    unbound = sorted(n for n, used in ops.items()
                     if (used & {"STORE_NAME", "DELETE_NAME"} or n in around and "LOAD_NAME" in used)
                     and n.isidentifier() and n in names.own and n not in names.bound)
    bound = names.bound | set(unbound)
    unused = unused_free_variables(dec.code, out, names)
    # (a free variable the body binds too: its own reads are of the binding, only a
    # nested scope's keep it free, and that scope may have been code that cannot run)
    rebound = [f for f in dec.code.co_freevars if f in bound and f not in unused
               and f.isidentifier() and not f.startswith("__class")]
    if rebound:
        through = _cells_through_nested(dec.code, out, rebound)
        unused += [f for f in rebound if f not in through]
    if unused:  # (read only by code that cannot run, after a raise)
        out.append(_dead_reference(unused, bound))
    if unbound:
        out.append(_dead_code(unbound, []))
    return out


def _header_value(name: str | None, value: ast.expr) -> bool:
    """Is ``value`` what the compiler stores to class-body header ``name``?"""
    if name == "__module__":
        return isinstance(value, ast.Name) and value.id == "__name__"
    return isinstance(value, ast.Constant) \
        and type(value.value) is (str if name == "__qualname__" else int)


def _name_ops(code: CodeType) -> dict[str, set[str]]:
    """{name: the opcodes that load, store or delete it} in ``code``'s own instructions."""
    ops: dict[str, set[str]] = {}
    for ins in bytecode.read_listing(code):
        if ins.opname.startswith(("LOAD_", "STORE_", "DELETE_")) and isinstance(ins.argval, str):
            ops.setdefault(ins.argval, set()).add(ins.opname)
    return ops


def _global_reads(stmts: list[ast.stmt], ops: dict[str, set[str]]) -> list[str]:
    """Names a class body itself reads with ``LOAD_GLOBAL`` (declared ``global`` there;
    not those of its comprehensions, which 3.12+ inlines and which read globals so);
    ``ops``: :func:`_name_ops` of its code."""
    loads = {n: {o for o in used if o.startswith("LOAD_")} for n, used in ops.items()}
    if not any("LOAD_GLOBAL" in used for used in loads.values()):
        return []
    found: dict[str, None] = {}
    todo: list[ast.AST] = list(stmts)
    while todo:
        node = todo.pop()
        if isinstance(node, (*SCOPES, ast.GeneratorExp, ast.ListComp, ast.SetComp,
                             ast.DictComp)):
            if not isinstance(node, ast.Lambda | ast.GeneratorExp | ast.ListComp
                              | ast.SetComp | ast.DictComp):
                todo.extend(_scope_parts(node))
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) \
                and loads.get(node.id) == {"LOAD_GLOBAL"}:
            found[node.id] = None
        todo.extend(children(node))
    return sorted(found)


def _drop_hidden_stores(stmts: list[ast.stmt]) -> None:
    """Remove what the ``class`` statement stores itself wherever it is, e.g. in a state
    machine's first arm or in each copy of the body's end: what it stores from a hidden
    name (``__type_params__ = .type_params``: no source spells the name) and 3.13's
    ``__static_attributes__``; the compiler writes these stores again. (Not in the
    functions and classes defined there: their stores are their own.)"""
    todo = [stmts]
    while todo:
        block = todo.pop()
        block[:] = [s for s in block if not (
            isinstance(s, ast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name) and (
                isinstance(s.value, ast.Name) and s.value.id.startswith(".")
                or s.targets[0].id == "__static_attributes__"))]
        for s in block:
            if isinstance(s, _DEFINITIONS):
                continue
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    todo.append(inner)
            todo.extend(h.body for h in getattr(s, "handlers", []) or [])


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def module_body(code: CodeType, constants: Constants | None = None) -> list[ast.stmt]:
    """The statements of a module's code object."""
    dec = CodeDecompiler(code, constants)
    own = module_globals(code, dec.constants)
    body = apply_to_scope(without_scope_returns(dec.statements()), dec)
    if own:
        body.insert(0, ast.Global(names=own))
    return tidy_scope(body, bool(code.co_flags & CodeFlag.FUTURE_ANNOTATIONS))


_GLOBAL_OPS = ("LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL")


def module_globals(code: CodeType, constants: Constants) -> list[str]:
    """Where a ``global`` statement the module's code shows must go: a ``global x``
    anywhere in a module makes the module's own reads and stores of ``x`` explicit
    globals (``STORE_GLOBAL`` for ``x = ...``). Nested scopes that store or delete
    ``x``, or a class body that reads it, declare it already; else the first function
    that reads it does (noted in ``constants.globals_for``), else the module itself
    (returned)."""
    wanted = list(dict.fromkeys(ins.argval for ins in bytecode.read_listing(code)
                                if ins.opname in _GLOBAL_OPS))
    if not wanted:
        return []
    # (a global's name is in ``co_names``: code without one of them uses none of them)
    nested = [(e.code, _global_uses(e.code) if not set(wanted).isdisjoint(e.code.co_names)
               else _NO_GLOBAL_USES) for e in iter_code_objects(code)][1:]
    for c, uses in nested:  # (declared already)
        ops = ("STORE_GLOBAL", "DELETE_GLOBAL") if code_kind(c) != "class" else _GLOBAL_OPS
        wanted = [n for n in wanted if not any(n in uses[op] for op in ops)]
    for c, uses in nested:
        if not wanted:
            break
        if code_kind(c) == "function":
            reads = [n for n in wanted if n in uses["LOAD_GLOBAL"]]
            if reads:
                _declares_global(constants, c, reads)
                wanted = [n for n in wanted if n not in reads]
    return wanted


def enclosed_globals(code: CodeType, constants: Constants) -> None:
    """A function or class nested in ``code`` that reads a name of ``code``'s own as a
    global declares it ``global`` (else the name would be ``code``'s cell): noted in
    ``constants.globals_for``."""
    own = set(code.co_varnames) | set(code.co_cellvars)
    for entry in list(iter_code_objects(code))[1:]:
        c = entry.code
        # (a global's name is in ``co_names``: most nested code needs no closer look)
        if code_kind(c) not in ("function", "class") or own.isdisjoint(c.co_names):
            continue
        reads = [n for n in _global_uses(c)["LOAD_GLOBAL"] if n in own]
        if reads:
            _declares_global(constants, c, reads)


def _declares_global(constants: Constants, code: CodeType, names: list[str]) -> None:
    """Note that ``code`` declares ``names`` ``global`` (after those noted before)."""
    known = constants.globals_for.get(id(code))
    before = list(known[1]) if known is not None and known[0] is code else []
    constants.globals_for[id(code)] = (code, before + [n for n in names if n not in before])


_NO_GLOBAL_USES: dict[str, list[str]] = {op: [] for op in _GLOBAL_OPS}


def _global_uses(code: CodeType) -> dict[str, list[str]]:
    """The names ``code`` loads, stores and deletes as globals, by operation, in order."""
    uses: dict[str, list[str]] = {op: [] for op in _GLOBAL_OPS}
    for ins in bytecode.read_listing(code):
        if ins.opname in uses and ins.argval not in uses[ins.opname]:
            uses[ins.opname].append(ins.argval)
    return uses

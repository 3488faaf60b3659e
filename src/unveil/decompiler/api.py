"""Public entry points: ``decompile`` an object to source, ``recompile`` a code object."""

from __future__ import annotations

import ast
import builtins
import inspect
import os
import sys
import tokenize
import types
from collections.abc import Callable, Sequence
from types import CodeType, FunctionType
from typing import Any, cast

from .. import bytecode
from .._io import write_atomic
from ..codeobj import CodeFlag, code_kind, code_version, is_code, iter_code_objects
from ..errors import BadInputError, DecompilationError
from .deep import with_room
from .functions import (
    COMPREHENSIONS,
    CodeDecompiler,
    Constants,
    argument_count,
    build_arguments,
    class_body,
    function_def,
    module_body,
)
from .ir.facts import LINE, RETURNS, attach, fact
from .ir.nodes import cells, children, holder, no_arguments, walk
from .render.emit import unparse
from .render.privates import unmangle
from .render.renderer import Renderer
from .tidy import generics
from .tidy.annotations import annotated_owner
from .tidy.comprehensions import comprehension_from_code
from .tidy.idioms import annotation_expr, scope_value
from .tidy.simplify import simplify as simplify_body
from .tidy.temporaries import Fixed

# the name of the ``def`` that stands for a lambda whose body is not one expression
LAMBDA_NAME = "lambda_"


def code_of(obj: object) -> CodeType:
    """The code object behind ``obj`` (function, method, generator, coroutine, code, a code
    object read from a file)."""
    if is_code(obj):
        return obj
    if isinstance(obj, staticmethod | classmethod):
        obj = obj.__func__
    if inspect.ismethod(obj):
        obj = obj.__func__
    for attr in ("__code__", "gi_code", "cr_code", "ag_code"):
        code = getattr(obj, attr, None)
        if isinstance(code, CodeType):
            return code
    raise BadInputError(
        f"cannot decompile {type(obj).__name__} object {obj!r:.60}: expected a function, "
        "method, code object, generator, coroutine or class")


def decompile(obj: object, *, force_fallback: bool = False) -> str:
    """Source equivalent to ``obj`` (see :func:`unveil.decompile`). ``force_fallback``:
    write the body of ``obj``'s own code as the state machine (for testing it)."""
    if inspect.isclass(obj):
        cls = obj
        return with_room(lambda: class_source(cls), f"class {cls.__qualname__}")
    code = code_of(obj)

    def work() -> str:
        node = decompile_node(obj, Constants(lowered=code if force_fallback else None))
        return unparse(node, code_version(code)) + "\n"

    return with_room(work, _named(code))


def _named(code: CodeType) -> str:
    return f"{code_kind(code)} {getattr(code, 'co_qualname', code.co_name)}"


def decompile_node(obj: object, constants: Constants | None = None) -> ast.AST:
    code = code_of(obj)
    func = obj.__func__ if inspect.ismethod(obj) else obj
    constants = constants or Constants()
    name = code.co_name
    if name == "<module>":
        module = ast.Module(body=module_body(code, constants) or [ast.Pass()],
                            type_ignores=[])
        unmangle(module, code)
        return module
    if code_kind(code) == "class" and not isinstance(func, FunctionType):
        module = ast.Module(body=[_definition_for(code, "class", constants)], type_ignores=[])
        unmangle(module, code)
        return module
    if name == "<lambda>":
        dec = CodeDecompiler(code, constants)
        stmts = dec.statements()
        value = scope_value(stmts, code.co_freevars)
        if value is None:  # (bytecode no compiler wrote for a lambda, e.g. Dynamo's)
            node = function_def(code, LAMBDA_NAME, dec=dec, statements=stmts)
            args = node.args
        else:
            args = build_arguments(code, None, dec.renderer())
        if isinstance(func, FunctionType):
            _apply_function_defaults(args, func, dec.renderer(), constants)
        if value is None:
            return ast.Module(body=[node], type_ignores=[])
        return ast.Expression(body=ast.Lambda(args=args, body=value))
    if code_kind(code) == "generic" or code.co_varnames[:code.co_argcount] == (".format",):
        # a type-parameter scope, or a 3.14 lazily evaluated value: as the statement that
        # makes it
        kind = code_kind(code)
        return ast.Module(body=[_definition_for(code, kind, constants)], type_ignores=[])
    if name in COMPREHENSIONS:
        return ast.Module(body=[comprehension_statement(code, constants)], type_ignores=[])
    dec = CodeDecompiler(code, constants)
    node = function_def(code, name if name.isidentifier() else "_f", dec)
    if isinstance(func, FunctionType):
        scope = _type_param_scope(func)
        _apply_function_defaults(node.args, func, dec.renderer(), constants, scope)
        attach(node, returns=fact(node.args, RETURNS, None))
        if scope is not func.__globals__:
            node.type_params = _type_params(func, scope, dec.renderer())  # type: ignore[union-attr, unused-ignore]  # 3.12 field
        if _needs_typing_import(node, func.__globals__):
            return ast.Module(body=[ast.Import(names=[ast.alias(name="typing")]), node],
                              type_ignores=[])
    return ast.Module(body=[node], type_ignores=[])


def _needs_typing_import(node: ast.AST, globals_: dict[str, Any]) -> bool:
    """Annotations spelled ``typing.X`` by :func:`_spelled_by_repr` need the module."""
    import typing

    if globals_.get("typing") is typing:
        return False
    heads: list[ast.expr | None] = [
        a.annotation for a in ast.walk(node) if isinstance(a, ast.arg) and a.annotation]
    heads.append(fact(node, RETURNS, None))
    return any(isinstance(n, ast.Name) and n.id == "typing"
               for h in heads if h is not None for n in ast.walk(h))


def _type_param_scope(func: FunctionType) -> dict[str, Any]:
    """The function's globals, with its PEP 695 type parameters (if any) in front."""
    params = getattr(func, "__type_params__", ())
    if not params:
        return func.__globals__
    scope = {p.__name__: p for p in params}
    scope.update((k, v) for k, v in func.__globals__.items() if k not in scope)
    return scope


def _type_params(func: FunctionType, scope: dict[str, Any], r: Renderer) -> list[Any]:
    """``ast`` type parameters for a live generic function's ``__type_params__`` (3.12+)."""
    out: list[Any] = []
    params: tuple[Any, ...] = getattr(func, "__type_params__", ())
    for p in params:
        kind = type(p).__name__
        fields: dict[str, Any] = {"name": p.__name__}
        if kind == "TypeVar":
            if p.__constraints__:
                fields["bound"] = _value_expr(p.__constraints__, scope, r)
            elif p.__bound__ is not None:
                fields["bound"] = _value_expr(p.__bound__, scope, r)
        if getattr(p, "has_default", lambda: False)():
            default = _value_expr(p.__default__, scope, r)
            if kind == "TypeVarTuple":
                default = ast.Starred(value=_value_expr(p.__default__.__args__[0], scope, r)
                                      if getattr(p.__default__, "__args__", None) else default,
                                      ctx=ast.Load())
            fields["default_value"] = default
        out.append(getattr(ast, kind)(**fields))
    return out


def comprehension_statement(code: CodeType, constants: Constants,
                            compilable: bool = False) -> ast.stmt:
    """The comprehension as an expression statement; ``compilable``: inside an
    ``async def`` when it holds ``async for`` or ``await`` (for compiling it back)."""
    expr = comprehension_from_code(code, CodeDecompiler(code, constants).statements(),
                                   ast.Name(id="_iter", ctx=ast.Load()))
    stmt: ast.stmt = ast.Expr(value=expr)
    if compilable and code.co_flags & CodeFlag.COROUTINE and code.co_name != "<genexpr>":
        # (or ``await``) inside: only an async function may hold it
        stmt = ast.AsyncFunctionDef(name="__unveil_async__", args=no_arguments(),  # type: ignore[call-arg, unused-ignore]  # 3.12 field
                                    body=[stmt], decorator_list=[], returns=None,
                                    type_params=[])
    return stmt


def _apply_function_defaults(args: ast.arguments, func: FunctionType, r: Renderer,
                             constants: Constants, scope: dict[str, Any] | None = None) -> None:
    """Defaults and annotations of a live function, as names where the values are named."""
    names = func.__globals__ if scope is None else scope

    def value(v: Any) -> ast.expr:
        return _value_expr(v, names, r)

    defaults = func.__defaults__ or ()
    args.defaults = [value(v) for v in defaults]
    kw = func.__kwdefaults__ or {}
    args.kw_defaults = [value(kw[a.arg]) if a.arg in kw else None
                        for a in args.kwonlyargs]
    annotations = getattr(func, "__annotations__", None) or {}
    future = bool(func.__code__.co_flags & CodeFlag.FUTURE_ANNOTATIONS)

    def annotation(v: Any) -> ast.expr:
        if isinstance(v, str) and future:
            return annotation_expr(ast.Constant(v), True)
        return value(v)

    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    if args.vararg is not None:
        every.append(args.vararg)
    if args.kwarg is not None:
        every.append(args.kwarg)
    for a in every:
        if a.arg in annotations:
            a.annotation = annotation(annotations[a.arg])
    if "return" in annotations:
        attach(args, returns=annotation(annotations["return"]))


def _value_expr(v: Any, globals_: dict[str, Any], r: Renderer, depth: int = 0) -> ast.expr:
    """Source for a live value: a literal, a display of literals, or a name bound to it."""
    if isinstance(v, str | bytes | int | float | complex | bool | type(None)) or v is Ellipsis:
        return r.literal(v)
    if depth < 4 and type(v) in (tuple, list, set, dict):
        if type(v) is dict:
            return ast.Dict(keys=[_value_expr(k, globals_, r, depth + 1) for k in v],
                            values=[_value_expr(x, globals_, r, depth + 1)
                                    for x in v.values()])
        elts = [_value_expr(x, globals_, r, depth + 1) for x in v]
        if type(v) is set:
            if not elts:
                return ast.Call(func=ast.Name(id="set", ctx=ast.Load()), args=[], keywords=[])
            return ast.Set(elts=elts)
        cls = ast.Tuple if type(v) is tuple else ast.List
        return cls(elts=elts, ctx=ast.Load())
    for k, g in globals_.items():
        if g is v and k.isidentifier():
            return ast.Name(id=k, ctx=ast.Load())
    for k, g in vars(builtins).items():
        if g is v:
            return ast.Name(id=k, ctx=ast.Load())
    spelled = _spelled_by_repr(v, globals_)
    if spelled is not None:
        return spelled
    return r.literal(v)


_SAFE_NODES = (ast.Expression, ast.Name, ast.Load, ast.Attribute, ast.Subscript, ast.Tuple,
               ast.List, ast.Constant, ast.BinOp, ast.BitOr)


def _spelled_by_repr(v: Any, globals_: dict[str, Any]) -> ast.expr | None:
    """Typing constructs (``typing.Optional[list]``...) print as the expression that
    makes them: use it when it evaluates, without calls, to an equal value."""
    if type(v).__module__ not in ("typing", "types", "collections.abc"):
        return None
    text = repr(v)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None
    if not all(isinstance(n, _SAFE_NODES) for n in ast.walk(tree)):
        return None
    scope = dict(globals_)
    if "typing" not in scope:
        import typing

        scope["typing"] = typing
    try:
        value = eval(compile(tree, "<annotation>", "eval"), scope)  # noqa: S307
    except Exception:
        return None
    if value != v:
        return None
    return _prefer_global_names(tree.body, globals_)


def _prefer_global_names(node: ast.expr, globals_: dict[str, Any]) -> ast.expr:
    """``typing.Optional`` becomes ``Optional`` when the module imported it by that name."""
    import typing

    class Shorten(ast.NodeTransformer):
        def visit_Attribute(self, n: ast.Attribute) -> ast.AST:
            if isinstance(n.value, ast.Name) and n.value.id == "typing":
                target = getattr(typing, n.attr, None)
                for k, g in globals_.items():
                    if g is target and target is not None and k.isidentifier():
                        return ast.Name(id=k, ctx=ast.Load())
            return self.generic_visit(n)

    return Shorten().visit(node)


def class_source(cls: type) -> str:
    """The ``class`` statement of ``cls`` as written: decompiled from the code of the module
    that defines it, when that module's source file is there and still matches the
    class; otherwise rebuilt from the live class, with a comment saying what is lost."""
    found = _class_as_written(cls)
    if found is not None:
        return unparse(found) + "\n"
    note = ("# rebuilt from the live class (its module's source was not found or has "
            "changed):\n# decorators, class keywords other than metaclass, and statements "
            "of the class body\n# other than definitions are not known; values are as "
            "they are now\n")
    return note + unparse(class_statement(cls)) + "\n"


def _class_as_written(cls: type) -> ast.stmt | None:
    """The ``class`` statement decompiled from the module code that defines ``cls``, or
    None where that code is not at hand or does not match the class."""
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not path.endswith(".py") or not os.path.isfile(path):
        return None
    try:
        with tokenize.open(path) as f:
            code = compile(f.read(), path, "exec", dont_inherit=True)
    except (OSError, SyntaxError, ValueError):
        return None
    body = next((c for name, c in iter_code_objects(code)
                 if name == cls.__qualname__ and code_kind(c) == "class"), None)
    if body is None or not _same_methods(cls, body):
        return None
    tree = decompile_node(code)
    return _find_class(tree.body, cls.__qualname__.split("."),  # type: ignore[attr-defined]  # a ClassDef or None
                       body.co_firstlineno)


def _same_methods(cls: type, body: CodeType) -> bool:
    """Do the functions defined in ``body`` still have the live class's bytecode (the
    source file was not edited since the class was made)?"""
    codes = {c.co_name: c for c in body.co_consts if is_code(c)}
    for value in vars(cls).values():
        func = getattr(value, "__func__", value)
        code = getattr(func, "__code__", None)
        if isinstance(code, CodeType) and getattr(func, "__qualname__", "").startswith(
                cls.__qualname__ + ".") and code.co_name in codes \
                and codes[code.co_name].co_code != code.co_code:
            return False
    return True


def _find_class(stmts: list[ast.stmt], path: list[str], line: int) -> ast.stmt | None:
    """The definition at qualname ``path`` among ``stmts`` (looking into compound
    statements); of several, the one whose line is nearest ``line``."""
    name, rest = path[0], path[1:]
    if rest[:1] == ["<locals>"]:
        rest = rest[1:]
    found: list[ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef] = []
    todo: list[ast.AST] = list(stmts)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name == name:
                found.append(node)
            continue
        if isinstance(node, ast.stmt | ast.excepthandler | ast.match_case):
            todo.extend(children(node))
    candidates = [n for n in found if isinstance(n, ast.ClassDef)] if not rest else found
    results = [r for r in (candidates if not rest else
                           [_find_class(n.body, rest, line) for n in candidates])
               if r is not None]
    if not results:
        return None
    return min(results, key=lambda n: abs(cast(int, fact(n, LINE, line)) - line))


def class_statement(cls: type) -> ast.stmt:
    """A ``class`` statement rebuilt from a live class: its methods decompiled."""
    body: list[ast.stmt] = []
    constants = Constants()
    if cls.__doc__:
        body.append(ast.Expr(value=ast.Constant(cls.__doc__)))
    module = inspect.getmodule(cls)
    globals_ = vars(module) if module is not None else {}
    r = Renderer(CodeDecompiler(compile("", "", "exec"), constants).names,
                 constant=constants.reference)
    for key, value in vars(cls).items():
        if key in ("__module__", "__qualname__", "__doc__", "__dict__", "__weakref__",
                   "__firstlineno__", "__static_attributes__"):
            continue
        decorators: list[ast.expr] = []
        inner = value
        if isinstance(value, staticmethod):
            decorators.append(ast.Name(id="staticmethod", ctx=ast.Load()))
            inner = value.__func__
        elif isinstance(value, classmethod):
            decorators.append(ast.Name(id="classmethod", ctx=ast.Load()))
            inner = value.__func__
        elif isinstance(value, property):
            for accessor, deco in ((value.fget, None), (value.fset, "setter"),
                                   (value.fdel, "deleter")):
                if isinstance(accessor, FunctionType):
                    node = decompile_node(accessor, constants).body[0]  # type: ignore[attr-defined]  # a Module
                    node.name = key
                    if deco is None:
                        node.decorator_list = [ast.Name(id="property", ctx=ast.Load())]
                    else:
                        node.decorator_list = [ast.Attribute(
                            value=ast.Name(id=key, ctx=ast.Load()), attr=deco,
                            ctx=ast.Load())]
                    body.append(node)
            continue
        if isinstance(value, types.MemberDescriptorType | types.GetSetDescriptorType):
            continue  # made by __slots__
        if isinstance(inner, FunctionType):
            node = decompile_node(inner, constants).body[0]  # type: ignore[attr-defined]  # a FunctionDef
            node.name = key
            node.decorator_list = decorators
            body.append(node)
        elif inspect.isclass(value) and value.__qualname__.startswith(cls.__qualname__ + "."):
            body.append(class_statement(value))
        else:
            body.append(ast.Assign(targets=[ast.Name(id=key, ctx=ast.Store())],
                                   value=_value_expr(value, globals_, r)))
    bases: list[ast.expr] = [ast.Name(id=b.__name__, ctx=ast.Load()) for b in cls.__bases__
             if b is not object]
    keywords = [] if type(cls) is type or any(type(b) is type(cls) for b in cls.__bases__) \
        else [ast.keyword(arg="metaclass", value=ast.Name(id=type(cls).__name__, ctx=ast.Load()))]
    return ast.ClassDef(name=cls.__name__, bases=bases, keywords=keywords,  # type: ignore[call-arg, unused-ignore]  # 3.12 field
                        body=body or [ast.Pass()], decorator_list=[], type_params=[])


# ---------------------------------------------------------------- compiling back


def recompile(code: CodeType, filename: str | None = None,
              line_map: dict[int, int] | None = None, *, simplify: bool = False,
              facts: dict[str, object] | None = None, header: str = "",
              comments: Callable[[str], str | None] | None = None,
              fixed: Fixed | None = None, force_fallback: bool = False) -> CodeType:
    """Decompile ``code``, compile the source back and return the matching code object.

    ``filename``, if given, is where the source is **written** (an existing file there is
    replaced) and what the code's ``co_filename`` names, so debuggers find it.
    ``line_map``, if given, is filled with {line of the source: line in ``code``'s own
    line table} for the statements whose origin is known. ``simplify``: a function body
    that builds and shuffles its own lists (Dynamo's) is written with each list where it
    goes (:mod:`unveil.decompiler.tidy.simplify`; check the result, e.g. with
    :func:`unveil.verify.equivalence.prove_equivalent`); ``facts``, if given, gets ``simplified``:
    whether that changed the body; ``fixed``: globals (and attributes of them) that hold one
    value while the code runs, which it may read later than the code does (pass the same to
    the check). ``force_fallback``: write ``code``'s own body as the state machine (for
    testing it). ``header``: comment lines the source starts with;
    ``comments``: given a statement's first line, the comment (without ``#``) to end it
    with, or None."""
    if not is_code(code):
        code = code_of(code)
    return with_room(lambda: _recompile(code, filename, line_map, simplify, facts, header,
                                        comments, fixed, force_fallback), _named(code))


def _recompile(code: CodeType, filename: str | None, line_map: dict[int, int] | None,
               simplify: bool, facts: dict[str, object] | None, header: str,
               comments: Callable[[str], str | None] | None, fixed: Fixed | None,
               force_fallback: bool) -> CodeType:
    constants = Constants(exact=True, lowered=code if force_fallback else None)
    kind = code_kind(code)
    target = (code.co_name, kind)
    fname = filename or f"<unveil {code.co_name}>"

    def wrap(node: ast.stmt, outer: Sequence[str] = ()) -> ast.Module:
        wrapped = (_in_enclosing_scopes(node, code) if kind == "class" else None) \
            or _closure_wrapper(node, code, outer)
        if constants.imported:  # (never run: the compiler only sees the names imported)
            wrapped.body.insert(0, ast.If(test=ast.Constant(False), orelse=[], body=[
                ast.Import(names=[ast.alias(name=n)]) for n in sorted(constants.imported)]))
        if _plain_super_calls(code):
            # (3.12+ compiles ``super().f`` to ``LOAD_SUPER_ATTR`` unless the module
            # names ``super`` itself: the code came from such a module)
            wrapped.body.insert(0, ast.Expr(value=ast.Name(id="super", ctx=ast.Load())))
        unmangle(wrapped)
        return wrapped

    if kind == "module":
        wrapped = ast.Module(body=module_body(code, constants) or [ast.Pass()], type_ignores=[])
        unmangle(wrapped, code)
    else:
        changed: list[bool] = []
        node = _definition_for(code, kind, constants, changed if simplify else None, fixed)
        if facts is not None:
            facts["simplified"] = any(changed)
        if kind == "lambda" and isinstance(node, ast.FunctionDef):
            target = (LAMBDA_NAME, "function")
        wrapped = wrap(node)
    header += _constants_note(constants)
    if constants.imported and kind != "module":
        header += ("# (the 'if False:' imports run nothing: names Python sees imported are "
                   "called as the original code calls them)\n")
    source, parsed, markers, found = _compile_back(code, kind, target, wrapped, header,
                                                   fname, constants)
    lost = _lost_cells(code, found, kind)
    if lost:
        # cells the code binds only in a comprehension that 3.12+ inlines, which a
        # nested scope reads: it sees them because an enclosing scope binds them too
        wrapped = wrap(node, lost)
        source, parsed, markers, found = _compile_back(code, kind, target, wrapped, header,
                                                       fname, constants)
    if comments is not None:  # (at the ends of lines: the lines stay where they are)
        source = _with_comments(source, parsed, comments)
    if filename:
        _write(filename, source)
    if line_map is not None:
        line_map.update(_origin_lines(wrapped, parsed))
    found = _restore_constants(found, markers)
    _check_layout(code, found, kind)
    if kind != "module":
        found = _named_where_it_was(found, code)
    replace: dict[str, Any] = {"co_name": code.co_name}
    if hasattr(code, "co_qualname"):
        replace["co_qualname"] = code.co_qualname
    return found.replace(**replace)


def _constants_note(constants: Constants) -> str:
    """Comment lines that say what each ``_unveil_const_N`` of the source holds (the
    compiled code holds the object itself): its repr, on one line, cut short."""
    lines = []
    for name, value in constants.values.items():
        try:
            shown = " ".join(repr(value).split())
        except Exception:  # noqa: BLE001 (a repr that fails: its type says enough)
            shown = f"a {type(value).__module__}.{type(value).__qualname__}"
        shown = shown if len(shown) <= 100 else shown[:100] + " ..."
        lines.append(f"# {name}: {shown} (a constant of the original code, held as it is)\n")
    return "".join(lines)


def _qualname_of(code: CodeType) -> str | None:
    """``code``'s qualified name: its own on 3.11+; on 3.10, read off the names its
    nested code is given (None when it has none)."""
    if hasattr(code, "co_qualname"):
        return code.co_qualname
    consts = code.co_consts
    is_class = code_kind(code) == "class"
    for i in sorted(bytecode.qualname_constants(code)):
        name = consts[i]
        if is_class:
            return name  # (the class body stores its own)
        if ".<locals>." in name:
            return name.rpartition(".<locals>.")[0]
    return None


def _named_where_it_was(found: CodeType, code: CodeType) -> CodeType:
    """``found`` with the code nested in it named as in ``code``: compiled back inside a
    wrapper, or alone, a nested function's ``__qualname__`` starts with another path."""
    old, new = _qualname_of(code), _qualname_of(found)
    if old is None or new is None or old == new:
        return found

    def renamed(name: str) -> str:
        if name == new or name.startswith(new + "."):
            return old + name[len(new):]
        return name

    def rename(c: CodeType) -> CodeType:
        consts = list(c.co_consts)
        for i in bytecode.qualname_constants(c):
            consts[i] = renamed(consts[i])
        for i, const in enumerate(consts):
            if isinstance(const, CodeType):
                consts[i] = rename(const)
        changes: dict[str, Any] = {"co_consts": tuple(consts)}
        if hasattr(c, "co_qualname"):
            changes["co_qualname"] = renamed(c.co_qualname)
        return c.replace(**changes)

    return rename(found)


def _compile_back(code: CodeType, kind: str, target: tuple[str, str], wrapped: ast.Module,
                  header: str, fname: str,
                  constants: Constants) -> tuple[str, ast.Module, Any, CodeType]:
    """The source of ``wrapped``, parsed back, its constant markers and the code object
    in its compilation that stands for ``code`` (``target``: its name and kind there)."""
    source = header + unparse(wrapped) + "\n"
    parsed = ast.parse(source, fname)
    markers = _mark_constants(parsed, constants)
    # (from the text where no constant is swapped in: 3.12+ limits how deep a tree
    # handed to ``compile`` may be more tightly than how deep source text may nest)
    compiled = compile(parsed if markers else source, fname, "exec",
                       flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    if kind == "module":
        found: CodeType | None = compiled
    else:
        found = _find_code(compiled, *target)
    if found is None:
        raise DecompilationError("recompiled source lost the function",
                                 code_name=code.co_name)
    return source, parsed, markers, found


def _lost_cells(code: CodeType, found: CodeType, kind: str) -> list[str]:
    """Cells of ``code`` that ``found``, compiled back on its own, does not have."""
    if kind not in ("function", "lambda") or code_version(code) < (3, 12):
        return []
    have = set(found.co_cellvars)
    return [n for n in code.co_cellvars if n not in have and n.isidentifier()]


_FUTURE_FLAGS = 0
for _feature in ("annotations", "generator_stop", "barry_as_FLUFL"):
    import __future__

    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag


def _origin_lines(rendered: ast.AST, parsed: ast.AST) -> dict[int, int]:
    """{line in the source: the original line} from statements the decompiler tagged
    (``line``: the line of the instruction that made them); ``parsed`` is the source
    parsed back, statement for statement the same tree."""
    ours, theirs = _statements(rendered), _statements(parsed)
    out: dict[int, int] = {}
    if len(ours) != len(theirs):
        return out
    for a, b in zip(ours, theirs, strict=True):
        if type(a) is not type(b):
            return {}
        line = fact(a, LINE, None)
        if isinstance(line, int) and line > 0:
            out.setdefault(b.lineno, line)
    return out


def _with_comments(source: str, parsed: ast.AST, comments: Callable[[str], str | None]) -> str:
    """``source`` with a comment at the end of the first line of each statement that
    ``comments`` has one for."""
    lines = source.splitlines(keepends=True)
    changed = False
    for stmt in _statements(parsed):
        line = lines[stmt.lineno - 1]
        if line.rstrip().endswith("\\") or "#" in line:
            continue  # (a continued line, or one with a comment or a string holding '#')
        text = comments(line)
        if text:
            lines[stmt.lineno - 1] = f"{line.rstrip()}  # {' '.join(text.split())}\n"
            changed = True
    return "".join(lines) if changed else source


def _statements(tree: ast.AST) -> list[ast.stmt]:
    """The statements in ``tree`` (in one fixed order; expressions hold none)."""
    out: list[ast.stmt] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.stmt):
            out.append(node)
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            value = getattr(node, field, None)
            if type(value) is list:
                todo.extend(reversed(value))
    return out


def _definition_for(code: CodeType, kind: str, constants: Constants,
                    simplify: list[bool] | None = None, fixed: Fixed | None = None) -> ast.stmt:
    """A statement whose compilation holds a code object like ``code``; with ``simplify``,
    a function's body goes through :mod:`.simplify` (True is appended when it changed)."""
    dec = CodeDecompiler(code, constants)
    if kind == "generic":
        return generics.hidden_scope_statement(dec, code)
    if kind == "function" and code.co_name == "__annotate__":
        owner = annotated_owner(code, dec)
        if owner is not None:
            return owner
    if kind == "class":
        params: list[Any] = []  # ast.TypeVar (3.12+)
        if ".type_params" in code.co_freevars:
            # a generic class's body: its other free variables behave as type parameters
            params = [ast.TypeVar(name=n, bound=None) for n in code.co_freevars  # type: ignore[attr-defined, unused-ignore]  # 3.12+
                      if n.isidentifier()] or [ast.TypeVar(name="_T", bound=None)]  # type: ignore[attr-defined, unused-ignore]  # 3.12+
        return ast.ClassDef(name=code.co_name, bases=[], keywords=[],  # type: ignore[call-arg, unused-ignore]  # 3.12 field
                            body=class_body(dec, _names_around(code)) or [ast.Pass()],
                            decorator_list=[],
                            type_params=params)
    if kind == "lambda":
        stmts = dec.statements()
        value = scope_value(stmts, code.co_freevars)
        if value is None:  # statements no lambda can hold (Dynamo's code for a lambda)
            if simplify is not None:
                stmts = _simplified(code, stmts, simplify, fixed)
            return function_def(code, LAMBDA_NAME, dec=dec, statements=stmts)
        args = build_arguments(code, None, dec.renderer())
        lam = ast.Lambda(args=args, body=value)
        return ast.Assign(targets=[ast.Name(id="_unveil_lambda", ctx=ast.Store())], value=lam)
    if kind in ("comprehension", "genexpr"):
        stmt = comprehension_statement(code, constants, compilable=True)
        if bytecode.layout_of(code).inlined_comprehensions and kind == "comprehension" \
                and isinstance(stmt, ast.Expr):
            # 3.12+ inlines a list, set or dict comprehension except in an annotation
            # scope that sees a class's names (where such a code object comes from)
            alias = ast.TypeAlias(name=ast.Name(id="__unveil_alias__", ctx=ast.Store()),  # type: ignore[attr-defined, unused-ignore]  # 3.12+
                                  type_params=[], value=stmt.value)
            return ast.ClassDef(name="__unveil_class__", bases=[], keywords=[], body=[alias],  # type: ignore[call-arg, unused-ignore]  # 3.12 field
                                decorator_list=[], type_params=[])
        return stmt
    positional = code.co_varnames[:code.co_argcount]
    if code.co_name.isidentifier() and (positional == (".format",) or (
            "__classdict__" in code.co_freevars and positional == ())):
        # a lazily evaluated annotation scope in a class body (a type alias's value, a
        # type parameter's bound or default): an alias compiles to the same function
        value = generics.lazy_value(dec, code)
        if code.co_name in code.co_freevars:
            # it reads a variable of its own name from outside: a type parameter's bound
            # that names the parameter (``def f[T: T]()``); an alias would bind the name
            return ast.FunctionDef(
                name="__unveil_generic__", args=no_arguments(), body=[ast.Pass()],
                decorator_list=[], returns=None,
                type_params=[ast.TypeVar(name=code.co_name, bound=value)])  # type: ignore[attr-defined, call-arg, unused-ignore]  # 3.12+
        return ast.TypeAlias(name=ast.Name(id=code.co_name, ctx=ast.Store()),  # type: ignore[attr-defined, unused-ignore]  # 3.12+
                             type_params=[], value=value)
    name = code.co_name if code.co_name.isidentifier() else "_unveil_f"
    if simplify is not None:  # (the body decompiled as function_def would, simplified)
        child = dec.child(code)
        stmts = _simplified(code, child.statements(), simplify, fixed)
        node = function_def(code, name, dec, dec=child, statements=stmts)
    else:
        node = function_def(code, name, dec)
    node.decorator_list = []
    return node


def _names_around(code: CodeType) -> set[str]:
    """The names of the function a class body ``code`` is recompiled in that it would
    read from there (its own name, which the class statement binds, where its qualname
    says it is defined in a function)."""
    qualname = _qualname(code) or ""
    return {code.co_name} if qualname.endswith(f"<locals>.{code.co_name}") else set()


def _qualname(code: CodeType) -> str | None:
    """``code``'s qualified name (3.10: a class body's own ``__qualname__ = '...'``)."""
    qualname = getattr(code, "co_qualname", None)
    if qualname is None:
        raw = bytecode.instructions(code)[:8]
        qualname = next((a.argval for a, b in zip(raw, raw[1:], strict=False)
                         if a.opname == "LOAD_CONST" and b.opname == "STORE_NAME"
                         and b.argval == "__qualname__"), None)
    return qualname if isinstance(qualname, str) else None


def _simplified(code: CodeType, stmts: list[ast.stmt], changed: list[bool],
                fixed: Fixed | None) -> list[ast.stmt]:
    simpler = simplify_body(stmts, set(code.co_varnames[:argument_count(code)]), fixed)
    changed.append(simpler is not None)
    return stmts if simpler is None else simpler


def _plain_super_calls(code: CodeType) -> bool:
    """Does ``code`` (3.12+) call the global ``super`` without any ``LOAD_SUPER_ATTR``?"""
    if code_version(code) < (3, 12):
        return False
    ops = [(i.opname, i.argval) for e in iter_code_objects(code)
           for i in bytecode.instructions(e.code)]
    return ("LOAD_GLOBAL", "super") in ops and not any(op == "LOAD_SUPER_ATTR" for op, _ in ops)


def _closure_wrapper(node: ast.stmt, code: CodeType, outer: Sequence[str] = ()) -> ast.Module:
    """``node`` inside a function that binds ``code``'s free variables (and ``outer``)."""
    own = getattr(node, "name", None)
    if isinstance(own, ast.Name):  # ``type X = ...``: the alias's name is a Name node
        own = own.id
    bound = {p.name for p in getattr(node, "type_params", None) or ()}
    free = [n for n in code.co_freevars if n not in bound and n != ".type_params"]
    free += [n for n in outer if n not in free]
    if "__classdict__" in free:
        # code inside a class body that sees the class namespace (3.12+ annotation and
        # type parameter scopes)
        free.remove("__classdict__")
        node = ast.ClassDef(name="__unveil_class__", bases=[], keywords=[], body=[node],  # type: ignore[call-arg, unused-ignore]  # 3.12 field
                            decorator_list=[], type_params=[])
    elif code.co_flags & CodeFlag.METHOD and (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            or isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda)):
        # 3.14 marks functions (and lambdas) defined in a class body
        node = ast.ClassDef(name="__unveil_class__", bases=[], keywords=[], body=[node],  # type: ignore[call-arg, unused-ignore]  # 3.12 field
                            decorator_list=[], type_params=[])
    if not free:
        return ast.Module(body=[node], type_ignores=[])
    head: list[ast.stmt] = []
    if own is not None and own not in free and _reads_global(code, own):
        # the code reads its own name as a global: the definition must not make it a
        # local of the wrapper (a closure variable for the code)
        head.append(ast.Global(names=[own]))
    wrapper = holder("__unveil_closure__", [*head, *cells(free), node])
    return ast.Module(body=[wrapper], type_ignores=[])


def _in_enclosing_scopes(node: ast.stmt, code: CodeType) -> ast.Module | None:
    """A nested class (``__qualname__`` ``A.f.<locals>.C``, which its body stores) inside
    classes and functions of those names again, so that its body compiles to the same
    code; the innermost function holds the class's free variables. None where the
    qualname is not such a path (then :func:`_closure_wrapper` does)."""
    qualname = _qualname(code)
    if qualname is None or "." not in qualname:
        return None
    *outer, own = qualname.split(".")
    scopes: list[tuple[str, str]] = []  # (kind, name), outermost first
    for i, part in enumerate(outer):
        if part == "<locals>":
            continue
        if not part.isidentifier():
            return None
        local = i + 1 < len(outer) and outer[i + 1] == "<locals>"
        scopes.append(("function" if local else "class", part))
    free = list(code.co_freevars)
    if own != code.co_name or not scopes or "__classdict__" in free or ".type_params" in free \
            or free and scopes[-1][0] != "function":
        return None
    body: list[ast.stmt] = [*cells(free), node]
    for kind, name in reversed(scopes):
        body = [holder(name, body) if kind == "function" else ast.ClassDef(  # type: ignore[call-arg, unused-ignore]  # 3.12 field
            name=name, bases=[], keywords=[], body=body, decorator_list=[], type_params=[])]
    return ast.Module(body=body, type_ignores=[])


def _reads_global(code: CodeType, name: str) -> bool:
    """Does ``code`` or code nested in it use ``name`` as a global (an inlined
    comprehension may also bind it as a local of the same code)?"""
    if name in code.co_names and any(
            ins.opname in _GLOBAL_OPS and ins.argval == name
            for ins in bytecode.read_listing(code)):
        return True
    return any(isinstance(c, CodeType) and _reads_global(c, name) for c in code.co_consts)


_GLOBAL_OPS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL",
                         "LOAD_FROM_DICT_OR_GLOBALS"})


def _write(filename: str, source: str) -> None:
    try:
        write_atomic(filename, source)
    except OSError as exc:
        raise BadInputError(f"cannot write decompiled source to {filename}: "
                            f"{exc.strerror or exc}") from None


def _mark_constants(tree: ast.AST, constants: Constants) -> dict[str, Any]:
    """Swap each read of a constant's name in ``tree`` for a marker string constant (in
    place); the markers, to swap back in the compiled code's constants."""
    markers: dict[str, Any] = {}
    values = constants.values
    if not values:
        return markers

    def marked(node: ast.expr) -> ast.expr:
        if isinstance(node, ast.Name) and node.id in values and isinstance(node.ctx, ast.Load):
            marker = f"\x00unveil-const:{node.id}"
            markers[marker] = values[node.id]
            return ast.copy_location(ast.Constant(marker), node)
        return node

    for parent in walk(tree):
        for field in parent._fields:
            value = getattr(parent, field, None)
            if type(value) is ast.Name:
                setattr(parent, field, marked(value))
            elif type(value) is list:
                for k, item in enumerate(value):
                    if type(item) is ast.Name:
                        value[k] = marked(item)
    return markers


def _restore_constants(code: CodeType, markers: dict[str, Any]) -> CodeType:
    if not markers:
        return code
    consts = tuple(_restored(c, markers) for c in code.co_consts)
    changed = any(a is not b for a, b in zip(consts, code.co_consts, strict=True))
    return code.replace(co_consts=consts) if changed else code


def _restored(c: Any, markers: dict[str, Any]) -> Any:
    """``c`` with marker strings swapped back, also inside tuples the compiler folded."""
    if isinstance(c, str):
        return markers.get(c, c)
    if isinstance(c, CodeType):
        return _restore_constants(c, markers)
    if isinstance(c, tuple | frozenset):
        items = [_restored(x, markers) for x in c]
        if any(a is not b for a, b in zip(items, c, strict=True)):
            return type(c)(items)
    return c


def _find_code(code: CodeType, name: str, kind: str) -> CodeType | None:
    for c in code.co_consts:
        if isinstance(c, CodeType):
            if c.co_name == name and code_kind(c) == kind:
                return c
            inner = _find_code(c, name, kind)
            if inner is not None:
                return inner
    return None


# flags that say how a frame of the code is set up and run: the layout of its
# arguments, whether calling it makes a generator or coroutine
LAYOUT_FLAGS = (CodeFlag.OPTIMIZED | CodeFlag.NEWLOCALS | CodeFlag.VARARGS
                | CodeFlag.VARKEYWORDS | CodeFlag.GENERATOR | CodeFlag.COROUTINE
                | CodeFlag.ITERABLE_COROUTINE | CodeFlag.ASYNC_GENERATOR)


def layout_difference(original: CodeType, new: CodeType, cells: bool = True) -> str | None:
    """How ``new`` could not stand in for ``original`` in a frame made for it (its
    parameters, free and cell variables (``cells``: those too), or how it runs), or
    None."""
    fields = ("co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_freevars",
              *(("co_cellvars",) if cells else ()))
    for f in fields:
        if getattr(original, f) != getattr(new, f):
            return f"{f} {getattr(new, f)!r} instead of {getattr(original, f)!r}"
    if (original.co_flags ^ new.co_flags) & LAYOUT_FLAGS:
        return (f"flags {new.co_flags & LAYOUT_FLAGS:#x} instead of "
                f"{original.co_flags & LAYOUT_FLAGS:#x}")
    n = original.co_argcount + original.co_kwonlyargcount + \
        bool(original.co_flags & CodeFlag.VARARGS) + \
        bool(original.co_flags & CodeFlag.VARKEYWORDS)
    if original.co_varnames[:n] != new.co_varnames[:n]:
        return f"parameters {new.co_varnames[:n]!r} instead of {original.co_varnames[:n]!r}"
    return None


def _check_layout(original: CodeType, new: CodeType, kind: str) -> None:
    # (a function's code can replace another's in a frame, as Dynamo's does; other code
    # is rebuilt inside a stand-in for its scope, whose cells may differ)
    difference = layout_difference(original, new, cells=kind in ("function", "lambda"))
    if difference is not None:
        raise DecompilationError(f"recompiled code has {difference}",
                                 code_name=original.co_name)


__all__ = ["decompile", "recompile", "code_of", "types"]

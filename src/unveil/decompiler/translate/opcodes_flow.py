"""Opcode families of the executor for calls and what they make: calls, inlined
comprehensions, functions, imports, exception handling, generators, pattern matching
(see :mod:`.executor`)."""

from __future__ import annotations

import ast
import keyword
from typing import Any, cast

from ...bytecode import Instr
from ...codeobj import COMPREHENSIONS, GENERIC_PREFIX
from ...errors import DecompilationError
from ..ir.exprs import (
    ExcMatch,
    Func,
    Iterator,
    MatchCase,
    MethodSelf,
    Null,
    Shared,
    Special,
    const,
    name,
)
from ..ir.facts import ASYNC_COMPREHENSION, KIND, LIST_TO_TUPLE, SEQ, attach, fact
from ..ir.markers import ClassBuild, ExcMarker, ImportItem, ImportValue, intrinsic
from ..ir.nodes import LOAD
from .machine import Machine, family, stamp


@family({
    "CALL": "call", "CALL_KW": "call_kw", "CALL_FUNCTION": "call_function",
    "CALL_FUNCTION_KW": "call_function_kw", "CALL_EX": "call_ex",
    "CALL_FUNCTION_EX": "call_function_ex", "CALL_INTRINSIC_1": "call_intrinsic_1",
    "CALL_INTRINSIC_2": "call_intrinsic_2",
})
class Calls(Machine):
    """Calls: the 3.11+ two-slot convention and 3.10's one-slot one."""

    def call(self, ins: Instr) -> None:
        args = self.popn(ins.arg or 0)
        self._finish_call_two_slots(args, [])

    def call_kw(self, ins: Instr) -> None:
        names = self.pop()
        args = self.popn(ins.arg or 0)
        pos, kws = _split_keywords(args, names)
        self._finish_call_two_slots(pos, kws)

    def call_function(self, ins: Instr) -> None:
        args = self.popn(ins.arg or 0)
        func = self.pop()
        self.push(self.make_call(func, args, []))

    def call_function_kw(self, ins: Instr) -> None:
        names = self.pop()
        args = self.popn(ins.arg or 0)
        func = self.pop()
        pos, kws = _split_keywords(args, names)
        self.push(self.make_call(func, pos, kws))

    def call_ex(self, ins: Instr) -> None:
        flags = ins.arg or 0
        kwargs = self.pop() if flags else None
        if isinstance(kwargs, Null):
            kwargs = None
        args = self.pop()
        a, b = self.popn(2)
        func, self_arg = _callable_of(a, b)
        pos = _star_args(args)
        if self_arg is not None:
            pos.insert(0, self_arg)
        self.push(self.make_call(func, pos, _star_kwargs(kwargs)))

    def call_function_ex(self, ins: Instr) -> None:
        kwargs = self.pop() if ins.arg else None
        args = self.pop()
        func = self.pop()
        self.push(self.make_call(func, _star_args(args), _star_kwargs(kwargs)))

    def _finish_call_two_slots(self, args: list[ast.expr], kws: list[ast.keyword]) -> None:
        a, b = self.popn(2)
        func, self_arg = _callable_of(a, b)
        if self_arg is None and not isinstance(b, MethodSelf) and isinstance(func, ast.Attribute) \
                and isinstance(func.value, ast.Name) \
                and fact(func.value, KIND, "") in ("global", "name", "fast", "deref"):
            # 3.11+ calls ``module.f(...)`` without a method load only when ``module`` was
            # imported at module level, whatever scope the name is read from (a
            # parameter named like a module the file imports too): recompiling must know
            # that name is an import
            self.ctx.imported.add(func.value.id)
        if self_arg is not None:
            args = [self_arg, *args]
        self.push(self.make_call(func, args, kws))

    def make_call(self, func: ast.expr, args: list[ast.expr],
                  keywords: list[ast.keyword]) -> ast.expr:
        if isinstance(func, Special) and func.kind == "build_class":
            if len(args) < 2 or not isinstance(args[0], Func) \
                    or not isinstance(args[1], ast.Constant):
                self.fail(f"unrecognised class creation {args}")
            cb = ClassBuild(args[0], cast(str, args[1].value), args[2:], keywords)
            return stamp(cb)
        if isinstance(func, Func) and self.ctx.make_comprehension is not None \
                and func.code.co_name in COMPREHENSIONS and len(args) == 1 and not keywords:
            return stamp(self.ctx.make_comprehension(func, args[0]))
        if isinstance(func, Func) and self.ctx.make_generic is not None \
                and func.code.co_name.startswith(GENERIC_PREFIX) and not keywords:
            return stamp(self.ctx.make_generic(func, args))
        return stamp(ast.Call(func, args, keywords))

    def call_intrinsic_1(self, ins: Instr) -> None:
        value = self.pop()
        marker = intrinsic(str(ins.argval), [value])
        self.push(stamp(marker if marker is not None
                        else Special("intrinsic", value, str(ins.argval))))

    def call_intrinsic_2(self, ins: Instr) -> None:
        b = self.pop()
        a = self.pop()
        marker = intrinsic(str(ins.argval), [a, b])
        self.push(stamp(marker if marker is not None else
                        Special("intrinsic", ast.Tuple([a, b], LOAD),
                                str(ins.argval))))


def _callable_of(a: ast.expr, b: ast.expr) -> tuple[ast.expr, ast.expr | None]:
    """The callable and an extra first argument of a two-slot call."""
    if isinstance(a, Null):
        return b, None
    if isinstance(b, Null):
        return a, None
    if isinstance(b, MethodSelf):
        return a, None
    return a, b


def _split_keywords(args: list[ast.expr], names: ast.expr) -> tuple[list[ast.expr],
                                                                      list[ast.keyword]]:
    kwnames: object = names.value if isinstance(names, ast.Constant) else ()
    if not isinstance(kwnames, tuple) or len(kwnames) > len(args) \
            or not all(isinstance(k, str) for k in kwnames):
        raise DecompilationError(f"a call's keyword names are {kwnames!r:.60}, not a tuple "
                                 "of names for its arguments")
    n = len(kwnames)
    pos = args[:len(args) - n] if n else args
    kws = [ast.keyword(k, v) for k, v in zip(kwnames, args[len(args) - n:],
                                                        strict=True)] if n else []
    return list(pos), kws


def _star_args(args: ast.expr) -> list[ast.expr]:
    if isinstance(args, ast.Tuple | ast.List) and fact(args, SEQ, None) is not None:
        return list(args.elts)
    if isinstance(args, ast.Constant) and isinstance(args.value, tuple):
        return [const(v) for v in args.value]
    if fact(args, LIST_TO_TUPLE, False):
        args = args.args[0]  # type: ignore[attr-defined]  # ``*tuple(xs)`` is ``*xs``
    return [ast.Starred(args, LOAD)]


def _star_kwargs(kwargs: ast.expr | None) -> list[ast.keyword]:
    if kwargs is None:
        return []
    if isinstance(kwargs, ast.Dict):
        out: list[ast.keyword] = []
        for k, v in zip(kwargs.keys, kwargs.values, strict=True):
            if k is None:
                # ``f(**a, k=v)`` merges ``{'k': v}`` after ``a``, as ``**{'k': v}`` would
                # (keywords right after a ``**`` make a mapping of their own)
                names = _keyword_names(v) if type(v) is ast.Dict and out \
                    and out[-1].arg is None else None
                if names is None or any(kw.arg in names for kw in out):
                    out.append(ast.keyword(None, v))
                else:
                    out.extend(ast.keyword(n, x)
                               for n, x in zip(names, cast(ast.Dict, v).values, strict=True))
            elif isinstance(k, ast.Constant) and isinstance(k.value, str) \
                    and k.value.isidentifier():
                out.append(ast.keyword(k.value, v))
            else:
                return [ast.keyword(None, kwargs)]
        return out
    return [ast.keyword(None, kwargs)]


def _keyword_names(mapping: ast.Dict) -> list[str] | None:
    """The keys of a ``{'a': x, 'b': y}`` display as keyword argument names, or None."""
    names = [k.value if isinstance(k, ast.Constant) and type(k.value) is str
             and k.value.isidentifier() and not keyword.iskeyword(k.value) else None
             for k in mapping.keys]
    if not names or None in names or len(set(names)) != len(names):
        return None
    return cast("list[str]", names)


@family({"COMPREHENSION": "comprehension"})
class Inlined(Machine):
    """3.12+ inlined comprehensions, folded into one pseudo-instruction beforehand."""

    def comprehension(self, ins: Instr) -> None:
        iterable = self.pop()
        if isinstance(iterable, Iterator):
            iterable = iterable.value
        else:
            iterable = ast.Call(name("iter", "global"), [iterable], [])
        expr = _with_outer_iterable(ins.argval, iterable)
        saved = ins.arg or 0
        for _ in range(saved):
            self.push(Special("saved"))
        self.push(stamp(expr))


def _with_outer_iterable(node: ast.expr, iterable: ast.expr) -> ast.expr:
    import copy

    new: Any = copy.copy(node)  # (a comprehension)
    gens = list(new.generators)
    gens[0] = copy.copy(gens[0])
    gens[0].iter = iterable
    new.generators = gens
    return new


@family({"MAKE_FUNCTION": "make_function", "SET_FUNCTION_ATTRIBUTE": "set_function_attribute"})
class Functions(Machine):
    """Function objects: the code constant, defaults, annotations and closure cells."""

    def make_function(self, ins: Instr) -> None:
        flags = ins.arg or 0
        if flags & 0x100:
            self.pop()  # 3.10 qualified name
        code = self.pop()
        if not isinstance(code, ast.Constant) or not hasattr(code.value, "co_code"):
            self.fail("MAKE_FUNCTION without a code constant")
        # (3.13+ sets the attributes closure first: the closure is on top, then 3.14's
        # annotate function)
        closure = self.pop() if flags & 8 else None
        annotations = self.pop() if flags & 4 else None
        annotate = self.pop() if flags & 16 else None
        kwdefaults = self.pop() if flags & 2 else None
        defaults = self.pop() if flags & 1 else None
        func = Func(code.value, defaults, kwdefaults, annotations, closure)
        func.annotate = annotate
        self.push(stamp(func))

    def set_function_attribute(self, ins: Instr) -> None:
        func = self.pop()
        value = self.pop()
        if not isinstance(func, Func):
            self.fail("SET_FUNCTION_ATTRIBUTE on an unknown function")
        attr = {1: "defaults", 2: "kwdefaults", 4: "annotations", 8: "closure",
                16: "annotate"}.get(ins.arg or 0)
        if attr is None:
            self.fail("unknown function attribute")
        setattr(func, attr, value)
        self.push(func)


@family({"IMPORT_NAME": "import_name", "IMPORT_FROM": "import_from",
          "IMPORT_STAR": "import_star"})
class Imports(Machine):
    """``import`` statements, assembled from IMPORT_NAME, IMPORT_FROM and the stores after."""

    def import_name(self, ins: Instr) -> None:
        fromlist = self.pop()
        level = self.pop()
        if not isinstance(fromlist, ast.Constant) or not isinstance(level, ast.Constant):
            self.push(stamp(ast.Call(name("__import__", "global"),
                                     [const(ins.argval), name("globals", "global"),
                                           const(None), fromlist, level], [])))
            return
        self.push(ImportValue(ins.argval, fromlist.value, cast(int, level.value)))

    def import_from(self, ins: Instr) -> None:
        source = self.top()
        self.push(ImportItem(source, ins.argval))

    # ``import a.b as c`` keeps the chain below its item and pops it with SWAP; POP_TOP

    def import_star(self, ins: Instr) -> None:
        module = self.pop()
        if not isinstance(module, ImportValue):
            self.fail("import * of an unknown module")
        self.emit(ast.ImportFrom(module=module.module or None,
                                 names=[ast.alias(name="*")], level=module.level))


@family({
    "PUSH_EXC_INFO": "push_exc_info", "POP_EXCEPT": "pop_except",
    "CHECK_EXC_MATCH": "check_exc_match", "CHECK_EG_MATCH": "check_eg_match",
    "PREP_RERAISE_STAR": "prep_reraise_star", "WITH_EXCEPT_START": "with_except_start",
    "BEFORE_WITH": "before_with", "BEFORE_ASYNC_WITH": "before_with",
    "LOAD_ASSERTION_ERROR": "load_assertion_error", "STOPITERATION_ERROR": "stopiteration",
    "CLEANUP_THROW": "cleanup_throw", "PRINT_EXPR": "print_expr",
    "SETUP_ANNOTATIONS": "setup_annotations", "EXIT_INIT_CHECK": "exit_init_check",
})
class Exceptions(Machine):
    """Handlers and context managers; their statements are markers the structurer reads."""

    def push_exc_info(self, ins: Instr) -> None:
        exc = self.pop()
        self.push(Special("prev_exc"))
        self.push(exc)
        self.state.stmts.append(ExcMarker("push_exc_info", exc))

    def pop_except(self, ins: Instr) -> None:
        self.popn(ins.arg or 1)
        self.check_speculation()
        self.flush()  # (first: a value named now was still computed before)
        marker = ExcMarker("pop_except")
        # values computed while the exception was still being handled (a ``return``
        # value pushed after this belongs to code after the ``try`` statement)
        attach(marker, before={id(x) for x in self.state.stack}, offset=ins.offset)
        self.append(marker)

    def check_exc_match(self, ins: Instr) -> None:
        types = self.pop()
        exc = self.top()
        self.push(ExcMatch(exc, types))

    def check_eg_match(self, ins: Instr) -> None:
        types = self.pop()
        exc = self.pop()
        self.shares = True
        split = Shared(stamp(Special("eg_split", ast.Tuple([exc, types], LOAD))))
        attach(split, refs=2)
        rest = stamp(ast.Subscript(split, const(0), LOAD))
        match = stamp(ast.Subscript(split, const(1), LOAD))
        attach(match, eg_match=ExcMatch(exc, types, star=True))
        self.push(rest)
        self.push(match)

    def prep_reraise_star(self, ins: Instr) -> None:
        b = self.pop()
        a = self.pop()
        self.push(Special("reraise_star", ast.Tuple([a, b], LOAD)))

    def with_except_start(self, ins: Instr) -> None:
        depth = ins.arg or 4
        exc = self.top(ins.argval or 1)
        exit_fn = self.top(depth)
        result = Special("with_exit_result", exc)
        attach(result, exit=exit_fn)
        attach(result, exit_self=self.top(depth - 1) if depth == 5 else None)
        self.push(result)

    def before_with(self, ins: Instr) -> None:
        mgr = self.pop()
        marker = ExcMarker("with", mgr, ins.op == "BEFORE_ASYNC_WITH")
        self.emit(marker)
        specials = [Special("exit", mgr)]
        if (ins.arg or 1) == 2:
            specials.append(Special("exit_self", mgr))
        specials.append(Special("enter", mgr))
        attach(marker, specials=specials)
        for sp in specials:
            self.push(sp)

    def load_assertion_error(self, ins: Instr) -> None:
        self.push(name("AssertionError", "global"))

    def stopiteration(self, ins: Instr) -> None:
        self.push(Special("stopiteration_error", self.pop()))

    def cleanup_throw(self, ins: Instr) -> None:
        self.fail("unexpected CLEANUP_THROW")

    def print_expr(self, ins: Instr) -> None:
        self.emit(ast.Expr(self.pop()))

    def setup_annotations(self, ins: Instr) -> None:
        self.state.stmts.append(ExcMarker("setup_annotations"))

    def exit_init_check(self, ins: Instr) -> None:
        self.pop()


@family({
    "YIELD_VALUE": "yield_value", "YIELD_FROM": "yield_from", "GET_AWAITABLE": "get_awaitable",
    "GET_AITER": "get_aiter", "GET_ANEXT": "get_anext", "END_SEND": "end_send",
    "ASYNC_GEN_WRAP": "async_gen_wrap",
})
class Generators(Machine):
    """yield, yield from and await."""

    def yield_value(self, ins: Instr) -> None:
        value: ast.expr | None = self.pop()
        if isinstance(value, Special) and value.kind == "async_gen_wrap":
            value = value.value
        self.push(stamp(ast.Yield(None if _is_none(value) else value)))

    def yield_from(self, ins: Instr) -> None:
        sent = self.pop()
        receiver = self.pop()
        if not _is_none(sent):
            self.fail("yield from with a non-None first value")
        if isinstance(receiver, Iterator) and receiver.kind == "yield_from":
            self.push(stamp(ast.YieldFrom(receiver.value)))
        elif isinstance(receiver, Special) and receiver.kind == "awaitable":
            inner = cast(ast.expr, receiver.value)  # (an awaitable's value is set)
            if fact(inner, ASYNC_COMPREHENSION, False):
                self.push(inner)  # an async comprehension is awaited by its call site
            else:
                self.push(stamp(ast.Await(inner)))
        elif isinstance(receiver, Special) and receiver.kind == "anext":
            self.push(stamp(Special("anext_value", receiver.value)))
        else:
            self.push(stamp(ast.YieldFrom(receiver)))

    def get_awaitable(self, ins: Instr) -> None:
        self.push(stamp(Special("awaitable", self.pop())))

    def get_aiter(self, ins: Instr) -> None:
        self.push(stamp(Iterator(self.pop(), "aiter")))

    def get_anext(self, ins: Instr) -> None:
        self.push(stamp(Special("anext", self.top())))

    def end_send(self, ins: Instr) -> None:
        value = self.pop()
        self.pop()
        self.push(value)

    def async_gen_wrap(self, ins: Instr) -> None:
        self.push(Special("async_gen_wrap", self.pop()))


def _is_none(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


@family({
    "MATCH_CLASS": "match_class", "MATCH_MAPPING": "match_mapping",
    "MATCH_SEQUENCE": "match_sequence", "MATCH_KEYS": "match_keys",
    "COPY_DICT_WITHOUT_KEYS": "copy_dict_without_keys", "MATCH_CASE": "match_case",
})
class Matching(Machine):
    """Structural pattern matching: whole cases read back beforehand (``MATCH_CASE``), and
    the primitives of those that were not."""

    def match_case(self, ins: Instr) -> None:
        case = ins.argval
        subject = self.pop() if ins.arg else None
        self.check_speculation()
        self.flush(case.names)  # values read before the pattern binds its names
        if subject is None:
            subject = self.top()
        self.push(stamp(MatchCase(subject, case.pattern)))

    def match_class(self, ins: Instr) -> None:
        names = self.pop()
        cls = self.pop()
        subject = self.pop()
        self.push(stamp(Special("match_class", ast.Tuple([subject, cls, names],
                                                         LOAD))))
        attach(self.state.stack[-1], count=ins.arg)

    def match_mapping(self, ins: Instr) -> None:
        self.push(stamp(Special("match_mapping", self.top())))

    def match_sequence(self, ins: Instr) -> None:
        self.push(stamp(Special("match_sequence", self.top())))

    def match_keys(self, ins: Instr) -> None:
        keys = self.top()
        subject = self.top(2)
        self.push(stamp(Special("match_keys", ast.Tuple([subject, keys], LOAD))))

    def copy_dict_without_keys(self, ins: Instr) -> None:
        keys = self.pop()
        subject = self.top()
        self.push(stamp(Special("dict_without_keys", ast.Tuple([subject, keys],
                                                               LOAD))))

"""The equivalence check's opcode groups: what each instruction does to a path's state,
its stack and its effects (see :mod:`unveil.verify.equivalence`)."""

from __future__ import annotations

import ast
import sys
from types import CodeType
from typing import Any, cast

from ..bytecode import Raw
from .equivalence_terms import (
    BLOCKS,
    FUNCTION_ATTRS,
    FUNCTION_NAMES,
    NONE,
    NULL,
    NULL_FIRST,
    PY314,
    UNBOUND,
    Exploring,
    Obj,
    State,
    Term,
    Undecided,
    const_term,
    const_value,
    function_attr,
    is_term,
)

# ---------------------------------------------------------------- opcode groups


def _arg(ins: Raw) -> int:
    """``ins.arg`` of an instruction that takes an argument (``dis`` gives those an int)."""
    return cast(int, ins.arg)


def _pure_stack(ex: Exploring, st: State, ins: Raw) -> bool:
    """Stack shuffles and no-ops."""
    op, s = ins.opname, st.stack
    if op == "POP_TOP":
        s.pop()
    elif op == "PUSH_NULL":
        s.append(NULL)
    elif op == "COPY":
        s.append(s[-_arg(ins)])
    elif op == "SWAP":
        s[-1], s[-_arg(ins)] = s[-_arg(ins)], s[-1]
    elif op == "LOAD_CONST" and isinstance(ins.argval, CodeType):
        s.append(("code", *next(k for k, c in ex.codes.items() if c is ins.argval)))
    elif op == "LOAD_CONST":
        s.append(const_term(ins.argval))
    elif op == "RETURN_CONST":
        ex.end(st, ("return", const_term(ins.argval)))
        return False
    elif op == "LOAD_ASSERTION_ERROR":
        s.append(("builtin", "AssertionError"))
    elif op == "LOAD_COMMON_CONSTANT":  # 3.14: AssertionError, NotImplementedError, ...
        s.append(("builtin", ins.argrepr))
    elif op == "LOAD_SMALL_INT":
        s.append(const_term(ins.argval))
    elif op == "POP_ITER":
        s.pop()
    elif op == "KW_NAMES":  # 3.11's dis does not resolve its constant
        st.kw_names = const_term(ex.code.co_consts[_arg(ins)])
    return True


def _locals(ex: Exploring, st: State, ins: Raw) -> bool:
    """Fast locals: pure, except that reading or deleting an unbound one raises."""
    op, s = ins.opname, st.stack
    names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
    if op in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW",
              "LOAD_FAST_BORROW_LOAD_FAST_BORROW"):
        for name in names:
            value = _bound(ex, st, name)
            if value is None:
                return False
            s.append(value)
    elif op == "LOAD_FAST_AND_CLEAR":
        s.append(st.local.pop(names[0], UNBOUND))
    elif op in ("STORE_FAST", "STORE_FAST_STORE_FAST", "STORE_FAST_MAYBE_NULL"):
        for name in names:
            value = s.pop()
            if value == UNBOUND:
                st.local.pop(name, None)
            else:
                st.local[name] = value
    elif op == "STORE_FAST_LOAD_FAST":
        st.local[names[0]] = s.pop()
        value = _bound(ex, st, names[1])
        if value is None:
            return False
        s.append(value)
    elif op == "DELETE_FAST":
        if _bound(ex, st, names[0]) is None:
            return False
        del st.local[names[0]]
    return True


def _bound(ex: Exploring, st: State, name: str) -> Term | None:
    """The value of local ``name``; None where reading it raises (the path goes on
    there). A loop's local that may be unbound (the loop may not have run, or it
    deletes it) forks: bound, or raising."""
    value = st.local.get(name, UNBOUND)
    if value == UNBOUND:
        ex.raise_(st, ("builtin", "UnboundLocalError", name))
        return None
    if value[0] == "phi" and value[3]:
        ex.flush(st)
        unbound = st.fork()
        unbound.note(("bound", value[:3], False))
        ex.raise_(unbound, ("builtin", "UnboundLocalError", name))
        st.note(("bound", value[:3], True))
        value = st.local[name] = (*value[:3], False)
    return value


def _push_callable(stack: list[Term], value: Term, null: bool | int) -> None:
    """Push ``value``, with a NULL where this version's calls expect one beside it."""
    if null and NULL_FIRST:
        stack.append(NULL)
    stack.append(value)
    if null and not NULL_FIRST:
        stack.append(NULL)


def _outside(ex: Exploring, st: State, ins: Raw) -> bool:
    """Globals, cells and attributes: reads are terms or effects, writes are effects."""
    op, s = ins.opname, st.stack
    if op == "LOAD_GLOBAL":
        # 3.11+: the low bit asks for a NULL beside it
        stored = st.stores.get(("STORE_GLOBAL", ins.argval))
        if stored:
            value = stored[0]
        elif ex.fixed is not None and ex.fixed(ins.argval, None):
            value = ("fixed", ins.argval)
        else:
            value = ("global", ins.argval, st.now())
        _push_callable(s, value, not BLOCKS and _arg(ins) & 1)
    elif op == "LOAD_DEREF":
        stored = st.stores.get(("STORE_DEREF", ins.argval))
        s.append(stored[0] if stored else ("deref", ins.argval, st.now()))
    elif op == "LOAD_CLOSURE":
        s.append(("cell", ins.argval))
    elif op == "MAKE_CELL":  # 3.13 loads cells with LOAD_FAST
        st.local[ins.argval] = ("cell", ins.argval)
    elif op == "COPY_FREE_VARS":
        pass
    elif op in ("STORE_GLOBAL", "STORE_DEREF"):  # runs no code: kept until the next effect
        value = s.pop()
        st.stores[op, ins.argval] = (value, ex.render(st, value))
    elif op in ("DELETE_GLOBAL", "DELETE_DEREF"):
        ex.effect(st, op, ins.argval)
    elif op in ("LOAD_ATTR", "LOAD_METHOD"):
        method = op == "LOAD_METHOD" or (sys.version_info >= (3, 12) and _arg(ins) & 1)
        owner = s.pop()
        obj = ex.local_obj(st, owner)
        if obj is not None and obj.kind == "list" and ins.argval in ("append", "extend", "pop"):
            value = ("method", owner, ins.argval)
        elif obj is not None and obj.kind == "function" and ins.argval in FUNCTION_ATTRS:
            # a function made here: ``(lambda: x).__closure__[0]`` is x's cell
            value = function_attr(obj, ins.argval)
        elif owner[:2] == ("const", "str") and ins.argval in ("removeprefix", "removesuffix"):
            value = ("strmethod", owner, ins.argval)
        elif owner[0] == "fixed" and len(owner) == 2 and ex.fixed is not None and ex.fixed(owner[1], ins.argval):
            value = ("fixed", owner[1], ins.argval)
        else:
            value = ex.effect(st, "getattr", owner, ins.argval)
        _push_callable(s, value, method)
    elif op == "LOAD_SUPER_ATTR":  # 3.12+: super().name, the call and lookup in one
        self_arg, cls, sup = s.pop(), s.pop(), s.pop()
        value = ex.effect(st, "super_attr", sup, cls, self_arg, ins.argval, _arg(ins) & 2)
        _push_callable(s, value, _arg(ins) & 1)
    elif op == "STORE_ATTR":
        owner, value = s.pop(), s.pop()
        obj = ex.local_obj(st, owner)
        if obj is not None and obj.kind == "function" and ins.argval in FUNCTION_NAMES:
            obj.items[FUNCTION_NAMES[ins.argval]] = value
        else:
            ex.effect(st, "setattr", owner, ins.argval, value)
    elif op == "DELETE_ATTR":
        ex.effect(st, "delattr", s.pop(), ins.argval)
    elif op == "IMPORT_NAME":
        fromlist = s.pop()
        level = s.pop()
        s.append(ex.effect(st, "import", ins.argval, fromlist, level))
    elif op == "IMPORT_FROM":
        s.append(ex.effect(st, "import_from", s[-1], ins.argval))
    return True


def _pop(stack: list[Term], n: int) -> list[Term]:
    """The top ``n`` values, popped, bottom first."""
    if not n:
        return []
    values = stack[-n:]
    del stack[-n:]
    return values


def _callee(first: Term, second: Term) -> tuple[Term, list[Term]]:
    """The callable and its self argument (if any) from the two slots under a call's
    arguments: NULL and callable, or method and self (3.13+: callable, then self or NULL)."""
    if NULL_FIRST:
        return (second, []) if first == NULL else (first, [second])
    return (first, []) if second == NULL else (first, [second])


def _call_keywords_last(ex: Exploring, st: State, fn: Term, args: list[Term],
                        names: Term | None) -> Term:
    """Call ``fn``; the last ``len(names)`` arguments are keywords (``names``: the
    constant tuple of KW_NAMES, CALL_KW or CALL_FUNCTION_KW)."""
    kwnames = tuple(n[2] for n in names[1:]) if names is not None else ()
    split = len(args) - len(kwnames)
    return ex.call(st, fn, args[:split], kwnames, args[split:])


def _calls(ex: Exploring, st: State, ins: Raw) -> bool:
    op, s = ins.opname, st.stack
    if op == "PRECALL":
        return True
    if op in ("CALL", "CALL_KW"):
        names: Term | None
        if op == "CALL_KW":
            names = s.pop()
        else:
            names, st.kw_names = st.kw_names, None
        args = _pop(s, _arg(ins))
        second, first = s.pop(), s.pop()
        fn, self_arg = _callee(first, second)
        s.append(_call_keywords_last(ex, st, fn, self_arg + args, names))
        return True
    # CALL_FUNCTION_EX
    kwargs: Term | None
    if PY314:  # a kwargs slot, NULL when there are none
        kwargs = s.pop()
        kwargs = None if kwargs == NULL else kwargs
    else:
        kwargs = s.pop() if _arg(ins) & 1 else None
    star = s.pop()
    if BLOCKS:
        fn = s.pop()
    else:
        second, first = s.pop(), s.pop()
        if (first == NULL) == (second == NULL):
            raise Undecided("CALL_FUNCTION_EX without a NULL beside the callable")
        fn = second if first == NULL else first
    items = ex.items_of(st, star)
    positional = items if items is not None else [("star", star)]
    keywords: list[str] = []
    values: list[Term] = []
    if kwargs is not None:
        obj = ex.local_obj(st, kwargs)
        if obj is not None and obj.kind == "dict" and all(
                k[0] == "const" and k[1] == "str" for k, _ in obj.items):
            keywords = [k[2] for k, _ in obj.items]
            values = [v for _, v in obj.items]
        else:
            keywords, values = ["**"], [kwargs]
    s.append(ex.call(st, fn, positional, tuple(keywords), values))
    return True


def _operators(ex: Exploring, st: State, ins: Raw) -> bool:
    """Arithmetic, comparisons, formatting: effects (they may run ``__dunder__`` code)."""
    op, s = ins.opname, st.stack
    if op == "IS_OP":
        right, left = s.pop(), s.pop()
        if {left, right} & st.not_none and NONE in (left, right):  # (never None)
            s.append(const_term(bool(ins.arg)))
            return True
        result = is_term(left, right, bool(ins.arg))
        if result[0] == "is":
            st.bools.add(result)
        s.append(result)
    elif op == "CONTAINS_OP":  # ``not in`` is ``in``, negated
        right, left = s.pop(), s.pop()
        result = ex.effect(st, "in", left, right, result_bool=True)
        if ins.arg:
            result = ("not", result)
            st.bools.add(result)
        s.append(result)
    elif op in ("BINARY_OP", "COMPARE_OP"):
        right, left = s.pop(), s.pop()
        if op == "BINARY_OP" and ins.argrepr == "[]":  # 3.14's subscript
            s.append(_getitem(ex, st, left, right))
            return True
        if op == "BINARY_OP" and ins.argrepr == "+" and left[:2] == right[:2] == ("const", "str"):
            s.append(const_term(const_value(left) + const_value(right)))
            return True
        # the argument names the operator (argrepr alone may be empty or ambiguous)
        to_bool = op == "COMPARE_OP" and sys.version_info >= (3, 13) and _arg(ins) & 16
        # (3.14's dis shows the folded truth test in argrepr: 'bool(>=)')
        shown = ins.argrepr.removeprefix("bool(").removesuffix(")") if to_bool else ins.argrepr
        result = ex.effect(st, op, _arg(ins) & ~16 if to_bool else ins.arg, shown, left, right)
        if to_bool:  # 3.13 folds the truth test into the comparison
            result = ex.effect(st, "bool", result, result_bool=True)
        s.append(result)
    elif op in ("UNARY_NEGATIVE", "UNARY_INVERT", "UNARY_POSITIVE"):
        s.append(ex.effect(st, op, s.pop()))
    elif op in ("UNARY_NOT", "TO_BOOL"):
        value = s.pop()
        known = ex.truth(st, value)
        if known is not None:
            value = const_term(known)
        elif value not in st.bools:
            value = ex.effect(st, "bool", value, result_bool=True)
        if op == "UNARY_NOT":
            value = const_term(not known) if known is not None else ("not", value)
            st.bools.add(value)
        s.append(value)
    elif op == "FORMAT_VALUE":
        spec = s.pop() if _arg(ins) & 4 else const_term("")
        s.append(ex.effect(st, "format", _arg(ins) & 3, s.pop(), spec))
    elif op in ("CONVERT_VALUE", "FORMAT_SIMPLE"):
        s.append(ex.effect(st, op, ins.arg, s.pop()))
    elif op == "FORMAT_WITH_SPEC":
        spec = s.pop()
        s.append(ex.effect(st, "format", 0, s.pop(), spec))
    elif op == "BUILD_STRING":
        s.append(("str", *_pop(s, _arg(ins))))
    return True


def _containers(ex: Exploring, st: State, ins: Raw) -> bool:
    """Building, filling, indexing and unpacking tuples, lists, dicts and sets."""
    op, s, n = ins.opname, st.stack, ins.arg or 0
    items: list[Term] | None
    if op in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_SLICE"):
        items = _pop(s, n)
        if op == "BUILD_SLICE":
            s.append(("slice", *items, NONE) if n == 2 else ("slice", *items))
        elif op == "BUILD_TUPLE":
            s.append(("tuple", *items))
        elif op == "BUILD_SET":
            s.append(_new_set(ex, st, items))
        else:
            s.append(ex.new_obj(st, op[6:].lower(), items))
    elif op in ("BUILD_MAP", "BUILD_CONST_KEY_MAP"):
        if op == "BUILD_MAP":
            flat = _pop(s, 2 * n)
            pairs = [[flat[i], flat[i + 1]] for i in range(0, len(flat), 2)]
        else:
            keys = s.pop()
            values = _pop(s, n)
            pairs = [[k, v] for k, v in zip(keys[1:], values, strict=True)]
        if any(_key(k) is _NOT_CONSTANT for k, _ in pairs):
            # hashing and comparing the keys may run code: one effect makes the dict
            s.append(ex.effect(st, "dict", tuple(tuple(p) for p in pairs)))
            return True
        made: list[list[Term]] = []
        for key, value in pairs:
            _dict_set(made, key, value)
        s.append(ex.new_obj(st, "dict", made))
    elif op in ("LIST_APPEND", "SET_ADD", "LIST_EXTEND", "SET_UPDATE"):
        value = s.pop()
        target = s[-n]
        obj = ex.local_obj(st, target)
        items = [value] if op in ("LIST_APPEND", "SET_ADD") else ex.items_of(st, value)
        if op == "SET_UPDATE" and items is None:
            items = _frozenset_items(value)
        if obj is not None and obj.kind == "set":
            if items is not None and all(set_key(i) for i in items):
                for item in items:
                    _set_add(obj.items, item)
            else:  # hashing the items, iterating the value, may run code
                ex.effect(st, op, target, value)
        elif obj is None:
            ex.effect(st, op, target, value)
        elif items is None:
            obj.items.append(("star", ex.effect(st, "iter", value)))
        else:
            obj.items.extend(items)
    elif op in ("DICT_UPDATE", "DICT_MERGE", "MAP_ADD"):
        if op == "MAP_ADD":
            value, key = s.pop(), s.pop()
            source: Obj | None = Obj("dict", [[key, value]])
        else:
            value = s.pop()
            source = ex.local_obj(st, value)
        target = s[-n]
        obj = ex.local_obj(st, target)
        if obj is None or source is None or source.kind != "dict" or any(
                _key(k) is _NOT_CONSTANT or (op == "DICT_MERGE" and k[1] != "str")
                for k, _ in source.items):
            ex.effect(st, op, target, value)
        else:
            for key, val in source.items:
                if op == "DICT_MERGE" and _dict_get(obj.items, key) is not None:
                    raise Undecided("a repeated keyword argument")
                _dict_set(obj.items, key, val)
    elif op in ("LIST_TO_TUPLE", "CALL_INTRINSIC_1"):
        if op == "CALL_INTRINSIC_1" and ins.argrepr != "INTRINSIC_LIST_TO_TUPLE":
            s.append(ex.effect(st, ins.argrepr, s.pop()))
            return True
        value = s.pop()
        obj = ex.local_obj(st, value)
        if obj is None:
            s.append(ex.effect(st, "tuple", value))
        else:
            s.append(("tuple", *obj.items))
    elif op in ("BINARY_SUBSCR", "BINARY_SLICE"):
        key = s.pop() if op == "BINARY_SUBSCR" else ("slice", *reversed([s.pop(), s.pop()]), NONE)
        s.append(_getitem(ex, st, s.pop(), key))
    elif op in ("STORE_SUBSCR", "STORE_SLICE"):
        key = s.pop() if op == "STORE_SUBSCR" else ("slice", *reversed([s.pop(), s.pop()]), NONE)
        container, value = s.pop(), s.pop()
        _setitem(ex, st, container, key, value)
    elif op == "DELETE_SUBSCR":
        key, container = s.pop(), s.pop()
        _setitem(ex, st, container, key, None)
    elif op in ("UNPACK_SEQUENCE", "UNPACK_EX"):
        value = s.pop()
        items = ex.items_of(st, value)
        if op == "UNPACK_SEQUENCE" and items is not None and len(items) == n:
            s.extend(reversed(items))
        else:
            result = ex.effect(st, op, value, n)
            count = n if op == "UNPACK_SEQUENCE" else (n & 0xFF) + 1 + (n >> 8)
            s.extend(("item", result, i) for i in reversed(range(count)))
    return True


_NOT_CONSTANT = object()
_KEY_TYPES = ("str", "int", "bool", "float", "NoneType", "bytes", "complex")


def _key(term: Term) -> Any:
    """The value of a dict key term whose hash and equality run no code (a constant of
    a built-in type, or a tuple of such), else ``_NOT_CONSTANT``."""
    if term[0] == "const" and term[1] in _KEY_TYPES:
        try:
            return ast.literal_eval(term[2])
        except (ValueError, SyntaxError):  # nan, inf: no literal
            return _NOT_CONSTANT
    if term[0] == "tuple":
        items = tuple(_key(t) for t in term[1:])
        return _NOT_CONSTANT if _NOT_CONSTANT in items else items
    return _NOT_CONSTANT


def _new_set(ex: Exploring, st: State, items: list[Term]) -> Term:
    """A set display: the frame's own set while its items are constants whose hash and
    equality run no code; else one effect (hashing them may run code)."""
    if not all(set_key(i) for i in items):
        return ex.effect(st, "set", tuple(items))
    made: list[Term] = []
    for item in items:
        _set_add(made, item)
    return ex.new_obj(st, "set", made)


def set_key(term: Term) -> bool:
    """Whether a set holds ``term`` as equality of values says: a constant whose hash
    and equality run no code, and no NaN (a set tells NaNs apart by identity)."""
    def plain(value: Any) -> bool:
        if isinstance(value, tuple):
            return all(plain(v) for v in value)
        return not (isinstance(value, float | complex) and value != value)
    value = _key(term)
    return value is not _NOT_CONSTANT and plain(value)


def _set_add(items: list[Term], item: Term) -> None:
    """``s.add(item)`` on a set's constant items: an equal item stays as it was."""
    value = _key(item)
    if all(_key(i) != value for i in items):
        items.append(item)


def _frozenset_items(term: Term) -> list[Term] | None:
    """The items of a constant frozenset (3.9+ builds constant set displays from one),
    in a fixed order (a set's order is not compared), or None."""
    if term[:2] != ("const", "frozenset"):
        return None
    try:
        return [const_term(ast.literal_eval(r)) for r in ast.literal_eval(term[2])]
    except (ValueError, SyntaxError):
        return None


def _dict_get(pairs: list[list[Term]], key: Term) -> list[Term] | None:
    """The [key, value] pair of a constant ``key`` (equal as Python compares keys:
    ``1``, ``1.0`` and ``True`` are one key), or None."""
    value = _key(key)
    if value is _NOT_CONSTANT:
        return None
    return next((p for p in pairs if _key(p[0]) == value), None)


def _dict_set(pairs: list[list[Term]], key: Term, value: Term) -> None:
    """``d[key] = value`` on a dict's pairs: an equal key keeps its place and object."""
    pair = _dict_get(pairs, key)
    if pair is not None:
        pair[1] = value
    else:
        pairs.append([key, value])


def _index(term: Term, length: int) -> int | slice | None:
    """A constant index or slice (of constants) as Python values."""
    def value(t: Term) -> Any:
        if t[0] != "const" or t[1] not in ("int", "NoneType"):
            raise ValueError
        return None if t[1] == "NoneType" else int(t[2])
    try:
        if term[0] == "slice":
            return slice(*(value(t) for t in term[1:]))
        index = value(term)
    except ValueError:
        return None
    return index if index is not None and -length <= index < length else None


def _getitem(ex: Exploring, st: State, container: Term, key: Term) -> Term:
    items = ex.items_of(st, container)
    if items is not None:
        index = _index(key, len(items))
        if isinstance(index, int):
            return items[index]
        if isinstance(index, slice):
            if container[0] == "tuple":
                return ("tuple", *items[index])
            return ex.new_obj(st, st.heap[container[1]].kind, items[index])
    obj = ex.local_obj(st, container)
    if obj is not None and obj.kind == "dict":
        pair = _dict_get(obj.items, key)
        if pair is not None:
            return pair[1]
    return ex.effect(st, "getitem", container, key)


def _setitem(ex: Exploring, st: State, container: Term, key: Term, value: Term | None) -> None:
    """``container[key] = value`` (``del container[key]`` when value is None)."""
    obj = ex.local_obj(st, container)
    if obj is not None and obj.kind == "list" and not any(i[0] == "star" for i in obj.items):
        index = _index(key, len(obj.items))
        items = ex.items_of(st, value) if value is not None and key[0] == "slice" else None
        if isinstance(index, int) and value is not None and key[0] != "slice":
            obj.items[index] = value
            return
        if isinstance(index, slice) and index.step is None and (value is None or items is not None):
            obj.items[index] = items or []
            return
        if isinstance(index, int) and value is None:
            del obj.items[index]
            return
    if obj is not None and obj.kind == "dict" and _key(key) is not _NOT_CONSTANT \
            and value is not None:
        _dict_set(obj.items, key, value)
        return
    if value is None:
        ex.effect(st, "delitem", container, key)
    else:
        ex.effect(st, "setitem", container, key, value)


def _flow(ex: Exploring, st: State, ins: Raw) -> bool:
    """Jumps, returns, raises and exception handlers."""
    op, s = ins.opname, st.stack
    if op in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP", "JUMP_NO_INTERRUPT",
              "JUMP_BACKWARD_NO_INTERRUPT"):
        ex.jump(st, ins)
    elif op.endswith(("_IF_NONE", "_IF_NOT_NONE")):
        value = s.pop()
        test = const_term(False) if value in st.not_none else is_term(value, NONE, False)
        if test[0] == "is":
            st.bools.add(test)
        return ex.branch(st, test, not op.endswith("_NOT_NONE"), ins)
    elif op.endswith(("_IF_TRUE", "_IF_FALSE", "_OR_POP")):
        # 3.11's JUMP_IF_X_OR_POP keeps the value on the stack where it jumps
        return ex.branch(st, s.pop(), "_TRUE" in op, ins, keep=op.endswith("_OR_POP"))
    elif op == "RETURN_VALUE":
        ex.end(st, ("return", ex.render(st, s.pop())))
        return False
    elif op == "RAISE_VARARGS":
        if ins.arg == 0:
            exc = st.exc_info
        else:  # making the exception may run code; either way this path raises
            args = [s.pop() for _ in range(_arg(ins))][::-1]
            ex.flush(st)
            exc = ("exc", st.now())
            st.effects += 1
            st.note(("raise", *(ex.render(st, a) for a in args)))
        ex.raise_(st, exc)
        return False
    elif op == "RERAISE":
        exc = s.pop()
        if BLOCKS:  # 3.10: the (type, value, traceback) a handler found
            del s[-2:]
            exc = exc[1]
        # (3.11+: with an argument, it reads the offset under the exception, not pops it)
        ex.raise_(st, exc)
        return False
    elif op == "PUSH_EXC_INFO":
        exc = s.pop()
        s.append(st.exc_info)
        st.exc_info = exc
        s.append(exc)
    elif op == "POP_EXCEPT" and BLOCKS:
        target, level = st.blocks.pop()
        st.exc_info = s[-1][1]
        del s[-3:]
    elif op == "POP_EXCEPT":
        st.exc_info = s.pop()
    elif op == "CHECK_EXC_MATCH":
        kind = s.pop()
        s.append(ex.effect(st, "except_match", s[-1], kind, result_bool=True))
    elif op == "BEFORE_WITH":
        manager = s.pop()
        entered = ex.effect(st, "with_enter", manager)
        s.append(("exit_of", entered))
        s.append(entered)
    elif op == "LOAD_SPECIAL":  # 3.14: ``__enter__``/``__exit__`` looked up on the type
        s.append(ex.effect(st, "special", s.pop(), ins.argrepr))
        s.append(NULL)
    elif op == "WITH_EXCEPT_START":
        exit_fn, exc = (s[-7], s[-1][1]) if BLOCKS else (s[-5] if PY314 else s[-4], s[-1])
        s.append(ex.effect(st, "call", exit_fn, ("exc_args", exc), (), ()))
    elif op == "MAKE_FUNCTION":
        qualname = s.pop() if BLOCKS else None
        code = s.pop()
        parts: list[tuple[int, Term]] = []
        if sys.version_info < (3, 13):
            for flag in (8, 4, 2, 1):
                if _arg(ins) & flag:
                    parts.append((flag, s.pop()))
        made = ex.codes[code[1:]]
        s.append(ex.new_obj(st, "function", [code, tuple(sorted(parts)),
                                             const_term(made.co_name),
                                             qualname or const_term(made.co_qualname)]))  # type: ignore[attr-defined, unused-ignore]  # 3.11+; 3.10 pops qualname
    elif op == "SET_FUNCTION_ATTRIBUTE":
        fn, value = s.pop(), s.pop()
        obj = ex.local_obj(st, fn)
        if obj is None or obj.kind != "function":
            raise Undecided("SET_FUNCTION_ATTRIBUTE on a function made elsewhere")
        obj.items[1] = tuple(sorted((*obj.items[1], (ins.arg, value))))
        s.append(fn)
    elif op == "GET_ITER":
        s.append(ex.effect(st, "iter", s.pop()))
    elif op == "FOR_ITER":  # the next item, or (exhausted) the iterator popped, and out
        item = ex.effect(st, "next", s[-1])
        done = st.fork()
        done.note(("next", item, False))
        done.stack.pop()
        done.pc = ex.for_exits[st.pc - 1]
        ex.work.append(done)
        st.note(("next", item, True))
        s.append(item)
    return True


_BINARY_310 = {
    "POWER", "MULTIPLY", "MATRIX_MULTIPLY", "FLOOR_DIVIDE", "TRUE_DIVIDE", "MODULO", "ADD",
    "SUBTRACT", "LSHIFT", "RSHIFT", "AND", "XOR", "OR"}


def exc_triple(exc: Term) -> list[Term]:
    """What 3.10 pushes for an exception: its traceback, value and type (type on top)."""
    return [("exc_tb", exc), ("exc_value", exc), ("exc_type", exc)]


def _py310(ex: Exploring, st: State, ins: Raw) -> bool:
    """3.10's own instructions: the block stack, named operators, older calls."""
    op, s = ins.opname, st.stack
    if op == "SETUP_FINALLY":
        st.blocks.append((ins.argval, len(s)))
    elif op == "SETUP_WITH":
        entered = ex.effect(st, "with_enter", s.pop())
        s.append(("exit_of", entered))
        st.blocks.append((ins.argval, len(s)))
        s.append(entered)
    elif op == "POP_BLOCK":
        st.blocks.pop()
    elif op == "JUMP_IF_NOT_EXC_MATCH":
        kind, found = s.pop(), s.pop()
        match = ex.effect(st, "except_match", found[1], kind, result_bool=True)
        return ex.branch(st, match, False, ins)
    elif op == "JUMP_ABSOLUTE":
        ex.jump(st, ins)
    elif op == "DUP_TOP":
        s.append(s[-1])
    elif op == "DUP_TOP_TWO":
        s.extend(s[-2:])
    elif op.startswith("ROT_"):
        n = {"ROT_TWO": 2, "ROT_THREE": 3, "ROT_FOUR": 4}.get(op, _arg(ins))
        s.insert(len(s) - n, s.pop())
    elif op in ("CALL_FUNCTION", "CALL_FUNCTION_KW", "CALL_METHOD"):
        names = s.pop() if op == "CALL_FUNCTION_KW" else None
        args = _pop(s, _arg(ins))
        if op == "CALL_METHOD":
            second, first = s.pop(), s.pop()
            fn, self_arg = _callee(first, second)
        else:
            fn, self_arg = s.pop(), []
        s.append(_call_keywords_last(ex, st, fn, self_arg + args, names))
    else:  # BINARY_X / INPLACE_X: the opcode names the operator
        right, left = s.pop(), s.pop()
        if op == "BINARY_ADD" and left[:2] == right[:2] == ("const", "str"):
            s.append(const_term(const_value(left) + const_value(right)))
        else:
            s.append(ex.effect(st, "BINARY_OP", op, left, right))
    return True


_GROUPS = {
    _pure_stack: "NOP RESUME CACHE POP_TOP PUSH_NULL COPY SWAP LOAD_CONST RETURN_CONST "
                 "LOAD_ASSERTION_ERROR KW_NAMES NOT_TAKEN LOAD_COMMON_CONSTANT LOAD_SMALL_INT "
                 "POP_ITER",
    _locals: "LOAD_FAST LOAD_FAST_CHECK LOAD_FAST_LOAD_FAST LOAD_FAST_BORROW "
             "LOAD_FAST_BORROW_LOAD_FAST_BORROW LOAD_FAST_AND_CLEAR STORE_FAST "
             "STORE_FAST_STORE_FAST STORE_FAST_LOAD_FAST STORE_FAST_MAYBE_NULL DELETE_FAST",
    _outside: "LOAD_GLOBAL LOAD_DEREF LOAD_CLOSURE MAKE_CELL COPY_FREE_VARS STORE_GLOBAL "
              "STORE_DEREF DELETE_GLOBAL DELETE_DEREF LOAD_ATTR LOAD_METHOD STORE_ATTR "
              "DELETE_ATTR IMPORT_NAME IMPORT_FROM LOAD_SUPER_ATTR",
    _calls: "PRECALL CALL CALL_KW CALL_FUNCTION_EX",
    _operators: "IS_OP BINARY_OP COMPARE_OP CONTAINS_OP UNARY_NEGATIVE UNARY_INVERT "
                "UNARY_POSITIVE UNARY_NOT TO_BOOL FORMAT_VALUE CONVERT_VALUE FORMAT_SIMPLE "
                "FORMAT_WITH_SPEC BUILD_STRING",
    _containers: "BUILD_TUPLE BUILD_LIST BUILD_SET BUILD_SLICE BUILD_MAP BUILD_CONST_KEY_MAP "
                 "LIST_APPEND SET_ADD LIST_EXTEND SET_UPDATE DICT_UPDATE DICT_MERGE MAP_ADD "
                 "LIST_TO_TUPLE CALL_INTRINSIC_1 BINARY_SUBSCR BINARY_SLICE STORE_SUBSCR "
                 "STORE_SLICE DELETE_SUBSCR UNPACK_SEQUENCE UNPACK_EX",
    _flow: "JUMP_FORWARD JUMP_BACKWARD JUMP JUMP_NO_INTERRUPT JUMP_BACKWARD_NO_INTERRUPT "
           "POP_JUMP_IF_NONE POP_JUMP_IF_NOT_NONE POP_JUMP_FORWARD_IF_NONE "
           "POP_JUMP_FORWARD_IF_NOT_NONE POP_JUMP_BACKWARD_IF_NONE "
           "POP_JUMP_BACKWARD_IF_NOT_NONE POP_JUMP_IF_TRUE POP_JUMP_IF_FALSE "
           "POP_JUMP_FORWARD_IF_TRUE POP_JUMP_FORWARD_IF_FALSE POP_JUMP_BACKWARD_IF_TRUE "
           "POP_JUMP_BACKWARD_IF_FALSE JUMP_IF_TRUE_OR_POP JUMP_IF_FALSE_OR_POP "
           "RETURN_VALUE RAISE_VARARGS RERAISE PUSH_EXC_INFO POP_EXCEPT CHECK_EXC_MATCH "
           "BEFORE_WITH LOAD_SPECIAL WITH_EXCEPT_START MAKE_FUNCTION SET_FUNCTION_ATTRIBUTE "
           "GET_ITER FOR_ITER",
}
if BLOCKS:
    _GROUPS[_py310] = ("SETUP_FINALLY SETUP_WITH POP_BLOCK JUMP_IF_NOT_EXC_MATCH JUMP_ABSOLUTE "
                       "DUP_TOP DUP_TOP_TWO ROT_TWO ROT_THREE ROT_FOUR ROT_N CALL_FUNCTION "
                       "CALL_FUNCTION_KW CALL_METHOD "
                       + " ".join(f"{kind}_{name}" for kind in ("BINARY", "INPLACE")
                                  for name in sorted(_BINARY_310)))
STEPS = {name: step for step, names in _GROUPS.items() for name in names.split()}

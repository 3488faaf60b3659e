"""Expression values of the symbolic stack.

Values are ``ast.expr`` trees. A few extra node types stand for things that have no
source form of their own while the decompiler works (a stack slot at a block's
entry, the NULL of a call, a caught exception, a value used more than once...);
:func:`render` turns every one of them into plain ``ast`` before printing.

A value that is used more than once is wrapped in one :class:`Shared` node, referred
to from every place it is used. It is rendered as an assignment expression at the
place it is evaluated first and as the temporary's name everywhere else, unless an
idiom gets rid of the sharing, or a statement assigned it to a temporary first.
"""

from __future__ import annotations

import ast
import itertools
import math
from typing import Any, ClassVar, Literal, TypeAlias, cast

from .facts import FLIPPED, KIND, SEQ, NameKind, attach, fact
from .nodes import LOAD

# ---------------------------------------------------------------- extra nodes


def rebuilt(cls: type[ast.AST]) -> ast.AST:
    """An empty node of ``cls`` for ``copy`` to fill in: the decompiler's own nodes take
    arguments that ``ast.AST``'s own ``__reduce__`` (before 3.14) does not give them."""
    return cls.__new__(cls)


class Marker(ast.expr):
    """Base of the decompiler's own expression nodes.

    Each sets its fields in its own ``__init__`` and does not call ``ast.AST``'s, which,
    given no arguments, sets nothing (``rebuilt`` makes nodes without it too): one call
    less for each of the many made."""

    _fields: ClassVar[tuple[str, ...]] = ()

    def __reduce__(self) -> tuple[Any, ...]:
        return rebuilt, (type(self),), self.__dict__


class Slot(Marker):
    """Stack entry ``index`` as it was on entry to a block: the variable ``_s<index>``."""

    _fields = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


class MatchCase(Marker):
    """Does ``subject`` match ``pattern`` (binding its names when it does)? Only the test
    of an ``if``, which the renderer writes as a ``match`` statement."""

    _fields = ("subject",)

    def __init__(self, subject: ast.expr, pattern: ast.pattern) -> None:
        self.subject = subject
        self.pattern = pattern


class Null(Marker):
    """The NULL pushed before (or after) a callable."""


class MethodSelf(Marker):
    """The ``self`` pushed by a method load: the object of ``method``."""

    _fields = ("method",)

    def __init__(self, method: ast.expr) -> None:
        self.method = method


class Cell(Marker):
    """The cell object of variable ``name`` (``LOAD_CLOSURE``)."""

    _fields = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


#: what a :class:`Special` stands for
SpecialKind: TypeAlias = Literal[
    # values exception handlers push for themselves (3.10: six of them)
    "exc", "prev_exc", "lasti", "exc_type", "exc_tb", "prev_type", "prev_value", "prev_tb",
    "next",  # the item FOR_ITER pushes
    "exit", "exit_self", "enter", "with_exit_result",  # with set-up and clean-up
    "anext", "anext_value", "awaitable", "async_gen_wrap", "stopiteration_error", "saved",
    "build_class", "convert",
    # a primitive's stand-in (see COMPUTED_SPECIALS)
    "match_sequence", "match_mapping", "match_keys", "match_class", "dict_without_keys",
    "reraise_star", "eg_split",
    "intrinsic",  # a CALL_INTRINSIC the IR has no node for (``name`` says which)
]


class Special(Marker):
    """A value the interpreter pushes for its own use (``kind``, see :data:`SpecialKind`):
    the exception a handler caught (``exc``), the exception info saved by
    ``PUSH_EXC_INFO`` (``prev_exc``), the item ``FOR_ITER`` pushes (``next``), a ``with``
    statement's ``exit``/``exit_self``/``enter`` (``value`` the manager), a primitive's
    stand-in...
    """

    _fields = ("kind", "value")

    def __init__(self, kind: SpecialKind, value: ast.expr | None = None, name: str = "") -> None:
        self.kind: SpecialKind = kind
        self.value = value
        self.name = name  # an ``intrinsic``'s name (``INTRINSIC_...``)


HANDLER_VALUES = frozenset({"exc", "prev_exc", "lasti",  # (3.10: a handler's six values)
                            "prev_tb", "prev_value", "prev_type", "exc_tb", "exc_type"})


def handler_values_only(values: list[ast.expr]) -> bool:
    """Are ``values`` (a stack) only what exception handlers pushed for themselves?"""
    return bool(values) and all(isinstance(x, Special) and x.kind in HANDLER_VALUES
                                for x in values)


class Shared(Marker):
    """One evaluation of ``value`` referred to from several places."""

    _fields = ("value",)

    def __init__(self, value: ast.expr) -> None:
        self.value = value
        self.name: str | None = None  # set when assigned to a temporary by a statement


class UnpackItem(Marker):
    """Item ``index`` of an unpacking (``UNPACK_SEQUENCE``/``UNPACK_EX``) still to be stored."""

    _fields = ("unpack", "index")

    def __init__(self, unpack: Any, index: int) -> None:
        self.unpack = unpack
        self.index = index


#: how an :class:`Iterator` was made: ``GET_ITER``, ``GET_YIELD_FROM_ITER``, ``GET_AITER``
IteratorKind: TypeAlias = Literal["iter", "yield_from", "aiter"]


class Iterator(Marker):
    """``iter(value)`` as pushed by ``GET_ITER``."""

    _fields = ("value", "kind")

    def __init__(self, value: ast.expr, kind: IteratorKind = "iter") -> None:
        self.value = value
        self.kind: IteratorKind = kind


class Func(Marker):
    """A function object made by ``MAKE_FUNCTION`` (rendered as a lambda or a nested def)."""

    _fields = ("code", "defaults", "kwdefaults", "annotations", "closure")

    def __init__(self, code: Any, defaults: ast.expr | None, kwdefaults: ast.expr | None,
                 annotations: ast.expr | None, closure: ast.expr | None) -> None:
        self.code = code
        self.defaults = defaults
        self.kwdefaults = kwdefaults
        self.annotations = annotations
        self.closure = closure
        self.annotate: ast.expr | None = None
        self.type_params: list[Any] | None = None  # PEP 695, see generics.py
        # pushed again by ``COPY`` (the middle of ``a in (lambda: a) != b``): dropping
        # one of the references leaves the function to the other
        self.copied = False


class ExcMatch(Marker):
    """``isinstance(<exception>, types)`` as a handler's test (``CHECK_EXC_MATCH``)."""

    _fields = ("exc", "types", "star")

    def __init__(self, exc: ast.expr, types: ast.expr, star: bool = False) -> None:
        self.exc = exc
        self.types = types
        self.star = star


# ---------------------------------------------------------------- construction helpers


def set_items(values: frozenset[Any]) -> list[Any]:
    """The items of a set constant in one order whatever the hash seed or the Python (the
    source's order is not in the bytecode): sorted, or by ``repr`` where they do not
    compare."""
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=repr)


def const(value: object) -> ast.expr:
    return ast.Constant(cast(Any, value))  # code constants: tuples, frozensets too


def name(ident: str, kind: NameKind = "fast") -> ast.Name:
    node = ast.Name(ident, LOAD)
    node.__dict__["kind"] = kind  # (``attach(node, kind=kind)``: a hot path)
    return node


def is_null(node: ast.expr) -> bool:
    return isinstance(node, Null)


def unwrap(node: ast.expr) -> ast.expr:
    """The value behind a shared wrapper."""
    while isinstance(node, Shared) and node.name is None:
        node = node.value
    return node


#: Special values that stand for a computation (a primitive's stand-in), not for a value the
#: interpreter pushed: they must not be evaluated twice or late.
COMPUTED_SPECIALS = frozenset({"match_keys", "match_class", "dict_without_keys",
                               "reraise_star", "eg_split"})

# (tuples, made once: ``isinstance`` with ``A | B`` builds the union on every call)
_ALWAYS_STABLE = (ast.Constant, Slot, Null, Cell, MethodSelf)
_SEQUENCES = (ast.Tuple, ast.List, ast.Set)
#: the displays that make a new mutable object (for ``isinstance``)
MUTABLE_DISPLAYS = (ast.List, ast.Set, ast.Dict)


def is_stable(node: ast.expr) -> bool:
    """True when evaluating ``node`` later than it was pushed gives the same value and effects.

    Constants, temporaries, block-entry slots, markers and fast locals are stable;
    fast locals only until something stores to them (the executor checks that).
    """
    if isinstance(node, _ALWAYS_STABLE):
        return True
    if isinstance(node, Shared):
        return node.name is not None or is_stable(node.value)
    if isinstance(node, Special):
        # (a value the interpreter computes with effects, such as a class pattern's
        # attribute look-ups, is evaluated where it stands)
        return node.kind not in COMPUTED_SPECIALS
    if getattr(node, "stable", False):
        return True
    if isinstance(node, ast.Name):
        return fact(node, KIND, "fast") in ("fast", "temp")
    if isinstance(node, _SEQUENCES):
        # a display made later is a new, equal object: nothing else holds this one yet
        # (a value used twice is ``Shared``)
        return all(is_stable(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and is_stable(k) for k in node.keys) and \
            all(is_stable(v) for v in node.values)
    if isinstance(node, Func):
        # making a function has no effect beyond evaluating its parts
        parts = (node.defaults, node.kwdefaults, node.annotations, node.annotate, node.closure)
        return all(p is None or is_stable(p) for p in parts)
    return False


def reads_local(node: ast.expr, ident: str) -> bool:
    """Does ``node`` (unevaluated) read fast local ``ident``?"""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id == ident and isinstance(sub.ctx, ast.Load):
            return True
        if isinstance(sub, Shared) and sub.name is None and reads_local(sub.value, ident):
            return True
    return False


def float_constant(value: float) -> ast.expr:
    """A source expression for float ``value``, nan and infinities included."""
    if math.isnan(value):
        return ast.BinOp(ast.Constant(1e309), ast.Sub(), ast.Constant(1e309))
    if math.isinf(value):
        node: ast.expr = ast.Constant(1e309)
        return ast.UnaryOp(ast.USub(), node) if value < 0 else node
    if value == 0.0 and math.copysign(1.0, value) < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(0.0))
    if value < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(-value))
    return ast.Constant(value)


# ---------------------------------------------------------------- temporaries


class Names:
    """Fresh names for temporaries that cannot clash with the code's own names."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)
        self.generated: set[str] = set()
        self._counter = itertools.count()
        # stack slots are ``_s0``, ``_s1``...: a prefix none of the code's names uses
        self.slot_prefix = "_s"
        private = [n for n in self.taken if n.startswith("_")]  # (the prefix's candidates)
        while any(n.startswith(self.slot_prefix) and n[len(self.slot_prefix):].isdigit()
                  for n in private):
            self.slot_prefix = "_" + self.slot_prefix

    def fresh(self, stem: str = "_t") -> str:
        while True:
            candidate = f"{stem}{next(self._counter)}"
            if candidate not in self.taken:
                self.taken.add(candidate)
                self.generated.add(candidate)
                return candidate



_INVERSE_CMP = {ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}


def negate(node: ast.expr, folded: bool) -> ast.expr:
    """``not node``, written as the compiler would fold it back: ``not not x`` is ``x``,
    an ``is``/``in`` test flips (``folded``: the code's version folds ``not a in b`` in a
    test, before 3.14, ``Layout.folded_not_tests``), and ``not (not a or b)`` is
    ``a and not b``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return node.operand
    if isinstance(node, ast.Compare) and len(node.ops) == 1 \
            and type(node.ops[0]) in _INVERSE_CMP \
            and (folded or fact(node, FLIPPED, False)):
        new: ast.expr = ast.Compare(node.left, [_INVERSE_CMP[type(node.ops[0])]()],
                                    node.comparators)
        attach(new, flipped=not fact(node, FLIPPED, False))
    elif isinstance(node, ast.BoolOp) and _cheaper_inside(node, folded):
        op = ast.And() if isinstance(node.op, ast.Or) else ast.Or()
        new = ast.BoolOp(op, [negate(v, folded) for v in node.values])
    else:
        new = ast.UnaryOp(ast.Not(), node)
    seq = fact(node, SEQ, None)
    if seq is not None:
        attach(new, _seq=seq)
    return new


def operator_flips(node: ast.expr, folded: bool) -> bool:
    """Would ``negate`` change an ``is``/``in`` operator the bytecode holds? The compiler
    folds ``not (a in b)`` into ``a not in b``, so such a test jumping on true comes from
    ``if a in b: pass`` with an ``else``, not from a negation in the source. 3.14
    keeps ``not a in b`` in a test as written."""
    return folded and isinstance(node, ast.Compare) and len(node.ops) == 1 \
        and type(node.ops[0]) in _INVERSE_CMP and not fact(node, FLIPPED, False)


def _restores_operator(node: ast.expr, folded: bool) -> bool:
    """Would negating ``node`` give an ``is``/``in`` test a negation flipped its
    operator back (one inside an ``and``/``or`` that negation goes into)?"""
    if isinstance(node, ast.Compare):
        return fact(node, FLIPPED, False)
    return isinstance(node, ast.BoolOp) and _cheaper_inside(node, folded) \
        and any(_restores_operator(v, folded) for v in node.values)


def _cheaper_inside(node: ast.BoolOp, folded: bool) -> bool:
    """Does negating each operand take no more ``not`` than one around them all (and
    does some operand fold: ``not x``, an ``is``/``in`` test a negation flipped)? An
    ``is``/``in`` test as the bytecode has it does not: ``not (a is b and c)`` keeps
    its ``is``, ``a is not b or not c`` does not."""
    inside = 0
    folds = False
    if any(_restores_operator(v, folded) for v in node.values) and not any(
            operator_flips(v, folded) for v in node.values):
        return True  # (an ``is``/``in`` test inside gets the bytecode's operator back)
    for v in node.values:
        if isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not):
            inside -= 1
            folds = True
        elif isinstance(v, ast.Compare) and len(v.ops) == 1 and type(v.ops[0]) in _INVERSE_CMP:
            if not fact(v, FLIPPED, False):
                return False  # (its operator would change)
            folds = True
        else:
            inside += 1
    return folds and inside <= 1

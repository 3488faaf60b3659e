"""What the structurer's parts share: its exception, the contexts it carries down while
it structures (:class:`Ctx`: the enclosing loop, clean-ups, clauses), and the helpers
that read and edit statement lists (markers, clean-ups, copies the compiler made)."""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeGuard, cast

from ..ir.blocks import IRBlock
from ..ir.compare import Key, expr_key, stmt_key
from ..ir.exprs import ExcMatch, Shared, Slot, Special, handler_values_only
from ..ir.facts import (
    BEFORE,
    EG_MATCH,
    IMPLICIT,
    IS_ASYNC,
    RERAISE_OF,
    SEQ,
    WITH_EXIT,
    WRITTEN,
    attach,
    fact,
)
from ..ir.markers import ExcMarker, MarkerKind, is_marker
from ..ir.nodes import same


class Unstructurable(Exception):
    """The control flow has no structured form the structurer recognises."""


@dataclass(slots=True)
class Loop:
    header: int
    body: set[int]
    follow: int | None
    cont: int
    endless: bool = False  # (``while True:``: every way out is a ``break``)


@dataclass(slots=True)
class Cleanup:
    """Statements copied before every exit of a construct (innermost constructs last)."""

    stmts: list[ast.stmt]
    kind: str  # finally | with | clause


@dataclass(frozen=True, slots=True)
class Ctx:
    follow: int | None = None
    loop: Loop | None = None
    handler: int | None = None
    region: frozenset[int] = frozenset()
    cleanups: tuple[Cleanup, ...] = ()
    loop_cleanups: int = 0  # cleanups that were active when the innermost loop began
    clause: ClauseInfo | None = None
    tails: frozenset[int] = frozenset()  # exit tails of the enclosing constructs

    def following(self, follow: int | None) -> Ctx:
        """This context, ending at ``follow``: ``replace(self, follow=follow)`` (each
        field named here, not looked up: made for every ``if`` and its arms)."""
        return Ctx(follow, self.loop, self.handler, self.region, self.cleanups,
                   self.loop_cleanups, self.clause, self.tails)


@dataclass(slots=True)
class ClauseInfo:
    name: str | None
    after: int | None = None  # where the try statement goes on (its follow)
    exits: list[tuple[int, int]] = field(default_factory=list)  # (block, first stmt after)


MAX_VISITS = 4
STRUCTURAL = {"prev_exc", "lasti", "exit", "exit_self", "prev_tb", "prev_value", "prev_type"}


# ---------------------------------------------------------------- statement helpers


def term_key(block: IRBlock) -> tuple[Key, ...]:
    """What a block ends with, comparable across copies the compiler made."""
    term = block.term
    if term.kind == "goto":
        return ("goto", str(term.targets[0]))
    if isinstance(term.value, Special):  # (each copy has its own, of one kind)
        return (term.kind, f"<{term.value.kind}>")
    value = "" if term.value is None else expr_key(term.value)
    return (term.kind, value)


def none_to_missing(node: ast.expr | None) -> ast.expr | None:
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    return node


def slot_store(slot: Slot) -> ast.Name:
    node = ast.Name(id=f"_s{slot.index}", ctx=ast.Store())
    attach(node, slot=slot.index)
    return node


def assign_slots(pairs: list[tuple[Slot, ast.expr]]) -> ast.stmt:
    return ast.Assign(targets=[ast.Tuple(elts=[slot_store(s) for s, _ in pairs],
                                         ctx=ast.Store())],
                      value=ast.Tuple(elts=[v for _, v in pairs], ctx=ast.Load()))


def computed_after(value: ast.expr | None, marker: ast.stmt) -> bool:
    """Was ``value`` computed after the ``POP_EXCEPT`` ``marker`` (not a constant)?"""
    before = fact(marker, BEFORE, None)
    return value is not None and before is not None and not isinstance(value, ast.Constant) \
        and id(value) not in before


def find_marker(stmts: list[ast.stmt], kind: MarkerKind) -> int | None:
    for i, s in enumerate(stmts):
        if is_marker(s, kind):
            return i
    return None


def is_exc(node: ast.expr | None) -> bool:
    return isinstance(node, Special) and node.kind in ("exc", "exc_type")


def starts_loop(b: int, ctx: Ctx) -> bool:
    """A construct whose body begins at the head of the loop it is in (``while True:
    try: ...``): its first block is not the loop's ``continue``."""
    return ctx.loop is not None and ctx.loop.header == b


def hoist_common_tail(stmts: list[ast.stmt], written: bool = False) -> list[ast.stmt]:
    """``if c: A; T`` / ``else: T`` as ``if c: A`` then ``T`` (nested ifs too): the
    compiler copies a short ending (``return x``) into both arms of an ``if`` that ends
    a copied clean-up. So is ``try: A; T`` / ``except: B; T`` then ``T`` for a
    ``return`` of a constant ``T``: each arm that ends in it falls through to it.
    ``written``: a written ``return None`` and the implicit one are not one ending.
    (New nodes: ``stmts`` is left as it was.)"""
    tail: ast.stmt | None
    if len(stmts) >= 2 and isinstance(stmts[-2], ast.Try) and not stmts[-2].finalbody \
            and isinstance(stmts[-1], ast.Return) \
            and isinstance(stmts[-1].value, ast.Constant | None):
        node, tail = _copied_try(stmts[-2]), stmts[-1]
        for arm in (node.orelse or node.body, *(h.body for h in node.handlers)):
            if arm and same(arm[-1], tail):
                arm[-1:] = [] if len(arm) > 1 else [ast.Pass()]
        return [*stmts[:-2], node, tail]
    if stmts and isinstance(stmts[-1], ast.Try) and not stmts[-1].finalbody:
        node = _copied_try(stmts[-1])
        arms = [node.orelse or node.body, *(h.body for h in node.handlers)]
        tail = arms[0][-1] if arms[0] else None
        if isinstance(tail, ast.Return) and isinstance(tail.value, ast.Constant | None) \
                and all(arm and same(arm[-1], tail) for arm in arms):
            for arm in arms:  # (an emptied ``else`` goes)
                arm[-1:] = [] if len(arm) > 1 or arm is node.orelse else [ast.Pass()]
            return [*stmts[:-1], node, tail]
        return stmts
    if not stmts or not isinstance(stmts[-1], ast.If) or not stmts[-1].orelse:
        return stmts
    last = stmts[-1]
    body = hoist_common_tail(last.body, written)
    orelse = hoist_common_tail(last.orelse, written)
    n = 0
    while n < min(len(body), len(orelse)) and same(body[-1 - n], orelse[-1 - n]) \
            and (not written or _copy_of(body[-1 - n], orelse[-1 - n])):
        n += 1
    if n == 0:
        return stmts
    return [*stmts[:-1], ast.If(test=last.test, body=body[:len(body) - n] or [ast.Pass()],
                                orelse=orelse[:len(orelse) - n]), *body[len(body) - n:]]


def _copied_try(node: ast.Try) -> ast.Try:
    """``node`` with lists of its own (body, ``else``, each handler's body) to cut."""
    new = copy.copy(node)
    new.body, new.orelse = list(node.body), list(node.orelse)
    new.handlers = [copy.copy(h) for h in node.handlers]
    for h in new.handlers:
        h.body = list(h.body)
    return new


def _copy_of(a: ast.stmt, b: ast.stmt) -> bool:
    """Can ``a`` and ``b`` (alike) be the compiler's copies of one ``return``? Not the
    implicit ``return None`` and a written one (by its position)."""
    return not isinstance(a, ast.Return) \
        or fact(a, IMPLICIT, False) == fact(b, IMPLICIT, False)


def breaks_for(body: list[ast.stmt], is_copy: Callable[[ast.stmt], bool]) -> list[ast.stmt]:
    """A loop's ``body`` with the compiler's copies of what follows the loop (``is_copy``)
    as the ``break`` they were (in its ifs, not in inner loops or clauses)."""
    out: list[ast.stmt] = []
    for stmt in body:
        if is_copy(stmt):
            out.append(ast.Break())
        elif isinstance(stmt, ast.If):
            out.append(ast.If(test=stmt.test, body=breaks_for(stmt.body, is_copy),
                              orelse=breaks_for(stmt.orelse, is_copy)))
        else:
            out.append(stmt)
    return out


def strip_reraise(stmts: list[ast.stmt]) -> list[ast.stmt] | None:
    """A ``finally`` handler's statements without the re-raise that ends every path
    (the compiler copies it into both arms of an ``if`` that ends the clause); None
    when some path does not end in one."""
    if not stmts:
        return None
    last = stmts[-1]
    if _is_reraise(last):
        head = stmts[:-1]
        if head and isinstance(head[-1], ast.If):
            # ``if c: ...; raise`` then ``raise``: both are the one re-raise at the end
            body = strip_reraise(head[-1].body)
            orelse = strip_reraise(head[-1].orelse) if head[-1].orelse else []
            head = [*head[:-1], ast.If(test=head[-1].test,
                                       body=(head[-1].body if body is None else body)
                                       or [ast.Pass()],
                                       orelse=head[-1].orelse if orelse is None else orelse)]
        if head and isinstance(head[-1], ast.While | ast.For) and not head[-1].orelse:
            # a ``break`` out of the clause's last loop goes to the re-raise: the compiler
            # gave it a copy of its own
            loop = copy.copy(head[-1])
            loop.body = breaks_for(loop.body, _is_reraise)
            head = [*head[:-1], loop]
        return head
    if isinstance(last, ast.If) and last.orelse:
        # (an arm that leaves the statement, by ``return``, ``break``, ``continue`` or a
        # new exception, is as written: the finally swallows the exception there)
        leave = (leaves(last.body), leaves(last.orelse))
        if all(leave):
            return None
        body = _without_exit_markers(last.body) if leave[0] else strip_reraise(last.body)
        orelse = _without_exit_markers(last.orelse) if leave[1] \
            else strip_reraise(last.orelse)
        if body is None or orelse is None:
            return None
        return [*stmts[:-1], ast.If(test=last.test, body=body or [ast.Pass()], orelse=orelse)]
    return None


def canonical(stmt: ast.stmt) -> ast.stmt:
    """``stmt`` as two copies of one ``finally`` are compared: in a loop's body, a
    ``continue`` that ends it (or ends the arms of the ``if`` that ends it) is left out,
    since the structurer writes one copy with it and the other without."""
    if isinstance(stmt, ast.While | ast.For | ast.AsyncFor):
        fields: dict[str, Any] = {f: getattr(stmt, f, None) for f in stmt._fields}
        fields["body"] = _without_trailing_continue([canonical(s) for s in stmt.body]) \
            or [ast.Pass()]
        return type(stmt)(**fields)
    if isinstance(stmt, ast.If):
        return ast.If(test=stmt.test, body=[canonical(s) for s in stmt.body],
                      orelse=[canonical(s) for s in stmt.orelse])
    return stmt


def _without_trailing_continue(stmts: list[ast.stmt]) -> list[ast.stmt]:
    if stmts and isinstance(stmts[-1], ast.Continue):
        return _without_trailing_continue(stmts[:-1])
    if stmts and isinstance(stmts[-1], ast.If):
        last = stmts[-1]
        return [*stmts[:-1], ast.If(test=last.test,
                                    body=_without_trailing_continue(last.body) or [ast.Pass()],
                                    orelse=_without_trailing_continue(last.orelse))]
    return stmts


def _without_exit_markers(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """``stmts`` (every path leaving) without the handler's ``pop_except`` before each way
    out: a ``finally`` that leaves swallows the exception there, as written."""
    out: list[ast.stmt] = []
    for k, stmt in enumerate(stmts):
        if is_marker(stmt, "pop_except") and k + 1 < len(stmts) \
                and isinstance(stmts[k + 1], ast.Return | ast.Break | ast.Continue | ast.Raise):
            continue
        if k == len(stmts) - 1 and isinstance(stmt, ast.If):
            stmt = ast.If(test=stmt.test, body=_without_exit_markers(stmt.body),
                          orelse=_without_exit_markers(stmt.orelse))
        out.append(stmt)
    return out


def flatten_leaving(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """Each ``if c: ...; return`` with ``else: rest`` in ``stmts`` as the ``if`` then
    ``rest`` (the copies of one ``finally`` come out in either form)."""
    out: list[ast.stmt] = []
    for stmt in stmts:
        if isinstance(stmt, ast.If) and stmt.orelse and leaves(stmt.body):
            out.append(ast.If(test=stmt.test, body=stmt.body, orelse=[]))
            out.extend(flatten_leaving(stmt.orelse))
        else:
            out.append(stmt)
    return out


def leaves(stmts: list[ast.stmt]) -> bool:
    """Whether every path through ``stmts`` ends in a ``return``, ``break``, ``continue``
    or a ``raise`` of a new exception (never the handler's re-raise)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return | ast.Break | ast.Continue):
        return True
    if isinstance(last, ast.Raise):
        return not _is_reraise(last)
    if isinstance(last, ast.If) and last.orelse:
        return leaves(last.body) and leaves(last.orelse)
    return False


def fold_nested_ifs(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """``if a: if b: X`` (neither with ``else``) as ``if a and b: X``: the handler's copy
    of a ``finally`` keeps the two tests apart where each jumps to its own re-raise."""
    out: list[ast.stmt] = []
    for stmt in stmts:
        if isinstance(stmt, ast.If):
            body = fold_nested_ifs(stmt.body)
            orelse = fold_nested_ifs(stmt.orelse)
            if not orelse and len(body) == 1 and isinstance(body[0], ast.If) \
                    and not body[0].orelse:
                tests = [t for x in (stmt.test, body[0].test) for t in (
                    x.values if isinstance(x, ast.BoolOp) and isinstance(x.op, ast.And)
                    else [x])]
                stmt = ast.If(test=ast.BoolOp(op=ast.And(), values=tests),
                              body=body[0].body, orelse=[])
            else:
                stmt = ast.If(test=stmt.test, body=body, orelse=orelse)
        out.append(stmt)
    return out


def _is_reraise(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Raise) and stmt.exc is None and \
        is_exc(fact(stmt, RERAISE_OF, None))


def is_next_store(stmt: ast.stmt) -> TypeGuard[ast.Assign]:
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
        isinstance(stmt.value, Special) and stmt.value.kind == "next"


def eg_match_of(node: ast.expr | None) -> ExcMatch | None:
    """The ``except*`` type test whose match part ``node`` is (``CHECK_EG_MATCH``)."""
    while isinstance(node, Shared):
        node = node.value
    return cast("ExcMatch | None", fact(node, EG_MATCH, None))


def eg_test(test: ast.expr | None) -> ExcMatch | None:
    """``<match part> is None``: the test that skips an ``except*`` clause."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) \
            and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value is None:
        return eg_match_of(test.left)
    return None


def _is_eg_split(node: ast.expr) -> bool:
    while isinstance(node, Shared):
        node = node.value
    if isinstance(node, ast.Subscript):
        node = node.value
        while isinstance(node, Shared):
            node = node.value
    return isinstance(node, Special) and node.kind == "eg_split"


def is_eg_machinery(stmt: ast.stmt) -> bool:
    """What an ``except*`` handler does besides its clauses: save the exception, start
    the list of raised exceptions, split the rest."""
    if is_marker(stmt, "push_exc_info"):
        return True
    if not isinstance(stmt, ast.Assign):
        return False
    value = stmt.value
    while isinstance(value, Shared):
        value = value.value
    return isinstance(value, ast.List) and not value.elts or _is_eg_split(value)


def is_eg_collect(block: IRBlock) -> bool:
    """The handler around an ``except*`` clause body: forget the clause's name, add the
    exception to the list of raised ones and go on to the next clause."""
    stmts = block.stmts
    i = 2 if is_name_cleanup(stmts, 0) else 0
    if block.term.kind != "goto" or len(stmts) not in (i + 1, i + 2) \
            or not all(is_list_append(s) for s in stmts[i:]):
        return False
    return is_exc(stmts[i].value.args[0])  # type: ignore[attr-defined]  # an append call


def strip_clause_end(stmts: list[ast.stmt], name: str | None,
                      lists: frozenset[str]) -> list[ast.stmt] | None:
    """An ``except*`` clause body without what the compiler adds where it ends (the
    clean-up of its name, adding the rest to the list), on every path that gets there;
    None when a path ends without it."""
    out = list(stmts)
    if out and is_list_append(out[-1], lists):
        out.pop()
    if name is None:
        return out
    if is_name_cleanup(out, len(out) - 2, name):
        return out[:-2]
    if out and isinstance(out[-1], ast.Raise):
        return out
    if out and isinstance(out[-1], ast.If):
        last = out[-1]
        body = strip_clause_end(last.body, name, lists)
        orelse = strip_clause_end(last.orelse, name, lists)
        if body is None or orelse is None:
            return None
        out[-1] = ast.If(test=last.test, body=body or [ast.Pass()], orelse=orelse)
        return out
    return None


def is_list_append(stmt: ast.stmt, lists: frozenset[str] = frozenset()) -> bool:
    """``LIST_APPEND`` to a list on the stack (or to one of the named ``lists``): an
    ``except*`` statement's own list of raised exceptions."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "append"
            and len(stmt.value.args) == 1):
        return False
    target = stmt.value.func.value
    while isinstance(target, Shared):
        target = target.value
    return isinstance(target, Slot) or isinstance(target, ast.Name) and target.id in lists


def stores_exc(stmt: ast.stmt) -> TypeGuard[ast.Assign]:
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and is_exc(stmt.value)


def has_unassigned(block: IRBlock) -> bool:
    return False


def is_name_cleanup(stmts: list[ast.stmt], i: int, name: str | None = None) -> bool:
    """``name = None; del name`` (the clean-up after ``except ... as name``)."""
    if i + 1 >= len(stmts):
        return False
    a, d = stmts[i], stmts[i + 1]
    if not (isinstance(a, ast.Assign) and len(a.targets) == 1
            and isinstance(a.targets[0], ast.Name)
            and isinstance(a.value, ast.Constant) and a.value.value is None):
        return False
    if not (isinstance(d, ast.Delete) and len(d.targets) == 1
            and isinstance(d.targets[0], ast.Name) and d.targets[0].id == a.targets[0].id):
        return False
    return name is None or a.targets[0].id == name


def clause_cleanup(name: str | None) -> list[ast.stmt]:
    stmts: list[ast.stmt] = [ExcMarker("pop_except")]
    if name is not None:
        stmts.append(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                                value=ast.Constant(None)))
        stmts.append(ast.Delete(targets=[ast.Name(id=name, ctx=ast.Del())]))
    return stmts


def enter_value(stmt: ast.stmt) -> ast.expr | None:
    """The ``__enter__`` result consumed by the first statement of a with body."""
    value = None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        value = stmt.value
    elif isinstance(stmt, ast.Expr):
        value = stmt.value
    if value is None:
        return None
    if isinstance(value, ast.Await):
        value = value.value
        if isinstance(value, Special) and value.kind == "awaitable":
            value = value.value
    if isinstance(value, Special) and value.kind == "enter":
        return value
    return None


def exit_call_for(mgr: ast.expr | None, is_async: bool) -> ast.stmt:
    marker = ast.Expr(value=ast.Constant(None))
    attach(marker, with_exit=mgr)
    attach(marker, is_async=is_async)
    return marker


def mentions_special(node: ast.AST | None, kind: str) -> bool:
    if node is None:
        return False
    todo: list[ast.AST] = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, Special) and n.kind == kind:
            return True
        if isinstance(n, Shared):
            todo.append(n.value)
            continue
        for child in ast.iter_child_nodes(n):
            todo.append(child)
        if isinstance(n, Special) and n.value is not None:
            todo.append(n.value)
    return False


# ---------------------------------------------------------------- matching copies


def _stmt_key(stmt: ast.stmt) -> Key:
    return stmt_key(stmt)


def matches(stmt: ast.stmt, pattern: ast.stmt) -> bool:
    exit_mgr = fact(pattern, WITH_EXIT, None)
    if fact(pattern, IS_ASYNC, None) is not None:
        return _is_exit_call(stmt, exit_mgr, bool(fact(pattern, IS_ASYNC, False)))
    if isinstance(pattern, ExcMarker):
        return isinstance(stmt, ExcMarker) and stmt.kind == pattern.kind
    return _stmt_key(stmt) == _stmt_key(pattern)


def _is_exit_call(stmt: ast.stmt, mgr: ast.expr | None, is_async: bool) -> bool:
    exit_ = exit_called(stmt, is_async)
    return exit_ is not None and exit_.value is mgr


def exit_called(stmt: ast.stmt, is_async: bool) -> Special | None:
    """The ``__exit__`` a ``with``'s exit-call statement calls (its ``value``: the
    manager), or None when ``stmt`` is not one."""
    if not isinstance(stmt, ast.Expr):
        return None
    value: ast.expr | None = stmt.value
    if is_async:
        if not isinstance(value, ast.Await):
            return None
        value = value.value
        if isinstance(value, Special) and value.kind == "awaitable":
            value = value.value
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    return func if isinstance(func, Special) and func.kind == "exit" else None


def entry_index(block: IRBlock, value: ast.expr | None) -> int | None:
    """Where ``value`` (the very node) stands on ``block``'s entry stack, or None."""
    return next((i for i, e in enumerate(block.entry) if e is value), None)


COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
             ast.Match)


def strip_prefix(stmts: list[ast.stmt], pattern: list[ast.stmt]) -> list[ast.stmt]:
    if not pattern:
        return stmts
    if len(stmts) < len(pattern):
        return stmts
    for s, p in zip(stmts, pattern, strict=False):
        if not matches(s, p):
            return stmts
    return stmts[len(pattern):]


def _strip_suffix_before_exit(out: list[ast.stmt], pattern: list[ast.stmt],
                              exit_stmt: ast.stmt) -> None:
    """Remove the copy of ``pattern`` that ends ``out`` (temporaries for the value may sit
    in between, assigned before the copy)."""
    n = len(pattern)
    if n == 0:
        return
    if len(out) >= n and all(matches(s, p) for s, p in zip(out[-n:], pattern, strict=True)):
        if isinstance(exit_stmt, ast.Return) and _computed_later(exit_stmt.value, out[-n:]):
            # not a ``return`` inside the construct: the construct was left first (a
            # ``break`` out of a loop) and the compiler copied the code after it here
            raise Unstructurable("return value computed after the clean-up")
        del out[-n:]
        return
    raise Unstructurable("exit without the clean-up copy of its construct")


def _computed_later(value: ast.expr | None, stmts: list[ast.stmt]) -> bool:
    seq = fact(value, SEQ, None)
    if seq is None:
        return False
    done = [fact(n, SEQ, None) for s in stmts for n in ast.walk(s)]
    return any(d is not None and d < seq for d in done) and \
        max(d for d in done if d is not None) < seq


def strip_all(out: list[ast.stmt], ctx: Ctx) -> None:
    ret = out.pop()
    strip_cleanups(out, ctx.cleanups, ret)
    out.append(ret)


def strip_cleanups(out: list[ast.stmt], active: tuple[Cleanup, ...],
                    exit_stmt: ast.stmt) -> None:
    """Remove the clean-up copies of ``active`` constructs that end ``out`` before an
    exit: innermost last, or (when the exit's code runs each construct's clean-up in
    its own block, innermost first) outermost last."""
    trial = list(out)
    try:
        for c in reversed(active):
            _strip_suffix_before_exit(trial, c.stmts, exit_stmt)
    except Unstructurable:
        if len(active) < 2:
            raise
        trial = list(out)
        for c in active:
            _strip_suffix_before_exit(trial, c.stmts, exit_stmt)
    out[:] = trial


def handler_values(block: IRBlock) -> bool:
    """Does ``block`` leave only a handler's values on the stack (the exception and the
    one it replaced: a loop in a ``finally`` handler tests under them)?"""
    return handler_values_only(block.exit)


def passes_under(block: IRBlock) -> bool:
    """Are the values ``block`` leaves on the stack only a ``with``'s ``__exit__`` (and
    manager) or values of other blocks (a ``for`` loop's iterator under an inner loop's
    test), passing through as they came, so that another block may stand for it?"""
    if len(block.exit) > len(block.entry):
        return False
    for x, y in zip(block.exit, block.entry, strict=False):  # (a loop: stacks may be deep)
        if x is not y or not (isinstance(x, Slot) or isinstance(x, Special)
                              and x.kind in ("exit", "exit_self")):
            return False
    return True


def clauses_continue(handlers: list[ast.ExceptHandler]) -> bool:
    """Does every except clause end in the loop's next turn or a raise, at least one by
    a jump back the source did not write?"""
    kinds: set[str] = set()
    for h in handlers:
        ends = _ends(h.body)
        if ends is None:
            return False
        kinds |= ends
    return "continue" in kinds


def _ends(stmts: list[ast.stmt]) -> set[str] | None:
    """How every path through ``stmts`` ends: ``continue`` (``written`` where the source
    wrote it), ``raise``; None where one goes on."""
    last = stmts[-1] if stmts else None
    if isinstance(last, ast.Continue):
        return {"written" if fact(last, WRITTEN, False) else "continue"}
    if isinstance(last, ast.Raise):
        return {"raise"}
    if isinstance(last, ast.If) and last.orelse:
        body, orelse = _ends(last.body), _ends(last.orelse)
        return body | orelse if body is not None and orelse is not None else None
    return None

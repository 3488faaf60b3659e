"""CPython 3.8's listing rewritten as the listing 3.9's compiler makes of the same source.

3.8 runs ``finally`` bodies as subroutines: the body's normal exit pushes ``None``
(``BEGIN_FINALLY``) and falls into the handler, ``break``/``continue``/``return`` call it
(``CALL_FINALLY``), and ``END_FINALLY`` returns from it, re-raises, or goes on. 3.9 compiles
each ``finally`` body twice, once in line for every way out of the ``try`` and once as the
handler, which ends in ``RERAISE``. :func:`as_39` makes 3.9's layout from 3.8's:

* ``BEGIN_FINALLY`` before a handler: a copy of the handler's body (up to its
  ``END_FINALLY``), then a jump to the code after it; for an ``except ... as name:`` clause
  the ``POP_EXCEPT`` after the clean-up moves before the copy, and the jump goes where the
  clause goes;
* ``CALL_FINALLY``: a copy of the body it calls; ``ROT_FOUR; POP_BLOCK; POP_EXCEPT;
  CALL_FINALLY`` (a ``return`` in an ``except ... as`` clause) becomes ``POP_BLOCK;
  ROT_FOUR; POP_EXCEPT`` and the copy;
* a ``with`` statement's exit (``BEGIN_FINALLY; WITH_CLEANUP_START; WITH_CLEANUP_FINISH``)
  becomes the call ``__exit__(None, None, None)``; its handler (``WITH_CLEANUP_START;
  WITH_CLEANUP_FINISH; END_FINALLY``) becomes ``WITH_EXCEPT_START`` and its test;
* a ``finally`` body's own ``break``/``return`` (``POP_FINALLY``): nothing in a copy, the
  exception's clean-up (``POP_TOP`` x 3, ``POP_EXCEPT``) in the handler;
* any other ``END_FINALLY`` is ``RERAISE``; ``COMPARE_OP`` ``exception match`` and its jump
  is ``JUMP_IF_NOT_EXC_MATCH``, ``in``/``not in`` ``CONTAINS_OP``, ``is``/``is not``
  ``IS_OP``; an ``assert``'s ``LOAD_GLOBAL AssertionError`` is ``LOAD_ASSERTION_ERROR`` (3.8
  compiles ``if not x: raise AssertionError`` the same);
* a jump to a jump made here goes where that one goes (as 3.9's peephole pass does).

``BUILD_LIST_UNPACK`` and the other ``BUILD_*_UNPACK`` stay (3.9 builds those displays with
``LIST_EXTEND``/``DICT_MERGE``...; :func:`~unveil.bytecode.read` reads them as
``BUILD_UNPACK``). Offsets are the new listing's own; :func:`as_39` also gives, for each, the
offset of the 3.8 instruction it came from (for line numbers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from ..errors import DecompilationError
from . import opcodes
from .listing import Raw

#: 3.8's displays built from iterables or mappings on the stack (kept by :func:`as_39`).
UNPACK_BUILDS = {
    "BUILD_LIST_UNPACK": "list", "BUILD_TUPLE_UNPACK": "tuple", "BUILD_SET_UNPACK": "set",
    "BUILD_MAP_UNPACK": "map", "BUILD_TUPLE_UNPACK_WITH_CALL": "call_args",
    "BUILD_MAP_UNPACK_WITH_CALL": "call_kwargs",
}
_SETUPS = ("SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH")
_ENDS = ("END_FINALLY", "END_ASYNC_FOR")
_CLEANUP_STORES = {"STORE_FAST": "DELETE_FAST", "STORE_NAME": "DELETE_NAME",
                   "STORE_DEREF": "DELETE_DEREF", "STORE_GLOBAL": "DELETE_GLOBAL"}
_AWAIT = ("GET_AWAITABLE", "LOAD_CONST", "YIELD_FROM")


@dataclass(slots=True)
class _Out:
    name: str
    arg: int | None
    argval: Any
    argrepr: str
    origin: int  # offset of the 3.8 instruction it came from
    target: tuple[int, int] | int | None = None  # (scope, 3.8 offset), or an output index
    made: bool = False  # a jump made here (not one of 3.8's)


class _Rewriter:
    """One code object's 3.8 listing being rewritten; scope 0 is the listing itself, each
    copy of a ``finally`` body a scope of its own (jumps inside a copy stay in it)."""

    def __init__(self, raw: list[Raw], none_index: int | None, where: str) -> None:
        self.raw = raw
        self.where = where
        self.none_index = none_index
        self.index = {r.offset: k for k, r in enumerate(raw)}
        self.jumps = opcodes.table((3, 8)).jumps
        self.opmap = opcodes.table((3, 9)).opmap
        self.handlers = {r.argval for r in raw if r.opname in _SETUPS}
        self.targeted = {r.argval for r in raw if r.opcode in self.jumps}
        self.out: list[_Out] = []
        self.pos: dict[tuple[int, int], int] = {}  # (scope, 3.8 offset) -> output index
        self.scopes: list[tuple[int, int, int]] = [(-1, 0, 1 << 30)]  # (parent, lo, hi offsets)
        self.ends: set[int] = set()  # output indices after a copy
        # the ``END_FINALLY`` of each ``except ... as name`` clean-up (``name = None; del name``)
        self.cleanups = {self.end_of(self.index[t]) for t in self.handlers
                         if self._is_cleanup(self.index[t])}

    def fail(self, why: str, k: int) -> DecompilationError:
        return DecompilationError(f"Python 3.8 bytecode: {why}", code_name=self.where,
                                  offset=self.raw[k].offset, instruction=self.raw[k].opname)

    def _is_cleanup(self, t: int) -> bool:
        raw = self.raw
        if t + 4 >= len(raw):
            return False
        load, store, delete, end = raw[t:t + 4]
        return load.opname == "LOAD_CONST" and load.argval is None \
            and _CLEANUP_STORES.get(store.opname) == delete.opname \
            and store.argval == delete.argval and end.opname == "END_FINALLY" \
            and raw[t + 4].opname == "POP_EXCEPT"

    def end_of(self, t: int) -> int:
        """The index of the ``END_FINALLY`` that ends the handler starting at index ``t``
        (the constructs inside it each end in one of their own)."""
        depth = 0
        for k in range(t, len(self.raw)):
            name = self.raw[k].opname
            if name in _SETUPS:
                depth += 1
            elif name in _ENDS:
                if depth == 0 and name == "END_FINALLY":
                    return k
                depth -= 1
        raise self.fail("a finally body without its END_FINALLY", t)

    # ------------------------------------------------------------ emitting

    def emit(self, name: str, origin: int, arg: int | None = None, argval: Any = None,
             argrepr: str = "", target: tuple[int, int] | int | None = None,
             made: bool = False) -> int:
        self.out.append(_Out(name, arg, argval, argrepr, origin, target, made))
        return len(self.out) - 1

    def emit_raw(self, r: Raw, scope: int, name: str | None = None) -> None:
        target = (scope, r.argval) if r.opcode in self.jumps else None
        self.emit(name or r.opname, r.offset, r.arg, r.argval, r.argrepr, target)

    def exit_call(self, origin: int, awaited: bool) -> None:
        """``__exit__(None, None, None)``, awaited in an ``async with``, its result dropped."""
        self.emit("LOAD_CONST", origin, self.none_index or 0, None)
        self.emit("DUP_TOP", origin)
        self.emit("DUP_TOP", origin)
        self.emit("CALL_FUNCTION", origin, 3, 3)
        if awaited:
            self.awaits(origin)
        self.emit("POP_TOP", origin)

    def awaits(self, origin: int) -> None:
        self.emit("GET_AWAITABLE", origin)
        self.emit("LOAD_CONST", origin, self.none_index or 0, None)
        self.emit("YIELD_FROM", origin)

    def cleanup_at(self, k: int) -> tuple[bool, int] | None:
        """``WITH_CLEANUP_START; [await]; WITH_CLEANUP_FINISH`` at ``k``: (awaited, the
        index after it)."""
        raw = self.raw
        if raw[k].opname != "WITH_CLEANUP_START":
            return None
        awaited = [r.opname for r in raw[k + 1:k + 4]] == list(_AWAIT)
        after = k + (4 if awaited else 1)
        if after >= len(raw) or raw[after].opname != "WITH_CLEANUP_FINISH":
            return None
        return awaited, after + 1

    def jump_after(self, k: int, scope: int, origin: int) -> None:
        """A jump to index ``k`` of the listing (:meth:`thread` may take it further)."""
        self.emit("JUMP_ABSOLUTE", origin, target=(scope, self.raw[k].offset), made=True)

    def copy(self, t: int, e: int, scope: int) -> None:
        """A copy of the handler body ``raw[t:e]`` in a new scope (a jump to its
        ``END_FINALLY`` goes on after the copy)."""
        lo, hi = self.raw[t].offset, self.raw[e].offset
        inner = len(self.scopes)
        self.scopes.append((scope, lo, hi))
        self.rewrite(t, e, inner)
        self.pos[(inner, hi)] = len(self.out)
        self.ends.add(len(self.out))

    # ------------------------------------------------------------ the walk

    def rewrite(self, lo: int, hi: int, scope: int) -> None:
        raw = self.raw
        k = lo
        while k < hi:
            r = raw[k]
            self.pos.setdefault((scope, r.offset), len(self.out))
            name = r.opname
            nxt = raw[k + 1] if k + 1 < len(raw) else None
            if name == "BEGIN_FINALLY" and nxt is not None:
                cleanup = self.cleanup_at(k + 1)
                if cleanup is not None and nxt.offset in self.handlers:
                    # a with's normal exit: its exit call, then past its handler
                    awaited, after = cleanup
                    if after >= len(raw) or raw[after].opname != "END_FINALLY":
                        raise self.fail("a with handler without its END_FINALLY", k)
                    self.exit_call(r.offset, awaited)
                    self.jump_after(after + 1, scope, raw[after].offset)
                    k += 1
                    continue
                if cleanup is not None:
                    # a with's exit on a break, continue or return
                    awaited, after = cleanup
                    if after >= len(raw) or raw[after].opname != "POP_FINALLY":
                        raise self.fail("a with's exit without its POP_FINALLY", k)
                    for j in range(k + 1, after + 1):
                        self.pos.setdefault((scope, raw[j].offset), len(self.out))
                    self.exit_call(r.offset, awaited)
                    k = after + 1
                    continue
                if nxt.offset in self.handlers:
                    e = self.end_of(k + 1)
                    if e in self.cleanups:
                        # ``except ... as name``: the exception goes, then the clean-up
                        self.emit("POP_EXCEPT", raw[e + 1].offset)
                        self.copy(k + 1, e, scope)
                        goes = raw[e + 2]  # (the clause's own jump, which goes with the copy)
                        self.emit("JUMP_ABSOLUTE", raw[e].offset, made=True,
                                  target=(scope, goes.argval if goes.opcode in self.jumps
                                          else goes.offset))
                    else:
                        self.copy(k + 1, e, scope)
                        self.jump_after(e + 1, scope, raw[e].offset)
                    k += 1
                    continue
                raise self.fail("BEGIN_FINALLY before no handler", k)
            if name == "CALL_FINALLY":
                t = self.index[r.argval]
                self.copy(t, self.end_of(t), scope)
                k += 1
                continue
            if name == "ROT_FOUR" and [i.opname for i in raw[k + 1:k + 4]] == \
                    ["POP_BLOCK", "POP_EXCEPT", "CALL_FINALLY"]:
                self.emit_raw(raw[k + 1], scope)
                self.pos.setdefault((scope, raw[k + 1].offset), len(self.out) - 1)
                self.emit_raw(r, scope)
                k += 2
                continue
            if name == "WITH_CLEANUP_START":
                cleanup = self.cleanup_at(k)
                end = cleanup[1] if cleanup is not None else -1
                if cleanup is None or end >= len(raw) or raw[end].opname != "END_FINALLY":
                    raise self.fail("a with handler of an unknown form", k)
                for j in range(k + 1, end + 1):
                    self.pos.setdefault((scope, raw[j].offset), len(self.out))
                self.emit("WITH_EXCEPT_START", r.offset)
                if cleanup[0]:
                    self.awaits(r.offset)
                test = self.emit("POP_JUMP_IF_TRUE", raw[end].offset, made=True)
                self.emit("RERAISE", raw[end].offset)
                self.out[test].target = len(self.out)
                for _ in range(3):
                    self.emit("POP_TOP", raw[end].offset)
                self.emit("POP_EXCEPT", raw[end].offset)
                self.emit("POP_TOP", raw[end].offset)
                k = end + 1
                continue
            if name == "END_FINALLY":
                self.emit("RERAISE", r.offset)
                k += 1
                if k - 1 in self.cleanups and k + 1 < hi \
                        and raw[k].offset not in self.targeted \
                        and raw[k + 1].offset not in self.targeted:
                    k += 2  # (its POP_EXCEPT and jump went before the copy)
                continue
            if name == "POP_FINALLY":
                if scope == 0:
                    if r.arg:
                        self.emit("ROT_FOUR", r.offset)
                    for _ in range(3):
                        self.emit("POP_TOP", r.offset)
                    if r.arg:
                        self.emit("ROT_FOUR", r.offset)
                    self.emit("POP_EXCEPT", r.offset)
                k += 1
                continue
            if name == "COMPARE_OP":
                if r.argval == "exception match" and nxt is not None \
                        and nxt.opname == "POP_JUMP_IF_FALSE":
                    self.pos.setdefault((scope, nxt.offset), len(self.out))
                    self.emit("JUMP_IF_NOT_EXC_MATCH", r.offset, target=(scope, nxt.argval))
                    k += 2
                    continue
                if r.argval in ("in", "not in"):
                    flag = int(r.argval == "not in")
                    self.emit("CONTAINS_OP", r.offset, flag, flag, r.argval)
                    k += 1
                    continue
                if r.argval in ("is", "is not"):
                    flag = int(r.argval == "is not")
                    self.emit("IS_OP", r.offset, flag, flag, r.argval)
                    k += 1
                    continue
            if name == "LOAD_GLOBAL" and r.argval == "AssertionError" and self.asserts(k):
                self.emit("LOAD_ASSERTION_ERROR", r.offset)
                k += 1
                continue
            self.emit_raw(r, scope)
            k += 1

    def asserts(self, k: int) -> bool:
        """Is the ``LOAD_GLOBAL AssertionError`` at ``k`` an ``assert`` statement's: after
        a jump on the test over the ``RAISE_VARARGS 1`` right before where it lands (or
        where the jump after it goes, threaded)?"""
        raw = self.raw
        test = raw[k - 1] if k else None
        if test is None or test.opname != "POP_JUMP_IF_TRUE":
            return False
        after = self.index.get(test.argval) if test.argval > test.offset else None
        if after is None or raw[after - 1].opname != "RAISE_VARARGS" or raw[after - 1].arg != 1:
            # (or threaded: where the jump after the raise goes, the next turn of a loop)
            after = next((j + 1 for j in range(k, len(raw)) if raw[j].opname == "RAISE_VARARGS"
                          or "JUMP" in raw[j].opname or raw[j].opname == "RETURN_VALUE"), None)
            if after is None or after >= len(raw) or raw[after - 1].opname != "RAISE_VARARGS" \
                    or raw[after - 1].arg != 1 or raw[after].argval != test.argval \
                    or raw[after].opname not in ("JUMP_ABSOLUTE", "JUMP_FORWARD"):
                return False
        call = raw[after - 2]  # (the message, if any: ``AssertionError(message)``)
        return after - 2 == k or (call.opname == "CALL_FUNCTION" and call.arg == 1)

    # ------------------------------------------------------------ the result

    def resolve(self, scope: int, offset: int) -> int:
        while offset not in self.index and offset + 2 <= self.raw[-1].offset:
            offset += 2  # (a jump to an EXTENDED_ARG: to the instruction it extends)
        while scope > 0:
            parent, lo, hi = self.scopes[scope]
            if lo <= offset <= hi and (scope, offset) in self.pos:
                return self.pos[(scope, offset)]
            scope = parent
        found = self.pos.get((0, offset))
        if found is None:
            raise self.fail(f"a jump to offset {offset}, which was dropped", 0)
        return found

    def finish(self) -> tuple[list[Raw], list[int]]:
        out = self.out
        targets: list[int | None] = []
        for o in out:
            if o.target is None:
                targets.append(None)
            elif isinstance(o.target, int):
                targets.append(o.target)
            else:
                targets.append(self.resolve(*o.target))
        for i, t in enumerate(targets):
            if out[i].made and out[i].name == "JUMP_ABSOLUTE" and t is not None and t > i:
                out[i].name = "JUMP_FORWARD"
        self.thread(targets)
        result: list[Raw] = []
        t8 = opcodes.table((3, 8)).opmap
        for i, o in enumerate(out):
            t = targets[i]
            op = self.opmap[o.name] if o.name in self.opmap else t8[o.name]  # (BUILD_*_UNPACK)
            argval = 2 * t if t is not None else o.argval
            result.append(Raw(o.name, op, o.arg if t is None else 2 * t, argval, o.argrepr, 2 * i))
        return result, [o.origin for o in out]

    def thread(self, targets: list[int | None]) -> None:
        """3.9's peephole pass, in order: an unconditional jump to a ``RETURN_VALUE``
        becomes one, a jump to an unconditional jump goes where it goes, where the new
        argument fits in the jump's own code units (its ``EXTENDED_ARG`` s)."""
        out = self.out
        units = _units(out, targets)
        starts = [0] * (len(out) + 1)
        for i, u in enumerate(units):
            starts[i + 1] = starts[i] + 2 * u
        for i, o in enumerate(out):
            t = targets[i]
            if t is None or o.name not in _THREADED or t >= len(out) \
                    or not (o.made or out[t].made or t in self.ends):
                continue  # (3.8's pass has seen the rest)
            if o.name in _UNCONDITIONAL and out[t].name == "RETURN_VALUE":
                o.name = "RETURN_VALUE"
                o.arg = o.argval = None
                targets[i] = None
                continue
            if out[t].name in _UNCONDITIONAL and targets[t] is not None:
                goes = cast(int, targets[t])
                arg = starts[goes]
                if o.name not in _RELATIVE or o.name == "JUMP_FORWARD":
                    if _size(arg) <= units[i]:
                        if o.name == "JUMP_FORWARD":
                            o.name = "JUMP_ABSOLUTE"
                        targets[i] = goes


_UNCONDITIONAL = ("JUMP_FORWARD", "JUMP_ABSOLUTE")
_THREADED = ("JUMP_FORWARD", "JUMP_ABSOLUTE", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE")
_RELATIVE = ("JUMP_FORWARD", "FOR_ITER", "SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH")


def _size(arg: int) -> int:
    """Code units of an instruction with argument ``arg`` (its ``EXTENDED_ARG`` s too)."""
    return 1 + (arg > 0xFF) + (arg > 0xFFFF) + (arg > 0xFFFFFF)


def _units(out: list[_Out], targets: list[int | None]) -> list[int]:
    """Each instruction's code units once laid out, as 3.9's assembler finds them (jump
    arguments in bytes; a longer one moves what follows: to a fixed point)."""
    units = [_size(o.arg) if isinstance(o.arg, int) and targets[i] is None else 1
             for i, o in enumerate(out)]
    while True:
        starts = [0] * (len(out) + 1)
        for i, u in enumerate(units):
            starts[i + 1] = starts[i] + 2 * u
        changed = False
        for i, t in enumerate(targets):
            if t is None:
                continue
            arg = starts[t] - starts[i + 1] if out[i].name in _RELATIVE else starts[t]
            need = _size(max(arg, 0))
            if need > units[i]:
                units[i] = need
                changed = True
        if not changed:
            return units


def as_39(raw: list[Raw], none_index: int | None, where: str) -> tuple[list[Raw], list[int]]:
    """3.8's listing ``raw`` (without ``EXTENDED_ARG``) as 3.9 would lay it out, with the
    3.8 offset each instruction comes from. ``none_index``: where ``None`` is in the code's
    constants (the new ``LOAD_CONST None`` load it); ``where`` names the code in errors."""
    w = _Rewriter(raw, none_index, where)
    w.rewrite(0, len(raw), 0)
    return w.finish()

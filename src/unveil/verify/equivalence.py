"""Show that two code objects do the same thing, by running both symbolically.

``prepare_debug`` swaps Dynamo's transformed bytecode for the code compiled from its
decompiled source. The two are never bytecode-identical (Dynamo juggles values on the
stack; the source names them), so "the same" must be shown another way. This module
runs both code objects on symbolic inputs along every path and compares what each path
does that anyone outside the frame could see:

* **effects**, in order: every operation that may run other code (calls, attribute and
  item access on values it knows nothing about, arithmetic, comparisons, truth tests,
  imports, stores outside the frame), with its operands as symbolic terms;
* **branch outcomes**, and the path's **end**: the value returned or the exception
  raised (every effect may raise: uncaught, that ends the path; inside a ``try`` the
  path goes on in the handler).

Values are terms: arguments, constants, results of earlier effects (``("res", k)``),
globals and cell contents read after ``k`` effects (globals the caller names as fixed,
and fixed attributes of them, without ``k``: ``fixed``). Lists, dicts (string keys), sets
(of constants, compared without their order) and functions the frame makes itself are
followed exactly (item stores, slices, ``extend``, ``__name__``...) until they escape
into an effect; then their contents at that moment are part of the effect, and later
changes are effects too. ``is`` is decided where no code can say otherwise (singleton
constants, the frame's own objects), and a bool tested again on a path keeps the answer
it gave (a test of any other value is an effect each time: its ``__bool__`` runs).

Not compared, by design: local variables (their names, and what ``locals()`` or a frame
inspection would show), the order of pure steps (loads, stack shuffles, building
tuples), line numbers, and the names and ``__qualname__`` of nested functions' code
(recompiled code is compiled inside a wrapper function; they show only in reprs and
tracebacks). A function's ``__name__`` is compared.

The two code objects are equivalent when their sets of paths are equal, signature and
free variables included, and so are the nested code objects whose functions escape. The
check is conservative: what it does not model (loops, generators, class bodies,
``match``, more than ``MAX_PATHS`` paths or ``MAX_STEPS`` steps, Python other than
3.10-3.14) makes it undecided, which callers treat like "not shown". It needs only
:mod:`dis`.
"""

from __future__ import annotations

import dis
import sys
from dataclasses import dataclass, replace
from types import CodeType
from typing import Any

from ..bytecode import Raw, for_iter_exit, instructions, line_table
from ..bytecode.exceptions import parse_exception_table
from ..codeobj import CodeFlag
from ..decompiler.graph.regions import dominators, natural_loops
from ..decompiler.tidy.temporaries import Fixed, Known
from .equivalence_ops import (
    STEPS,
    exc_triple,
)
from .equivalence_terms import (
    BLOCKS,
    MAX_BACK_JUMPS,
    MAX_PATHS,
    MAX_STEPS,
    NONE,
    SIGNATURE_FLAGS,
    SUPPORTED,
    UNBOUND,
    Loop,
    Obj,
    State,
    Summary,
    Term,
    Undecided,
    condition,
    const_term,
    const_value,
)
from .explain import step_words

__all__ = ["Parting", "Verdict", "prove_equivalent"]


@dataclass(frozen=True)
class Verdict:
    """The answer: ``equivalent`` is True only when every path was compared and matched."""

    equivalent: bool
    reason: str  # what was compared, or why they differ or could not be compared
    paths: int = 0
    parting: Parting | None = None  # where they were seen to differ, when they were


@dataclass(frozen=True)
class Parting:
    """Where a path of one code object parts from the closest path of the other: the
    step (from 1), what each does there in words, and the source line of each there
    (the original's lines are its own ``co_lines``; None where the step has none)."""

    step: int
    original: str
    candidate: str
    original_line: int | None
    candidate_line: int | None
    inside: tuple[str, ...] = ()  # the nested functions it is in, outermost first


# ---------------------------------------------------------------- the explorer


class Explorer:
    """Every path through one code object, as tuples of effects and an end."""

    def __init__(self, code: CodeType, shapes: dict[Any, int] | None = None,
                 fixed: Fixed | None = None) -> None:
        self.code = code
        self.fixed = fixed
        # loop bodies by number, shared by the explorers compared (so a path holds a
        # small number, not the loop's paths, and the same body has the same number)
        self.shapes: dict[Any, int] = {} if shapes is None else shapes
        raw = instructions(code)
        self.instrs = [i for i in raw if i.opname != "EXTENDED_ARG"]
        self.index = {i.offset: k for k, i in enumerate(self.instrs)}
        for i in reversed(raw):  # a jump may land on the EXTENDED_ARG of its target
            if i.opname == "EXTENDED_ARG":
                self.index[i.offset] = self.index[i.offset + 2]
        self.handlers = [] if BLOCKS else parse_exception_table(code)
        # where each FOR_ITER goes on once its iterator is exhausted (which pops it)
        self.for_exits = {k: self.index[for_iter_exit(raw, i, raw.index(i))]
                          for k, i in enumerate(self.instrs) if i.opname == "FOR_ITER"}
        self.loops = _loops(self) if any(  # (only where some jump goes back)
            (i.opcode in dis.hasjrel or i.opcode in dis.hasjabs) and i.argval <= i.offset
            for i in self.instrs) else {}
        self.paths: set[tuple[Any, ...]] = set()
        # its nested code objects by (name, k-th of that name); those whose functions are
        # seen outside the frame are compared too
        self.codes: dict[tuple[str, int], CodeType] = {}
        for const in code.co_consts:
            if isinstance(const, CodeType):
                k = sum(key[0] == const.co_name for key in self.codes)
                self.codes[const.co_name, k] = const
        # each path's nested code objects, in the order the path shows them
        self.path_codes: dict[tuple[Any, ...], set[tuple[tuple[str, int], ...]]] = {}
        # each path's instruction indices, one per entry (the first way seen)
        self.path_where: dict[tuple[Any, ...], tuple[int, ...]] = {}
        self.next_obj = 0
        self.steps = 0
        self.work: list[State] = []
        self.summaries: list[Summary] = []  # loops being summarised, innermost last

    # -- driving

    def run(self) -> set[tuple[Any, ...]]:
        code = self.code
        local = {name: ("arg", name) for name in code.co_varnames[:_nargs(code)]}
        local.update((name, ("cell", name)) for name in code.co_freevars)
        self.work.append(State(0, [], local, {}, []))
        while self.work:
            state = self.work.pop()
            self.walk(state)
            if len(self.paths) > MAX_PATHS:
                raise Undecided(f"more than {MAX_PATHS} paths")
        return self.paths

    def end(self, state: State, what: Term) -> None:
        self.flush(state)
        self.add_path(state, (*state.trace, what))

    def add_path(self, state: State, path: tuple[Any, ...]) -> None:
        if self.summaries:  # a return or raise inside a loop being summarised
            self.summaries[-1].endings.append(("end", state, path))
            return
        self.paths.add(path)
        tail = len(path) - len(state.where)  # (the entries that end it: where it is now)
        self.path_where.setdefault(path, (*state.where, *[state.pc - 1] * tail))
        codes = tuple(key[1:] for key in state.canon if type(key) is tuple)
        self.path_codes.setdefault(path, set()).add(codes)

    def walk(self, state: State, at_header: bool = False) -> None:
        """Run ``state`` to the end of its path (``at_header``: it starts on the header
        of the loop being summarised, which it runs rather than summarises)."""
        while True:
            if (not at_header and self.loops and self.summaries) \
                    and self.leaves_loop(state):
                return
            if state.pc in self.loops and not at_header:
                self.summarize(state, self.loops[state.pc])
                return
            at_header = False
            self.steps += 1
            if self.steps > MAX_STEPS:
                raise Undecided(f"more than {MAX_STEPS} steps")
            ins = self.instrs[state.pc]
            state.pc += 1
            step = STEPS.get(ins.opname)
            if step is None:
                raise Undecided(f"{ins.opname} is not modelled")
            if step(self, state, ins) is False:
                return

    def jump(self, state: State, ins: Raw) -> None:
        # backward jumps are common outside loops too (3.11+ moves cold blocks to the
        # end), but not many on one path; a loop's own go back to its header, where it
        # is summarised
        target = self.index[ins.argval]
        if target < state.pc and target not in self.loops:
            state.back_jumps += 1
            if state.back_jumps > MAX_BACK_JUMPS:
                raise Undecided("a loop that is not a natural loop (entered in the middle)")
        state.pc = target

    # -- loops

    def leaves_loop(self, state: State) -> bool:
        """End the path of a loop body where it goes back to the header or leaves."""
        summary = self.summaries[-1]
        loop = summary.loop
        if state.pc == loop.header:
            self.flush(state)
            updates = tuple((name, self.render(state, state.local.get(name, UNBOUND)))
                            for name in sorted(loop.live & loop.changed))
            summary.endings.append(("continue", state,
                                    (*state.trace, ("continue", updates))))
            return True
        if state.pc not in loop.body:
            self.flush(state)
            summary.endings.append(("exit", state, (*state.trace, ("exit",))))
            return True
        return False

    def summarize(self, outer: State, loop: Loop) -> None:
        """Run the loop at ``outer.pc`` as one step: its body once, from a state in which
        the locals it changes hold their value at the start of any iteration (opaque),
        then go on from every way out of it. The path records the loop as its entry
        values and the set of paths through the body; two loops are the same when those
        are, since the same iteration then does the same on the same values."""
        self.flush(outer)
        if outer.kw_names is not None:
            raise Undecided("a loop starts between KW_NAMES and its call")
        time = outer.now()
        touched: set[int] = set()  # the frame's objects the body changes or lets escape
        for _ in range(8):
            base = outer.fork()
            # what the loop starts from: the objects it touches (escaping here, with
            # their contents) and the values of the locals it changes and reads
            entry = tuple(self.render(base, ("obj", k)) for k in sorted(touched))
            inits = tuple((name, self.render(base, base.local.get(name, UNBOUND)))
                          for name in sorted(loop.changed & loop.live))
            header = base.fork()
            for name in loop.changed:
                value = header.local.get(name, UNBOUND)
                header.local[name] = ("phi", time, name,
                                      _maybe_unbound(value) or name in loop.deleted)
            header.trace, header.effects, header.scope = [], 0, time
            header.where = []
            header.back_jumps = 0
            start = header.fork()  # (header runs as the first path)
            summary = Summary(loop)
            self.summaries.append(summary)
            outer_work, self.work = self.work, summary.work
            try:
                self.walk(header, at_header=True)
                while summary.work:
                    self.walk(summary.work.pop())
                    if len(summary.endings) > MAX_PATHS:
                        raise Undecided(f"more than {MAX_PATHS} paths through a loop")
            finally:
                self.work = outer_work
                self.summaries.pop()
            more = _touched(start, summary.endings) - touched
            if not more:
                break
            touched |= more
        else:
            raise Undecided("a loop keeps changing the frame's own objects")
        outer = base
        for kind, state, _ in summary.endings:
            if kind == "continue" and (state.stack != start.stack
                                       or state.exc_info != start.exc_info
                                       or state.blocks != start.blocks):
                raise Undecided("a loop changes the values kept on the stack around it")
        endings = summary.endings
        body = self.shape(frozenset(path for _, _, path in endings))
        # the functions body paths make, compared like those of any path (in an order
        # both sides agree on)
        codes = [key for _, state, path in sorted(endings, key=lambda e: repr(e[2]))
                 for key in state.canon if type(key) is tuple and key not in outer.canon
                 ] if any(len(e[1].canon) > len(outer.canon) for e in endings) else []
        for kind, state, path in endings:
            if kind == "continue":
                continue
            # (the way out taken: its path through the body)
            item = ("loop", entry, inits, body, self.shape(path))
            if kind == "end":  # the frame returned or raised in the loop
                state = outer.fork()
                state.note(item)
            else:
                state.trace = [*outer.trace, item]
                state.where = [*outer.where, outer.pc - 1]
                state.scope, state.effects = outer.scope, outer.effects + 1
                state.back_jumps = outer.back_jumps
            for key in codes:
                state.canon.setdefault(key, len(state.canon))
            if kind == "end":
                self.add_path(state, tuple(state.trace))
            else:
                self.work.append(state)

    def shape(self, value: Any) -> int:
        """The number of ``value`` among the loop bodies and ways out seen."""
        return self.shapes.setdefault(value, len(self.shapes))

    # -- effects and exceptions

    def flush(self, state: State) -> None:
        """Record the stores to globals and cells made since the last effect."""
        if state.stores:
            state.note(("store", *sorted(
                (op, name, shown) for (op, name), (_, shown) in state.stores.items())))
            state.stores.clear()

    def effect(self, state: State, *what: Any, result_bool: bool = False) -> Term:
        """Record an effect on the path; fork the path where it raises; its result."""
        self.flush(state)
        k = state.now()
        state.effects += 1
        rendered = tuple(self.render(state, w) for w in what)
        if state.exc_info != ("exc_info0",):
            rendered += (("exc_info", self.render(state, state.exc_info)),)
        state.note(rendered)
        if self.handled(state):
            self.raise_(state.fork(), ("exc", k), forked=True)
        else:  # the common case, without copying the state
            self.add_path(state, (*state.trace, ("raised",), ("raise", ("exc", k))))
        result = ("res", k)
        if result_bool:
            state.bools.add(result)
        return result

    def handled(self, state: State) -> bool:
        """Whether an exception raised now has a handler in this frame."""
        if BLOCKS:
            return any(target is not None for target, _ in state.blocks)
        offset = self.instrs[state.pc - 1].offset
        return any(h.start <= offset < h.end for h in self.handlers)

    def raise_(self, state: State, exc: Term, *, forked: bool = False) -> None:
        """Raise ``exc`` at the current instruction: to its handler, or out of the frame."""
        if forked:
            state.note(("raised",))
        if BLOCKS:
            self.raise_to_block(state, exc)
            return
        offset = self.instrs[state.pc - 1].offset
        handler = next((h for h in self.handlers if h.start <= offset < h.end), None)
        if handler is None:
            self.end(state, ("raise", self.render(state, exc)))
            return
        del state.stack[handler.depth:]
        if handler.lasti:
            state.stack.append(("lasti",))
        state.stack.append(exc)
        state.pc = self.index[handler.target]
        self.work.append(state)

    def raise_to_block(self, state: State, exc: Term) -> None:
        """3.10: unwind the block stack to the innermost handler, which finds the old
        exception (traceback, value, type) and the new one pushed."""
        while state.blocks:
            target, level = state.blocks.pop()
            if target is None:  # leaving a handler: the exception it handled is restored
                del state.stack[level + 3:]
                state.exc_info = state.stack[-1][1]
                del state.stack[level:]
                continue
            del state.stack[level:]
            state.blocks.append((None, level))
            state.stack.extend(exc_triple(state.exc_info))
            state.exc_info = exc
            state.stack.extend(exc_triple(exc))
            state.pc = self.index[target]
            self.work.append(state)
            return
        self.end(state, ("raise", self.render(state, exc)))

    # -- values

    def new_obj(self, state: State, kind: str, items: list[Any]) -> Term:
        self.next_obj += 1
        state.heap[self.next_obj] = Obj(kind, items)
        return ("obj", self.next_obj)

    def local_obj(self, state: State, term: Term) -> Obj | None:
        """The frame's own object behind ``term``, while its contents are known."""
        if term[0] == "obj":
            obj = state.heap[term[1]]
            if not obj.escaped:
                return obj
        return None

    def items_of(self, state: State, term: Term) -> list[Term] | None:
        """The items of a tuple or of the frame's own list, when known."""
        if term[0] == "tuple":
            items = list(term[1:])
        else:
            obj = self.local_obj(state, term)
            if obj is None or obj.kind not in ("list", "set"):
                return None
            items = obj.items
        return None if any(i[0] == "star" for i in items) else list(items)

    def render(self, state: State, term: Any, escape: bool = True,
               seen: frozenset[int] = frozenset()) -> Any:
        """``term`` as it appears in an effect: the frame's objects by their contents
        (once; then they have escaped and are named by the order of escape)."""
        if type(term) is not tuple or not term:
            return term
        if term[0] == "obj":
            key = term[1]
            obj = state.heap[key]
            cid = state.canon.setdefault(key, len(state.canon))
            if obj.escaped or key in seen:
                return ("object", cid)
            inner = seen | {key}
            if obj.kind == "dict":
                items: tuple[Any, ...] = tuple(
                    (self.render(state, k, escape, inner), self.render(state, v, escape, inner))
                    for k, v in obj.items)
            elif obj.kind == "function":  # code, closure and defaults, __name__ (see below)
                items = tuple(self.render(state, i, escape, inner) for i in obj.items[:3])
            elif obj.kind == "set":  # (constants: the order they were added in is not seen)
                items = tuple(sorted((self.render(state, i, escape, inner) for i in obj.items),
                                     key=repr))
            else:
                items = tuple(self.render(state, i, escape, inner) for i in obj.items)
            if escape:
                obj.escaped = True
            return ("object", cid, obj.kind, items)
        if term[0] == "code":  # named by order of appearance, compared at the end
            return ("code", state.canon.setdefault(term, len(state.canon)))
        if term[0] in ("const", "arg", "res", "exc", "global", "deref", "null", "fixed"):
            return term
        if term[0] == "phi":  # a local at the start of an iteration of the loop at time
            return term[:3]
        return tuple(self.render(state, t, escape, seen) for t in term)

    def truth(self, state: State, term: Term) -> bool | None:
        """``bool(term)`` when it is known without running code."""
        if term[0] == "const":
            return None if term[3] is None else bool(term[3])
        if term[0] in ("tuple", "obj"):
            if term[0] == "obj" and self.local_obj(state, term) is None:
                return None
            items = self.items_of(state, term)
            if items is None and term[0] == "obj" and state.heap[term[1]].kind == "dict":
                return bool(state.heap[term[1]].items)
            return None if items is None else bool(items)
        return None

    def branch(self, state: State, term: Term, jump_if: bool, ins: Raw,
               keep: bool = False) -> bool:
        """Follow a conditional jump on ``bool(term)``, forking where it is unknown;
        ``keep``: the value stays on the stack where the jump is taken."""
        value, known = term, self.truth(state, term)
        if known is None and term in state.bools:
            known = _tested(state.outcomes, term)
        if known is None:
            self.flush(state)
            if term not in state.bools:
                term = self.effect(state, "bool", term, result_bool=True)
            cond, taken = condition(self.render(state, term, escape=False), jump_if)
            other = state.fork()
            other.note(("if", cond, not taken))
            other.outcomes[term] = not jump_if
            self.work.append(other)
            state.note(("if", cond, taken))
            state.outcomes[term] = jump_if
        elif known != jump_if:
            return True
        if keep:
            state.stack.append(value)
        self.jump(state, ins)
        return True

    def call(self, state: State, fn: Term, args: list[Term], kwnames: tuple[str, ...],
             kwvalues: list[Term]) -> Term:
        """Call ``fn``: the frame's own list methods run here, anything else is an effect."""
        if fn[0] == "method" and not kwnames:
            result = self.list_method(state, fn[1], fn[2], args)
            if result is not None:
                return result
        if fn[0] == "strmethod" and not kwnames and all(a[:2] == ("const", "str") for a in args):
            value = getattr(const_value(fn[1]), fn[2])(*map(const_value, args))
            return const_term(value)
        if fn[0] == "method":  # a method we do not model: the object escapes
            fn = ("getattr", fn[1], fn[2])
        result = self.effect(state, "call", fn, tuple(args), kwnames, tuple(kwvalues))
        if fn[0] == "fixed" and len(fn) == 3 and not args and not kwnames \
                and isinstance(self.fixed, Known) and self.fixed.never_none(fn[1], fn[2]):
            state.not_none.add(result)
        return result

    def list_method(self, state: State, target: Term, name: str,
                    args: list[Term]) -> Term | None:
        obj = self.local_obj(state, target)
        if obj is None or obj.kind != "list":
            return None
        if name == "append" and len(args) == 1:
            obj.items.append(args[0])
            return NONE
        if name == "extend" and len(args) == 1:
            items = self.items_of(state, args[0])
            if items is None:
                return None
            obj.items.extend(items)
            return NONE
        if name == "pop" and not args and obj.items and obj.items[-1][0] != "star":
            return obj.items.pop()
        return None


# ---------------------------------------------------------------- loops

_JUMPS = {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP", "JUMP_NO_INTERRUPT", "JUMP_ABSOLUTE",
          "JUMP_BACKWARD_NO_INTERRUPT"}
_ENDS = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"}
_READS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW", "LOAD_FAST_LOAD_FAST",
          "LOAD_FAST_BORROW_LOAD_FAST_BORROW", "DELETE_FAST", "LOAD_FAST_AND_CLEAR",
          "MAKE_CELL"}  # (deleting reads: it raises when the local is unbound)
_WRITES = {"STORE_FAST", "STORE_FAST_STORE_FAST", "STORE_FAST_MAYBE_NULL", "DELETE_FAST",
           "LOAD_FAST_AND_CLEAR", "MAKE_CELL"}
_UNBINDS = {"DELETE_FAST", "LOAD_FAST_AND_CLEAR", "STORE_FAST_MAYBE_NULL"}


def _names(ins: Raw) -> tuple[str, ...]:
    return ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)


def _successors(ex: Explorer) -> list[list[int]]:
    """Each instruction's successors, exception handlers included (3.10: from the
    ``SETUP_*`` instruction, which the handler's own code cannot come before)."""
    out: list[list[int]] = []
    last = len(ex.instrs)
    for k, ins in enumerate(ex.instrs):
        op = ins.opname
        if k in ex.for_exits:
            succ = [k + 1, ex.for_exits[k]]
        elif op in _JUMPS:
            succ = [ex.index[ins.argval]]
        elif op in _ENDS:
            succ = []
        else:
            succ = [k + 1] if k + 1 < last else []
            if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
                succ.append(ex.index[ins.argval])
        handler = next((h for h in ex.handlers if h.start <= ins.offset < h.end), None)
        if handler is not None:
            succ.append(ex.index[handler.target])
        out.append([t for t in succ if t < last])
    return out


def _loops(ex: Explorer) -> dict[int, Loop]:
    """The natural loops of ``ex.code``, by header (instruction index): which locals
    each body changes and which may be read at the header before they are stored."""
    succs = _successors(ex)
    preds: list[list[int]] = [[] for _ in succs]
    for k, targets in enumerate(succs):
        for t in targets:
            preds[t].append(k)
    idom = dominators(0, succs.__getitem__)
    bodies = natural_loops(0, succs.__getitem__, preds.__getitem__, idom)
    if not bodies:
        return {}
    # which locals may be read before they are stored, at each instruction: one bit
    # per local; (kill, gen) per instruction; iterated to a fixed point, last first
    bit: dict[str, int] = {}

    def mask(names: tuple[str, ...]) -> int:
        m = 0
        for name in names:
            m |= 1 << bit.setdefault(name, len(bit))
        return m

    effects: list[tuple[int, int]] = []
    for ins in ex.instrs:
        names = _names(ins) if isinstance(ins.argval, str | tuple) else ()
        op = ins.opname
        if op == "STORE_FAST_LOAD_FAST":  # stores the first, then loads the second
            effects.append((mask(names[:1]), mask(names[1:])))
        elif op in _READS:  # (those that also write read first)
            effects.append((0, mask(names)))
        elif op in _WRITES:
            effects.append((mask(names), 0))
        else:
            effects.append((0, 0))
    live = [0] * len(succs)
    order = sorted(idom, reverse=True)
    changed = True
    while changed:
        changed = False
        for k in order:
            out = 0
            for t in succs[k]:
                out |= live[t]
            kill, gen = effects[k]
            new = (out & ~kill) | gen
            if new != live[k]:
                live[k], changed = new, True
    names_of = sorted(bit, key=bit.__getitem__)
    loops = {}
    for header, nodes in bodies.items():
        writes: set[str] = set()
        unbinds: set[str] = set()
        for k in nodes:
            ins = ex.instrs[k]
            if ins.opname == "STORE_FAST_LOAD_FAST":
                writes.add(_names(ins)[0])
            elif ins.opname in _WRITES:
                writes.update(_names(ins))
            if ins.opname in _UNBINDS:
                unbinds.update(_names(ins))
        alive = frozenset(n for i, n in enumerate(names_of) if live[header] >> i & 1)
        loops[header] = Loop(header, frozenset(nodes), frozenset(writes),
                             frozenset(unbinds), alive)
    return loops


def _tested(outcomes: dict[Term, bool], term: Term) -> bool | None:
    """The truth of ``term`` (a bool) from the tests of it on this path: itself, or
    what it negates (``not x``, ``a is not b`` of ``a is b``)."""
    if term in outcomes:
        return outcomes[term]
    if term[0] == "not" and term[1] in outcomes:
        return not outcomes[term[1]]
    if term[0] == "is":
        flipped = (*term[:3], 1 - term[3])
        if flipped in outcomes:
            return not outcomes[flipped]
    return None


def _maybe_unbound(value: Term) -> bool:
    return value == UNBOUND or (value[0] == "phi" and value[3])


def _touched(header: State, endings: list[tuple[str, State, tuple[Any, ...]]]) -> set[int]:
    """The frame's objects, made before the loop, that some way through its body
    changes or lets escape."""
    out = set()
    for key, obj in header.heap.items():
        for _, state, _ in endings:
            now = state.heap.get(key)
            if now is None or now.escaped != obj.escaped or now.items != obj.items:
                out.add(key)
                break
    return out


# ---------------------------------------------------------------- comparing


def _nargs(code: CodeType) -> int:
    return (code.co_argcount + code.co_kwonlyargcount
            + bool(code.co_flags & CodeFlag.VARARGS) + bool(code.co_flags & CodeFlag.VARKEYWORDS))


def _signature(code: CodeType) -> tuple[Any, ...]:
    return (code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount,
            code.co_varnames[:_nargs(code)], code.co_flags & SIGNATURE_FLAGS,
            code.co_freevars)


def _first_difference(ours: set[tuple[Any, ...]] | frozenset[tuple[Any, ...]],
                      theirs: set[tuple[Any, ...]] | frozenset[tuple[Any, ...]],
                      shapes: dict[int, Any]) -> tuple[str, bool, _Part | None]:
    """Where a path only in ``ours`` parts from the closest path of ``theirs`` (inside the
    bodies of two loops that start the same, where they part there); whether the loops do
    not line up there: a loop against no loop, or loops over other locals, may be the
    same loop entered elsewhere (a rotated ``while``, a state machine). ``shapes``: loop
    bodies by number.

    Paths are taken shortest first in a fixed order (a set's order changes with the hash
    seed), and any of the first few that parts where loops do not line up decides: the
    verdict never depends on the order of sets. The last item: the path of ours, the
    closest of theirs and the index of the step where they part (None: no path only in
    ours)."""
    order = sorted(theirs, key=_path_key)
    first: tuple[str, _Part] | None = None
    for path in sorted(ours - theirs, key=_path_key)[:_PATHS_TRIED]:
        where, loop, part = _parting(path, order, shapes)
        if loop:
            return where, True, part
        first = first or (where, part)
    if first is None:
        return "(end)", False, None
    return first[0], False, first[1]


_PATHS_TRIED = 8  # paths only in one code that _first_difference looks at
# a path, the closest path of the other code object (None: it has none), and the index
# of the step where they part
_Part = tuple[tuple[Any, ...], "tuple[Any, ...] | None", int]


def _path_key(path: tuple[Any, ...]) -> tuple[int, str]:
    return len(path), repr(path)


def _parting(path: tuple[Any, ...], theirs: list[tuple[Any, ...]],
             shapes: dict[int, Any]) -> tuple[str, bool, _Part]:
    """:func:`_first_difference` for one path of ours."""
    def kind(p: tuple[Any, ...] | None, k: int) -> Any:
        return p[k][0] if p is not None and k < len(p) and isinstance(p[k], tuple) and p[k] \
            else None

    # the path of theirs that goes along longest; among those, one whose step there is of
    # the same kind as ours, else one that does something rather than raise (the
    # exception edge of a step says less than the step)
    best, at, rank = None, -1, (-1, False, False)
    other: Any  # a path of theirs, then the step at ``at`` of the best one (or "(end)")
    for other in theirs:
        k, n = 0, min(len(path), len(other))
        while k < n and path[k] == other[k]:
            k += 1
        mine_rank = (k, kind(other, k) == kind(path, k), kind(other, k) != "raised")
        if mine_rank > rank:
            best, at, rank = other, k, mine_rank
    mine: Any = path[at] if at < len(path) else "(end)"
    other = best[at] if best is not None and at < len(best) else "(end)"
    if kind(path, at) == "loop" == kind(best, at):
        if [n for n, _ in mine[2]] != [n for n, _ in other[2]]:
            return f"step {at + 1}: loops over other locals", True, (path, best, at)
        if mine[1:3] == other[1:3] and mine[3] != other[3]:  # the bodies part: where?
            inner, shape, _ = _first_difference(
                *((shapes[mine[3]], shapes[other[3]]) if shapes[mine[3]] - shapes[other[3]]
                  else (shapes[other[3]], shapes[mine[3]])), shapes)
            return f"step {at + 1}, in the loop: {inner}", shape, (path, best, at)
    kinds = {kind(path, at), kind(best, at)}
    # (one leaves a loop where the other goes on doing something: what comes after the
    # loop's end in one is inside the loop in the other)
    loop = len(kinds) == 2 and ("loop" in kinds or "exit" in kinds and "continue" not in kinds)
    return (f"step {at + 1}: {repr(mine)[:200]} against {repr(other)[:200]}", loop,
            (path, best, at))


def _where_they_part(mine: Explorer, theirs: Explorer, part: _Part | None, *,
                     original_first: bool) -> Parting | None:
    """``part`` (a path of the original when ``original_first``, else of the candidate,
    its closest path in the other, the step) as a :class:`Parting`."""
    if part is None:
        return None
    path, other, at = part
    first, second = (mine, theirs) if original_first else (theirs, mine)

    def line(explorer: Explorer, p: tuple[Any, ...] | None) -> int | None:
        where = explorer.path_where.get(p) if p is not None else None
        if not where:
            return None
        offset = explorer.instrs[where[min(at, len(where) - 1)]].offset
        return line_table(explorer.code).get(offset)

    words = (step_words(path, at), step_words(other, at) if other is not None else "ends")
    lines = (line(first, path), line(second, other))
    if not original_first:
        words, lines = words[::-1], lines[::-1]
    return Parting(at + 1, words[0], words[1], lines[0], lines[1])


def prove_equivalent(original: CodeType, candidate: CodeType, *,
                     fixed: Fixed | None = None) -> Verdict:
    """Whether ``candidate`` does what ``original`` does on every path (see the module
    docstring for what that covers). ``fixed``: globals (and attributes of them) that the
    caller knows hold one value while the frame runs, read as terms. Never raises."""
    if not SUPPORTED:
        return Verdict(False, f"not checked on Python {sys.version_info[0]}."
                              f"{sys.version_info[1]}")
    if original is candidate:  # (a nested function's code the recompiled code kept)
        return Verdict(True, "the same code object")
    if _signature(original) != _signature(candidate):
        return Verdict(False, "signatures or free variables differ")
    try:
        mine = Explorer(original, fixed=fixed)
        theirs = Explorer(candidate, mine.shapes, fixed=fixed)
        a, b = mine.run(), theirs.run()
    except Undecided as exc:
        return Verdict(False, f"undecided: {exc}")
    except Exception as exc:  # noqa: BLE001 (malformed bytecode, or a gap in the model)
        return Verdict(False, f"undecided: {type(exc).__name__}: {exc}")
    if a != b:
        side = "the original" if a - b else "the candidate"
        shapes = {number: shape for shape, number in mine.shapes.items()}
        diff, loop, part = _first_difference(a, b, shapes) if a - b else \
            _first_difference(b, a, shapes)
        parting = _where_they_part(mine, theirs, part, original_first=bool(a - b))
        if loop:  # a loop against no loop: maybe the same loop, cut elsewhere
            return Verdict(False, f"undecided: loops of different shapes ({len(a)} paths "
                                  f"against {len(b)}; {side} differs at {diff})",
                           parting=parting)
        return Verdict(False, f"{len(a)} paths against {len(b)}; a path of {side} differs "
                              f"at {diff}", parting=parting)
    pairs: set[tuple[tuple[str, int], tuple[str, int]]] = set()
    for path in a:  # the functions a path passes on, in the order it shows them
        ours, other = mine.path_codes[path], theirs.path_codes[path]
        if len(ours) != 1 or len(other) != 1:
            return Verdict(False, "undecided: a path makes different functions in one of them")
        pairs.update(zip(next(iter(ours)), next(iter(other)), strict=True))
    for key, other_key in sorted(pairs):
        code = mine.codes[key]
        inner = prove_equivalent(code, theirs.codes[other_key], fixed=fixed)
        if not inner.equivalent:
            prefix = "undecided: " if inner.reason.startswith("undecided") else ""
            parting = inner.parting and replace(
                inner.parting, inside=(code.co_name, *inner.parting.inside))
            return Verdict(False, f"{prefix}nested {code.co_name}: {inner.reason}",
                           parting=parting)
    return Verdict(True, f"{len(a)} paths compared", len(a))

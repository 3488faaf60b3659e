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
and fixed attributes of them, without ``k``: ``fixed``). Lists, dicts (string keys) and
functions the frame makes itself are followed exactly (item stores, slices,
``extend``, ``__name__``...) until they escape into an effect; then their contents at
that moment are part of the effect, and later changes are effects too.

Not compared, by design: local variables (their names, and what ``locals()`` or a frame
inspection would show), the order of pure steps (loads, stack shuffles, building
tuples), line numbers, and the names and ``__qualname__`` of nested functions' code
(recompiled code is compiled inside a wrapper function; they show only in reprs and
tracebacks). A function's ``__name__`` is compared.

The two code objects are equivalent when their sets of paths are equal, signature and
free variables included, and so are the nested code objects whose functions escape. The
check is conservative: what it does not model (loops, generators, class bodies,
``match``, sets, more than ``MAX_PATHS`` paths or ``MAX_STEPS`` steps, Python other than
3.10-3.14) makes it undecided, which callers treat like "not shown". It needs only
:mod:`dis`.
"""

from __future__ import annotations

import ast
import dis
import sys
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

from .bytecode import LITERAL_TYPES, Raw, for_iter_exit, instructions
from .bytecode.exceptions import parse_exception_table
from .codeobj import CodeFlag
from .decompiler.regions import dominators, natural_loops
from .decompiler.temporaries import Fixed

__all__ = ["Verdict", "prove_equivalent"]

MAX_PATHS = 4096
MAX_STEPS = 50_000  # instructions executed, all paths together
MAX_BACK_JUMPS = 8  # on one path: more is a loop, which is not checked

_NULL_FIRST = sys.version_info < (3, 13)  # 3.10-3.12 push NULL below the callable
_BLOCKS = sys.version_info < (3, 11)  # 3.10 sets up handlers at run time (a block stack)
_PY314 = sys.version_info >= (3, 14)  # kwargs slot in CALL_FUNCTION_EX, LOAD_SPECIAL, ...
_SUPPORTED = (3, 10) <= sys.version_info[:2] <= (3, 14)
_SIGNATURE_FLAGS = (CodeFlag.VARARGS | CodeFlag.VARKEYWORDS | CodeFlag.GENERATOR
                    | CodeFlag.COROUTINE | CodeFlag.ITERABLE_COROUTINE | CodeFlag.ASYNC_GENERATOR)

Term = tuple  # a symbolic value; see the module docstring
NULL: Term = ("null",)
UNBOUND: Term = ("unbound",)
NONE: Term = ("const", "NoneType", "None", False)


@dataclass(frozen=True)
class Verdict:
    """The answer: ``equivalent`` is True only when every path was compared and matched."""

    equivalent: bool
    reason: str  # what was compared, or why they differ or could not be compared
    paths: int = 0


class Undecided(Exception):
    """The code does something this checker does not model."""


# ---------------------------------------------------------------- terms


def const_term(value: Any) -> Term:
    """The term of a constant; tuples become tuple terms, code objects are named."""
    if type(value) is tuple:
        return ("tuple", *(const_term(v) for v in value))
    if isinstance(value, CodeType):  # numbered among its namesakes, in co_consts order
        return ("code", value.co_name)
    if type(value) is slice:  # 3.14 folds constant slices
        return ("slice", *(const_term(v) for v in (value.start, value.stop, value.step)))
    if type(value) is frozenset:
        return ("const", "frozenset", repr(sorted(map(repr, value))), bool(value))
    if type(value) in LITERAL_TYPES:
        return ("const", type(value).__name__, repr(value), bool(value))
    # any other object (Dynamo's code holds modules, functions, tensors as constants):
    # itself, as the recompiled code holds the same object; its repr and truth may run
    # code, and cost (a tensor's). Its kind is "object", never a literal type's name (a
    # class may be called `int`), so nothing reads it as a literal.
    return ("const", "object", f"<{type(value).__qualname__} at {id(value):#x}>", None)


@dataclass
class Obj:
    """A list, dict or set the frame built itself."""

    kind: str
    items: list[Any]  # list/set: terms; dict: [key, value] pairs
    escaped: bool = False

    def copy(self) -> Obj:
        return Obj(self.kind, [list(i) if self.kind == "dict" else i for i in self.items],
                   self.escaped)


@dataclass
class State:
    """One path's machine state."""

    pc: int
    stack: list[Term]
    local: dict[str, Term]
    heap: dict[int, Obj]
    trace: list[Any]
    effects: int = 0
    exc_info: Term = ("exc_info0",)
    kw_names: Term | None = None
    bools: set[Term] = field(default_factory=set)  # terms known to be True or False
    canon: dict[Any, int] = field(default_factory=dict)  # object or code -> order seen
    # 3.10: (handler offset or None for an active handler, stack level)
    blocks: list[tuple[int | None, int]] = field(default_factory=list)
    back_jumps: int = 0
    # the time of the loop iteration this path runs in (empty outside loops); see now()
    scope: tuple[int, ...] = ()
    # stores to globals and cells since the last effect: (opcode, name) -> (value, as
    # rendered); no code runs between them, so only the last value of each counts
    stores: dict[tuple[str, str], tuple[Term, Any]] = field(default_factory=dict)

    def fork(self) -> State:
        return State(self.pc, list(self.stack), dict(self.local),
                     {k: o.copy() for k, o in self.heap.items()}, list(self.trace),
                     self.effects, self.exc_info, self.kw_names, set(self.bools),
                     dict(self.canon), list(self.blocks), self.back_jumps, self.scope,
                     dict(self.stores))

    def now(self) -> tuple[int, ...]:
        """When on this path: the number of effects so far, after the loop iterations
        (each named by the time its loop started) this path runs in."""
        return (*self.scope, self.effects)


@dataclass
class Loop:
    """A natural loop of the code: ``body`` holds the instruction indices that can come
    back to ``header`` without passing it (the header included)."""

    header: int
    body: frozenset[int]
    changed: frozenset[str]  # locals the body stores or deletes
    deleted: frozenset[str]  # locals the body may leave unbound
    live: frozenset[str]  # locals that may be read at the header before a store


@dataclass
class Summary:
    """A loop being summarised: its body runs once from a header state whose changing
    locals are opaque (``("phi", time, name, maybe_unbound)``), and every way that run
    ends is kept."""

    loop: Loop
    work: list[State] = field(default_factory=list)
    # (kind, state, path): kind "continue" (back at the header), "exit" (left the loop,
    # goes on in the frame) or "end" (the frame returned or raised); path as the
    # summary shows it, ending included
    endings: list[tuple[str, State, tuple[Any, ...]]] = field(default_factory=list)


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
        self.handlers = [] if _BLOCKS else parse_exception_table(code)
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
            step = _STEPS.get(ins.opname)
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
                state.trace.append(item)
            else:
                state.trace = [*outer.trace, item]
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
            state.trace.append(("store", *sorted(
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
        state.trace.append(rendered)
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
        if _BLOCKS:
            return any(target is not None for target, _ in state.blocks)
        offset = self.instrs[state.pc - 1].offset
        return any(h.start <= offset < h.end for h in self.handlers)

    def raise_(self, state: State, exc: Term, *, forked: bool = False) -> None:
        """Raise ``exc`` at the current instruction: to its handler, or out of the frame."""
        if forked:
            state.trace.append(("raised",))
        if _BLOCKS:
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
            state.stack.extend(_exc_triple(state.exc_info))
            state.exc_info = exc
            state.stack.extend(_exc_triple(exc))
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
        if known is None:
            self.flush(state)
            if term not in state.bools:
                term = self.effect(state, "bool", term, result_bool=True)
            cond, taken = _condition(self.render(state, term, escape=False), jump_if)
            other = state.fork()
            other.trace.append(("if", cond, not taken))
            self.work.append(other)
            state.trace.append(("if", cond, taken))
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
            value = getattr(_const_value(fn[1]), fn[2])(*map(_const_value, args))
            return const_term(value)
        if fn[0] == "method":  # a method we do not model: the object escapes
            fn = ("getattr", fn[1], fn[2])
        return self.effect(state, "call", fn, tuple(args), kwnames, tuple(kwvalues))

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


def _condition(cond: Any, outcome: bool) -> tuple[Any, bool]:
    """``not x`` taken false is ``x`` taken true; ``a is not b`` is ``a is b`` inverted."""
    while cond[0] == "not":
        cond, outcome = cond[1], not outcome
    if cond[0] == "is" and cond[3]:
        cond, outcome = (*cond[:3], 0), not outcome
    return cond, outcome


# A function made in the frame is one of its objects: [code, closure and defaults,
# __name__, __qualname__]. __qualname__ is kept (code may read and set it) but not compared:
# recompiled code is compiled inside a wrapper function, so the qualified names of its
# nested functions differ by that prefix; they only show in reprs and tracebacks.
_FUNCTION_NAMES = {"__name__": 2, "__qualname__": 3}
_FUNCTION_ATTRS = ("__closure__", *_FUNCTION_NAMES)


def _function_attr(obj: Obj, name: str) -> Term:
    if name == "__closure__":
        return dict(obj.items[1]).get(8, NONE)
    return obj.items[_FUNCTION_NAMES[name]]  # type: ignore[no-any-return]


def _const_value(term: Term) -> Any:
    """The value of a constant string term."""
    return ast.literal_eval(term[2])


# ---------------------------------------------------------------- opcode groups


def _pure_stack(ex: Explorer, st: State, ins: Raw) -> bool:
    """Stack shuffles and no-ops."""
    op, s = ins.opname, st.stack
    if op == "POP_TOP":
        s.pop()
    elif op == "PUSH_NULL":
        s.append(NULL)
    elif op == "COPY":
        s.append(s[-ins.arg])
    elif op == "SWAP":
        s[-1], s[-ins.arg] = s[-ins.arg], s[-1]
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
        st.kw_names = const_term(ex.code.co_consts[ins.arg])
    return True


def _locals(ex: Explorer, st: State, ins: Raw) -> bool:
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


def _bound(ex: Explorer, st: State, name: str) -> Term | None:
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
        unbound.trace.append(("bound", value[:3], False))
        ex.raise_(unbound, ("builtin", "UnboundLocalError", name))
        st.trace.append(("bound", value[:3], True))
        value = st.local[name] = (*value[:3], False)
    return value


def _push_callable(stack: list[Term], value: Term, null: bool) -> None:
    """Push ``value``, with a NULL where this version's calls expect one beside it."""
    if null and _NULL_FIRST:
        stack.append(NULL)
    stack.append(value)
    if null and not _NULL_FIRST:
        stack.append(NULL)


def _outside(ex: Explorer, st: State, ins: Raw) -> bool:
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
        _push_callable(s, value, not _BLOCKS and ins.arg & 1)
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
        method = op == "LOAD_METHOD" or (sys.version_info >= (3, 12) and ins.arg & 1)
        owner = s.pop()
        obj = ex.local_obj(st, owner)
        if obj is not None and obj.kind == "list" and ins.argval in ("append", "extend", "pop"):
            value: Term = ("method", owner, ins.argval)
        elif obj is not None and obj.kind == "function" and ins.argval in _FUNCTION_ATTRS:
            # a function made here: ``(lambda: x).__closure__[0]`` is x's cell
            value = _function_attr(obj, ins.argval)
        elif owner[:2] == ("const", "str") and ins.argval in ("removeprefix", "removesuffix"):
            value = ("strmethod", owner, ins.argval)
        elif owner[0] == "fixed" and len(owner) == 2 and ex.fixed is not None and ex.fixed(owner[1], ins.argval):
            value = ("fixed", owner[1], ins.argval)
        else:
            value = ex.effect(st, "getattr", owner, ins.argval)
        _push_callable(s, value, method)
    elif op == "LOAD_SUPER_ATTR":  # 3.12+: super().name, the call and lookup in one
        self_arg, cls, sup = s.pop(), s.pop(), s.pop()
        value = ex.effect(st, "super_attr", sup, cls, self_arg, ins.argval, ins.arg & 2)
        _push_callable(s, value, ins.arg & 1)
    elif op == "STORE_ATTR":
        owner, value = s.pop(), s.pop()
        obj = ex.local_obj(st, owner)
        if obj is not None and obj.kind == "function" and ins.argval in _FUNCTION_NAMES:
            obj.items[_FUNCTION_NAMES[ins.argval]] = value
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
    if _NULL_FIRST:
        return (second, []) if first == NULL else (first, [second])
    return (first, []) if second == NULL else (first, [second])


def _call_keywords_last(ex: Explorer, st: State, fn: Term, args: list[Term],
                        names: Term | None) -> Term:
    """Call ``fn``; the last ``len(names)`` arguments are keywords (``names``: the
    constant tuple of KW_NAMES, CALL_KW or CALL_FUNCTION_KW)."""
    kwnames = tuple(n[2] for n in names[1:]) if names is not None else ()
    split = len(args) - len(kwnames)
    return ex.call(st, fn, args[:split], kwnames, args[split:])


def _calls(ex: Explorer, st: State, ins: Raw) -> bool:
    op, s = ins.opname, st.stack
    if op == "PRECALL":
        return True
    if op in ("CALL", "CALL_KW"):
        if op == "CALL_KW":
            names = s.pop()
        else:
            names, st.kw_names = st.kw_names, None
        args = _pop(s, ins.arg)
        second, first = s.pop(), s.pop()
        fn, self_arg = _callee(first, second)
        s.append(_call_keywords_last(ex, st, fn, self_arg + args, names))
        return True
    # CALL_FUNCTION_EX
    if _PY314:  # a kwargs slot, NULL when there are none
        kwargs = s.pop()
        kwargs = None if kwargs == NULL else kwargs
    else:
        kwargs = s.pop() if ins.arg & 1 else None
    star = s.pop()
    if _BLOCKS:
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


def _operators(ex: Explorer, st: State, ins: Raw) -> bool:
    """Arithmetic, comparisons, formatting: effects (they may run ``__dunder__`` code)."""
    op, s = ins.opname, st.stack
    if op == "IS_OP":
        right, left = s.pop(), s.pop()
        if left[0] == right[0] == "const" and left[1] in ("NoneType", "bool", "ellipsis") \
                and right[1] in ("NoneType", "bool", "ellipsis"):
            s.append(const_term((left == right) != bool(ins.arg)))
            return True
        result = ("is", left, right, ins.arg)
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
            s.append(const_term(_const_value(left) + _const_value(right)))
            return True
        # the argument names the operator (argrepr alone may be empty or ambiguous)
        to_bool = op == "COMPARE_OP" and sys.version_info >= (3, 13) and ins.arg & 16
        # (3.14's dis shows the folded truth test in argrepr: 'bool(>=)')
        shown = ins.argrepr.removeprefix("bool(").removesuffix(")") if to_bool else ins.argrepr
        result = ex.effect(st, op, ins.arg & ~16 if to_bool else ins.arg, shown, left, right)
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
        spec = s.pop() if ins.arg & 4 else const_term("")
        s.append(ex.effect(st, "format", ins.arg & 3, s.pop(), spec))
    elif op in ("CONVERT_VALUE", "FORMAT_SIMPLE"):
        s.append(ex.effect(st, op, ins.arg, s.pop()))
    elif op == "FORMAT_WITH_SPEC":
        spec = s.pop()
        s.append(ex.effect(st, "format", 0, s.pop(), spec))
    elif op == "BUILD_STRING":
        s.append(("str", *_pop(s, ins.arg)))
    return True


def _containers(ex: Explorer, st: State, ins: Raw) -> bool:
    """Building, filling, indexing and unpacking tuples, lists, dicts and sets."""
    op, s, n = ins.opname, st.stack, ins.arg or 0
    if op in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_SLICE"):
        items = _pop(s, n)
        if op == "BUILD_SLICE":
            s.append(("slice", *items, NONE) if n == 2 else ("slice", *items))
        elif op == "BUILD_TUPLE":
            s.append(("tuple", *items))
        elif op == "BUILD_SET":
            raise Undecided("sets are not modelled")
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
        if obj is None:
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


def _getitem(ex: Explorer, st: State, container: Term, key: Term) -> Term:
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


def _setitem(ex: Explorer, st: State, container: Term, key: Term, value: Term | None) -> None:
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


def _flow(ex: Explorer, st: State, ins: Raw) -> bool:
    """Jumps, returns, raises and exception handlers."""
    op, s = ins.opname, st.stack
    if op in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP", "JUMP_NO_INTERRUPT",
              "JUMP_BACKWARD_NO_INTERRUPT"):
        ex.jump(st, ins)
    elif op.endswith(("_IF_NONE", "_IF_NOT_NONE")):
        test = ("is", s.pop(), NONE, 0)
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
            args = [s.pop() for _ in range(ins.arg)][::-1]
            ex.flush(st)
            exc = ("exc", st.now())
            st.effects += 1
            st.trace.append(("raise", *(ex.render(st, a) for a in args)))
        ex.raise_(st, exc)
        return False
    elif op == "RERAISE":
        exc = s.pop()
        if _BLOCKS:  # 3.10: the (type, value, traceback) a handler found
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
    elif op == "POP_EXCEPT" and _BLOCKS:
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
        exit_fn, exc = (s[-7], s[-1][1]) if _BLOCKS else (s[-5] if _PY314 else s[-4], s[-1])
        s.append(ex.effect(st, "call", exit_fn, ("exc_args", exc), (), ()))
    elif op == "MAKE_FUNCTION":
        qualname = s.pop() if _BLOCKS else None
        code = s.pop()
        parts = []
        if sys.version_info < (3, 13):
            for flag in (8, 4, 2, 1):
                if ins.arg & flag:
                    parts.append((flag, s.pop()))
        made = ex.codes[code[1:]]
        s.append(ex.new_obj(st, "function", [code, tuple(sorted(parts)),
                                             const_term(made.co_name),
                                             qualname or const_term(made.co_qualname)]))
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
        done.trace.append(("next", item, False))
        done.stack.pop()
        done.pc = ex.for_exits[st.pc - 1]
        ex.work.append(done)
        st.trace.append(("next", item, True))
        s.append(item)
    return True


_BINARY_310 = {
    "POWER", "MULTIPLY", "MATRIX_MULTIPLY", "FLOOR_DIVIDE", "TRUE_DIVIDE", "MODULO", "ADD",
    "SUBTRACT", "LSHIFT", "RSHIFT", "AND", "XOR", "OR"}


def _exc_triple(exc: Term) -> list[Term]:
    """What 3.10 pushes for an exception: its traceback, value and type (type on top)."""
    return [("exc_tb", exc), ("exc_value", exc), ("exc_type", exc)]


def _py310(ex: Explorer, st: State, ins: Raw) -> bool:
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
        n = {"ROT_TWO": 2, "ROT_THREE": 3, "ROT_FOUR": 4}.get(op, ins.arg)
        s.insert(len(s) - n, s.pop())
    elif op in ("CALL_FUNCTION", "CALL_FUNCTION_KW", "CALL_METHOD"):
        names = s.pop() if op == "CALL_FUNCTION_KW" else None
        args = _pop(s, ins.arg)
        if op == "CALL_METHOD":
            second, first = s.pop(), s.pop()
            fn, self_arg = _callee(first, second)
        else:
            fn, self_arg = s.pop(), []
        s.append(_call_keywords_last(ex, st, fn, self_arg + args, names))
    else:  # BINARY_X / INPLACE_X: the opcode names the operator
        right, left = s.pop(), s.pop()
        if op == "BINARY_ADD" and left[:2] == right[:2] == ("const", "str"):
            s.append(const_term(_const_value(left) + _const_value(right)))
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
if _BLOCKS:
    _GROUPS[_py310] = ("SETUP_FINALLY SETUP_WITH POP_BLOCK JUMP_IF_NOT_EXC_MATCH JUMP_ABSOLUTE "
                       "DUP_TOP DUP_TOP_TWO ROT_TWO ROT_THREE ROT_FOUR ROT_N CALL_FUNCTION "
                       "CALL_FUNCTION_KW CALL_METHOD "
                       + " ".join(f"{kind}_{name}" for kind in ("BINARY", "INPLACE")
                                  for name in sorted(_BINARY_310)))
_STEPS = {name: step for step, names in _GROUPS.items() for name in names.split()}


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
            code.co_varnames[:_nargs(code)], code.co_flags & _SIGNATURE_FLAGS,
            code.co_freevars)


def _first_difference(ours: set[tuple[Any, ...]] | frozenset[tuple[Any, ...]],
                      theirs: set[tuple[Any, ...]] | frozenset[tuple[Any, ...]],
                      shapes: dict[int, Any]) -> tuple[str, bool]:
    """Where a path only in ``ours`` parts from the closest path of ``theirs`` (inside the
    bodies of two loops that start the same, where they part there); whether the loops do
    not line up there: a loop against no loop, or loops over other locals, may be the
    same loop entered elsewhere (a rotated ``while``, a state machine). ``shapes``: loop
    bodies by number.

    Paths are taken shortest first in a fixed order (a set's order changes with the hash
    seed), and any of the first few that parts where loops do not line up decides: the
    verdict never depends on the order of sets."""
    order = sorted(theirs, key=_path_key)
    first: str | None = None
    for path in sorted(ours - theirs, key=_path_key)[:_PATHS_TRIED]:
        where, loop = _parting(path, order, shapes)
        if loop:
            return where, True
        first = first or where
    return first or "(end)", False


_PATHS_TRIED = 8  # paths only in one code that _first_difference looks at


def _path_key(path: tuple[Any, ...]) -> tuple[int, str]:
    return len(path), repr(path)


def _parting(path: tuple[Any, ...], theirs: list[tuple[Any, ...]],
             shapes: dict[int, Any]) -> tuple[str, bool]:
    """:func:`_first_difference` for one path of ours."""
    def kind(p: tuple[Any, ...] | None, k: int) -> Any:
        return p[k][0] if p is not None and k < len(p) and isinstance(p[k], tuple) and p[k] \
            else None

    # the path of theirs that goes along longest; among those, one whose step there is of
    # the same kind as ours, else one that does something rather than raise (the
    # exception edge of a step says less than the step)
    best, at, rank = None, -1, (-1, False, False)
    for other in theirs:
        k, n = 0, min(len(path), len(other))
        while k < n and path[k] == other[k]:
            k += 1
        mine_rank = (k, kind(other, k) == kind(path, k), kind(other, k) != "raised")
        if mine_rank > rank:
            best, at, rank = other, k, mine_rank
    mine = path[at] if at < len(path) else "(end)"
    other = best[at] if best is not None and at < len(best) else "(end)"
    if kind(path, at) == "loop" == kind(best, at):
        if [n for n, _ in mine[2]] != [n for n, _ in other[2]]:
            return f"step {at + 1}: loops over other locals", True
        if mine[1:3] == other[1:3] and mine[3] != other[3]:  # the bodies part: where?
            inner, shape = _first_difference(
                *((shapes[mine[3]], shapes[other[3]]) if shapes[mine[3]] - shapes[other[3]]
                  else (shapes[other[3]], shapes[mine[3]])), shapes)
            return f"step {at + 1}, in the loop: {inner}", shape
    kinds = {kind(path, at), kind(best, at)}
    # (one leaves a loop where the other goes on doing something: what comes after the
    # loop's end in one is inside the loop in the other)
    loop = len(kinds) == 2 and ("loop" in kinds or "exit" in kinds and "continue" not in kinds)
    return f"step {at + 1}: {repr(mine)[:200]} against {repr(other)[:200]}", loop


def prove_equivalent(original: CodeType, candidate: CodeType, *,
                     fixed: Fixed | None = None) -> Verdict:
    """Whether ``candidate`` does what ``original`` does on every path (see the module
    docstring for what that covers). ``fixed``: globals (and attributes of them) that the
    caller knows hold one value while the frame runs, read as terms. Never raises."""
    if not _SUPPORTED:
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
        diff, loop = _first_difference(a, b, shapes) if a - b else \
            _first_difference(b, a, shapes)
        if loop:  # a loop against no loop: maybe the same loop, cut elsewhere
            return Verdict(False, f"undecided: loops of different shapes ({len(a)} paths "
                                  f"against {len(b)}; {side} differs at {diff})")
        return Verdict(False, f"{len(a)} paths against {len(b)}; a path of {side} differs "
                              f"at {diff}")
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
            return Verdict(False, f"{prefix}nested {code.co_name}: {inner.reason}")
    return Verdict(True, f"{len(a)} paths compared", len(a))

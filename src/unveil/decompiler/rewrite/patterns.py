"""``match`` statements: each case's pattern code read back into a pattern.

The compiler turns a case's pattern into stack code that tests a copy of the subject
(``MATCH_SEQUENCE``, ``GET_LEN``, ``MATCH_CLASS``, ``MATCH_KEYS``, ``==``, ``is``), takes it
apart (``UNPACK_SEQUENCE``, subscripts), keeps the captured values on the stack until it
stores them at the end, and jumps to a chain of ``POP_TOP`` blocks when a test fails.
Before the enclosing code is translated, :func:`fold` runs each case's pattern code on
symbolic values (:class:`_Reader`), builds the pattern from what the code does to each
value, and puts one ``MATCH_CASE`` instruction in its place (the test, which binds the
captured names when it succeeds), then a jump to the next case when it fails and a jump
to the case's body. The structurer sees ``if <case matches>:`` chains, which the renderer
writes as ``match`` statements and :func:`merge_matches` joins into one.

A case whose code does anything the reader does not know is left as it was: it then
decompiles to the primitive tests (:mod:`.primitives`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from ...bytecode import CONDITIONAL_JUMPS, Bytecode, Instr, retarget
from ..ir.nodes import catches_all, ends_in_jump, stmt_blocks

if TYPE_CHECKING:
    from collections.abc import Iterable

_LOADS = {"LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_FAST", "LOAD_CLASSDEREF"}
_STORES = {"STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF"}
_MAX_STEPS = 4000


class NotAPattern(Exception):
    """The code at hand is not (all) pattern code the reader knows."""


@dataclass(eq=False)
class Node:
    """The pattern applied to one value: the subject, or a part of it."""

    tests: list[tuple[object, ...]] = field(default_factory=list)
    items: dict[int, Node] = field(default_factory=dict)  # sequence items (<0: from the end)
    unpack: tuple[int, int | None] | None = None  # (count, star position) of an unpacking
    cls: tuple[ast.expr, int, tuple[str, ...]] | None = None
    cls_items: list[Node] | None = None
    keys: list[ast.expr] | None = None
    values: list[Node] | None = None
    rest: str | None = None
    names: list[str] = field(default_factory=list)
    copies: list[Node] = field(default_factory=list)
    is_alt: bool = False
    mirror: Node | None = None  # the same capture in the first alternative of an or
    popped: bool = False

    def item(self, index: int) -> Node:
        if index not in self.items:
            self.items[index] = Node()
        return self.items[index]

    def all_names(self) -> list[str]:
        if self.mirror is not None:
            return self.mirror.all_names()
        return self.names


# ---------------------------------------------------------------- symbolic values


@dataclass(eq=False)
class _V:
    node: Node  # a value the pattern looks at


@dataclass(eq=False)
class _Lit:
    expr: ast.expr  # a constant or (dotted) name the code loaded


@dataclass(eq=False)
class _Test:
    node: Node
    test: tuple[object, ...]


@dataclass(eq=False)
class _Len:
    node: Node


@dataclass(eq=False)
class _FromEnd:
    node: Node
    k: int  # len(node) - k


@dataclass(eq=False)
class _Result:
    node: Node  # a MATCH_CLASS / MATCH_KEYS result (a tuple or None)
    kind: str


@dataclass(eq=False)
class _Rest:
    node: Node | None  # None: the empty dict, before the subject's items go in


@dataclass
class _Walk:
    """One straight path through pattern code (the first alternative of every ``|``, or
    a later alternative up to where it joins the first)."""

    pc: int
    stack: list[object]
    alt_of: tuple[Node, int] | None = None
    history: list[tuple[Node, Node, int]] = field(default_factory=list)  # copies made


@dataclass
class Case:
    """What :func:`fold` learnt about one case."""

    pattern: ast.pattern
    names: tuple[str, ...]
    consumes: bool  # the case's code pops the subject (the last case) or keeps it
    fail: int  # where the next case (or the code after the statement) starts
    body: int  # where the case's guard or body starts
    covered: frozenset[int]


class _Reader:
    """Runs one case's pattern code, starting with the subject alone on a stack."""

    def __init__(self, instrs: list[Instr], start: int, consumes: bool) -> None:
        self.instrs = instrs
        self.start = start
        self.base = 0 if consumes else 1
        self.subject = Node()
        self.fail: int | None = None
        self.visited: dict[int, list[object]] = {}
        self.covered: set[int] = set()
        self.alt_starts: dict[int, Node] = {}
        self.steps = 0
        self.refutable = False
        self.path: list[int] = []  # the first walk's instructions, in order
        self.signs: dict[int, list[object]] = {}  # the values' structure when visited

    def read(self) -> Case:
        first = _Walk(self.start, [_V(self.subject)])
        queue = [first]
        body = None
        while queue:
            walk = queue.pop(0)
            end = self.run(walk, queue, primary=walk is first)
            if walk is first:
                body = end
        if body is None or self.fail is None or not self.refutable:
            raise NotAPattern("no test")
        s = self.subject
        if self.base == 0 and s.popped and not s.tests and not any(c.is_alt for c in s.copies):
            # popped after its copy was matched: a case before others, read as the last
            raise NotAPattern("the subject outlives the case")
        pattern = _pattern(self.subject, top=True, consumed=self.base == 0)
        names = tuple(_captures(pattern))
        return Case(pattern, names, self.base == 0, self.fail, body, frozenset(self.covered))

    # ------------------------------------------------------------ walking

    def run(self, walk: _Walk, queue: list[_Walk], primary: bool) -> int | None:
        """Follow ``walk`` along its successes; returns where the pattern code ends."""
        instrs = self.instrs
        moved = False
        while True:
            self.steps += 1
            if self.steps > _MAX_STEPS or not 0 <= walk.pc < len(instrs):
                raise NotAPattern("runs away")
            stack = walk.stack
            if moved and primary and len(stack) == self.base and (
                    self.base == 0 or stack[0] is not None and isinstance(stack[0], _V)
                    and stack[0].node is self.subject):
                return walk.pc
            if not primary:
                joined = self.joins(walk)
                if joined is not None:
                    self.join(walk, self.visited[joined])
                    return None
            if len(stack) < self.base or (not primary and len(stack) <= self.base):
                raise NotAPattern("stack underflow")
            if walk.pc not in self.visited:
                self.visited[walk.pc] = list(stack)
                self.signs[walk.pc] = [_sign(v.node) if isinstance(v, _V) else None
                                       for v in stack]
            if primary:
                self.path.append(walk.pc)
            self.covered.add(walk.pc)
            ins = instrs[walk.pc]
            moved = True
            if ins.op in CONDITIONAL_JUMPS:
                self.branch(walk, ins, queue)
                continue
            if ins.op == "JUMP":
                walk.pc = ins.target
                continue
            self.step(walk, ins)
            walk.pc += 1

    def joins(self, walk: _Walk) -> int | None:
        """Where a later alternative joins the code after its ``|``: an instruction the
        first walk ran at the same depth, or a copy of the rest of that walk (3.12+
        copies a short case body into each alternative)."""
        pc = walk.pc
        if pc in self.visited:
            return pc if self._joinable(walk, pc) else None
        ins = self.instrs[pc]
        for i in self.path:
            if _same(self.instrs[i], ins) and self._joinable(walk, i) \
                    and _same_from(self.instrs, pc, i):
                return i
        return None

    def _joinable(self, walk: _Walk, pc: int) -> bool:
        """The values below the ``|`` subject are the same and the first walk did not
        test the others any further after ``pc``: they are captures, and the two stacks
        can meet there (before, the rest of an alternative still tests its values)."""
        assert walk.alt_of is not None
        first = self.visited[pc]
        if len(first) != len(walk.stack):
            return False
        depth = walk.alt_of[1]
        signs = self.signs[pc]
        for k, (mine, theirs) in enumerate(zip(walk.stack, first, strict=True)):
            if k < depth:
                if mine is not theirs:
                    return False
            elif not (isinstance(mine, _V) and isinstance(theirs, _V)
                      and _sign(theirs.node) == signs[k]):
                return False
        return True

    def join(self, walk: _Walk, first: list[object]) -> None:
        """A later alternative reached the code after its ``|``: its captures are the first
        alternative's, position by position."""
        assert walk.alt_of is not None
        depth = walk.alt_of[1]
        for k, (mine, theirs) in enumerate(zip(walk.stack, first, strict=True)):
            if k < depth:
                if mine is not theirs:
                    raise NotAPattern("alternatives join with different stacks")
            elif isinstance(mine, _V) and isinstance(theirs, _V):
                mine.node.mirror = theirs.node
            else:
                raise NotAPattern("alternatives join with different captures")

    def branch(self, walk: _Walk, ins: Instr, queue: list[_Walk]) -> None:
        value = walk.stack.pop()
        op = ins.op
        if isinstance(value, _Test):
            value.node.tests.append(value.test)
            ok_on_jump = op == "POP_JUMP_IF_TRUE"
            if op not in ("POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE"):
                raise NotAPattern("test jump")
        elif isinstance(value, _Result):
            if op not in ("POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"):
                raise NotAPattern("result jump")
            ok_on_jump = op == "POP_JUMP_IF_NOT_NONE"
        elif isinstance(value, _V) and op in ("POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"):
            value.node.tests.append(("is", None))
            ok_on_jump = op == "POP_JUMP_IF_NONE"
        else:
            raise NotAPattern("jump on a value")
        ok, bad = (ins.target, walk.pc + 1) if ok_on_jump else (walk.pc + 1, ins.target)
        self.refutable = True
        self.failed(walk, bad, list(walk.stack), queue)
        walk.pc = ok

    def failed(self, walk: _Walk, pc: int, stack: list[object], queue: list[_Walk]) -> None:
        """Where a failed test goes: pops, then the next case or the next alternative."""
        for _ in range(64):
            if not 0 <= pc < len(self.instrs):
                raise NotAPattern("fails out of the code")
            ins = self.instrs[pc]
            if ins.op == "POP_TOP" and len(stack) > self.base:
                stack.pop()
                self.covered.add(pc)
                pc += 1
            elif ins.op == "JUMP":
                self.covered.add(pc)
                pc = ins.target
            else:
                break
        else:
            raise NotAPattern("fail path too long")
        depth = len(stack)
        if depth == self.base:
            if self.fail is not None and self.fail != pc:
                raise NotAPattern("fails to different places")
            self.fail = pc
            return
        if depth < self.base:
            raise NotAPattern("fail pops too much")
        top = stack[-1]
        if not isinstance(top, _V):
            raise NotAPattern("alternative of a non-value")
        # the next alternative of an or-pattern over ``top``: the copy this path tested
        copy = next((c for s, c, d in reversed(walk.history) if s is top.node and d == depth),
                    None)
        if copy is None:
            raise NotAPattern("no alternative")
        copy.is_alt = True
        known = self.alt_starts.get(pc)
        if known is not None:
            if known is not top.node:
                raise NotAPattern("alternatives of different values")
            return
        self.alt_starts[pc] = top.node
        queue.append(_Walk(pc, stack, alt_of=(top.node, depth)))

    def step(self, walk: _Walk, ins: Instr) -> None:
        stack = walk.stack
        op = ins.op

        def pop() -> object:
            if not stack:
                raise NotAPattern("stack underflow")
            return stack.pop()

        def node_of(value: object) -> Node:
            if not isinstance(value, _V):
                raise NotAPattern(f"{op} on a non-value")
            return value.node

        if op == "LOAD_CONST":
            stack.append(_Lit(ast.Constant(ins.argval)))
        elif op in _LOADS:
            stack.append(_Lit(ast.Name(id=ins.argval, ctx=ast.Load())))
        elif op == "LOAD_ATTR":
            base = pop()
            if not isinstance(base, _Lit):
                raise NotAPattern("attribute of a value")
            stack.append(_Lit(ast.Attribute(value=base.expr, attr=ins.argval, ctx=ast.Load())))
        elif op == "BUILD_TUPLE":
            n = ins.arg or 0
            lits = [pop() for _ in range(n)][::-1]
            if not all(isinstance(p, _Lit) for p in lits):
                raise NotAPattern("tuple of values")
            stack.append(_Lit(ast.Tuple(elts=[cast(_Lit, p).expr for p in lits],
                                        ctx=ast.Load())))
        elif op == "COPY":
            k = ins.arg or 1
            if k > len(stack):
                raise NotAPattern("copy below the subject")
            value = stack[-k]
            if k == 1 and isinstance(value, _V):
                copy = Node()
                value.node.copies.append(copy)
                walk.history.append((value.node, copy, len(stack)))
                if walk.alt_of == (value.node, len(stack)) and not any(
                        c.is_alt for s, c, d in walk.history[:-1]
                        if s is value.node and d == len(stack)):
                    copy.is_alt = True
                stack.append(_V(copy))
            else:
                stack.append(value)
        elif op == "SWAP":
            k = ins.arg or 2
            if k > len(stack):
                raise NotAPattern("swap below the subject")
            stack[-1], stack[-k] = stack[-k], stack[-1]
        elif op == "POP_TOP":
            value = pop()
            if isinstance(value, _V):
                value.node.popped = True
        elif op in _STORES:
            value = pop()
            if isinstance(value, _V):
                value.node.names.append(ins.argval)
            elif isinstance(value, _Rest) and value.node is not None:
                value.node.rest = ins.argval
            else:
                raise NotAPattern("stores a non-value")
        elif op == "MATCH_SEQUENCE":
            stack.append(_Test(node_of(stack[-1]), ("seq",)))
        elif op == "MATCH_MAPPING":
            stack.append(_Test(node_of(stack[-1]), ("map",)))
        elif op == "GET_LEN":
            stack.append(_Len(node_of(stack[-1])))
        elif op == "COMPARE_OP":
            right, left = pop(), pop()
            cmp = ins.argval
            if isinstance(left, _V) and isinstance(right, _Lit) and cmp == "==":
                stack.append(_Test(left.node, ("eq", right.expr)))
            elif isinstance(left, _Len) and isinstance(right, _Lit) \
                    and isinstance(right.expr, ast.Constant) \
                    and type(right.expr.value) is int and cmp in ("==", ">="):
                stack.append(_Test(left.node, ("len", cmp, right.expr.value)))
            else:
                raise NotAPattern("comparison")
        elif op == "IS_OP":
            right, left = pop(), pop()
            if isinstance(left, _V) and isinstance(right, _Lit) and not ins.arg \
                    and isinstance(right.expr, ast.Constant) \
                    and right.expr.value in (None, True, False) \
                    and type(right.expr.value) in (type(None), bool):
                stack.append(_Test(left.node, ("is", right.expr.value)))
            elif isinstance(left, _Result) and isinstance(right, _Lit) and ins.arg \
                    and isinstance(right.expr, ast.Constant) and right.expr.value is None:
                stack.append(_Test(left.node, ("result", left.kind)))
            else:
                raise NotAPattern("identity test")
        elif op == "MATCH_CLASS":
            names, cls, subject = pop(), pop(), pop()
            node = node_of(subject)
            if not (isinstance(names, _Lit) and isinstance(names.expr, ast.Constant)
                    and isinstance(names.expr.value, tuple) and isinstance(cls, _Lit)):
                raise NotAPattern("class pattern")
            if node.cls is not None:
                raise NotAPattern("two class tests")
            node.cls = (cls.expr, ins.arg or 0, names.expr.value)
            stack.append(_Result(node, "class"))
        elif op == "MATCH_KEYS":
            keys = stack[-1]
            node = node_of(stack[-2])
            if not isinstance(keys, _Lit):
                raise NotAPattern("keys")
            if isinstance(keys.expr, ast.Constant) and isinstance(keys.expr.value, tuple):
                node.keys = [ast.Constant(k) for k in keys.expr.value]
            elif isinstance(keys.expr, ast.Tuple):
                node.keys = list(keys.expr.elts)
            else:
                raise NotAPattern("keys")
            stack.append(_Result(node, "keys"))
        elif op == "UNPACK_SEQUENCE":
            self.unpack(stack, pop(), ins.arg or 0)
        elif op == "UNPACK_EX":
            node = node_of(pop())
            before, after = (ins.arg or 0) & 0xFF, (ins.arg or 0) >> 8
            if node.unpack is not None or not any(t == ("seq",) for t in node.tests):
                raise NotAPattern("starred unpacking")
            node.unpack = (before + after + 1, before)
            parts = [node.item(i) for i in range(before + after + 1)]
            stack.extend(_V(p) for p in reversed(parts))
        elif op == "BINARY_SUBSCR" and isinstance(stack[-2] if len(stack) > 1 else None,
                                                  _Result):
            # 3.10 reads a class or keys match's values by index
            index, result = pop(), pop()
            if not (isinstance(index, _Lit) and isinstance(index.expr, ast.Constant)
                    and type(index.expr.value) is int):
                raise NotAPattern("subscript of a match result")
            parts = _result_items(cast(_Result, result))  # (tested above)
            if not 0 <= index.expr.value < len(parts):
                raise NotAPattern("subscript of a match result")
            stack.append(_V(parts[index.expr.value]))
        elif op == "BINARY_SUBSCR":
            index, container = pop(), pop()
            node = node_of(container)
            if isinstance(index, _Lit) and isinstance(index.expr, ast.Constant) \
                    and type(index.expr.value) is int and index.expr.value >= 0:
                stack.append(_V(node.item(index.expr.value)))
            elif isinstance(index, _FromEnd) and index.node is node:
                stack.append(_V(node.item(-index.k)))
            else:
                raise NotAPattern("subscript")
        elif op == "BINARY_OP" and ins.argval == "-":
            right, left = pop(), pop()
            if not (isinstance(left, _Len) and isinstance(right, _Lit)
                    and isinstance(right.expr, ast.Constant) and type(right.expr.value) is int):
                raise NotAPattern("arithmetic")
            stack.append(_FromEnd(left.node, right.expr.value))
        elif op == "BUILD_MAP" and not ins.arg:
            stack.append(_Rest(None))
        elif op == "DICT_UPDATE" and ins.arg == 2:
            subject = pop()
            target = stack[-2] if len(stack) >= 2 else None
            if not isinstance(target, _Rest) or target.node is not None:
                raise NotAPattern("dict update")
            target.node = node_of(subject)
        elif op == "DELETE_SUBSCR":
            key, container = pop(), pop()
            if not (isinstance(key, _Lit) and isinstance(container, _Rest)):
                raise NotAPattern("delete")
        elif op == "COPY_DICT_WITHOUT_KEYS":
            pop()
            stack.append(_Rest(node_of(stack[-1])))
        else:
            raise NotAPattern(op)

    def unpack(self, stack: list[object], value: object, count: int) -> None:
        if isinstance(value, _V):
            node = value.node
            if node.unpack is not None or not any(t == ("seq",) for t in node.tests):
                raise NotAPattern("unpacking")
            node.unpack = (count, None)
            parts = [node.item(i) for i in range(count)]
        elif isinstance(value, _Result) and value.kind == "class":
            node = value.node
            if node.cls_items is not None:
                raise NotAPattern("class items twice")
            parts = node.cls_items = [Node() for _ in range(count)]
        elif isinstance(value, _Result) and value.kind == "keys":
            node = value.node
            if node.values is not None:
                raise NotAPattern("values twice")
            parts = node.values = [Node() for _ in range(count)]
        elif isinstance(value, _Lit):
            # the keys again, deleted one by one from the copy that ``**rest`` binds
            expr = value.expr
            keys = [ast.Constant(k) for k in expr.value] \
                if isinstance(expr, ast.Constant) and isinstance(expr.value, tuple) \
                else list(expr.elts) if isinstance(expr, ast.Tuple) else None
            if keys is None or len(keys) != count:
                raise NotAPattern("keys")
            stack.extend(_Lit(k) for k in reversed(keys))
            return
        else:
            raise NotAPattern("unpacking")
        stack.extend(_V(p) for p in reversed(parts))


# ---------------------------------------------------------------- building the pattern


def _pattern(node: Node, top: bool = False, consumed: bool = True) -> ast.pattern:
    """The pattern ``node`` stands for."""
    alts = [c for c in node.copies if c.is_alt]
    others = [c for c in node.copies if not c.is_alt]
    parts: list[ast.pattern] = []
    own = _own(node, others)
    if own is not None:
        parts.append(own)
    if alts:
        if len(alts) < 2:
            raise NotAPattern("one alternative")
        parts.append(ast.MatchOr(patterns=[_pattern(a) for a in alts]))
    for c in others:
        if _subscript_only(c):
            continue
        parts.append(_pattern(c))
    if len(parts) > 1:
        raise NotAPattern("two patterns on one value")
    core = parts[0] if parts else None
    names = node.all_names()
    if top and not consumed and names:
        raise NotAPattern("captures the kept subject")
    if not parts and not names and not node.popped and not top:
        raise NotAPattern("a value left alone")
    for n in names:
        core = ast.MatchAs(pattern=core, name=n)
    if core is None:
        return ast.MatchAs(pattern=None, name=None)
    return core


def _subscript_only(node: Node) -> bool:
    """A copy the code only reads items of (a sequence pattern with ``*_``)."""
    return bool(node.items) and not node.tests and node.unpack is None \
        and node.cls is None and node.keys is None and not node.names and not node.copies


def _own(node: Node, others: list[Node]) -> ast.pattern | None:
    kinds = [t[0] for t in node.tests]
    if "seq" in kinds:
        return _sequence(node, [c for c in others if _subscript_only(c)])
    if "map" in kinds:
        if node.keys is None:
            if node.values is not None or node.rest is not None:
                raise NotAPattern("mapping")
            return ast.MatchMapping(keys=[], patterns=[], rest=None)
        values = node.values or []
        if len(values) != len(node.keys):
            raise NotAPattern("mapping values")
        return ast.MatchMapping(keys=list(node.keys), patterns=[_pattern(v) for v in values],
                                rest=node.rest)
    if node.cls is not None:
        cls, count, attrs = node.cls
        items = node.cls_items or []
        if len(items) != count + len(attrs) or not _dotted(cls, bare=True):
            raise NotAPattern("class pattern items")
        return ast.MatchClass(cls=cls, patterns=[_pattern(i) for i in items[:count]],
                              kwd_attrs=list(attrs),
                              kwd_patterns=[_pattern(i) for i in items[count:]])
    tested = [t for t in node.tests if t[0] in ("eq", "is")]
    if len(tested) > 1 or len(node.tests) != len(tested):
        if node.tests:
            raise NotAPattern("tests that make no pattern")
    if tested:
        kind, value = tested[0]
        if kind == "is":
            return ast.MatchSingleton(value=cast("bool | None", value))
        assert isinstance(value, ast.expr)
        if not (_literal(value) or _dotted(value, bare=False)):
            raise NotAPattern("value pattern")
        return ast.MatchValue(value=value)
    if node.items or node.unpack is not None or node.keys is not None:
        raise NotAPattern("structure without its test")
    return None


def _sequence(node: Node, subscripted: list[Node]) -> ast.pattern:
    lengths = [t for t in node.tests if t[0] == "len"]
    if len(lengths) > 1:
        raise NotAPattern("two length tests")
    exact = min_len = None
    if lengths:
        _, cmp, n = cast(tuple[str, str, int], lengths[0])
        if cmp == "==":
            exact = n
        else:
            min_len = n
    if node.unpack is not None:
        count, star = node.unpack
        if exact is not None and (star is not None or count != exact) \
                or min_len is not None and (star is None or count - 1 != min_len) \
                or exact is None and min_len is None and (star is None or count != 1):
            raise NotAPattern("unpacking and length disagree")
        items = [node.items[i] for i in range(count)]
        out: list[ast.pattern] = []
        for i, item in enumerate(items):
            if i == star:
                names = item.all_names()
                if item.tests or item.copies or len(names) > 1:
                    raise NotAPattern("starred sub-pattern")
                out.append(ast.MatchStar(name=names[0] if names else None))
            else:
                out.append(_pattern(item))
        return ast.MatchSequence(patterns=out)
    # read by subscripts (the pattern has ``*_``), or not at all (only wildcards)
    read: dict[int, Node] = {}
    for c in (node, *subscripted):
        for index, item in c.items.items():
            if index in read:
                raise NotAPattern("item read twice")
            read[index] = item
    if exact is not None:
        if read:
            raise NotAPattern("subscripts without a star")
        return ast.MatchSequence(patterns=[ast.MatchAs() for _ in range(exact)])
    size = (min_len or 0) + 1
    positive = [i for i in read if i >= 0]
    star = max(positive) + 1 if positive else 0
    slots: list[ast.pattern] = [ast.MatchAs() for _ in range(size)]
    for index, item in read.items():
        pos = index if index >= 0 else size + index
        if not 0 <= pos < size or (index >= 0 and pos >= star) or (index < 0 and pos <= star):
            raise NotAPattern("item outside the sequence")
        slots[pos] = _pattern(item)
    slots[star] = ast.MatchStar(name=None)
    return ast.MatchSequence(patterns=slots)


def _result_items(result: _Result) -> list[Node]:
    """The values a class or keys match extracts, made when first read."""
    node = result.node
    if result.kind == "class":
        assert node.cls is not None
        if node.cls_items is None:
            node.cls_items = [Node(popped=True) for _ in range(node.cls[1] + len(node.cls[2]))]
        return node.cls_items
    if node.values is None:
        node.values = [Node(popped=True) for _ in node.keys or ()]
    return node.values


def _sign(node: Node) -> tuple[object, ...]:
    """How much is known of ``node``'s pattern (grows as code tests it)."""
    return (len(node.tests), len(node.items), node.unpack, node.cls is None,
            node.keys is None, len(node.copies), node.values is None, node.cls_items is None)


def _same(a: Instr, b: Instr) -> bool:
    return (a.op, a.arg, a.argval) == (b.op, b.arg, b.argval)


_ENDS = {"RETURN_VALUE", "RAISE_VARARGS", "RERAISE"}


def _same_from(instrs: list[Instr], a: int, b: int) -> bool:
    """Do the instructions from ``a`` and from ``b`` do the same, until they meet again or
    both leave (one a copy of the other the compiler made)?"""
    for _ in range(400):
        while instrs[a].op == "JUMP":
            a = instrs[a].target
        while instrs[b].op == "JUMP":
            b = instrs[b].target
        if a == b:
            return True
        x, y = instrs[a], instrs[b]
        if not _same(x, y) or x.target != y.target:
            return False
        if x.op in _ENDS:
            return True
        a, b = a + 1, b + 1
        if a >= len(instrs) or b >= len(instrs):
            return False
    return False


def _literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        v = node.value
        return type(v) in (int, float, complex, str, bytes) and not isinstance(v, bool)
    return False


def _dotted(node: ast.expr, bare: bool) -> bool:
    """``a.b.c`` (``bare``: a plain name too)."""
    if isinstance(node, ast.Name):
        return bare
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _captures(pattern: ast.pattern) -> Iterable[str]:
    for n in ast.walk(pattern):
        if isinstance(n, ast.MatchAs | ast.MatchStar) and n.name:
            yield n.name
        elif isinstance(n, ast.MatchMapping) and n.rest:
            yield n.rest


def _compiles(pattern: ast.pattern) -> bool:
    """Is ``pattern`` one the compiler accepts (names bound once, or-alternatives alike,
    irrefutable parts where allowed)?"""
    stmt = ast.Match(subject=ast.Name(id="_", ctx=ast.Load()),
                     cases=[ast.match_case(pattern=pattern, guard=None, body=[ast.Pass()]),
                            ast.match_case(pattern=ast.MatchValue(ast.Constant(0)), guard=None,
                                           body=[ast.Pass()])])
    try:
        compile(ast.fix_missing_locations(ast.Module(body=[stmt], type_ignores=[])),
                "<pattern>", "exec")
    except (SyntaxError, ValueError, TypeError):
        return False
    return True


# ---------------------------------------------------------------- folding


def read_case(instrs: list[Instr], start: int) -> Case | None:
    """The case whose pattern code starts at ``start`` (the subject on top), if any: read
    as the last case (its code consumes the subject) first, then as one that keeps it."""
    for consumes in (True, False):
        try:
            case = _Reader(instrs, start, consumes).read()
        except (NotAPattern, RecursionError):
            continue
        if case.fail == start or not _compiles(case.pattern):
            continue
        return case
    return None


def _may_start(instrs: list[Instr], i: int) -> bool:
    """Could a case begin at ``i`` without a case before it leading there?"""
    ins = instrs[i]
    if ins.op in ("MATCH_SEQUENCE", "MATCH_MAPPING"):
        return True
    if ins.op == "COPY" and ins.arg == 1:
        return True
    if ins.op in _LOADS:  # a class pattern: cls (dotted), attribute names, MATCH_CLASS
        j = i + 1
        while j < len(instrs) and instrs[j].op == "LOAD_ATTR":
            j += 1
        return j + 1 < len(instrs) and instrs[j].op == "LOAD_CONST" \
            and instrs[j + 1].op == "MATCH_CLASS"
    return False


_MATCHES = frozenset({"MATCH_SEQUENCE", "MATCH_MAPPING", "MATCH_CLASS", "MATCH_KEYS"})


def fold(bc: Bytecode) -> Bytecode:
    """``bc`` with the pattern code of each ``match`` case replaced by ``MATCH_CASE``."""
    instrs = bc.instrs
    ops = {i.op for i in instrs}
    if not (ops & _MATCHES or "COPY" in ops and any(i.arg == 1 for i in instrs if i.op == "COPY")) \
            or not ops & CONDITIONAL_JUMPS:  # (every case tests and jumps)
        return bc
    cases: dict[int, Case] = {}
    covered: set[int] = set()
    next_starts: set[int] = set()
    for i in range(len(instrs)):
        if i in covered or not (i in next_starts or _may_start(instrs, i)):
            continue
        case = read_case(instrs, i)
        if case is None or case.covered & covered:
            continue
        cases[i] = case
        covered |= case.covered
        next_starts.add(case.fail)
    if not cases:
        return bc
    out: list[Instr] = []
    handlers = []
    index_map: dict[int, int] = {}
    for i, ins in enumerate(instrs):
        index_map[i] = len(out)
        case = cases.get(i)
        h = bc.handlers[i]
        if case is None:
            out.append(Instr(ins.op, ins.arg, ins.argval, ins.target, ins.offset, ins.line))
            handlers.append(h)
            continue
        out.append(Instr("MATCH_CASE", int(case.consumes), case, -1, ins.offset, ins.line))
        out.append(Instr("POP_JUMP_IF_FALSE", None, None, case.fail, ins.offset, ins.line))
        out.append(Instr("JUMP", None, None, case.body, ins.offset, ins.line))
        handlers.extend([h, h, h])
    index_map[len(instrs)] = len(out)
    return retarget(bc, out, handlers, index_map)


# ---------------------------------------------------------------- readable output


def merge_matches(stmts: list[ast.stmt], temps: set[str] | frozenset[str] = frozenset()
                  ) -> list[ast.stmt]:
    """``match`` statements as a person writes them: one where the structurer left a chain
    of them over the same subject (a ``case _`` holding only another ``match``, or a
    ``match`` whose cases all leave followed by another), ``case name:`` for a last case
    that starts by naming the subject, and the subject's expression in place of a
    temporary (``temps``) that holds it for the statement alone."""
    out = _merge(stmts)
    if temps:
        loads: dict[str, int] = {}
        for s in out:
            for n in ast.walk(s):
                if isinstance(n, ast.Name) and n.id in temps:
                    loads[n.id] = loads.get(n.id, 0) + 1
        _inline_subjects(out, temps, loads)
    return out


def _inline_subjects(stmts: list[ast.stmt], temps: Iterable[str],
                     loads: dict[str, int]) -> None:
    i = 0
    while i < len(stmts):
        s = stmts[i]
        for block in stmt_blocks(s):
            _inline_subjects(block, temps, loads)
        prev = stmts[i - 1] if i else None
        if isinstance(s, ast.Match) and isinstance(s.subject, ast.Name) \
                and s.subject.id in temps and loads.get(s.subject.id) == 2 \
                and isinstance(prev, ast.Assign) and len(prev.targets) == 1 \
                and isinstance(prev.targets[0], ast.Name) \
                and prev.targets[0].id == s.subject.id:
            s.subject = prev.value  # (the two names: this assignment and the subject)
            del stmts[i - 1]
            continue
        i += 1


def _merge(stmts: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for s in stmts:
        for block in stmt_blocks(s):
            block[:] = _merge(block)
        if isinstance(s, ast.Match):
            _merge_default(s)
            _capture_default(s)
            prev = out[-1] if out else None
            if isinstance(prev, ast.Match) and _same_subject(prev, s) \
                    and not any(catches_all(c) for c in prev.cases) \
                    and all(ends_in_jump(c.body) for c in prev.cases):
                prev.cases.extend(s.cases)
                continue
        out.append(s)
    return out


def _merge_default(m: ast.Match) -> None:
    while m.cases and _is_default(m.cases[-1]) and len(m.cases[-1].body) == 1:
        inner = m.cases[-1].body[0]
        if not (isinstance(inner, ast.Match) and _same_subject(m, inner)):
            return
        m.cases[-1:] = inner.cases


def _capture_default(m: ast.Match) -> None:
    """``case _: name = subject; ...`` is ``case name: ...``."""
    last = m.cases[-1] if m.cases else None
    if last is None or not _is_default(last) or not isinstance(m.subject, ast.Name):
        return
    first = last.body[0] if last.body else None
    if isinstance(first, ast.Assign) and len(first.targets) == 1 \
            and isinstance(first.targets[0], ast.Name) and isinstance(first.value, ast.Name) \
            and first.value.id == m.subject.id and first.targets[0].id != m.subject.id:
        last.pattern = ast.MatchAs(pattern=None, name=first.targets[0].id)
        last.body = last.body[1:] or [ast.Pass()]


def _is_default(case: ast.match_case) -> bool:
    """``case _:``"""
    return catches_all(case) and cast(ast.MatchAs, case.pattern).name is None


def _same_subject(a: ast.Match, b: ast.Match) -> bool:
    return isinstance(a.subject, ast.Name) and isinstance(b.subject, ast.Name) \
        and a.subject.id == b.subject.id


def drop_final_return(body: list[ast.stmt]) -> None:
    """A function ending in a ``match`` whose ``case _`` only returns None: without that
    case the function falls off its end, which returns None too."""
    last = body[-1] if body else None
    if isinstance(last, ast.Match) and len(last.cases) > 1 and _is_default(last.cases[-1]):
        tail = last.cases[-1].body
        if len(tail) == 1 and isinstance(tail[0], ast.Return) and (
                tail[0].value is None or isinstance(tail[0].value, ast.Constant)
                and tail[0].value.value is None):
            del last.cases[-1]

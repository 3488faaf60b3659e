"""Steps of the equivalence check's paths in words, as a person reads Python.

A path (:mod:`.equivalence`) is a tuple of steps whose operands are symbolic terms:
``('call', ('global', 'h', (1,)), (('res', (0,)),), (), ())`` is "calls ``h(g(a, b))``"
once the result ``('res', (0,))`` is read back as the step that made it. :func:`step_words`
says one step so; what it cannot say plainly it says as "a value".
"""

from __future__ import annotations

from typing import Any

__all__ = ["step_words"]

_LONG = 120  # characters of one expression before it is cut with "..."
_UNARY = {"UNARY_NEGATIVE": "-", "UNARY_INVERT": "~", "UNARY_POSITIVE": "+"}
_OLD_OPERATORS = {"BINARY_ADD": "+", "BINARY_SUBTRACT": "-", "BINARY_MULTIPLY": "*",
                  "BINARY_TRUE_DIVIDE": "/", "BINARY_FLOOR_DIVIDE": "//", "BINARY_MODULO": "%",
                  "BINARY_POWER": "**", "BINARY_MATRIX_MULTIPLY": "@", "BINARY_AND": "&",
                  "BINARY_OR": "|", "BINARY_XOR": "^", "BINARY_LSHIFT": "<<",
                  "BINARY_RSHIFT": ">>"}


def step_words(path: tuple[Any, ...], at: int) -> str:
    """What step ``at`` of ``path`` does, in words ("calls ``f(x)``", "tests ``x is
    None``: true", "returns ``y``"); "ends" past the end."""
    if at >= len(path):
        return "ends"
    reader = _Reader(path)
    step = path[at]
    if not isinstance(step, tuple) or not step or not isinstance(step[0], str):
        return "does something else"
    kind = step[0]
    if kind == "if":
        return f"tests `{reader.cond(step[1])}`: {'true' if step[2] else 'false'}"
    if kind == "return":
        return f"returns `{reader.expr(step[1])}`"
    if kind == "raise":
        return (f"raises `{reader.expr(step[1])}`" if len(step) > 1 and step[1][:1] != ("exc",)
                else "raises")
    if kind == "raised":
        return "raises there (the step before failed)"
    if kind == "store":
        stored = ", ".join(f"{name} = {reader.expr(value)}" for _, name, value in step[1:])
        return f"stores `{_cut(stored)}`"
    if kind == "next":
        return f"takes the next item of `{reader.expr(step[1])}`" if step[2] else \
            "finds the iterator exhausted"
    if kind == "bound":
        return f"finds `{step[1][2]}` {'bound' if step[2] else 'unbound'}"
    if kind in ("loop", "continue", "exit"):
        return {"loop": "runs a loop", "continue": "goes round the loop again",
                "exit": "leaves the loop"}[kind]
    effect = reader.effect(step)
    return f"{_VERBS.get(kind, 'runs')} `{effect}`"


_VERBS = {"call": "calls", "getattr": "reads", "getitem": "reads", "setattr": "stores",
          "setitem": "stores", "delattr": "deletes", "delitem": "deletes", "bool": "tests",
          "import": "imports", "import_from": "imports", "iter": "iterates over",
          "in": "tests", "with_enter": "enters", "except_match": "matches",
          "BINARY_OP": "computes", "COMPARE_OP": "computes", "UNARY_NEGATIVE": "computes",
          "UNARY_INVERT": "computes", "UNARY_POSITIVE": "computes"}


class _Reader:
    """Terms of one path as Python expressions; a result is the expression of the step
    that made it (found by its time: the effects are numbered in order)."""

    def __init__(self, path: tuple[Any, ...]) -> None:
        self.path = path
        self.by_time: dict[Any, tuple[Any, ...]] = {}
        count = 0
        for step in path:  # (as Explorer.effect numbers them; a loop is one step)
            if not isinstance(step, tuple) or not step or step[0] in _NOT_EFFECTS \
                    or step[0] == "next" and len(step) == 3:
                continue
            self.by_time[(count,)] = step
            count += 1
        self.depth = 0

    def effect(self, step: tuple[Any, ...]) -> str:
        kind = step[0]
        e = self.expr
        if kind == "call" and len(step) >= 5:
            args = [e(a) for a in step[2]] if isinstance(step[2], tuple) else ["..."]
            args += [f"{str(k).strip(chr(39))}={e(v)}" for k, v in zip(step[3], step[4],
                                                                      strict=False)]
            return _cut(f"{e(step[1])}({', '.join(args)})")
        if kind == "getattr":
            return _cut(f"{e(step[1])}.{step[2]}")
        if kind == "getitem":
            return _cut(f"{e(step[1])}[{e(step[2])}]")
        if kind == "setattr":
            return _cut(f"{e(step[1])}.{step[2]} = {e(step[3])}")
        if kind == "setitem":
            return _cut(f"{e(step[1])}[{e(step[2])}] = {e(step[3])}")
        if kind == "delattr":
            return _cut(f"del {e(step[1])}.{step[2]}")
        if kind == "delitem":
            return _cut(f"del {e(step[1])}[{e(step[2])}]")
        if kind in ("bool", "iter", "next"):  # (a builtin of one operand)
            return _cut(f"{kind}({e(step[1])})")
        if kind == "in":
            return _cut(f"{e(step[1])} in {e(step[2])}")
        if kind == "import":
            return f"import {step[1]}"
        if kind == "import_from":
            return f"from {e(step[1])} import {step[2]}"
        o = self.operand
        if kind in ("BINARY_OP", "COMPARE_OP") and len(step) >= 5 and step[2]:
            return _cut(f"{o(step[3])} {step[2]} {o(step[4])}")  # (opcode, arg, shown, a, b)
        if kind == "BINARY_OP" and len(step) >= 4:  # 3.10: the opcode names the operator
            return _cut(f"{o(step[2])} {_OLD_OPERATORS.get(step[1], step[1])} {o(step[3])}")
        if kind in _UNARY:
            return _cut(f"{_UNARY[kind]}{o(step[1])}")
        if kind == "with_enter":
            return _cut(f"with {e(step[1])}")
        return _cut(f"{kind}({', '.join(e(t) for t in step[1:] if isinstance(t, tuple))})")

    def operand(self, term: Any) -> str:
        """``term`` as an operand of an operator: in parentheses if it is one too."""
        text = self.expr(term)
        made = self.by_time.get(term[1]) if isinstance(term, tuple) and term[:1] == ("res",) \
            else None
        operator = made is not None and (made[0] in _UNARY or made[0] in (
            "BINARY_OP", "COMPARE_OP", "in"))
        return f"({text})" if operator else text

    def cond(self, term: Any) -> str:
        if isinstance(term, tuple) and term[:1] == ("is",) and len(term) >= 3:
            return _cut(f"{self.expr(term[1])} is {'not ' if term[3:4] == (1,) else ''}"
                        f"{self.expr(term[2])}")
        return self.expr(term)

    def expr(self, term: Any) -> str:
        if not isinstance(term, tuple) or not term:
            return repr(term)
        head = term[0]
        if head == "arg" or head == "cell":
            return str(term[1])
        if head in ("global", "deref", "phi"):
            return str(term[1] if head != "phi" else term[2])
        if head == "fixed":
            return ".".join(str(t) for t in term[1:])
        if head == "const":
            return str(term[2])
        if head == "builtin":
            return str(term[1])
        if head == "res":
            made = self.by_time.get(term[1])
            if made is None or self.depth > 6:
                return "a value"
            self.depth += 1
            try:
                return self.effect(made) if made[0] != "bool" else self.expr(made[1])
            finally:
                self.depth -= 1
        if head == "exc":
            return "the exception"
        if head == "is":
            return self.cond(term)
        if head == "not":
            return f"not {self.expr(term[1])}"
        if head == "object":
            if len(term) < 4:
                return "an object made here"
            kind, items = term[2], term[3]
            if kind == "list":
                return _cut(f"[{', '.join(self.expr(i) for i in items)}]")
            if kind == "set":
                return _cut("{" + ", ".join(self.expr(i) for i in items) + "}")
            if kind == "dict":
                return _cut("{" + ", ".join(f"{self.expr(k)}: {self.expr(v)}"
                                            for k, v in items) + "}")
            return f"a {kind} made here"
        if head == "tuple":
            inner = [self.expr(t) for t in term[1:]] if len(term) != 2 or \
                not isinstance(term[1], tuple) or (term[1] and isinstance(term[1][0], str)) \
                else [self.expr(t) for t in term[1]]
            return _cut(f"({', '.join(inner)}{',' if len(inner) == 1 else ''})")
        if head == "code":
            return "a nested function's code"
        if head == "null":
            return "NULL"
        return "a value"


# the steps that are not effects (outcomes, ends); the others each take one time
_NOT_EFFECTS = {"if", "store", "raised", "bound", "continue", "exit", "return", "raise"}


def _cut(text: str) -> str:
    return text if len(text) <= _LONG else text[:_LONG - 3] + "..."

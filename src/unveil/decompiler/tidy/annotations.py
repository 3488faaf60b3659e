"""Annotations on 3.14, where the compiler moves them into ``__annotate__`` functions.

PEP 649 compiles ``def f(a: int) -> str`` to a function with an ``__annotate__``
function attached that returns ``{'a': int, 'return': str}``, and a module or class
body's ``x: int = 1`` to ``x = 1`` plus an entry in the scope's ``__annotate__``; in a
module each annotated statement also records ``__conditional_annotations__.add(i)``.
This module reads the annotate functions back and puts the annotations where the
source had them.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, cast

from ...codeobj import CodeFlag, iter_code_objects
from ...errors import DecompilationError
from ..ir.facts import CONDITION, attach, fact
from ..ir.markers import ExcMarker
from ..ir.nodes import SCOPES, cells, holder, same, stmt_blocks
from .idioms import SIMPLE, annotation_expr

if TYPE_CHECKING:
    from types import CodeType

    from ..ir.exprs import Func
    from ..scope import Scope

Item = tuple[str, ast.expr, int | None]  # name, annotation, conditional index


def items_of(func: Func, parent: Scope) -> list[Item]:
    """The annotations an ``__annotate__`` function returns, in order."""
    body = parent.child(func.code).statements()
    items: list[Item] = []
    flat = _flatten(body)
    for k, stmt in enumerate(flat):
        cond: int | None = fact(stmt, CONDITION, None)
        if isinstance(stmt, ast.If):
            returned = _returned_dict(flat[k:])
            if returned is not None:
                items.extend(_dict_items(returned, None))
            break
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name) and isinstance(stmt.value, ast.Dict):
                items.extend(_dict_items(stmt.value, None))
            elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                    and isinstance(target.slice, ast.Constant) \
                    and isinstance(target.slice.value, str):
                items.append((target.slice.value, stmt.value, cond))
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            returned = _dict_of(stmt.value)
            if returned is not None:
                items.extend(_dict_items(returned, None))
    return items


def _returned_dict(stmts: list[ast.stmt]) -> ast.Dict | None:
    """The dict returned by an annotate body that branches: for ``-> (a if c else b)``
    the compiler returns a whole dict from each arm; the arms merge back into one dict
    whose differing values are conditional expressions."""
    if not stmts:
        return None
    first = stmts[0]
    if isinstance(first, ast.Return):
        return _dict_of(first.value) if first.value is not None else None
    if not isinstance(first, ast.If):
        return None
    return _merge(first.test, _returned_dict(first.body),
                  _returned_dict(first.orelse + stmts[1:]))


def _dict_of(value: ast.expr) -> ast.Dict | None:
    """``{'return': a} if c else {'return': b}`` read as ``{'return': a if c else b}``."""
    if isinstance(value, ast.Dict):
        return value
    if isinstance(value, ast.IfExp):
        return _merge(value.test, _dict_of(value.body), _dict_of(value.orelse))
    return None


def _merge(test: ast.expr, yes: ast.Dict | None, no: ast.Dict | None) -> ast.Dict | None:
    if yes is None or no is None or len(yes.keys) != len(no.keys) \
            or None in yes.keys or None in no.keys \
            or not same(yes.keys, no.keys):
        return None
    values = [a if same(a, b) else ast.IfExp(test=test, body=a, orelse=b)
              for a, b in zip(yes.values, no.values, strict=True)]
    return ast.Dict(keys=yes.keys, values=values)


def _dict_items(node: ast.Dict, cond: int | None) -> list[Item]:
    out: list[Item] = []
    for k, v in zip(node.keys, node.values, strict=True):
        if isinstance(k, ast.Constant) and isinstance(k.value, str):
            out.append((k.value, v, cond))
    return out


def _flatten(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """Statements of an annotate body; ``if i in __conditional_annotations__:`` arms are
    opened with their index recorded; the ``format`` check is skipped."""
    out: list[ast.stmt] = []
    for s in stmts:
        if isinstance(s, ast.If):
            index = conditional_index(s.test)
            if index is not None:
                for inner in s.body:
                    attach(inner, condition=index)
                    out.append(inner)
                continue
            if is_format_check(s):
                continue
        out.append(s)
    return out


def conditional_index(test: ast.expr) -> int | None:
    """``i`` of ``i in __conditional_annotations__``."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 \
            and isinstance(test.ops[0], ast.In) and isinstance(test.left, ast.Constant) \
            and isinstance(test.left.value, int) \
            and isinstance(test.comparators[0], ast.Name) \
            and test.comparators[0].id == "__conditional_annotations__":
        return test.left.value
    return None


def is_format_check(s: ast.If) -> bool:
    """``if format > 2: raise NotImplementedError`` at the top of a 3.14 lazy function."""
    return len(s.body) == 1 and isinstance(s.body[0], ast.Raise)


def apply_to_scope(stmts: list[ast.stmt], parent: Scope) -> list[ast.stmt]:
    """Module or class body: annotated assignments back in place."""
    items: list[Item] = []
    for s in stmts:
        if isinstance(s, ExcMarker) and s.kind == "annotate":
            items = items_of(s.value, parent)  # type: ignore[arg-type]  # an annotate marker has a value
    # (with ``from __future__ import annotations`` there is no annotate function, but
    # 3.14 still keeps ``__conditional_annotations__``: the compiler adds it back)
    by_index = {i: (name, ann) for name, ann, i in items if i is not None}
    unconditional = [(name, ann) for name, ann, i in items if i is None]
    recorded: set[int] = set()
    out = _with_dead_annotations(_placed(stmts, by_index, recorded), by_index, recorded)
    # class bodies have no markers: annotate the next assignment of each name, in order
    # (an annotation alone goes after the header the compiler writes)
    last = -1
    while last + 1 < len(out) and _is_header(out[last + 1]):
        last += 1
    for name, ann in unconditional:
        for k in range(last + 1, len(out)):
            s = out[k]
            if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                    and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name:
                out[k] = ast.AnnAssign(target=ast.Name(id=name, ctx=ast.Store()),
                                       annotation=ann, value=s.value, simple=1)
                last = k
                break
        else:
            last += 1
            out.insert(last, ast.AnnAssign(target=ast.Name(id=name, ctx=ast.Store()),
                                           annotation=ann, value=None, simple=1))
    return out


def _with_dead_annotations(out: list[ast.stmt], by_index: dict[int, tuple[str, ast.expr]],
                           recorded: set[int]) -> list[ast.stmt]:
    """``out`` with ``if False: name: T`` for each annotation the code never records
    (the compiler drops dead code but keeps its annotations), before the statement
    that holds the next recorded one, else at the end."""
    result = list(out)
    for index in sorted(set(by_index) - recorded, reverse=True):
        name, ann = by_index[index]
        block = ast.If(test=ast.Constant(False), body=[ast.AnnAssign(
            target=ast.Name(id=name, ctx=ast.Store()), annotation=ann, value=None,
            simple=1)], orelse=[])
        nxt = min((j for j in recorded if j > index), default=None)
        pos = len(result)
        if nxt is not None:
            pos = next((k for k, stmt in enumerate(result) if any(
                isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
                and n.target.id == by_index[nxt][0] for n in ast.walk(stmt))), pos)
        result.insert(pos, block)
    return result


def _placed(stmts: list[ast.stmt], by_index: dict[int, tuple[str, ast.expr]],
            recorded: set[int]) -> list[ast.stmt]:
    """``stmts`` with each ``__conditional_annotations__.add(i)`` (in nested blocks too,
    not in nested scopes) made the annotation of the assignment before it; each such
    ``i`` goes into ``recorded``."""
    out: list[ast.stmt] = []
    for s in stmts:
        if isinstance(s, ExcMarker) and s.kind == "annotate":
            continue
        if _is_conditional_set(s):
            continue
        index = _recorded_index(s, out[-1] if out else None)
        if index is not None:
            recorded.add(index)
            if out and _reads_conditional_set(out[-1]):
                out.pop()
            name_ann = by_index.get(index)
            if name_ann is not None:
                _annotate(out, *name_ann)
            continue
        if type(s) not in SIMPLE and not isinstance(s, SCOPES):
            for block in stmt_blocks(s):
                # (an emptied ``else`` goes; any other block keeps a ``pass``)
                block[:] = _placed(block, by_index, recorded) or (
                    [] if block is getattr(s, "orelse", None) else [ast.Pass()])
        out.append(s)
    return out


_HEADER = frozenset({"__module__", "__qualname__", "__firstlineno__", "__doc__"})


def _is_header(s: ast.stmt) -> bool:
    """A statement the compiler writes at the top of a class body (or its docstring)."""
    if isinstance(s, ast.Expr):
        return isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)
    return isinstance(s, ast.Assign) and len(s.targets) == 1 \
        and isinstance(s.targets[0], ast.Name) and s.targets[0].id in _HEADER


def _annotate(out: list[ast.stmt], name: str, ann: ast.expr) -> None:
    prev = out[-1] if out else None
    if isinstance(prev, ast.Assign) and len(prev.targets) == 1 \
            and isinstance(prev.targets[0], ast.Name) and prev.targets[0].id == name:
        out[-1] = ast.AnnAssign(target=ast.Name(id=name, ctx=ast.Store()), annotation=ann,
                                value=prev.value, simple=1)
    else:
        out.append(ast.AnnAssign(target=ast.Name(id=name, ctx=ast.Store()), annotation=ann,
                                 value=None, simple=1))


def _is_conditional_set(s: ast.stmt) -> bool:
    return isinstance(s, ast.Assign) and len(s.targets) == 1 \
        and isinstance(s.targets[0], ast.Name) \
        and s.targets[0].id == "__conditional_annotations__"


def _reads_conditional_set(s: ast.stmt) -> bool:
    return isinstance(s, ast.Assign) and isinstance(s.value, ast.Name) \
        and s.value.id == "__conditional_annotations__"


def _recorded_index(s: ast.stmt, prev: ast.stmt | None) -> int | None:
    """``__conditional_annotations__.add(i)`` (possibly through a temporary assigned
    the set right before: ``prev``); any other ``x.add(...)`` is the program's own."""
    if not isinstance(s, ast.Expr) or not isinstance(s.value, ast.Call):
        return None
    call = s.value
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "add"
            and len(call.args) == 1 and not call.keywords
            and isinstance(call.args[0], ast.Constant)
            and type(call.args[0].value) is int):
        return None
    receiver = call.func.value
    if isinstance(receiver, ast.Name) and (
            receiver.id == "__conditional_annotations__"
            or prev is not None and _reads_conditional_set(prev)
            and isinstance(prev, ast.Assign) and isinstance(prev.targets[0], ast.Name)
            and prev.targets[0].id == receiver.id):
        return call.args[0].value
    return None


def annotated_owner(code: CodeType, dec: Scope) -> ast.stmt | None:
    """3.14: a definition whose annotations the ``__annotate__`` code object returns (the
    compiler writes that code object; source cannot, but an annotated ``def``, class or
    module body makes it)."""
    if code.co_argcount != 1 or code.co_varnames[:1] != ("format",):
        return None
    try:
        body = dec.statements()
    except DecompilationError:
        return None
    # exactly what the compiler writes: the format check, then one dict of annotations
    if len(body) < 2 or not isinstance(body[0], ast.If) or not is_format_check(body[0]):
        return None
    found = _annotation_items(body[1:])
    if found is None:
        return None
    items, item_by_item = found
    names = [k.value if isinstance(k, ast.Constant) else None for k, _, _ in items]
    if not items or not all(isinstance(n, str) and n.isidentifier() for n in names) \
            or len(set(names)) != len(names) and not item_by_item:
        return None  # (a class or module body may annotate a name twice, conditionally)
    keys = cast(list[str], names)  # (all str, checked just above)
    stringified = bool(code.co_flags & CodeFlag.FUTURE_ANNOTATIONS)

    def annotated(name: str, value: ast.expr, index: int | None) -> ast.stmt:
        node: ast.stmt = ast.AnnAssign(
            target=ast.Name(id=name, ctx=ast.Store()),
            annotation=annotation_expr(value, True) if stringified else value,
            value=None, simple=1)
        if index is not None:  # an annotation a module or class body runs conditionally
            node = ast.If(test=ast.Name(id="__unveil_condition__", ctx=ast.Load()),
                          body=[node], orelse=[])
        return node

    entries = [annotated(n, v, i) for n, (_, v, i) in zip(keys, items, strict=True)]
    conditional = [i for _, _, i in items if i is not None]
    if item_by_item and "__classdict__" in code.co_freevars:
        # a class body's annotations (``x: int``), evaluated in the class namespace
        return ast.ClassDef(name="__unveil_annotated__", bases=[], keywords=[],
                            body=entries, decorator_list=[],
                            type_params=[])  # type: ignore[call-arg, unused-ignore]  # 3.12 field
    if conditional:
        # a module body's: the compiler numbers each annotation in order
        if conditional != list(range(len(items))):
            return None
        body = [e.body[0] for e in entries if isinstance(e, ast.If)]
        body += [_dead_cell(n) for n in code.co_cellvars if n.isidentifier()]
        return ast.If(test=ast.Name(id="__unveil_condition__", ctx=ast.Load()),
                      body=body, orelse=[])
    annotations = [e.annotation for e in entries if isinstance(e, ast.AnnAssign)]
    args = [ast.arg(arg=n, annotation=a) for n, a in zip(keys, annotations, strict=True)
            if n != "return"]
    returns = next((a for n, a in zip(keys, annotations, strict=True) if n == "return"),
                   None)
    owner = ast.FunctionDef(name="__unveil_annotated__", args=ast.arguments(
        posonlyargs=[], args=args, vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
        defaults=[]), body=[ast.Pass()], decorator_list=[], returns=returns,
        type_params=[])  # type: ignore[call-arg, unused-ignore]  # 3.12 field
    if set(code.co_freevars) & set(code.co_varnames[1:]):
        # a name both free and bound by an inlined comprehension: whether a comprehension
        # reads the free one depends on the order the compiler's symbol table meets the
        # annotations in. It meets positional-only parameters first, and evaluates them
        # last: make the last ones positional-only until the free variables agree.
        for k in range(1, len(args)):
            owner.args.posonlyargs, owner.args.args = args[-k:], args[:-k]
            if _free_variables_agree(owner, code):
                break
        else:
            owner.args.posonlyargs, owner.args.args = [], args
    return owner


def _dead_cell(name: str) -> ast.stmt:
    """A module's ``__annotate__`` has a cell only from a comprehension inlined into it
    whose lambda reads the name it binds, in the annotation of a target that is not a
    name (never evaluated, so the compiler drops it): such an annotation, for ``name``."""
    return ast.parse(f"__unveil_condition__.x: [lambda: {name} for {name} in ()]").body[0]


def _free_variables_agree(owner: ast.FunctionDef, code: CodeType) -> bool:
    """Does ``owner``, compiled where ``code``'s free variables are cells, give an
    ``__annotate__`` with ``code``'s free variables?"""
    free = [n for n in code.co_freevars if n.isidentifier() and not n.startswith("__")]
    body: list[ast.stmt] = [owner]
    if "__classdict__" in code.co_freevars:
        body = [ast.ClassDef(name="__unveil_class__", bases=[], keywords=[], body=body,
                             decorator_list=[],
                             type_params=[])]  # type: ignore[call-arg, unused-ignore]  # 3.12 field
    module = ast.Module(body=[holder("__unveil_closure__", [*cells(free), *body])],
                        type_ignores=[])
    try:
        compiled = compile(ast.fix_missing_locations(module), "<unveil annotations>", "exec",
                           dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return any(e.code.co_name == "__annotate__" and set(e.code.co_freevars) == set(code.co_freevars)
               for e in iter_code_objects(compiled))


Entry = tuple[ast.expr | None, ast.expr, int | None]  # key, annotation, conditional index


def _annotation_items(body: list[ast.stmt]) -> tuple[list[Entry], bool] | None:
    """``return {k: v, ...}`` (a function's annotations), or a class's or module's:
    ``d = {}``, then ``d[k] = v`` for each (each maybe under ``if i in
    __conditional_annotations__:``), then ``return d`` (the flag says which)."""
    last = body[-1]
    if not isinstance(last, ast.Return):
        return None
    if len(body) == 1 and isinstance(last.value, ast.Dict):
        return [(k, v, None) for k, v in zip(last.value.keys, last.value.values,
                                             strict=True)], False
    first = body[0]
    if not (isinstance(last.value, ast.Name) and isinstance(first, ast.Assign)
            and len(first.targets) == 1 and isinstance(first.targets[0], ast.Name)
            and first.targets[0].id == last.value.id and isinstance(first.value, ast.Dict)
            and not first.value.keys):
        return None
    items: list[Entry] = []
    for s in body[1:-1]:
        index = None
        if isinstance(s, ast.If) and not s.orelse and len(s.body) == 1:
            index = conditional_index(s.test)
            if index is None:
                return None
            s = s.body[0]
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Subscript)
                and isinstance(s.targets[0].value, ast.Name)
                and s.targets[0].value.id == last.value.id):
            return None
        items.append((s.targets[0].slice, s.value, index))
    return items, True

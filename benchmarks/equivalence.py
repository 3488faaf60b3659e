"""How much ``unveil.verify.equivalence`` can show, and whether it is fooled (no torch needed).

Over every function of the standard library (``Lib/*.py``, module and class bodies and
generators left out, as Dynamo's frames are neither):

* **recompiled**: ``prove_equivalent(code, recompile(code))``; counts of shown
  equivalent, undecided (with the top reasons) and different. "Different" is either a
  real difference in the decompiler's output or an imprecision of the checker; each is
  listed.
* **mutants**: one mutant per function whose recompiled code was shown equivalent: the
  source with one change a caller can see (an integer argument of a call changed, two
  arguments of a call swapped, ``==`` turned into ``!=``, a call statement deleted, two
  call statements swapped). ``prove_equivalent(code, mutant)`` must never say
  "equivalent"; the count of those that it does ("fooled") is the number that matters.

    PYTHONPATH=src python benchmarks/equivalence.py [--limit N] [--show K]
"""

from __future__ import annotations

import argparse
import ast
import collections
import glob
import os
import sys
import textwrap
import time
import types
import warnings
import zipfile
from typing import Any

from unveil.decompiler.api import recompile
from unveil.verify.equivalence import prove_equivalent
from unveil.verify.oracle import compare


def sources(lib: str) -> list[tuple[str, str]]:
    """(path, source) of the top-level modules of the standard library ``lib`` (a folder,
    or the zip file Pyodide keeps it in)."""
    if os.path.isdir(lib):
        out = []
        for path in sorted(glob.glob(os.path.join(lib, "*.py"))):
            try:
                out.append((path, open(path, encoding="utf-8").read()))
            except (OSError, UnicodeDecodeError):
                pass
        return out
    archive = lib[:lib.index(".zip") + 4]
    with zipfile.ZipFile(archive) as zf:
        return [(f"{archive}/{name}", zf.read(name).decode("utf-8")) for name in sorted(zf.namelist())
                if name.endswith(".py") and "/" not in name]


def functions(path: str, source: str) -> list[tuple[types.CodeType, ast.AST]]:
    """(code, def node) of every plain function in the source."""
    try:
        tree = ast.parse(source)
        module = compile(tree, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return []
    nodes = {(n.name, n.lineno): n for n in ast.walk(tree)
             if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    out = []
    stack = [module]
    while stack:
        code = stack.pop()
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        node = nodes.get((code.co_name, code.co_firstlineno))
        if node is None:  # decorated: the def's line is after the decorators
            node = next((n for (name, _), n in nodes.items() if name == code.co_name
                         and n.decorator_list and n.decorator_list[0].lineno
                         == code.co_firstlineno), None)
        if node is not None and not code.co_flags & 0x3A0:  # no generators/coroutines
            out.append((code, node))
    return out


class Mutator(ast.NodeTransformer):
    """Make the first applicable visible change, in source order."""

    def __init__(self) -> None:
        self.done: str | None = None

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if self.done:
            return node
        for k, arg in enumerate(node.args):
            if isinstance(arg, ast.Constant) and type(arg.value) is int:
                node.args[k] = ast.Constant(arg.value + 1)
                self.done = "an integer argument changed"
                return node
        if len(node.args) >= 2 and not any(isinstance(a, ast.Starred | ast.Constant)
                                           for a in node.args[:2]) \
                and ast.dump(node.args[0]) != ast.dump(node.args[1]):
            node.args[0], node.args[1] = node.args[1], node.args[0]
            self.done = "two arguments swapped"
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if not self.done and isinstance(node.ops[0], ast.Eq):
            node.ops[0] = ast.NotEq()
            self.done = "== turned into !="
        return node

    def body(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        calls = [k for k, s in enumerate(stmts)
                 if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)]
        for k in calls:
            if k + 1 in calls and ast.dump(stmts[k]) != ast.dump(stmts[k + 1]):
                stmts[k], stmts[k + 1] = stmts[k + 1], stmts[k]
                self.done = "two call statements swapped"
                return stmts
        if calls and len(stmts) > 1:
            del stmts[calls[0]]
            self.done = "a call statement deleted"
        return stmts

    def mutate(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.body = self.body(node.body)
        if not self.done:
            self.generic_visit(node)
        return node


def mutant(code: types.CodeType, node: ast.AST) -> tuple[types.CodeType, str] | None:
    tree = ast.parse(textwrap.dedent(ast.unparse(node)))
    changer = Mutator()
    fn = changer.mutate(tree.body[0])  # type: ignore[arg-type]
    if not changer.done:
        return None
    new = _compiled(code, fn)
    base = _compiled(code, ast.parse(textwrap.dedent(ast.unparse(node))).body[0])
    if new is None or base is not None and compare(base, new) is None:
        return None  # the change compiles to nothing (it was in dead code: `if 0:`)
    return new, changer.done


def _compiled(code: types.CodeType, fn: Any) -> types.CodeType | None:
    """The code of the function ``fn`` (a def node) compiled as ``code`` was: its
    decorators, defaults and annotations stripped (evaluated where the def runs), inside
    a function that provides ``code``'s free variables."""
    fn.decorator_list, fn.returns = [], None
    fn.args.defaults = [ast.Constant(None) for _ in fn.args.defaults]
    fn.args.kw_defaults = [None if d is None else ast.Constant(None)
                           for d in fn.args.kw_defaults]
    for arg in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs,
                fn.args.vararg, fn.args.kwarg):
        if arg is not None:
            arg.annotation = None
    outer = "def __outer__():\n" + "".join(f"    {v} = None\n" for v in code.co_freevars)
    outer += textwrap.indent(ast.unparse(fn), "    ") + f"\n    return {fn.name}\n"
    namespace: dict[str, Any] = {}
    try:
        exec(compile(outer, code.co_filename, "exec", dont_inherit=True), namespace)
    except SyntaxError:
        return None
    return namespace["__outer__"]().__code__  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="only the first N files")
    parser.add_argument("--show", type=int, default=10, help="list this many differences")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    files = sources(os.path.dirname(os.__file__))[:args.limit or None]
    counts: collections.Counter[str] = collections.Counter()
    undecided: collections.Counter[str] = collections.Counter()
    different: list[str] = []
    fooled: list[str] = []
    mutants: collections.Counter[str] = collections.Counter()
    started = time.perf_counter()
    for k, (path, source) in enumerate(files):
        if k % 50 == 0:
            print(f"  ... {k}/{len(files)} files", file=sys.stderr)
        for code, node in functions(path, source):
            name = getattr(code, "co_qualname", code.co_name)
            where = f"{os.path.basename(path)}:{code.co_firstlineno} {name}"
            try:
                again = recompile(code)
            except Exception:  # noqa: BLE001 (counted, not the subject here)
                counts["not decompiled"] += 1
                continue
            verdict = prove_equivalent(code, again)
            if verdict.equivalent:
                counts["shown equivalent"] += 1
            elif verdict.reason.startswith("undecided"):
                counts["undecided"] += 1
                undecided[verdict.reason.split(":", 2)[1].strip()[:60]] += 1
                continue
            else:
                counts["different"] += 1
                different.append(f"{where}: {verdict.reason[:300]}")
                continue
            changed = mutant(code, node)
            if changed is None:
                continue
            new, what = changed
            result = prove_equivalent(code, new)
            mutants["caught" if not result.equivalent else "FOOLED"] += 1
            if result.equivalent:
                fooled.append(f"{where}: {what}")
    elapsed = time.perf_counter() - started
    version = sys.version.split()[0]
    decided = counts["shown equivalent"] + counts["different"]
    print(f"Python {version}, {len(files)} files, {elapsed:.1f} s")
    print(f"recompiled functions: {dict(counts)}")
    if decided:
        print(f"  shown equivalent: {counts['shown equivalent'] / (decided + counts['undecided']):.1%}"
              f" of all checked, {counts['shown equivalent'] / decided:.1%} of those decided")
    print("  undecided because: " + "; ".join(f"{n} {r}" for r, n in undecided.most_common(6)))
    for line in different[:args.show]:
        print(f"  different: {line}")
    print(f"mutants: {sum(mutants.values())} checked, {mutants['caught']} caught, "
          f"{mutants['FOOLED']} fooled")
    for line in fooled:
        print(f"  FOOLED: {line}")
    return 1 if fooled else 0


if __name__ == "__main__":
    sys.exit(main())

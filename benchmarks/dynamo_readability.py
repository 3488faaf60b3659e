"""How Dynamo's transformed frames read in unveil's files: size, walruses, made-up names.

Runs small ``torch.compile`` programs (the depyf paper's toy example and one per kind of
graph break, a module, a closure, a training step) and, with ``--models``, the workloads
of ``benchmarks/real_models.py`` (transformers, when installed) under
``unveil.prepare_debug(simplify=True)`` (``--faithful``: without it), then reads each
transformed frame's file. Per frame, in the
frame's function (the file's other scaffolding not counted):

* statements (every statement, nested ones included) and lines;
* walrus expressions (``(x := ...)``);
* made-up names: distinct names unveil invented (``_tN``, ``_sN``, ``_unveil_...``);
* juggling: statements that shuffle a list the frame built itself, held by a made-up
  name (slice assignment, ``del l[k]``, ``l.extend(...)``/``append``/``insert``), or that
  index a list display.

It prints one row per program and the mean per frame over all frames, and whether each
frame runs unveil's code::

    .cache/venv-3.11-torch/bin/python benchmarks/dynamo_readability.py [--models]
        [--only toy,print] [--json PATH] [--show] [--faithful]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import statistics
import sys
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never the network
sys.path.insert(0, str(HERE.parent.parent / "src"))  # (this checkout's unveil, not another)

MADE_UP = re.compile(r"^(_[ts]\d+|_unveil_\w+)$")
LIST_METHODS = {"extend", "append", "insert", "pop", "clear", "reverse"}


# ---------------------------------------------------------------- what is measured


@dataclass
class FrameShape:
    """The measures of one transformed frame's function."""

    program: str
    function: str
    runs_ours: bool
    statements: int
    lines: int
    walrus: int
    made_up: int
    juggling: int


def _made_up_root(node: ast.expr) -> bool:
    """Whether ``node`` is (an item of) a list held by a name unveil made up: the lists
    Dynamo's frames build for themselves (a replay of the program's own ``dict.clear`` or
    ``list.append`` on its objects is not juggling)."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.NamedExpr):
        node = node.target
    return isinstance(node, ast.Name) and bool(MADE_UP.match(node.id))


def _juggles(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` shuffles a list the frame built: slice stores, ``del l[k]``, list
    methods called as statements, or an index into a list display."""
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, ast.AugAssign | ast.AnnAssign):
        targets = [stmt.target]
    elif isinstance(stmt, ast.Delete):
        if any(isinstance(t, ast.Subscript) and _made_up_root(t) for t in stmt.targets):
            return True
    if any(isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Slice) and _made_up_root(t)
           for t in targets):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
            and isinstance(stmt.value.func, ast.Attribute) \
            and stmt.value.func.attr in LIST_METHODS and _made_up_root(stmt.value.func.value):
        return True
    return any(isinstance(n, ast.Subscript) and isinstance(n.value, ast.List)
               for n in ast.walk(stmt) if not isinstance(n, ast.stmt) or n is stmt)


def measure(program: str, function: str, source: str, runs_ours: bool) -> FrameShape | None:
    """The measures of ``function`` in a transformed frame's file ``source``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    defs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            and n.name == function]
    if not defs:
        return None
    node = defs[0]
    stmts = [n for s in node.body for n in ast.walk(s) if isinstance(n, ast.stmt)]
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and MADE_UP.match(n.id)}
    return FrameShape(
        program, function, runs_ours, len(stmts),
        (node.end_lineno or node.lineno) - node.lineno + 1,
        sum(isinstance(n, ast.NamedExpr) for n in ast.walk(node)), len(names),
        sum(_juggles(s) for s in stmts))


# ---------------------------------------------------------------- the programs


def _programs() -> dict[str, Callable[[], None]]:
    """Small programs, each compiled with ``torch.compile`` and run (``aot_eager``)."""
    import torch

    def compiled(fn: Callable[..., Any]) -> Callable[..., Any]:
        return torch.compile(fn, backend="aot_eager")

    def toy() -> None:
        def toy_example(a, b):  # the depyf paper's example
            x = a / (torch.abs(a) + 1)
            if b.sum() < 0:
                b = b * -1
            return x * b

        f = compiled(toy_example)
        for _ in range(2):
            f(torch.randn(10), torch.randn(10))
            f(torch.randn(10), -torch.ones(10))

    def brk_print() -> None:
        def fn(x):
            y = x.sin()
            print("between graphs")
            return y.cos()

        compiled(fn)(torch.randn(4))

    def brk_item() -> None:
        def fn(x):
            n = x.sum().item()
            return x * n

        compiled(fn)(torch.randn(4))

    def brk_several() -> None:
        def fn(x, y):
            a = x + y
            torch._dynamo.graph_break()
            b = a * 2
            torch._dynamo.graph_break()
            return b - y, a

        compiled(fn)(torch.randn(4), torch.randn(4))

    def brk_in_loop() -> None:
        def fn(x):
            for i in range(3):
                x = x + i
                if i == 1:
                    torch._dynamo.graph_break()
            return x

        compiled(fn)(torch.randn(4))

    def closure() -> None:
        scale = torch.tensor(2.0)

        def fn(x):
            def inner(y):
                return y * scale

            z = inner(x)
            torch._dynamo.graph_break()
            return inner(z)

        compiled(fn)(torch.randn(4))

    def module() -> None:
        class Block(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.lin = torch.nn.Linear(8, 8)
                self.calls = 0

            def forward(self, x):
                self.calls += 1
                h = torch.relu(self.lin(x))
                if h.mean() > 0:
                    h = h * 2
                return h, {"calls": self.calls}

        torch.manual_seed(0)
        compiled(Block())(torch.randn(2, 8))

    def train() -> None:
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        def step(x, y):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            return loss

        compiled(step)(torch.randn(4, 8), torch.randn(4, 1))

    return {"toy": toy, "print": brk_print, "item": brk_item, "several": brk_several,
            "in_loop": brk_in_loop, "closure": closure, "module": module, "train": train}


def _model_programs() -> dict[str, Callable[[], None]]:
    """The real-model workloads, when transformers is installed."""
    sys.path.insert(0, str(HERE.parent))
    try:
        import real_models
    except ImportError:
        return {}

    def run(workload: Any) -> Callable[[], None]:
        return lambda: workload.run(workload.build(), "aot_eager")()

    return {f"model:{w.name}": run(w) for w in real_models.WORKLOADS}


def shapes_of(name: str, program: Callable[[], None], show: bool = False,
              simplify: bool = True) -> list[FrameShape]:
    """Run ``program`` under ``prepare_debug`` and measure every transformed frame."""
    import torch

    import unveil
    from unveil.torch.dump import RUNS_OURS

    out: list[FrameShape] = []
    with tempfile.TemporaryDirectory() as tmp:
        torch._dynamo.reset()
        with unveil.prepare_debug(tmp, simplify=simplify):
            program()
        manifest = json.loads((Path(tmp) / "manifest.json").read_text())
        for frame in manifest["frames"]:
            file = frame.get("transformed_code")
            if not file:
                continue
            source = (Path(tmp) / file).read_text(encoding="utf-8")
            if show:
                print(f"# ---- {name}: {file}\n{source}")
            shape = measure(name, frame["function"], source, frame["status"] == RUNS_OURS)
            if shape is not None:
                out.append(shape)
    torch._dynamo.reset()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", action="store_true", help="also the real-model workloads")
    parser.add_argument("--only", default="", help="comma-separated program names")
    parser.add_argument("--json", metavar="PATH", help="also write every frame's measures")
    parser.add_argument("--show", action="store_true", help="print each transformed file")
    parser.add_argument("--faithful", action="store_true",
                        help="prepare_debug's default files (not simplify=True)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    try:
        import torch  # noqa: F401
    except ImportError:
        print("needs torch: run it with the torch venv (.cache/venv-3.11-torch)")
        return 2
    programs = _programs()
    if args.models:
        programs.update(_model_programs())
    only = {n for n in args.only.split(",") if n}
    shapes: list[FrameShape] = []
    print("| program | frames | run unveil's code | statements | lines | walrus "
          "| made-up names | juggling |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, program in programs.items():
        if only and name not in only and name.removeprefix("model:") not in only:
            continue
        print(f"[{name}] ...", file=sys.stderr, flush=True)
        found = shapes_of(name, program, args.show, simplify=not args.faithful)
        shapes.extend(found)
        if not found:
            print(f"| {name} | 0 | | | | | | |")
            continue

        def mean(key: str, found: list[FrameShape] = found) -> str:
            return f"{statistics.mean(getattr(s, key) for s in found):.1f}"

        print(f"| {name} | {len(found)} | {sum(s.runs_ours for s in found)} | "
              f"{mean('statements')} | {mean('lines')} | {mean('walrus')} | "
              f"{mean('made_up')} | {mean('juggling')} |", flush=True)
    if shapes:
        def total(key: str) -> str:
            return f"{statistics.mean(getattr(s, key) for s in shapes):.2f}"

        juggling = sum(s.juggling > 0 for s in shapes)
        print(f"| **per frame, all {len(shapes)}** | | {sum(s.runs_ours for s in shapes)} | "
              f"{total('statements')} | {total('lines')} | {total('walrus')} | "
              f"{total('made_up')} | {total('juggling')} ({juggling} frames) |")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(s) for s in shapes], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

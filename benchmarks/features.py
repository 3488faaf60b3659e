"""What people compile in 2026, as small programs: ``torch.compile`` features nobody here
wrote a decompiler case for (compiled autograd, regional compilation, unbacked symints,
control-flow operators, FlexAttention, checkpointing, hooks, compiler stances, compiled
optimizers, autocast, DDP, ``nonstrict_trace``, tensor subclasses, custom ops, a KV-cache
decode loop, side effects on dicts, lists, sets and objects).

Each :class:`Feature` runs one program with a ``compile`` function (``torch.compile`` with
a backend) and returns what it computed; ``tests/torch_compile/test_features.py`` runs
each without and with ``unveil.prepare_debug`` and checks that the results are equal and
that every transformed frame runs unveil's code (or its file says why not), and
``benchmarks/torch_matrix.py`` counts them per PyTorch and Python. A feature the
installed PyTorch lacks is skipped (``needs``); each program is seeded and small enough to
run on a CPU in seconds.

    .cache/venv-3.11-torch/bin/python benchmarks/features.py [--only NAME,...]
        [--backend aot_eager]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
Compile = Callable[..., Any]  # torch.compile with the backend chosen


@dataclass
class Feature:
    """One program: ``run(compile)`` returns what it computed (tensors detached)."""

    name: str
    run: Callable[[Compile], Any]
    needs: Callable[[], bool] = lambda: True  # whether this PyTorch has the feature
    exact: bool = True  # results equal bit for bit (else: allclose)


FEATURES: list[Feature] = []


def feature(needs: Callable[[], bool] = lambda: True,
            exact: bool = True) -> Callable[[Callable[[Compile], Any]], Callable[[Compile], Any]]:
    def add(fn: Callable[[Compile], Any]) -> Callable[[Compile], Any]:
        FEATURES.append(Feature(fn.__name__, fn, needs, exact))
        return fn
    return add


def _has(path: str) -> Callable[[], bool]:
    """Whether ``torch.<path>`` exists (a dotted attribute path)."""
    def check() -> bool:
        import importlib

        import torch

        obj: Any = torch
        parts = path.split(".")
        for k, part in enumerate(parts):
            if not hasattr(obj, part):
                try:  # a submodule not imported yet
                    obj = importlib.import_module(".".join(["torch", *parts[:k + 1]]))
                    continue
                except ImportError:
                    return False
            obj = getattr(obj, part)
        return True
    return check


@contextlib.contextmanager
def _config(**changes: Any) -> Iterator[None]:
    """``torch._dynamo.config`` changed for the block (names it lacks are left out)."""
    import torch._dynamo.config as config

    old = {k: getattr(config, k) for k in changes if hasattr(config, k)}
    for k in old:
        setattr(config, k, changes[k])
    try:
        yield
    finally:
        for k, v in old.items():
            setattr(config, k, v)


def _importable(module: str, name: str) -> Callable[[], bool]:
    """Whether ``from module import name`` works."""
    def check() -> bool:
        import importlib

        try:
            return hasattr(importlib.import_module(module), name)
        except ImportError:
            return False
    return check


def _seed() -> None:
    import torch

    torch.manual_seed(0)


def _mlp(width: int = 8, depth: int = 2) -> Any:
    import torch

    _seed()
    layers: list[Any] = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers, torch.nn.Linear(width, 1))


def _detached(out: Any) -> Any:
    import torch

    if isinstance(out, torch.Tensor):
        return out.detach().clone()
    if isinstance(out, dict):
        return {k: _detached(v) for k, v in out.items()}
    if isinstance(out, list | tuple):
        return type(out)(_detached(v) for v in out)
    if isinstance(out, set):
        return sorted(out, key=repr)
    return out


# ---------------------------------------------------------------- the paper's example


def toy_example(a: Any, b: Any) -> Any:  # the depyf paper's example, as the paper writes it
    import torch

    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


@feature()
def toy(compile: Compile) -> Any:
    """The depyf paper's toy example: a graph break on a data-dependent branch (both
    branches taken)."""
    import torch

    f = compile(toy_example)
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(10, generator=g), torch.randn(10, generator=g)
    return [f(a, b), f(a, -b.abs() - 1), f(a, b.abs())]


# ---------------------------------------------------------------- training and autograd


@feature(needs=_has("_dynamo.compiled_autograd"), exact=False)
def compiled_autograd(compile: Compile) -> Any:
    """The backward pass captured by compiled autograd (``config.compiled_autograd``)."""
    import torch

    model = _mlp()
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(1))

    @compile
    def step(x: Any) -> Any:
        loss = model(x).pow(2).mean()
        loss.backward()
        return loss

    with _config(compiled_autograd=True):
        losses = [step(x) for _ in range(2)]
    return [losses, [p.grad for p in model.parameters()]]


@feature(needs=_has("utils.checkpoint.checkpoint"), exact=False)
def checkpointing(compile: Compile) -> Any:
    """Activation checkpointing inside the compiled region, then backward."""
    import torch
    from torch.utils.checkpoint import checkpoint

    model = _mlp()
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(1), requires_grad=True)

    @compile
    def forward(x: Any) -> Any:
        h = checkpoint(lambda t: torch.relu(model[0](t)) * 2, x, use_reentrant=False)
        return model[2:](h).sum()

    loss = forward(x)
    loss.backward()
    return [loss, x.grad]


@feature(exact=False)
def compiled_optimizer(compile: Compile) -> Any:
    """``torch.compile(optimizer.step)``: Adam's update compiled, a few steps."""
    import torch

    model = _mlp()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(1))

    @compile
    def opt_step() -> None:
        opt.step()

    out = []
    for _ in range(3):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        opt_step()
        out.append(loss.detach())
    return [out, [p.detach().clone() for p in model.parameters()]]


@feature(needs=_has("autocast"), exact=False)
def autocast(compile: Compile) -> Any:
    """Mixed precision inside the compiled function (bfloat16 on the CPU)."""
    import torch

    model = _mlp()

    @compile
    def forward(x: Any) -> Any:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = model(x)
        return y.float() * 2

    return forward(torch.randn(4, 8, generator=torch.Generator().manual_seed(1)))


@feature(needs=_has("distributed.is_available"), exact=False)
def ddp(compile: Compile) -> Any:
    """A DistributedDataParallel model (one process, gloo) compiled, forward and backward."""
    import torch
    import torch.distributed as dist

    if not dist.is_available():
        return "no torch.distributed"
    model = _mlp()
    with tempfile.TemporaryDirectory() as tmp:
        started = not dist.is_initialized()
        if started:
            dist.init_process_group("gloo", init_method=f"file://{tmp}/store", rank=0,
                                    world_size=1)
        try:
            ddp_model = compile(torch.nn.parallel.DistributedDataParallel(model))
            loss = ddp_model(torch.randn(4, 8, generator=torch.Generator().manual_seed(1))).sum()
            loss.backward()
            return [loss, [p.grad for p in model.parameters()]]
        finally:
            if started:
                dist.destroy_process_group()


# ---------------------------------------------------------------- how models are compiled


@feature()
def regional_compilation(compile: Compile) -> Any:
    """Each block of a model compiled on its own (``block.compile()``, as for LLMs)."""
    import torch

    _seed()

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.norm = torch.nn.LayerNorm(8)
            self.mlp = torch.nn.Linear(8, 8)

        def forward(self, x: Any) -> Any:
            return x + self.mlp(self.norm(x)).relu()

    blocks = torch.nn.ModuleList(Block() for _ in range(3))
    compiled = [compile(b) for b in blocks]
    x = torch.randn(2, 8, generator=torch.Generator().manual_seed(1))
    for block in compiled:
        x = block(x)
    return x


@feature(needs=_has("compiler.set_stance"))
def set_stance(compile: Compile) -> Any:
    """``torch.compiler.set_stance``: forced eager, then compiled, then eager on a
    recompile."""
    import torch

    @compile
    def f(x: Any) -> Any:
        return torch.sin(x) * 2

    out = []
    with torch.compiler.set_stance("force_eager"):
        out.append(f(torch.ones(3)))
    out.append(f(torch.ones(3)))
    with torch.compiler.set_stance("eager_on_recompile"):
        out.append(f(torch.ones(5, dtype=torch.float64)))
    return out


@feature()
def dynamic_shapes(compile: Compile) -> Any:
    """``mark_dynamic`` and a recompile to a dynamic size (sequence lengths that vary)."""
    import torch

    @compile
    def f(x: Any) -> Any:
        return (x * x.shape[0]).sum(0)

    out = []
    for n in (2, 3, 5, 8):
        x = torch.arange(n * 4.0).reshape(n, 4)
        if n == 5:
            torch._dynamo.mark_dynamic(x, 0)
        out.append(f(x))
    return out


@feature()
def dynamic_true(compile: Compile) -> Any:
    """``torch.compile(dynamic=True)``: sizes symbolic from the first call."""
    import torch

    f = compile(lambda x, k: (x.reshape(-1, 2) * k).sum(0), dynamic=True)
    return [f(torch.arange(n * 2.0), k) for n, k in ((2, 3), (5, 3), (7, 4))]


@feature(exact=False)
def batchnorm_training(compile: Compile) -> Any:
    """A model whose buffers change in the graph (BatchNorm's running statistics in
    training mode), forward and backward."""
    import torch

    _seed()
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.BatchNorm1d(8),
                                torch.nn.ReLU(), torch.nn.Linear(8, 1)).train()
    compiled = compile(model)
    x = torch.randn(6, 8, generator=torch.Generator().manual_seed(1))
    losses = []
    for _ in range(2):
        loss = compiled(x).pow(2).mean()
        loss.backward()
        losses.append(loss)
    bn = model[1]
    return [losses, bn.running_mean, bn.running_var, bn.num_batches_tracked]


@feature(needs=_has("func.vmap"), exact=False)
def vmap_and_grad(compile: Compile) -> Any:
    """``torch.func``: per-sample gradients (``vmap`` of ``grad``) compiled."""
    import torch
    from torch.func import grad, vmap

    w = torch.randn(4, generator=torch.Generator().manual_seed(1))

    def loss(w: Any, x: Any) -> Any:
        return (x @ w).sin()

    f = compile(lambda w, xs: vmap(grad(loss), in_dims=(None, 0))(w, xs))
    return f(w, torch.randn(3, 4, generator=torch.Generator().manual_seed(2)))


@feature(needs=_has("_dynamo.nonstrict_trace"))
def nonstrict_trace(compile: Compile) -> Any:
    """A helper Dynamo does not trace but puts in the graph (``nonstrict_trace``)."""
    import torch

    @torch._dynamo.nonstrict_trace
    def helper(x: Any) -> Any:
        return x.cos() + len(str(x.shape))

    @compile
    def f(x: Any) -> Any:
        return helper(x.sin()) * 2

    return f(torch.ones(3))


@feature()
def disabled_helper(compile: Compile) -> Any:
    """``torch.compiler.disable`` on a helper called from the compiled function."""
    import torch

    @torch.compiler.disable
    def log_norm(x: Any) -> Any:
        return float(x.norm())

    @compile
    def f(x: Any) -> Any:
        y = x * 2
        n = log_norm(y)
        return y + n

    return f(torch.ones(3))


@feature()
def nested_graph_break(compile: Compile) -> Any:
    """A graph break two calls deep (resume functions for each frame on the way)."""
    import torch

    def inner(x: Any) -> Any:
        x = x + 1
        torch._dynamo.graph_break()
        return x * 2

    def middle(x: Any) -> Any:
        return inner(x.sin()) - 1

    @compile
    def f(x: Any) -> Any:
        return middle(x) + middle(x * 3)

    return f(torch.ones(3))


# ---------------------------------------------------------------- what the graph holds


@feature(needs=lambda: _has("_dynamo.config.capture_scalar_outputs")())
def unbacked_symints(compile: Compile) -> Any:
    """Data-dependent sizes traced as unbacked symbols (``capture_scalar_outputs``,
    ``capture_dynamic_output_shape_ops``, ``torch._check``)."""
    import torch

    @compile
    def f(x: Any) -> Any:
        n = (x > 0).sum().item()
        torch._check(n >= 0)
        idx = x.nonzero()
        return idx.float().sum() + n

    with _config(capture_scalar_outputs=True, capture_dynamic_output_shape_ops=True):
        return [f(torch.tensor([1.0, -2.0, 3.0])), f(torch.tensor([-1.0, 2.0, 3.0, 4.0]))]


@feature(needs=_has("cond"))
def cond(compile: Compile) -> Any:
    """``torch.cond``: both branches traced into the graph."""
    import torch

    @compile
    def f(x: Any) -> Any:
        return torch.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (x,))

    return [f(torch.ones(3)), f(-torch.ones(3))]


@feature(needs=_importable("torch._higher_order_ops.while_loop", "while_loop"))
def while_loop(compile: Compile) -> Any:
    """``while_loop``: a loop the graph runs (cond_fn and body_fn subgraphs)."""
    import torch
    from torch._higher_order_ops.while_loop import while_loop

    @compile
    def f(x: Any, n: Any) -> Any:
        return while_loop(lambda i, t: i < n, lambda i, t: (i + 1, t * 2 + 1),
                          (torch.zeros((), dtype=torch.int64), x))

    return f(torch.ones(3), torch.tensor(4))


@feature(needs=_importable("torch._higher_order_ops.scan", "scan"))
def scan(compile: Compile) -> Any:
    """``scan``: a cumulative loop over a dimension in one graph."""
    import torch
    from torch._higher_order_ops.scan import scan

    def combine(carry: Any, x: Any) -> Any:
        nxt = carry + x
        return nxt, nxt * 2

    @compile
    def f(xs: Any) -> Any:
        return scan(combine, torch.zeros(2), xs)

    return f(torch.arange(8.0).reshape(4, 2))


@feature(needs=_importable("torch.nn.attention.flex_attention", "flex_attention"),
         exact=False)
def flex_attention(compile: Compile) -> Any:
    """FlexAttention with a causal score modification."""
    import torch
    from torch.nn.attention.flex_attention import flex_attention as flex

    def causal(score: Any, b: Any, h: Any, q: Any, kv: Any) -> Any:
        return torch.where(q >= kv, score, -float("inf"))

    @compile
    def attend(q: Any, k: Any, v: Any) -> Any:
        return flex(q, k, v, score_mod=causal)

    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(1, 2, 16, 8, generator=g) for _ in range(3))
    return attend(q, k, v)


def _two_tensor() -> bool:
    try:
        from torch.testing._internal.two_tensor import TwoTensor  # noqa: F401
    except ImportError:
        return False
    return True


@feature(needs=_two_tensor)
def tensor_subclass(compile: Compile) -> Any:
    """A wrapper tensor subclass (PyTorch's own ``TwoTensor``: two tensors that every
    operation runs on), through the graph and back out."""
    import torch
    from torch.testing._internal.two_tensor import TwoTensor

    @compile
    def f(x: Any) -> Any:
        return (x * 2 + 1).sin()

    x = TwoTensor(torch.ones(3), torch.arange(3.0))
    out = f(x)
    return [type(out).__name__, out.a, out.b]


@feature(needs=_has("library.custom_op"))
def custom_op(compile: Compile) -> Any:
    """A custom operator (``torch.library.custom_op``) with a fake implementation."""
    import torch

    name = "unveil_features::scale_add"
    op = getattr(custom_op, "_op", None)
    if op is None:
        # (the schema spelled out: this module's annotations are strings)
        @torch.library.custom_op(name, mutates_args=(), schema="(Tensor x, float k) -> Tensor")
        def scale_add(x: Any, k: float) -> Any:
            return x * k + 1

        @scale_add.register_fake
        def _(x: Any, k: float) -> Any:
            return torch.empty_like(x)

        op = custom_op._op = scale_add  # type: ignore[attr-defined]

    @compile
    def f(x: Any) -> Any:
        return op(x.sin(), 3.0).sum()

    return f(torch.ones(4))


# ---------------------------------------------------------------- hooks and side effects


@feature(exact=False)
def module_hooks(compile: Compile) -> Any:
    """Forward pre-hooks, forward hooks and a full backward hook on a compiled module."""
    import torch

    model = _mlp()
    seen: list[Any] = []
    model[0].register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    model[0].register_forward_hook(lambda m, args, out: out + 1)
    model[2].register_full_backward_hook(lambda m, gin, gout: seen.append(gout[0].shape))
    compiled = compile(model)
    loss = compiled(torch.randn(4, 8, generator=torch.Generator().manual_seed(1))).sum()
    loss.backward()
    return [loss, seen, [p.grad for p in model.parameters()]]


@feature(exact=False)
def tensor_hooks(compile: Compile) -> Any:
    """``Tensor.register_hook`` inside the compiled function (a gradient rescaled)."""
    import torch

    @compile
    def f(x: Any) -> Any:
        y = x * 3
        y.register_hook(lambda g: g * 0.5)
        return (y * y).sum()

    x = torch.ones(3, requires_grad=True)
    loss = f(x)
    loss.backward()
    return [loss, x.grad]


COUNTS: dict[str, int] = {}
SEEN: set[Any] = set()
HISTORY: list[Any] = []


class _Stats:
    def __init__(self) -> None:
        self.calls = 0
        self.last: Any = None


STATS = _Stats()


@feature()
def side_effects(compile: Compile) -> Any:
    """Mutations Dynamo replays after the graph: a global dict, set and list, an input
    dict and list, an object's attributes."""
    import torch

    COUNTS.clear()
    SEEN.clear()
    HISTORY.clear()
    STATS.calls = 0

    @compile
    def step(x: Any, state: dict[str, Any], log: list[Any]) -> Any:
        y = x.sin() * 2
        COUNTS["steps"] = COUNTS.get("steps", 0) + 1
        SEEN.add("step")
        SEEN.discard("never")
        HISTORY.append(x.shape[0])
        state["last"] = y
        state.pop("stale", None)
        log.append(len(log))
        STATS.calls += 1
        STATS.last = "step"
        return y + len(state)

    out = []
    for n in (3, 3):
        state: dict[str, Any] = {"stale": 1}
        log: list[Any] = []
        out.append([step(torch.ones(n), state, log), state, log])
    return [out, dict(COUNTS), set(SEEN), list(HISTORY), STATS.calls, STATS.last]


@feature()
def set_replay(compile: Compile) -> Any:
    """Sets changed in a compiled step: a global set, an argument's, one returned."""
    import torch

    SEEN.clear()

    @compile
    def step(x: Any, tags: set[str]) -> Any:
        SEEN.add(3)
        SEEN.update({"a", "b"})
        tags.add("seen")
        tags.discard("old")
        y = x * 2
        return y, {1, 2}, frozenset(tags)

    out = [step(torch.ones(2), {"old", "q"}) for _ in range(2)]
    return [out, set(SEEN)]


@feature(exact=False)
def kv_cache_decode(compile: Compile) -> Any:
    """A decode loop: one compiled step per token, appending to a key/value cache (a
    growing length: a recompile, then a dynamic one) and sampling greedily."""
    import torch

    _seed()
    emb = torch.nn.Embedding(50, 16)
    qkv = torch.nn.Linear(16, 48)
    head = torch.nn.Linear(16, 50)

    @compile
    def decode(token: Any, cache: dict[str, Any]) -> Any:
        h = emb(token)
        q, k, v = qkv(h).chunk(3, dim=-1)
        cache["k"] = torch.cat([cache["k"], k], dim=1)
        cache["v"] = torch.cat([cache["v"], v], dim=1)
        att = torch.softmax(q @ cache["k"].transpose(1, 2) / 4.0, dim=-1)
        logits = head(att @ cache["v"])
        return logits[:, -1].argmax(-1, keepdim=True)

    with torch.no_grad():
        cache = {"k": torch.zeros(1, 0, 16), "v": torch.zeros(1, 0, 16)}
        token = torch.tensor([[7]])
        out = []
        for _ in range(5):
            token = decode(token, cache)
            out.append(int(token))
    return [out, cache["k"].shape]


BY_NAME = {f.name: f for f in FEATURES}


# ---------------------------------------------------------------- running one


def compile_with(backend: str) -> Compile:
    import torch

    def compile(fn: Any = None, **kw: Any) -> Any:
        if fn is None:
            return lambda f: torch.compile(f, backend=backend, **kw)
        return torch.compile(fn, backend=backend, **kw)
    return compile


def run_feature(feature: Feature, backend: str, dump: Path | None = None) -> Any:
    """The feature's result (or the exception it raised), compiled on ``backend``
    (under ``prepare_debug(dump)`` when a dump is given), from a fresh Dynamo."""
    import torch

    _BACKEND[0] = backend
    torch._dynamo.reset()
    try:
        if dump is None:
            return _outcome(feature)
        sys.path.insert(0, str(HERE.parent.parent / "src"))
        import unveil

        with unveil.prepare_debug(dump):
            return _outcome(feature)
    finally:
        torch._dynamo.reset()


def _outcome(feature: Feature) -> Any:
    """What the feature computed, or the exception it raised (its type and first line)."""
    try:
        return _detached(feature.run(compile_with(_BACKEND[0])))
    except Exception as exc:  # noqa: BLE001 (an exception is part of what a program does)
        return ("raised", type(exc).__name__, str(exc).split("\n", 1)[0][:200])


_BACKEND = ["aot_eager"]


def same(a: Any, b: Any, exact: bool = True) -> bool:
    """Whether two results are equal (``exact``: tensors bit for bit)."""
    import torch

    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype and (
            torch.equal(a, b) if exact else torch.allclose(a, b, atol=1e-4, rtol=1e-4,
                                                            equal_nan=True))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            same(a[k], b[k], exact) for k in a)
    if isinstance(a, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(
            same(x, y, exact) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def main(argv: list[str] | None = None) -> int:
    import warnings

    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--only", default="", help="comma-separated feature names")
    parser.add_argument("--backend", default="aot_eager")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    names = [n for n in args.only.split(",") if n] or [f.name for f in FEATURES]
    print("| feature | result equal | frames | running unveil's code | why not |")
    print("|---|---|---:|---:|---|")
    for name in names:
        feature = BY_NAME[name]
        if not feature.needs():
            print(f"| {name} | (not in this PyTorch) | | | |")
            continue
        expected = run_feature(feature, args.backend)
        with tempfile.TemporaryDirectory() as tmp:
            got = run_feature(feature, args.backend, Path(tmp))
            frames = json.loads((Path(tmp) / "manifest.json").read_text())["frames"]
        ours = [f for f in frames if f["status"].startswith("running unveil")]
        why = "; ".join(sorted({(f.get("error") or "")[:100] for f in frames if f not in ours}))
        print(f"| {name} | {same(expected, got, feature.exact)} | {len(frames)} | {len(ours)} "
              f"| {why} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What ``unveil.prepare_debug`` costs a torch.compile user (needs torch; issue 3's targets).

* compile time: the first call of a small transformer (4 encoder layers, two graph
  breaks) under ``prepare_debug`` divided by the same first call without it, per backend
  (target <= 1.10);
* steady state: 2,000 calls of a small compiled function running the code compiled from
  the dumped files, divided by the same calls running Dynamo's own code (target <= 1.03).

Each ratio is the median over ``--repeat`` alternating runs after one warm-up run of each;
``torch._dynamo.reset()`` before each compile. depyf is measured in the same run when it is installed.

    .cache/venv-3.11-torch/bin/python benchmarks/torch_overhead.py [--repeat 5]
        [--backends eager,inductor] [--calls 2000]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

try:
    import unveil
except ImportError:  # running from a checkout without PYTHONPATH=src
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    import unveil

import torch


class Block(torch.nn.Module):
    """Four encoder layers with two graph breaks between them."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(
            torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                             batch_first=True, dropout=0.0)
            for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.layers[0](x)
        x = self.layers[1](x)
        print("after layer 2", tuple(x.shape))  # graph break 1
        x = self.layers[2](x)
        if x.sum() > 0:  # graph break 2 (data-dependent)
            x = x * 0.5
        return self.layers[3](x)


def small(x: torch.Tensor) -> torch.Tensor:
    return (x * 2).sin() + 1


Mode = Callable[[], contextlib.AbstractContextManager[object]]


@contextlib.contextmanager
def plain() -> Iterator[None]:
    yield


@contextlib.contextmanager
def with_unveil() -> Iterator[None]:
    with tempfile.TemporaryDirectory() as d, unveil.prepare_debug(d):
        yield


def with_depyf() -> contextlib.AbstractContextManager[object] | None:
    try:
        import depyf  # type: ignore[import-not-found]
    except ImportError:
        return None
    return depyf.prepare_debug(tempfile.mkdtemp())  # type: ignore[no-any-return]


def first_call(model: torch.nn.Module, x: torch.Tensor, backend: str, mode: Mode) -> float:
    torch._dynamo.reset()
    with mode(), contextlib.redirect_stdout(io.StringIO()):
        compiled = torch.compile(model, backend=backend)
        t0 = time.perf_counter()
        compiled(x)
        return time.perf_counter() - t0


def steady(calls: int, mode: Mode) -> float:
    torch._dynamo.reset()
    x = torch.randn(8)
    with mode():
        compiled = torch.compile(small, backend="eager")
        for _ in range(50):
            compiled(x)
        t0 = time.perf_counter()
        for _ in range(calls):
            compiled(x)
        return (time.perf_counter() - t0) / calls


def ratio(measure: Callable[[Mode], float], mode: Mode, repeat: int) -> tuple[float, float,
                                                                              float]:
    measure(plain)  # warm-up: imports, caches and the like are paid once, before timing
    measure(mode)
    base, other = [], []
    for _ in range(repeat):
        base.append(measure(plain))
        other.append(measure(mode))
    b, o = statistics.median(base), statistics.median(other)
    return b, o, o / b


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--backends", default="eager,inductor")
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    model = Block().eval()
    x = torch.randn(2, 16, 64)
    modes: dict[str, Mode] = {"unveil": with_unveil}
    if with_depyf() is not None:
        modes["depyf"] = with_depyf  # type: ignore[assignment]
    print(f"torch {torch.__version__}, unveil {unveil.__version__}; median of {args.repeat}")
    for backend in args.backends.split(","):
        for name, mode in modes.items():
            try:
                b, o, r = ratio(lambda m, be=backend: first_call(model, x, be, m), mode,
                                args.repeat)
            except Exception as exc:  # noqa: BLE001 (a tool that breaks is a result too)
                print(f"compile time  {backend:9} {name:7} failed: {type(exc).__name__}: {exc}")
                continue
            target = "ok" if r <= 1.10 else "over the 1.10 target"
            print(f"compile time  {backend:9} {name:7} {o:7.3f} s vs {b:7.3f} s plain: "
                  f"{r:5.3f}x ({target})")
    for name, mode in modes.items():
        b, o, r = ratio(lambda m: steady(args.calls, m), mode, args.repeat)
        target = "ok" if r <= 1.03 else "over the 1.03 target"
        print(f"steady state  {args.calls} calls {name:7} {o * 1e6:7.2f} us vs "
              f"{b * 1e6:7.2f} us plain: {r:5.3f}x ({target})")
    if "depyf" not in modes:
        print("depyf: not installed here, not measured")
    return 0


if __name__ == "__main__":
    sys.exit(main())

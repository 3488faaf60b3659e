"""See what TorchDynamo made of a small model, as Python source, and run that source.

Dynamo rewrites the bytecode of every frame it compiles. This demo registers a bytecode
hook, compiles a two-layer model with a graph break in its forward, and for every code
object Dynamo writes:

* prints the source unveil decompiles it to, and
* hands Dynamo back ``unveil.recompile(...)`` of it, so the model runs code compiled
  from that source (written to ``unveil_demo_out/``, where a debugger can step through it).

The outputs are then compared with eager mode.

    scripts/demo          # or: python examples/decompile_dynamo.py  (needs torch)
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import torch
from torch._dynamo.convert_frame import register_bytecode_hook

import unveil

OUT = Path("unveil_demo_out")


class TinyNet(torch.nn.Module):
    """Two linear layers; a print between them makes Dynamo break the graph."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc1(x))
        if h.sum() > 0:  # data-dependent: a graph break
            h = h * 2
        print("  (inside forward) hidden norm:", round(float(h.norm()), 3))
        return self.fc2(h).softmax(-1)


def hook(original: types.CodeType, transformed: types.CodeType) -> types.CodeType | None:
    """Show Dynamo's code for a frame as source and run code compiled from that source."""
    banner = f" Dynamo's bytecode for {original.co_name} (line {original.co_firstlineno}) "
    print(f"\n{banner:=^88}")
    try:
        source = unveil.decompile(transformed)
        filename = OUT / f"{transformed.co_name}.py"
        replacement = unveil.recompile(transformed, str(filename))
    except unveil.UnveilError as exc:  # the program keeps running Dynamo's own code
        print(f"unveil could not decompile it ({exc}); Dynamo's code runs unchanged")
        return None
    print(source.rstrip())
    print(f"{'':=^88}\n(running the code compiled from {filename})")
    return replacement


def main() -> int:
    OUT.mkdir(exist_ok=True)
    torch.manual_seed(0)
    model = TinyNet()
    x = torch.randn(3, 8)
    expected = model(x)
    handle = register_bytecode_hook(hook)
    try:
        compiled = torch.compile(model, backend="eager")
        got = compiled(x)
        again = compiled(x)  # cached: no new bytecode
    finally:
        handle.remove()
    same = torch.allclose(expected, got) and torch.allclose(expected, again)
    print(f"\neager and compiled-through-unveil outputs agree: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

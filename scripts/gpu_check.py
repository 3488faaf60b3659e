"""Check unveil on a CUDA machine: Inductor's Triton kernels land in the dump.

Not part of CI (CI has no GPU). Run it where ``torch.cuda.is_available()``:

    PYTHONPATH=src python scripts/gpu_check.py [DUMP_DIR]

A small model with a graph break is compiled with Inductor on the GPU, once plainly and
once under ``unveil.prepare_debug``; the outputs must match, every transformed frame must
run unveil's code, and the Inductor output files must hold Triton kernels. Prints what it
found and exits non-zero on the first failure.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

import unveil


class Block(torch.nn.Module):
    """Linear, layer norm and GELU; a ``print`` in the middle breaks the graph."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 256)
        self.norm = torch.nn.LayerNorm(256)
        self.fc2 = torch.nn.Linear(256, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.gelu(self.norm(self.fc1(x)))
        print("  (inside forward) graph break")
        return self.fc2(h).softmax(-1) + x


def run(dump: Path | None) -> list[torch.Tensor]:
    """Forward and backward of the compiled block, under ``prepare_debug(dump)`` if given."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = Block().cuda()
    compiled = torch.compile(model, backend="inductor")
    x = torch.randn(32, 64, device="cuda", requires_grad=True)
    if dump is None:
        out = compiled(x)
    else:
        with unveil.prepare_debug(dump):
            out = compiled(x)
    out.sum().backward()
    return [out.detach().cpu(), x.grad.detach().cpu()]


def main(argv: list[str]) -> int:
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to check")
        return 2
    print(f"torch {torch.__version__}, Python {sys.version.split()[0]}, "
          f"{torch.cuda.get_device_name()}")
    dump = Path(argv[0] if argv else "unveil_gpu_dump").resolve()
    plain = run(None)
    ours = run(dump)
    same = all(torch.allclose(a, b, atol=1e-5, rtol=1e-4) for a, b in zip(plain, ours, strict=True))
    print(f"outputs and input grads equal with and without unveil: {same}")
    manifest = json.loads((dump / "manifest.json").read_text())
    statuses = {f["transformed_code"]: f["status"] for f in manifest["frames"]}
    print(f"frames: {statuses}")
    kernels = []
    for entry in manifest["files"]:
        if "inductor_output_code" in entry["file"]:
            text = (dump / entry["file"]).read_text()
            kernels.append((entry["file"], text.count("@triton.jit")))
    print(f"Inductor output files and their @triton.jit kernels: {kernels}")
    print(f"errors: {manifest['errors']}")
    ok = (same and statuses and all(s == "running unveil's code" for s in statuses.values())
          and kernels and all(n > 0 for _, n in kernels) and not manifest["errors"])
    print("GPU CHECK", "PASSED" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

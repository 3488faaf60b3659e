"""See what torch.compile does to a small model, as files you can read and step through.

A two-layer model with a graph break (a data-dependent ``if``) and a ``print`` is compiled
with the ``aot_eager`` backend and trained for two steps under ``unveil.prepare_debug``.
Every frame Dynamo transforms is decompiled to a file that the model then runs; its
graphs (Dynamo's, AOTAutograd's forward and backward), its guards (as Python) and the
graph breaks land next to it, with a ``manifest.json`` that lists everything. The losses
are compared with plain ``torch.compile``.

    scripts/demo          # or: python examples/demo.py [DUMP_DIR]   (needs torch)
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import torch

import unveil


class TinyNet(torch.nn.Module):
    """Two linear layers; a data-dependent branch and a print make Dynamo break the graph."""

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


def train(dump: Path | None) -> list[float]:
    """Two SGD steps of the compiled model, under ``prepare_debug(dump)`` if given."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = TinyNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    compiled = torch.compile(model, backend="aot_eager")
    data = [torch.randn(3, 8) for _ in range(2)]
    losses = []
    with unveil.prepare_debug(dump) if dump else contextlib.nullcontext():
        for x in data:
            opt.zero_grad()
            loss = compiled(x).log().mean().neg()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return losses


def main(argv: list[str]) -> int:
    dump = Path(argv[0] if argv else "unveil_dump").resolve()
    print("plain torch.compile:")
    plain = train(None)
    print(f"under unveil.prepare_debug({str(dump)!r}):")
    ours = train(dump)
    manifest = json.loads((dump / "manifest.json").read_text())
    print(f"\nThe dump is in {dump}")
    for entry in manifest["files"]:
        print(f"  {entry['file']:<58} {entry['kind']}")
    print("\nFrames Dynamo transformed (each runs the code compiled from its file):")
    for frame in manifest["frames"]:
        shown = "shown" if frame.get("equivalent") else "not shown"
        print(f"  compile {frame['compile_id']:<5} {frame['function']:<32} "
              f"{frame['transformed_code']}  [{frame['status']}; {shown} to do what "
              f"Dynamo's code does: {frame.get('equivalence')}]")
        for brk in frame["graph_breaks"]:
            print(f"      graph break at {brk['user_file']}:{brk['user_line']}: "
                  f"{brk['summary']}")
    first = manifest["frames"][0]
    print(f"\n{first['transformed_code']}:\n")
    print((dump / first["transformed_code"]).read_text().rstrip())
    same = plain == ours
    print(f"\nlosses: plain {plain}, under unveil {ours}: {'the same' if same else 'DIFFERENT'}")
    from unveil.report.html import write_report
    from unveil.report.load import load_run

    report = write_report(load_run(dump))
    print(f"\nThe dump is in {dump}: read the files, or step through them "
          f"(pdb: `with unveil.debug(): ...`; VS Code: debugpy).")
    print(f"The report (open it in a browser): {report}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""benchmarks/torch_matrix.py's counting, on a worker result made by hand (the workers
themselves need torch: ``python benchmarks/torch_matrix.py`` runs them)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import torch_matrix  # noqa: E402


def _frame(program: str, function: str, ours: bool, statements: int, walrus: int = 0,
           juggling: int = 0) -> dict[str, Any]:
    return {"program": program, "function": function, "ours": ours,
            "why": None if ours else "not shown to do what Dynamo's code does: ...",
            "statements": statements, "walrus": walrus, "juggling": juggling}


RESULT = {
    "torch": "2.15.0", "python": "3.12.1", "backend": "aot_eager",
    "first_call": {"gpt2": 1.04},
    "workloads": [
        {"workload": "gpt2", "kind": "model", "broken": None,
         "frames": [_frame("gpt2", "forward", True, 40, walrus=6)]},
        {"workload": "bert", "kind": "model", "broken": "results differ",
         "frames": [_frame("bert", "forward", False, 30, juggling=2)]},
        {"workload": "toy", "kind": "feature", "broken": None,
         "frames": [_frame("toy", "toy_example", True, 10),
                    _frame("toy", "torch_dynamo_resume_in_toy_example_at_4", True, 7)]},
        {"workload": "toy", "kind": "program", "broken": None,  # (the closure one: not it)
         "frames": [_frame("toy", "toy_example", True, 99)]},
    ],
}


def test_a_row_counts_frames_workloads_and_the_toy_example() -> None:
    row = torch_matrix.summary(RESULT)
    assert (row["workloads"], row["broken"]) == (4, ["bert"])
    assert (row["frames"], row["ours"], row["model_frames"], row["model_ours"]) == (5, 4, 2, 1)
    assert row["juggling"] == 1 and row["walrus"] == 6 / 5
    assert (row["toy"], row["toy_mean"]) == (10, 8.5)  # the paper's toy, its first frame
    assert row["kept"] == ["bert: not shown to do what Dynamo's code does: ..."]
    text = torch_matrix.table([row])
    assert "| 2.15.0 | 3.12.1 | 4 (1) | 4 of 5 (80.0%) | 1 of 2 |" in text, text
    assert text.rstrip().endswith("| 10; 8.5 | gpt2 1.04 |"), text

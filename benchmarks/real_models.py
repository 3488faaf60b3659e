"""``unveil.prepare_debug`` on real model code: transformers models nobody here wrote.

Each workload builds a `transformers` model from a tiny config object with seeded random
weights (nothing is downloaded) and runs it compiled: a forward pass, ``generate()``
(several frames, recompiles) or a training step (forward, loss, backward, optimizer).
``tests/torch_compile/test_real_models.py`` runs the same workloads as tests; this script measures
them. Per workload and backend:

* frames Dynamo transformed, how many run unveil's code, and why the others do not;
* unveil's own work per frame (decompile, compile, check) against Dynamo's compile time
  for that frame (the manifest's ``compile_time_s``);
* first-call ratio: the first call under ``prepare_debug`` over the first call under plain
  ``torch.compile``, each in a fresh process, ABBA-interleaved after one untimed warm-up
  of each, median of ``--repeat`` (default 3) each;
* steady ratio: later calls running the code compiled from the dumped files over the same
  calls running Dynamo's own code, in one process, best of ``--blocks`` blocks.

    .cache/venv-3.11-torch/bin/python benchmarks/real_models.py [--backend aot_eager]
        [--only gpt2,llama] [--repeat 3] [--no-timing] [--json PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never the network: models come from configs
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")


# ---------------------------------------------------------------- the workloads


@dataclass
class Workload:
    """One model and what is done with it, compiled."""

    name: str
    make: Callable[[], Any]  # the model, from a config (seeded random weights)
    kind: str = "forward"  # forward | generate | train
    inputs: Callable[[Any], dict[str, Any]] = field(default=lambda model: {})
    # frames known to keep Dynamo's code: how many, and the reason they give
    known_gap: tuple[int, str] | None = None

    def build(self) -> Any:
        import torch

        torch.manual_seed(0)
        model = self.make()
        return model.train() if self.kind == "train" else model.eval()

    def run(self, model: Any, backend: str) -> Callable[[], Any]:
        """A function that runs the workload once with ``model`` compiled on ``backend``;
        each call returns what it computed (tensors, detached)."""
        import torch

        if self.kind == "generate":
            model.forward = torch.compile(model.forward, backend=backend)
            args = self.inputs(model)
            return lambda: model.generate(**args, max_new_tokens=4, do_sample=False,
                                          pad_token_id=model.config.pad_token_id)
        compiled = torch.compile(model, backend=backend)
        if self.kind == "forward":
            args = self.inputs(model)

            def forward() -> Any:
                with torch.no_grad():
                    return _tensors(compiled(**args))
            return forward
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        args = self.inputs(model)

        def step() -> Any:
            optimizer.zero_grad()
            out = compiled(**args)
            loss = out.loss if hasattr(out, "loss") else out.float().pow(2).mean()
            loss.backward()
            optimizer.step()
            return [loss.detach(), *[p.detach().clone() for p in model.parameters()][:4]]
        return step


def _tensors(out: Any, depth: int = 0) -> Any:
    """The tensors of a model output (``ModelOutput`` is a dict; a KV cache an object
    holding them), in order."""
    import torch

    if isinstance(out, torch.Tensor):
        return out.detach()
    if depth > 4:
        return None
    if isinstance(out, dict):
        return [_tensors(v, depth + 1) for v in out.values()]
    if isinstance(out, list | tuple):
        return [_tensors(v, depth + 1) for v in out]
    if hasattr(out, "__dict__") and not isinstance(out, type | torch.nn.Module):
        return [_tensors(v, depth + 1) for _, v in sorted(vars(out).items())
                if isinstance(v, torch.Tensor | list | tuple | dict) or hasattr(v, "__dict__")]
    return out


def _ids(batch: int = 2, length: int = 8, vocab: int = 99) -> Any:
    import torch

    return torch.randint(4, vocab, (batch, length), generator=torch.Generator().manual_seed(1))


def _text(model: Any) -> dict[str, Any]:
    ids = _ids()
    return {"input_ids": ids, "attention_mask": (ids > 0).long()}


def _labels(model: Any) -> dict[str, Any]:
    ids = _ids()
    return {"input_ids": ids, "labels": ids.clone()}


def _seq2seq(model: Any) -> dict[str, Any]:
    return {"input_ids": _ids(), "decoder_input_ids": _ids(length=5)}


def _pixels(size: int = 32) -> Callable[[Any], dict[str, Any]]:
    def inputs(model: Any) -> dict[str, Any]:
        import torch

        g = torch.Generator().manual_seed(2)
        return {"pixel_values": torch.randn(2, 3, size, size, generator=g)}
    return inputs


def _prompt(model: Any) -> dict[str, Any]:
    ids = _ids(batch=1, length=6)
    return {"input_ids": ids, "attention_mask": (ids > 0).long()}


def _text_everything(model: Any) -> dict[str, Any]:
    """Attentions and hidden states too: graph breaks inside transformers' output
    capturing, with resume functions."""
    return {**_text(model), "output_attentions": True, "output_hidden_states": True}


def _with_hook(make: Callable[[], Any]) -> Callable[[], Any]:
    """A model whose first block has a forward pre-hook that prints (a graph break in
    a hook, in each layer call)."""
    def made() -> Any:
        model = make()

        def announce(module: Any, args: Any, kwargs: Any) -> None:
            print("entering", type(module).__name__)
        model.transformer.h[0].register_forward_pre_hook(announce, with_kwargs=True)
        return model
    return made


def _whisper(model: Any) -> dict[str, Any]:
    import torch

    g = torch.Generator().manual_seed(3)
    return {"input_features": torch.randn(1, 8, 32, generator=g),
            "decoder_input_ids": _ids(batch=1, length=4)}


def _clip(model: Any) -> dict[str, Any]:
    return {**_text(model), **_pixels(32)(model)}


# tiny sizes; token ids (pad/bos/eos/decoder start) inside the vocabulary
_VOCAB = {"vocab_size": 99, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}
_ENCODER = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
            "intermediate_size": 64, "max_position_embeddings": 64}
_DECODER = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
            "num_key_value_heads": 2, "intermediate_size": 64,
            "max_position_embeddings": 64}


def _model(cls: str, config: str, **kwargs: Any) -> Callable[[], Any]:
    def make() -> Any:
        import transformers

        return getattr(transformers, cls)(getattr(transformers, config)(**kwargs))
    return make


WORKLOADS: list[Workload] = [
    # encoders
    Workload("bert", _model("BertModel", "BertConfig", **_ENCODER, **_VOCAB), inputs=_text),
    Workload("roberta", _model("RobertaForMaskedLM", "RobertaConfig", **_ENCODER,
                               **{**_VOCAB, "pad_token_id": 1, "bos_token_id": 0}),
             inputs=_text),
    Workload("distilbert", _model("DistilBertForSequenceClassification", "DistilBertConfig",
                                  dim=32, n_layers=2, n_heads=2, hidden_dim=64,
                                  max_position_embeddings=64, vocab_size=99, pad_token_id=0),
             inputs=_text),
    Workload("albert", _model("AlbertModel", "AlbertConfig", embedding_size=16, **_ENCODER,
                              **_VOCAB), inputs=_text),
    Workload("electra", _model("ElectraForPreTraining", "ElectraConfig", embedding_size=16,
                               **_ENCODER, **_VOCAB), inputs=_text),
    # decoders
    Workload("gpt2", _model("GPT2LMHeadModel", "GPT2Config", n_embd=32, n_layer=2, n_head=2,
                            n_positions=64, **_VOCAB), inputs=_text),
    Workload("llama", _model("LlamaForCausalLM", "LlamaConfig", **_DECODER, **_VOCAB),
             inputs=_text),
    Workload("mistral", _model("MistralForCausalLM", "MistralConfig", **_DECODER, **_VOCAB),
             inputs=_text),
    Workload("qwen2", _model("Qwen2ForCausalLM", "Qwen2Config", **_DECODER, **_VOCAB),
             inputs=_text),
    Workload("phi3", _model("Phi3ForCausalLM", "Phi3Config", **_DECODER, **_VOCAB),
             inputs=_text),
    Workload("opt", _model("OPTForCausalLM", "OPTConfig", hidden_size=32, num_hidden_layers=2,
                           num_attention_heads=2, ffn_dim=64, word_embed_proj_dim=32,
                           max_position_embeddings=64, **_VOCAB), inputs=_text),
    Workload("gpt_neox", _model("GPTNeoXForCausalLM", "GPTNeoXConfig", **_ENCODER, **_VOCAB),
             inputs=_text),
    # encoder-decoders
    Workload("t5", _model("T5ForConditionalGeneration", "T5Config", d_model=32, d_ff=64,
                          num_layers=2, num_heads=2, d_kv=16, vocab_size=99, pad_token_id=0,
                          eos_token_id=1, decoder_start_token_id=0), inputs=_seq2seq),
    Workload("bart", _model("BartForConditionalGeneration", "BartConfig", d_model=32,
                            encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
                            decoder_attention_heads=2, encoder_ffn_dim=64,
                            decoder_ffn_dim=64, max_position_embeddings=64,
                            decoder_start_token_id=2, **_VOCAB), inputs=_seq2seq),
    Workload("whisper", _model("WhisperForConditionalGeneration", "WhisperConfig", d_model=32,
                               encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                               decoder_attention_heads=2, encoder_ffn_dim=64,
                               decoder_ffn_dim=64, num_mel_bins=8, max_source_positions=16,
                               max_target_positions=16, decoder_start_token_id=1,
                               **_VOCAB), inputs=_whisper),
    # vision, and text with vision
    Workload("vit", _model("ViTForImageClassification", "ViTConfig", hidden_size=32,
                           num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                           image_size=32, patch_size=8, num_labels=3), inputs=_pixels(32)),
    Workload("resnet", _model("ResNetForImageClassification", "ResNetConfig",
                              embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1],
                              num_labels=3), inputs=_pixels(32)),
    Workload("clip", _model("CLIPModel", "CLIPConfig", text_config={
        **_ENCODER, "vocab_size": 99, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2},
        vision_config={**_ENCODER, "image_size": 32, "patch_size": 8}, projection_dim=16),
             inputs=_clip),
    # graph breaks in real code: resume functions, frames run without compiling
    Workload("gpt2-everything", _model("GPT2LMHeadModel", "GPT2Config", n_embd=32, n_layer=2,
                                       n_head=2, n_positions=64, **_VOCAB),
             inputs=_text_everything),
    Workload("gpt2-hook", _with_hook(_model("GPT2LMHeadModel", "GPT2Config", n_embd=32,
                                            n_layer=2, n_head=2, n_positions=64, **_VOCAB)),
             inputs=_text),
    # generate(): several frames and recompiles; training steps
    Workload("gpt2-generate", _model("GPT2LMHeadModel", "GPT2Config", n_embd=32, n_layer=2,
                                     n_head=2, n_positions=64, **_VOCAB), kind="generate",
             inputs=_prompt),
    Workload("llama-generate", _model("LlamaForCausalLM", "LlamaConfig", **_DECODER, **_VOCAB),
             kind="generate", inputs=_prompt),
    Workload("bert-train", _model("BertForMaskedLM", "BertConfig", **_ENCODER, **_VOCAB),
             kind="train", inputs=_labels),
    Workload("gpt2-train", _model("GPT2LMHeadModel", "GPT2Config", n_embd=32, n_layer=2,
                                  n_head=2, n_positions=64, **_VOCAB), kind="train",
             inputs=_labels),
]


def has_timm() -> bool:
    """Whether timm's models can be built here: timm imports torchvision, and a
    torchvision built for another torch fails (``operator torchvision::nms does not
    exist``); torch 2.14.1's torchvision 0.29.1 is on local disk."""
    try:
        import timm  # noqa: F401
    except Exception:  # noqa: BLE001 (ImportError, or torchvision's RuntimeError)
        return False
    return True


def _timm(name: str, **kwargs: Any) -> Callable[[], Any]:
    def make() -> Any:
        import timm

        return timm.create_model(name, pretrained=False, num_classes=5, **kwargs)
    return make


def _image(size: int) -> Callable[[Any], dict[str, Any]]:
    def inputs(model: Any) -> dict[str, Any]:
        return {"x": _pixels(size)(model)["pixel_values"]}  # (timm's forward takes x)
    return inputs


# timm's image models (random weights, small inputs), where timm is installed
TIMM = [
    Workload("timm-resnet18", _timm("resnet18"), inputs=_image(64)),
    Workload("timm-vit", _timm("vit_tiny_patch16_224", img_size=32, patch_size=8),
             inputs=_image(32)),
    Workload("timm-efficientnet", _timm("efficientnet_b0"), inputs=_image(64)),
    Workload("timm-convnext", _timm("convnext_atto"), inputs=_image(64)),
    Workload("timm-mobilenetv3", _timm("mobilenetv3_small_050"), inputs=_image(64)),
    Workload("timm-resnet18-train", _timm("resnet18"), kind="train", inputs=_image(64)),
]
BY_NAME = {w.name: w for w in [*WORKLOADS, *TIMM]}


def _import_unveil() -> Any:
    try:
        import unveil
    except ImportError:  # a checkout without PYTHONPATH=src
        sys.path.insert(0, str(HERE.parent.parent / "src"))
        import unveil
    return unveil


def same(a: Any, b: Any, exact: bool = True) -> bool:
    """Whether two results of a workload are equal (``exact``: bit for bit)."""
    import torch

    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.shape == b.shape and (
            torch.equal(a, b) if exact else torch.allclose(a, b, atol=1e-4, rtol=1e-4))
    if isinstance(a, list | tuple):
        return isinstance(b, list | tuple) and len(a) == len(b) and all(
            same(x, y, exact) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def run_plain(workload: Workload, backend: str, calls: int = 2) -> list[Any]:
    """The workload's results under plain ``torch.compile``, ``calls`` times."""
    import torch

    torch._dynamo.reset()
    once = workload.run(workload.build(), backend)
    out = [once() for _ in range(calls)]
    torch._dynamo.reset()
    return out


@contextlib.contextmanager
def under_unveil(dump: Path) -> Iterator[Any]:
    unveil = _import_unveil()
    import torch

    torch._dynamo.reset()
    with unveil.prepare_debug(dump) as debug:
        yield debug


def run_unveil(workload: Workload, backend: str, dump: Path, calls: int = 2) -> list[Any]:
    """The workload's results under ``unveil.prepare_debug(dump)``, ``calls`` times."""
    with under_unveil(dump):
        once = workload.run(workload.build(), backend)
        return [once() for _ in range(calls)]


# ---------------------------------------------------------------- measuring (worker side)


def worker_first_call(name: str, backend: str, tool: str) -> dict[str, Any]:
    """Time the first call of a workload in this fresh process (``tool``: plain|unveil)."""
    import torch

    workload = BY_NAME[name]
    model = workload.build()
    torch._dynamo.reset()
    with tempfile.TemporaryDirectory() as tmp:
        ctx = under_unveil(Path(tmp)) if tool == "unveil" else contextlib.nullcontext()
        with ctx:
            once = workload.run(model, backend)
            start = time.perf_counter()
            once()
            elapsed = time.perf_counter() - start
    return {"seconds": elapsed}


def worker_frames(name: str, backend: str, blocks: int) -> dict[str, Any]:
    """Frames, unveil's work per frame, and the steady ratio of one workload."""
    import torch

    unveil = _import_unveil()
    from unveil.torch import dump as dump_module

    workload = BY_NAME[name]
    work: list[float] = []
    original = dump_module.prepare_debug._replace

    def timed(self: Any, *args: Any) -> Any:  # unveil's own work on one frame
        start = time.perf_counter()
        try:
            return original(self, *args)
        finally:
            work.append(time.perf_counter() - start)

    with tempfile.TemporaryDirectory() as tmp:
        dump_module.prepare_debug._replace = timed  # type: ignore[method-assign]
        try:
            with unveil.prepare_debug(tmp):
                torch._dynamo.reset()
                ours = workload.run(workload.build(), backend)
                ours()
        finally:
            dump_module.prepare_debug._replace = original  # type: ignore[method-assign]
        manifest = json.loads((Path(tmp) / "manifest.json").read_text())
        frames = manifest["frames"]
        dynamo_times = [f.get("compile_time_s") or 0.0 for f in frames]
        # steady state: the code compiled from the files against Dynamo's own code
        ours()
        torch._dynamo.reset()
        theirs = workload.run(workload.build(), backend)
        theirs()
        theirs()

        def best(fn: Callable[[], Any]) -> float:
            times = []
            for _ in range(blocks):
                start = time.perf_counter()
                for _ in range(3):
                    fn()
                times.append(time.perf_counter() - start)
            return min(times)

        ratios = []
        for _ in range(2):  # ABBA
            a, b = best(ours), best(theirs)
            b2, a2 = best(theirs), best(ours)
            ratios.append((a + a2) / (b + b2))
    reasons = [f.get("error") or "" for f in frames if f["status"] != dump_module.RUNS_OURS]
    share, worst = max(((w / d, f.get("transformed_code") or f["qualname"])
                        for w, d, f in zip(work, dynamo_times, frames, strict=False) if d),
                       default=(0.0, ""))
    return {"frames": len(frames),
            "ours": sum(f["status"] == dump_module.RUNS_OURS for f in frames),
            "reasons": reasons,
            "work_s": sum(work), "dynamo_s": sum(dynamo_times),
            "work_share": share, "worst_frame": worst,
            "steady": statistics.median(ratios)}


def _worker(args: argparse.Namespace) -> int:
    import warnings

    warnings.simplefilter("ignore")
    if args.worker == "first-call":
        out = worker_first_call(args.only, args.backend, args.tool)
    else:
        out = worker_frames(args.only, args.backend, args.blocks)
    Path(args.out).write_text(json.dumps(out))
    return 0


# ---------------------------------------------------------------- measuring (driver side)


def _run_worker(argv: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(HERE.parent.parent / "src"), os.environ.get("PYTHONPATH", "")])}
        proc = subprocess.run([sys.executable, str(HERE), *argv, "--out", str(out)],
                              capture_output=True, text=True, env=env, check=False)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"worker {argv} failed:\n{proc.stderr[-3000:]}")
        return dict(json.loads(out.read_text()))


def measure(name: str, backend: str, repeat: int, blocks: int, timing: bool) -> dict[str, Any]:
    row: dict[str, Any] = {"workload": name, "backend": backend}
    row.update(_run_worker(["--worker", "frames", "--only", name, "--backend", backend,
                            "--blocks", str(blocks)]))
    if timing:
        first = ["--worker", "first-call", "--only", name, "--backend", backend]
        for tool in ("plain", "unveil"):  # warm-up (Inductor's disk caches, imports)
            _run_worker([*first, "--tool", tool])
        times: dict[str, list[float]] = {"plain": [], "unveil": []}
        for k in range(repeat):
            order = ("plain", "unveil") if k % 2 == 0 else ("unveil", "plain")
            for tool in order:
                times[tool].append(_run_worker([*first, "--tool", tool])["seconds"])
        row["first_plain_s"] = statistics.median(times["plain"])
        row["first_unveil_s"] = statistics.median(times["unveil"])
        row["first_ratio"] = row["first_unveil_s"] / row["first_plain_s"]
    return row


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| workload | backend | frames | run unveil's code | unveil's work / Dynamo's "
             "compile (worst frame) | first call | steady | not running unveil's code |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        first = f"{r['first_ratio']:.3f}" if "first_ratio" in r else "-"
        why = "; ".join(sorted(set(r["reasons"])))[:120] or ""
        share = f"{r['work_share']:.1%}"
        if r["frames"] > 1:  # which frame, and the share over all frames
            worst = r.get("worst_frame", "").removesuffix(".py").partition("_for_")[2]
            share += f" ({worst}); {r['work_s'] / max(r['dynamo_s'], 1e-9):.1%} all"
        lines.append(f"| {r['workload']} | {r['backend']} | {r['frames']} | {r['ours']} | "
                     f"{share} | {first} | {r['steady']:.3f} | {why} |")
    frames = sum(r["frames"] for r in rows)
    ours = sum(r["ours"] for r in rows)
    lines.append(f"| **all** | | {frames} | {ours} ({ours / max(frames, 1):.1%}) | | | | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--backend", default="aot_eager", help="eager, aot_eager or inductor")
    parser.add_argument("--only", default="", help="comma-separated workload names")
    parser.add_argument("--repeat", type=int, default=3, help="first-call runs per side")
    parser.add_argument("--blocks", type=int, default=5, help="steady-state timed blocks")
    parser.add_argument("--no-timing", action="store_true", help="frames and steady only")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON here")
    parser.add_argument("--worker", choices=("first-call", "frames"), help=argparse.SUPPRESS)
    parser.add_argument("--tool", default="plain", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return _worker(args)
    names = [n for n in args.only.split(",") if n] or [
        w.name for w in [*WORKLOADS, *(TIMM if has_timm() else [])]]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        parser.error(f"unknown workload(s): {', '.join(unknown)}")
    rows = []
    for k, name in enumerate(names, 1):
        print(f"[{k}/{len(names)}] {name} ({args.backend}) ...", file=sys.stderr, flush=True)
        rows.append(measure(name, args.backend, args.repeat, args.blocks, not args.no_timing))
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

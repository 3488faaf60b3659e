"""``unveil.prepare_debug``: dumped transformed code that the program then runs, with the
same results as without unveil, and a manifest of every frame."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import unveil  # noqa: E402
from unveil.dump_format import FORMAT, FrameRecord, FunctionRecord, checked  # noqa: E402


def with_print_break(x):
    a = torch.sin(x) + 1
    print("between graphs", tuple(a.shape))
    return a * 2


def data_dependent(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1


class Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        h = torch.relu(self.fc(x))
        if h.sum() > 0:
            h = h * 2
        return h.softmax(-1)


def _run(fn, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = fn(*args)
    return result, out.getvalue()


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("fn", [with_print_break, data_dependent], ids=lambda f: f.__name__)
def test_dump_runs_the_dumped_code(fn, tmp_path: Path) -> None:
    inputs = [torch.ones(3), -torch.ones(3), torch.arange(4.0)]
    expected = [_run(fn, x) for x in inputs]
    with unveil.prepare_debug(tmp_path) as dbg:
        compiled = torch.compile(fn, backend="eager")
        got = [_run(compiled, x) for x in inputs]
    for (e_val, e_out), (g_val, g_out) in zip(expected, got, strict=True):
        assert torch.equal(e_val, g_val)
        assert e_out == g_out
    files = sorted(p.name for p in tmp_path.glob("__transformed_code_*_for_*.py"))
    assert f"__transformed_code_0_for_{fn.__name__}.py" in files
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    frames = manifest["frames"]
    assert frames and all(f["status"] == "running unveil's code" for f in frames), frames
    assert {f["transformed_code"] for f in frames} <= set(files)
    assert dbg.manifest.frames
    for name in files:  # every dumped file is the Python that runs
        compile((tmp_path / name).read_text(), name, "exec")
    # the manifest says what wrote it, and is what the report reads without a complaint
    assert manifest["format"] == FORMAT and manifest["unveil_version"] == unveil.__version__
    for i, found in enumerate(frames):
        assert checked(found, FrameRecord, f"frames[{i}]")[1] == []
    for i, found in enumerate(manifest["functions"]):
        assert checked(found, FunctionRecord, f"functions[{i}]")[1] == []


def test_module_and_manual_enter_exit(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = Tiny()
    x = torch.randn(2, 4)
    expected = model(x)
    dbg = unveil.prepare_debug(tmp_path / "nested" / "dump")
    dbg.__enter__()
    try:
        got = torch.compile(model, backend="eager")(x)
    finally:
        dbg.__exit__(None, None, None)
    assert torch.allclose(expected, got)
    assert (tmp_path / "nested" / "dump" / "__transformed_code_0_for_forward.py").exists()


def test_frames_compiled_after_exit_are_not_dumped(tmp_path: Path) -> None:
    with pytest.warns(UserWarning, match="compiled no frame"):
        with unveil.prepare_debug(tmp_path):
            pass
    torch.compile(data_dependent, backend="eager")(torch.ones(2))
    assert not list(tmp_path.glob("__transformed_code_*"))


def test_frames_dynamo_was_given_but_did_not_transform_are_said(tmp_path: Path) -> None:
    def nothing_to_compile(n):
        return [n] * 2

    with pytest.warns(UserWarning) as caught:
        with unveil.prepare_debug(tmp_path):
            torch.compile(nothing_to_compile, backend="eager")(3)
    said = " ".join(str(w.message) for w in caught)
    assert ("Dynamo was given 1 frame(s) while it was active and transformed none" in said
            or "without compiling them" in said), said
    assert "compiled (called) before" not in said and "reused" not in said, said


def test_a_function_compiled_before_is_reported_not_silently_missing(tmp_path: Path) -> None:
    compiled = torch.compile(data_dependent, backend="eager")
    compiled(torch.ones(2))  # compiled and cached before prepare_debug
    with pytest.warns(UserWarning, match=r"torch._dynamo.reset\(\)"):
        with unveil.prepare_debug(tmp_path):
            compiled(torch.ones(2))
    assert json.loads((tmp_path / "manifest.json").read_text())["frames"] == []


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else False,
                    reason="root can write anywhere")
def test_unwritable_dump_dir_is_one_sentence(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(unveil.BadInputError, match="cannot write the dump directory"):
            with unveil.prepare_debug(locked / "dump"):
                pass
    finally:
        locked.chmod(0o700)


def test_dump_dir_that_is_a_file_is_one_sentence(tmp_path: Path) -> None:
    target = tmp_path / "a_file"
    target.write_text("x")
    with pytest.raises(unveil.BadInputError, match="cannot write the dump directory .*: it "
                                                   "is a file, not a directory"):
        with unveil.prepare_debug(target):
            pass
    with pytest.raises(unveil.BadInputError, match="a part of that path is a file"):
        with unveil.record(target / "below"):
            pass
    cli = subprocess.run([sys.executable, "-m", "unveil", "run", "--dump", str(target),
                          str(target)], capture_output=True, text=True, timeout=120)
    assert cli.returncode == 2 and "is a file" in cli.stderr and "Traceback" not in cli.stderr


_HOLDER = """
import sys, time, torch, unveil
from pathlib import Path
def data_dependent(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1
dump, marker = Path(sys.argv[1]), Path(sys.argv[2])
with unveil.prepare_debug(dump):
    torch.compile(data_dependent, backend="eager")(torch.ones(2))
    (marker / "dumped").touch()
    deadline = time.time() + 60
    while not (marker / "go").exists() and time.time() < deadline:
        time.sleep(0.05)
"""


def test_processes_sharing_a_dump_dir_never_collide(tmp_path: Path) -> None:
    """Another process dumps into the same directory while this one does: file names never
    collide, and each process's manifest survives."""
    dump, marker = tmp_path / "dump", tmp_path / "marker"
    marker.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(dump), str(marker)])
    try:
        deadline = time.time() + 60
        while not (marker / "dumped").exists():
            assert holder.poll() is None and time.time() < deadline, "the other process died"
            time.sleep(0.05)
        with unveil.prepare_debug(dump):
            torch.compile(data_dependent, backend="eager")(torch.ones(2))
        (marker / "go").touch()
        assert holder.wait(timeout=60) == 0
    finally:
        holder.kill()
    names = sorted(p.name for p in dump.glob("__transformed_code_*_for_data_dependent.py"))
    assert names[:2] == ["__transformed_code_0_for_data_dependent.py",
                         "__transformed_code_1_for_data_dependent.py"], names
    manifests = sorted(p.name for p in dump.glob("manifest*.json"))
    assert len(manifests) == 2, manifests
    files = [e["file"] for m in manifests
             for e in json.loads((dump / m).read_text())["files"]]
    assert len(files) == len(set(files)), files  # no file claimed twice


def test_a_new_run_replaces_a_finished_dump_with_the_same_names(tmp_path: Path) -> None:
    """Re-running a program writes the same file names (breakpoints set in them apply),
    and no file of the finished run is left behind."""
    runs = []
    for _ in range(2):
        torch._dynamo.reset()
        with unveil.prepare_debug(tmp_path):
            torch.compile(data_dependent, backend="eager")(torch.ones(2))
        runs.append(sorted(p.name for p in tmp_path.iterdir()))
    # Graph files are named after Dynamo's __compiled_fn counter, which goes on counting in
    # one process (a new process starts again): compare the others, and count the graphs.
    def named(names: list[str]) -> list[str]:
        return [n for n in names if not n.startswith("__compiled_fn_")]

    assert named(runs[0]) == named(runs[1])
    assert len(runs[0]) == len(runs[1]), runs
    assert "__transformed_code_0_for_data_dependent.py" in runs[1]
    assert "__transformed_code_1_for_data_dependent.py" not in runs[1]


@contextlib.contextmanager
def _one_rank_group() -> Iterator[None]:
    """A gloo process group of one rank on a free local port (skips without one)."""
    dist = pytest.importorskip("torch.distributed")
    if not dist.is_available():
        pytest.skip("torch.distributed is not available")
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0,
                            world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


def test_each_distributed_rank_dumps_under_its_own_directory(tmp_path: Path) -> None:
    with _one_rank_group(), unveil.prepare_debug(tmp_path):
        torch.compile(data_dependent, backend="eager")(torch.ones(2))
    assert (tmp_path / "rank_0" / "__transformed_code_0_for_data_dependent.py").exists()
    assert (tmp_path / "rank_0" / "manifest.json").exists()


def test_fsdp2_blocks_each_compiled_run_unveils_code(tmp_path: Path) -> None:
    """FSDP2 (``fully_shard`` on each block, each block compiled; gloo, one rank): every
    frame Dynamo transforms runs unveil's code, forward and backward give what a run
    without unveil gives, and no warning claims a frame came from Dynamo's cache."""
    fsdp = pytest.importorskip("torch.distributed.fsdp")
    if not hasattr(fsdp, "fully_shard"):
        pytest.skip("this PyTorch has no FSDP2 (torch.distributed.fsdp.fully_shard)")

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(8, 8)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.fc(x)) * 2

    def step(dump: Path | None) -> tuple[torch.Tensor, list[torch.Tensor]]:
        torch._dynamo.reset()
        torch.manual_seed(0)
        model = torch.nn.Sequential(Block(), Block())
        for block in model:
            fsdp.fully_shard(block)
            block.compile(backend="eager")
        fsdp.fully_shard(model)
        x = torch.randn(4, 8)
        with unveil.prepare_debug(dump) if dump else contextlib.nullcontext():
            out = model(x)
            out.sum().backward()
        return out.detach(), [p.grad.full_tensor() for p in model.parameters()]

    try:
        with _one_rank_group():
            plain = step(None)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                ours = step(tmp_path)
    finally:
        torch._dynamo.reset()
    assert torch.equal(plain[0], ours[0])
    assert all(torch.equal(a, b) for a, b in zip(plain[1], ours[1], strict=True))
    assert not [w for w in caught if "Dynamo's cache" in str(w.message)], caught
    frames = json.loads((tmp_path / "rank_0" / "manifest.json").read_text())["frames"]
    assert frames and all(f["status"] == "running unveil's code" for f in frames), frames
    assert {f["function"] for f in frames} == {"forward"}


def test_install_logs_decompiled_source_with_bytecode_logs() -> None:
    import logging

    records: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    torch._logging.set_logs(bytecode=True)
    log = logging.getLogger("torch._dynamo.convert_frame.__bytecode")
    handler = Collect(level=logging.DEBUG)
    log.addHandler(handler)
    unveil.install()
    unveil.install()  # twice is once
    try:
        out = torch.compile(data_dependent, backend="eager")(torch.ones(2))
    finally:
        unveil.uninstall()
        log.removeHandler(handler)
        torch._logging.set_logs()
    assert torch.equal(out, data_dependent(torch.ones(2)))
    sources = [r for r in records if r.startswith("DECOMPILED SOURCE (unveil)")]
    assert len(sources) >= 1, records[:3]
    assert "def data_dependent(x):" in sources[0]
    assert any(r.startswith("MODIFIED BYTECODE") for r in records)
    # uninstalled: nothing more is logged
    records.clear()
    torch._dynamo.reset()
    torch.compile(data_dependent, backend="eager")(torch.ones(2))
    assert not any(r.startswith("DECOMPILED SOURCE") for r in records)


def test_dump_directory_replaced_while_running(tmp_path: Path) -> None:
    """The dump directory cannot be written at the end (here a file took its place): the
    program still finishes as without unveil, its own exception untouched, with a
    warning that the dump is incomplete."""
    import shutil

    dump = tmp_path / "dump"
    compiled = torch.compile(with_print_break, backend="eager")
    with pytest.warns(RuntimeWarning, match="could not finish the dump"):
        with pytest.raises(KeyError, match="mine"):
            with unveil.prepare_debug(dump):
                result, _ = _run(compiled, torch.ones(2))
                shutil.rmtree(dump)
                dump.write_text("not a directory")
                raise KeyError("mine")
    assert torch.equal(result, with_print_break(torch.ones(2)))

"""``prepare_debug`` across the situations researchers meet: backends, training steps,
recompiles, every common kind of graph break, closures, generators, disabled regions and
export. Each test runs the program with and without unveil and compares outputs, printed
text and (for training) parameters, then checks the dump: files that compile, graph files
for every compiled graph, guards as Python, graph breaks and recompiles in the manifest."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import unveil  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _same(a: Any, b: Any, exact: bool) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and (
            torch.equal(a, b) if exact else torch.allclose(a, b, atol=1e-5, rtol=1e-5))
    if isinstance(a, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(
            _same(x, y, exact) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _calls(fn: Callable[..., Any], inputs: list[tuple[Any, ...]]) -> list[tuple[Any, str]]:
    """Each input's (result or exception, printed text)."""
    out = []
    for args in inputs:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            try:
                result: Any = fn(*args)
            except Exception as exc:  # noqa: BLE001 (exceptions are part of behaviour)
                result = (type(exc).__name__, str(exc))
        out.append((result, buf.getvalue()))
    return out


def run_both(fn: Callable[..., Any], inputs: list[tuple[Any, ...]], dump: Path,
             backend: str = "eager", exact: bool = True, **compile_kw: Any) -> dict:
    """Run ``fn`` compiled without and with unveil on ``inputs``; assert the same
    behaviour; check the dump and return its manifest."""
    expected = _calls(torch.compile(fn, backend=backend, **compile_kw), inputs)
    torch._dynamo.reset()
    with unveil.prepare_debug(dump):
        got = _calls(torch.compile(fn, backend=backend, **compile_kw), inputs)
    for (e_val, e_out), (g_val, g_out) in zip(expected, got, strict=True):
        assert _same(e_val, g_val, exact), (e_val, g_val)
        assert e_out == g_out
    return check_dump(dump)


def check_dump(dump: Path) -> dict:
    """Every file compiles, each frame runs unveil's code, each graph it calls has a file,
    and each function has a full-code file with a guard per cache entry."""
    manifest = json.loads((dump / "manifest.json").read_text())
    assert manifest["frames"], "nothing was dumped"
    assert not manifest["errors"], manifest["errors"]
    for entry in manifest["files"]:
        assert (dump / entry["file"]).is_file(), entry
    for path in dump.glob("*.py"):
        compile(path.read_text(), str(path), "exec")
    for frame in manifest["frames"]:
        assert frame["status"] == "running unveil's code", (frame["error"], frame)
        assert frame["compile_id"], frame
        assert frame["guards"], frame
        graphs = {g["compiled_fn"] for g in frame["graphs"]}
        for name in frame["compiled_fns"]:
            assert name.split("_", 5)[:5] and any(name.startswith(g) for g in graphs), (
                name, frame["graphs"])
    for function in manifest["functions"]:
        text = (dump / function["full_code"]).read_text()
        assert function["cache_entries"], function
        for k, entry in enumerate(function["cache_entries"]):
            if entry["code"] == function["function"]:
                assert f"def __guard_{k}_for_" in text or "__guard_" in text
    return manifest


def breaks(manifest: dict) -> list[str]:
    return [b["reason"] for f in manifest["frames"] for b in f["graph_breaks"]]


# ------------------------------------------------------------------ graph-break kinds


def brk_print(x):
    y = x.sin()
    print("value", y.shape)
    return y.cos()


def brk_if(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1


def brk_item(x):
    s = x.sum().item()
    return x * s


def brk_tolist(x):
    values = x.flatten().tolist()
    return torch.tensor([v * 2 for v in values]).reshape(x.shape) + x


def _opaque(v):
    import inspect  # noqa: F401 (a call Dynamo does not trace)

    return v


def brk_unsupported(x):
    y = x + 1
    y = torch._dynamo.disable(_opaque)(y)
    return y * 3


def brk_explicit(x):
    y = x.exp()
    torch._dynamo.graph_break()
    return y.log1p()


def brk_several(x):
    a = x + 1
    print("one")
    b = a * 2
    if b.mean() > 0:
        b = b - 1
    print("two")
    return b.tanh()


def brk_in_loop(x):
    for i in range(3):
        x = x * 2
        print("step", i)
    return x


def brk_no_grad(x):
    with torch.no_grad():
        y = x * 2
        print("inside no_grad")
        z = y + 1
    return z + x


def brk_autocast(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ x.T
        print("inside autocast")
        z = y.relu()
    return z.float()


def brk_try(x):
    try:
        y = x * 2
        print("in try")
        if y.sum() > 1e6:
            raise ValueError("too big")
        return y
    except ValueError:
        return x * 0
    finally:
        print("finally")


def brk_try_raises(x):
    try:
        y = x + 1
        print("about to raise")
        raise KeyError("k")
    except KeyError as e:
        return y * len(str(e))


def _callee(y):
    y = y + 1
    print("in callee")
    return y * 2


def brk_nested(x):
    a = x.sin()
    b = _callee(a)
    return b.cos()


BREAKS = [brk_print, brk_if, brk_item, brk_tolist, brk_unsupported, brk_explicit,
          brk_several, brk_no_grad, brk_autocast, brk_nested]
# Dynamo (2.13) cannot resume after these graph breaks and runs the whole frame eagerly.
SKIPPED = [brk_in_loop, brk_try, brk_try_raises]
INPUTS = [(torch.ones(3, 3),), (-torch.arange(9.0).reshape(3, 3),), (torch.zeros(3, 3),)]


@pytest.mark.parametrize("fn", BREAKS, ids=lambda f: f.__name__)
def test_graph_break_kinds(fn, tmp_path: Path) -> None:
    manifest = run_both(fn, INPUTS, tmp_path)
    assert breaks(manifest), "the graph break is in the manifest"
    names = {f["function"] for f in manifest["frames"]}
    assert fn.__name__ in names
    assert any(n.startswith("torch_dynamo_resume_in_") for n in names), names
    full = [f for f in manifest["functions"] if f["function"] == fn.__name__]
    assert len(full) == 1 and full[0]["full_code"] == f"full_code_for_{fn.__name__}_0.py"


@pytest.mark.parametrize("fn", SKIPPED, ids=lambda f: f.__name__)
def test_graph_break_dynamo_cannot_resume(fn, tmp_path: Path) -> None:
    expected = _calls(torch.compile(fn, backend="eager"), INPUTS)
    torch._dynamo.reset()
    with pytest.warns(UserWarning, match="without compiling"), unveil.prepare_debug(tmp_path):
        got = _calls(torch.compile(fn, backend="eager"), INPUTS)
    assert [(str(v), o) for v, o in expected] == [(str(v), o) for v, o in got]
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    (skip, *_) = manifest["skipped_frames"]
    assert skip["function"] == fn.__name__ and skip["reason"], skip
    assert skip["graph_breaks"], skip


def test_graph_break_reasons_and_locations(tmp_path: Path) -> None:
    manifest = run_both(brk_if, INPUTS, tmp_path)
    found = [b for f in manifest["frames"] for b in f["graph_breaks"]]
    assert any("Data-dependent" in b["reason"] for b in found), found
    assert any(b["user_file"] == __file__ for b in found), found


# ------------------------------------------------------------------ backends and training


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 8)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if h.mean() > 0.1:
            h = h * 2
        return self.fc2(h) + x


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_module_forward_backends(backend: str, tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = Block()
    inputs = [(torch.randn(4, 8),), (torch.randn(4, 8) + 5,)]
    manifest = run_both(model, inputs, tmp_path, backend=backend,
                        exact=backend != "inductor")
    kinds = {g["kind"] for f in manifest["frames"] for g in f["graphs"]}
    assert "dynamo_output_graph" in kinds
    if backend == "inductor":
        assert "inductor_output_code" in kinds
    if backend in ("eager", "aot_eager"):  # the graph code runs from its file
        ran = [g for f in manifest["frames"] for g in f["graphs"] if g["compiled_from_file"]]
        assert ran


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_training_step(backend: str, tmp_path: Path) -> None:
    def train(dump: Path | None) -> tuple[list[float], list[Any]]:
        torch._dynamo.reset()
        torch.manual_seed(0)
        model = Block()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        step_model = torch.compile(model, backend=backend)
        data = [torch.randn(4, 8) for _ in range(3)]
        losses = []
        ctx = unveil.prepare_debug(dump) if dump else contextlib.nullcontext()
        with ctx:
            for x in data:
                opt.zero_grad()
                loss = step_model(x).pow(2).mean()
                loss.backward()
                opt.step()
                losses.append(loss.item())
        return losses, [p.detach().clone() for p in model.parameters()]

    plain_losses, plain_params = train(None)
    losses, params = train(tmp_path)
    assert losses == pytest.approx(plain_losses, rel=1e-5, abs=1e-6)
    for a, b in zip(plain_params, params, strict=True):
        assert torch.allclose(a, b, atol=1e-5)
    manifest = check_dump(tmp_path)
    kinds = {g["kind"] for f in manifest["frames"] for g in f["graphs"]}
    assert {"aot_forward_graph", "aot_backward_graph"} <= kinds, kinds


# ------------------------------------------------------------------ recompiles

FLAG = True


def uses_flag(x, scale):
    if FLAG:
        return x * scale
    return x - scale


def test_recompiles_shape_dtype_scalar_global(tmp_path: Path) -> None:
    global FLAG
    compiled_plain = torch.compile(uses_flag, backend="eager")
    calls: list[tuple[Any, ...]] = [(torch.ones(3), 2), (torch.ones(5), 2),
                                    (torch.ones(3, dtype=torch.float64), 2),
                                    (torch.ones(3), 3)]
    expected = [compiled_plain(*a) for a in calls]
    FLAG = False
    expected.append(compiled_plain(torch.ones(3), 2))
    FLAG = True
    torch._dynamo.reset()
    with unveil.prepare_debug(tmp_path):
        compiled = torch.compile(uses_flag, backend="eager")
        got = [compiled(*a) for a in calls]
        FLAG = False
        got.append(compiled(torch.ones(3), 2))
        FLAG = True
    for e, g in zip(expected, got, strict=True):
        assert torch.equal(e, g)
    manifest = check_dump(tmp_path)
    reasons = [r for f in manifest["frames"] for r in f["recompile_reasons"]]
    assert len(manifest["frames"]) >= 4 and len(reasons) >= 3, reasons
    assert any("FLAG" in r for r in reasons), reasons
    (function,) = manifest["functions"]
    assert len(function["cache_entries"]) == len(manifest["frames"])
    text = (tmp_path / function["full_code"]).read_text()
    for k in range(len(function["cache_entries"])):
        assert f"def __guard_{k}_for_uses_flag(L, G" in text
    assert "def __dispatch_uses_flag(x, scale):" in text
    # The dispatch runs: each call picks the entry Dynamo would and gives the same result.
    from unveil.torch.full_code import dispatch_namespace

    namespace = dispatch_namespace(uses_flag)
    exec(compile(text, function["full_code"], "exec"), namespace)
    dispatch = namespace["__dispatch_uses_flag"]
    for args, e in zip(calls, expected, strict=False):
        assert torch.equal(dispatch(*args), e)
    guards = [namespace[f"__guard_{k}_for_uses_flag"]
              for k in range(len(function["cache_entries"]))]
    assert any(g({"x": torch.ones(3), "scale": 2}, namespace) for g in guards)
    unseen = {"x": torch.ones(3, dtype=torch.int64), "scale": 2}  # Dynamo would recompile
    assert not any(g(unseen, namespace) for g in guards)


def test_dynamic_shapes(tmp_path: Path) -> None:
    def f(x):
        y = x * x.shape[0]
        print("n =", x.shape[0])
        return y.sum(0)

    inputs = [(torch.ones(n, 2),) for n in (2, 3, 4, 5)]
    manifest = run_both(f, inputs, tmp_path, dynamic=True)
    assert manifest["frames"]


# ------------------------------------------------------------------ other code shapes


def test_closure(tmp_path: Path) -> None:
    scale = torch.tensor(3.0)
    offset = 2

    def inner(x):
        y = x * scale
        print("closure")
        return y + offset

    run_both(inner, INPUTS, tmp_path)


def _gen(x):
    for i in range(3):
        yield x + i


def test_generator_in_compiled_function(tmp_path: Path) -> None:
    def f(x):
        total = sum(_gen(x))
        print("sum done")
        return total * 2

    run_both(f, INPUTS, tmp_path)


@torch.compiler.disable
def _not_compiled(x):
    return x.abs() + 1


def test_compiler_disable_region(tmp_path: Path) -> None:
    def f(x):
        y = x.sin()
        y = _not_compiled(y)
        return y.cos()

    manifest = run_both(f, INPUTS, tmp_path)
    assert "_not_compiled" not in {fr["function"] for fr in manifest["frames"]}


def test_export_does_not_crash(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    x = torch.randn(3, 4)
    with pytest.warns(UserWarning, match="compiled no frame|transformed none"), \
            unveil.prepare_debug(tmp_path):
        exported = torch.export.export(model, (x,))
    assert torch.allclose(exported.module()(x), model(x))


def test_strict_keeps_dynamo_code_where_not_identical(tmp_path: Path) -> None:
    expected = _calls(torch.compile(brk_if, backend="eager"), INPUTS)
    torch._dynamo.reset()
    with unveil.prepare_debug(tmp_path, strict=True):
        got = _calls(torch.compile(brk_if, backend="eager"), INPUTS)
    assert [(str(v), o) for v, o in expected] == [(str(v), o) for v, o in got]
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    for frame in manifest["frames"]:
        ours = frame["status"] == "running unveil's code"
        assert ours == bool(frame["identical"]), frame
        if not ours:
            text = (tmp_path / frame["transformed_code"]).read_text()
            assert "NOT" in text or "not bytecode-identical" in text


def test_strict_export_does_not_crash(tmp_path: Path) -> None:
    """torch.export with strict=True traces through Dynamo: the dump must not disturb it."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU())
    x = torch.randn(2, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # whether Dynamo compiles a frame here is its business
        with unveil.prepare_debug(tmp_path):
            exported = torch.export.export(model, (x,), strict=True)
    assert torch.allclose(exported.module()(x), model(x))
    json.loads((tmp_path / "manifest.json").read_text())  # written, valid


def test_fullgraph_error_is_the_same(tmp_path: Path) -> None:
    """fullgraph=True makes a graph break an error: the same error with unveil."""
    def run() -> str:
        try:
            torch.compile(brk_print, backend="eager", fullgraph=True)(torch.ones(2))
        except Exception as exc:  # noqa: BLE001 (the error is the behaviour compared)
            return type(exc).__name__
        return "no error"

    expected = run()
    torch._dynamo.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with unveil.prepare_debug(tmp_path):
            got = run()
    assert expected == got != "no error"


def _sneaky_recompile(real: Callable[..., Any]) -> Callable[..., Any]:
    """``recompile`` that adds a ``print`` to the start of the code it returns: a
    decompiler bug of the kind the equivalence check is there to catch."""
    def recompile(code: Any, filename: str | None = None, line_map: Any = None,
                  **options: Any) -> Any:
        good = real(code, filename, line_map, **options)
        source = Path(filename).read_text() if filename else ""
        marker = f"def {code.co_name}("
        lines = source.splitlines()
        at = next(k for k, line in enumerate(lines) if line.lstrip().startswith(marker))
        indent = " " * (len(lines[at]) - len(lines[at].lstrip()) + 4)
        lines.insert(at + 1, f"{indent}print('sneaky')")
        namespace: dict[str, Any] = {}
        exec(compile("\n".join(lines), filename or "<x>", "exec"), namespace)
        fn = namespace.get(code.co_name) or namespace["__unveil_closure__"]()
        assert fn.__code__.co_name == good.co_name
        return fn.__code__
    return recompile


def test_code_not_shown_equivalent_keeps_dynamo_code(tmp_path: Path, monkeypatch) -> None:
    """A recompiled frame that does something Dynamo's code does not (here: an extra
    print) is caught: Dynamo's own code runs, the file and manifest say why."""
    from unveil.decompiler import api

    expected = _calls(torch.compile(brk_print, backend="eager"), INPUTS)
    torch._dynamo.reset()
    monkeypatch.setattr(api, "recompile", _sneaky_recompile(api.recompile))
    with unveil.prepare_debug(tmp_path):
        got = _calls(torch.compile(brk_print, backend="eager"), INPUTS)
    assert [(str(v), o) for v, o in expected] == [(str(v), o) for v, o in got]
    assert "sneaky" not in "".join(o for _, o in got)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["frames"]
    for frame in manifest["frames"]:
        assert frame["status"] == "running Dynamo's code", frame
        assert frame["equivalent"] is False
        assert frame["error"].startswith("not shown to do what Dynamo's code does"), frame
        text = (tmp_path / frame["transformed_code"]).read_text()
        assert text.startswith("# Dynamo's own code runs, not the code in this file")
        assert "could not show that the code compiled from it does what" in text.split("\n")[0]
        compile(text, frame["transformed_code"], "exec")
        # the reason in words: which line of each does what (no internal path tuples)
        lines = text.splitlines()
        def_line = next(k for k, line in enumerate(lines)
                        if line.lstrip().startswith(f"def {frame['function']}(")) + 1
        error = frame["error"]
        assert "Dynamo's code (at test_scenarios.py:" in error, error
        assert (f"where this file (line {def_line + 1}) calls `print('sneaky')`; until "
                f"that is resolved Dynamo's code runs") in error, error
        assert "('call'" not in error and "('global'" not in error
        assert error in text  # (the file's header says the same)


def test_every_frame_is_shown_equivalent(tmp_path: Path) -> None:
    manifest = run_both(brk_if, INPUTS, tmp_path)
    for frame in manifest["frames"]:
        assert frame["equivalent"] is True, frame
        assert frame["equivalence"].endswith("paths compared"), frame


# ------------------------------------------------------------------ programs unveil once broke


@dataclasses.dataclass
class _Out:
    value: Any
    mask: Any


def closure_into_dataclass(x):
    masked = x > 0

    def pick(t):
        return t * masked
    return _Out(value=pick(x), mask=masked)


def cell_stored_twice(x):
    acc = x + 1

    def read():
        return acc * 2
    acc = acc * 3
    r = read()
    acc = r + 1
    return read() + acc


def nonlocal_counter(x):
    count = 0

    def bump(t):
        nonlocal count
        count += 1
        return t + count
    y = bump(bump(x))
    return y, count


def lambdas_capturing_cells(x):
    k = x.sum()
    fs = [lambda t, i=i: t * i + k for i in range(3)]
    return [f(x) for f in fs]


@pytest.mark.parametrize("fn", [closure_into_dataclass, cell_stored_twice, nonlocal_counter,
                                lambdas_capturing_cells], ids=lambda f: f.__name__)
def test_closures_keep_their_cells(fn, tmp_path: Path) -> None:
    """Dynamo keeps the frame's cells in its code even where the closures went into the
    graph; unveil's code must have them too (else Dynamo asserts 'cell var mismatch' in the
    user's program), and must be shown to do the same."""
    def same_fields(a: Any, b: Any) -> bool:
        return _same(dataclasses.astuple(a), dataclasses.astuple(b), True) \
            if dataclasses.is_dataclass(a) else _same(a, b, True)

    expected = _calls(torch.compile(fn, backend="eager"), INPUTS)
    torch._dynamo.reset()
    with unveil.prepare_debug(tmp_path):
        got = _calls(torch.compile(fn, backend="eager"), INPUTS)
    for (e_val, e_out), (g_val, g_out) in zip(expected, got, strict=True):
        assert same_fields(e_val, g_val), (e_val, g_val)
        assert e_out == g_out
    manifest = check_dump(tmp_path)
    for frame in manifest["frames"]:
        assert frame["equivalent"] is True, frame


STEPS = 0
RUNNING: Any = None


def counts_steps_in_globals(x):
    global STEPS, RUNNING
    STEPS += 1
    RUNNING = x.mean()
    return x * STEPS


def test_globals_stored(tmp_path: Path) -> None:
    global STEPS, RUNNING

    def run(ctx: Any) -> list[Any]:
        global STEPS, RUNNING
        STEPS, RUNNING = 0, None
        torch._dynamo.reset()
        with ctx:
            compiled = torch.compile(counts_steps_in_globals, backend="eager")
            return [(compiled(x), STEPS, RUNNING) for (x,) in INPUTS]

    expected = run(contextlib.nullcontext())
    got = run(unveil.prepare_debug(tmp_path))
    for (e, e_steps, e_mean), (g, g_steps, g_mean) in zip(expected, got, strict=True):
        assert torch.equal(e, g) and e_steps == g_steps and torch.equal(e_mean, g_mean)
    check_dump(tmp_path)


def test_lambda(tmp_path: Path) -> None:
    """A compiled lambda: Dynamo's code for it is statements, which a lambda cannot hold."""
    manifest = run_both(lambda x: (x * 2).sin() + 1, INPUTS, tmp_path)
    (frame,) = manifest["frames"]
    assert frame["function"] == "<lambda>"
    assert "def lambda_(x):" in (tmp_path / frame["transformed_code"]).read_text()


class _Stateful(torch.nn.Module):
    """A module that changes its own state in forward: a counter, a dict with int and
    string keys, a list."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.calls = 0
        self.cache: dict[Any, Any] = {}
        self.history: list[Any] = []

    def forward(self, x):
        self.calls += 1
        self.cache["last"] = x.sum()
        self.cache[self.calls % 2] = x.mean()
        self.history.append(x.shape[0])
        return self.lin(x)


def test_module_that_changes_its_state(tmp_path: Path) -> None:
    def run(ctx: Any) -> tuple[list[Any], Any]:
        torch._dynamo.reset()
        torch.manual_seed(0)
        model = _Stateful()
        with ctx:
            compiled = torch.compile(model, backend="eager")
            out = [compiled(x) for (x,) in INPUTS]
        return out, (model.calls, sorted(model.cache, key=str), model.history)

    (expected, e_state), (got, g_state) = run(contextlib.nullcontext()), run(
        unveil.prepare_debug(tmp_path))
    assert e_state == g_state
    assert all(torch.equal(a, b) for a, b in zip(expected, got, strict=True))
    check_dump(tmp_path)


def test_generator_function(tmp_path: Path) -> None:
    def gen(x):
        for i in range(3):
            yield x * i

    def consume(x):
        return sum(gen(x)) + torch.stack(list(gen(x))).mean()

    run_both(consume, INPUTS, tmp_path)


def _wrong_cells(real: Callable[..., Any]) -> Callable[..., Any]:
    """``recompile`` that returns code without the original's cell variables: the layout
    gate must keep Dynamo's code (Dynamo itself would assert in the user's program)."""
    def recompile(code: Any, filename: str | None = None, line_map: Any = None,
                  **options: Any) -> Any:
        good = real(code, filename, line_map, **options)
        return good.replace(co_cellvars=()) if good.co_cellvars else good
    return recompile


def test_layout_gate_keeps_dynamo_code(tmp_path: Path, monkeypatch) -> None:
    from unveil.decompiler import api

    expected = _calls(torch.compile(closure_into_dataclass, backend="eager"), INPUTS)
    torch._dynamo.reset()
    monkeypatch.setattr(api, "recompile", _wrong_cells(api.recompile))
    with unveil.prepare_debug(tmp_path):
        got = _calls(torch.compile(closure_into_dataclass, backend="eager"), INPUTS)
    assert [repr(v) for v, _ in expected] == [repr(v) for v, _ in got]
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    (frame,) = manifest["frames"]
    assert frame["status"] == "running Dynamo's code", frame
    assert "co_cellvars" in frame["error"], frame
    text = (tmp_path / frame["transformed_code"]).read_text()
    assert text.startswith("# Dynamo's own code runs, not the code in this file")
    from unveil.report.load import load_run
    from unveil.report.summary import summary

    assert "1 of 1 compiled frame(s) run Dynamo's own code" in summary(load_run(tmp_path))

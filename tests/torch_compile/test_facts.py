"""The table of what differs between PyTorch releases (``unveil.torch._dynamo.FACTS``),
checked against the PyTorch installed: each fact holds exactly where the table says it
does, read off that PyTorch's own source. CI runs this on every PyTorch it tests."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if getattr(torch, "__file__", None) is None:  # tests/torch_compile itself, as a namespace package
    pytest.skip("torch is not installed", allow_module_level=True)

from unveil.torch import _dynamo  # noqa: E402

_NAMES: list[tuple[str, ...]] = []  # (co_names, co_varnames of each code Dynamo wrote)


def _written() -> list[tuple[str, ...]]:
    """The names in the code Dynamo writes for a function with a graph break: each
    transformed code's ``co_names``, and each resume function's parameters."""
    if _NAMES:
        return _NAMES
    from torch._dynamo.convert_frame import register_bytecode_hook

    def f(x):
        y = torch.sin(x)
        torch._dynamo.graph_break()
        return y + 1

    def hook(code, new_code):
        _NAMES.append(("names", *new_code.co_names))
        _NAMES.append(("params", *code.co_varnames[:code.co_argcount]))

    torch._dynamo.reset()
    handle = register_bytecode_hook(hook)
    try:
        torch.compile(f, backend="eager")(torch.ones(2))
    finally:
        handle.remove()
        torch._dynamo.reset()
    return _NAMES


def _found(fact: str) -> bool:
    """Whether the installed PyTorch shows ``fact``, read off its source."""
    dynamo = Path(torch._dynamo.__file__).parent
    if fact == "bytecode_hook":
        from torch._dynamo import convert_frame

        return callable(getattr(convert_frame, "register_bytecode_hook", None))
    if fact == "structured_trace":
        from torch._logging import _internal

        code = _internal.trace_structured.__code__
        return hasattr(_internal, "trace_log") and code.co_varnames[:2] == ("name", "metadata_fn")
    if fact == "cache_entries":
        from torch._dynamo import eval_frame

        return hasattr(eval_frame, "_debug_get_cache_entry_list")
    if fact == "compile_frame":
        import inspect

        from torch._dynamo import convert_frame

        params = list(inspect.signature(convert_frame._compile).parameters)
        return params[:3] == ["code", "globals", "locals"]
    if fact == "frame_counters":
        before = _dynamo.frames_seen()
        torch._dynamo.reset()
        torch.compile(lambda x: x + 1, backend="eager")(torch.ones(2))
        torch._dynamo.reset()
        after = _dynamo.frames_seen()
        return before is not None and after is not None and after > before
    if fact == "profiler_enter_value":
        from torch._dynamo import utils

        enter = getattr(utils, "record_pregraph_bytecode_enter", None)
        if enter is None:
            return False
        cm = enter()
        utils.record_pregraph_bytecode_exit(cm)
        return cm is not None
    if fact == "kernel_origins":  # the function, with that signature, called by codegen
        import inspect

        from torch._inductor import debug

        fn = getattr(debug, "set_kernel_post_grad_provenance_tracing", None)
        if fn is None:
            return False
        params = list(inspect.signature(fn).parameters)
        codegen = Path(debug.__file__).parent / "codegen"
        calls = any("set_kernel_post_grad_provenance_tracing(" in p.read_text()
                    for p in codegen.glob("*.py"))
        return params[:3] == ["node_schedule", "kernel_name", "is_extern"] and calls
    names = {n for entry in _written() if entry[0] == "names" for n in entry[1:]}
    if fact == "fixed_globals":  # a graph and a resume function, and each read as fixed
        ours = [n for n in names if n.startswith(("__compiled_fn_", "__resume_at_", "__import_"))]
        return all(any(n.startswith(k) for n in ours) for k in ("__compiled_fn_", "__resume_at_")) \
            and all(_dynamo.fixed_global(n, None) for n in ours)
    if fact == "profiler_region":
        return set(_dynamo.PROFILER_HELPERS) <= names
    if fact == "profiler_gate":
        return "_is_profiler_enabled" in names
    if fact == "graph_break_registry":
        return (dynamo / "graph_break_registry.json").exists()
    if fact == "nested_resume":
        params = [e[1:] for e in _written() if e[0] == "params"]
        return ("__nested_resume_fns", "__nested_frame_values") in [p[:2] for p in params]
    raise AssertionError(f"no check for the fact {fact!r}: add one here")


@pytest.mark.parametrize("fact", [f.name for f in _dynamo.FACTS])
def test_each_fact_holds_where_the_table_says(fact: str) -> None:
    assert _dynamo.holds(fact) == _found(fact), (fact, torch.__version__)


def test_facts_follow_their_releases() -> None:
    for fact in _dynamo.FACTS:
        since = ".".join(map(str, fact.since))
        assert _dynamo.holds(fact.name, f"{since}.0")
        if fact.since > _dynamo.TESTED[0]:
            before = f"{fact.since[0]}.{fact.since[1] - 1}.0"
            assert not _dynamo.holds(fact.name, before), fact


def test_a_pytorch_outside_the_tested_releases_gets_one_warning_line(monkeypatch) -> None:
    monkeypatch.setattr(_dynamo, "torch_version", lambda: "2.99.0")
    monkeypatch.setattr(_dynamo, "_warned", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            _dynamo.add_bytecode_hook(lambda code, new: None)()
    lines = [str(w.message) for w in caught if "tested on" in str(w.message)]
    assert len(lines) == 1 and "\n" not in lines[0], lines
    first, last = (".".join(map(str, v)) for v in _dynamo.TESTED)
    assert "PyTorch 2.99.0" in lines[0] and f"({first} to {last})" in lines[0], lines
    inside = _dynamo.TESTED[0] <= _dynamo.version_tuple(torch.__version__) <= _dynamo.TESTED[1]
    assert (_dynamo.untested(torch.__version__) is None) == inside

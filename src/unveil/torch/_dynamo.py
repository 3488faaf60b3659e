"""The one place that touches PyTorch internals, each with a version check.

What differs between PyTorch releases is :data:`FACTS`: one named fact each (what Dynamo
writes or offers), with the release it starts at; code asks :func:`holds`. The rest of
unveil reads Dynamo's output by what it does (the decompiler, the equivalence check), not
by its layout, so a release that changes the layout needs no entry unless unveil names
something new. PyTorch 2.x: ``torch._dynamo.convert_frame.register_bytecode_hook(hook)``
calls ``hook(code, new_code)`` for every frame Dynamo transforms and installs what the hook
returns (a code object, or None for Dynamo's own); it returns a handle with ``remove()``.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import os
import re
import sys
import warnings
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, FrameType
from typing import Any, cast

from ..decompiler.tidy.temporaries import Known

BytecodeHook = Callable[[CodeType, CodeType], "CodeType | None"]
_warned: set[str] = set()  # warnings given once per process


def torch_version() -> str | None:
    """The installed PyTorch version, or None without torch."""
    try:
        import torch
    except ImportError:
        return None
    return str(torch.__version__)


# The releases unveil is tested on (benchmarks/torch_matrix.py, scripts/test --torch: the
# whole torch suite passes on 2.11, 2.13, 2.14 and 2.15; not on 2.8 and 2.6, see
# docs/pytorch-versions.md); a PyTorch outside gets one warning line naming them.
TESTED = ((2, 11), (2, 15))


@dataclass(frozen=True)
class Fact:
    """Something of Dynamo that unveil relies on, and the releases it holds in:
    ``since`` is the first (of those checked, 2.6 to 2.15: ``(2, 6)`` means 2.6 or
    earlier), ``until`` the first it no longer holds in (None: it still does)."""

    name: str
    since: tuple[int, int]
    what: str
    until: tuple[int, int] | None = None


FACTS = (
    Fact("bytecode_hook", (2, 6), "torch._dynamo.convert_frame.register_bytecode_hook(hook): "
         "hook(code, new_code) for each transformed frame; the code it returns runs"),
    Fact("structured_trace", (2, 6), "torch._logging._internal.trace_log and "
         "trace_structured(name, metadata_fn, payload_fn): graphs, guards, graph breaks"),
    Fact("cache_entries", (2, 6), "torch._dynamo.eval_frame._debug_get_cache_entry_list(code):"
         " each entry's guard_manager (code_parts, closure_vars), compile_id and code"),
    Fact("fixed_globals", (2, 6), "Dynamo's code reads globals it binds once: its graphs "
         "(__compiled_fn_<n>, from 2.8 __compiled_fn_<n>_<uuid>), resume functions "
         "(__resume_at_<offset>_<n>) and modules (__import_<name, dots as _dot_>)"),
    Fact("profiler_region", (2, 8), "the graph's inputs are loaded between "
         "torch._dynamo.utils.record_pregraph_bytecode_enter() and "
         "record_pregraph_bytecode_exit(cm) (config.record_runtime_overhead)"),
    Fact("profiler_gate", (2, 15), "that region runs only while "
         "torch.autograd.profiler._is_profiler_enabled: cm = None; if enabled: cm = enter(); "
         "...; if cm is not None: exit(cm)"),
    Fact("compile_frame", (2, 6), "a bytecode hook runs under convert_frame._compile(code, "
         "globals, locals, ...): the frame's globals and locals being compiled"),
    Fact("profiler_enter_value", (2, 8), "record_pregraph_bytecode_enter() returns the "
         "context manager it entered, never None"),
    Fact("frame_counters", (2, 6), "torch._dynamo.utils.counters['frames']['total'] counts "
         "the frames Dynamo was given (convert_frame), transformed or not"),
    Fact("graph_break_registry", (2, 8), "torch/_dynamo/graph_break_registry.json names each "
         "graph-break type GB<nnnn> (exc._load_gb_type_to_gb_id_map)"),
    Fact("kernel_origins", (2, 13), "Inductor calls torch._inductor.debug."
         "set_kernel_post_grad_provenance_tracing(node_schedule, kernel_name, is_extern) "
         "for each kernel it writes (whatever the provenance level): scheduler nodes (or "
         "the extern kernel) whose .origins are the post-grad FX nodes it computes"),
    Fact("nested_resume", (2, 9), "resume functions take __nested_resume_fns and "
         "__nested_frame_values before the live locals, and a graph break in a nested call "
         "may resume each frame on the way (config.nested_graph_breaks)"),
)
_FACTS = {f.name: f for f in FACTS}
# Dynamo's helpers its code calls, of torch._dynamo.utils (fixed: nothing rebinds them)
PROFILER_HELPERS = ("record_pregraph_bytecode_enter", "record_pregraph_bytecode_exit")


def version_tuple(version: str | None) -> tuple[int, int] | None:
    """``"2.15.0+cu132"`` as ``(2, 15)``; None when not a version."""
    if version is None:
        return None
    parts = version.split("+")[0].split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


def holds(fact: str, version: str | None = None) -> bool:
    """Whether :data:`FACTS`' ``fact`` holds for PyTorch ``version`` (default: the
    installed one). A release outside :data:`TESTED` is taken as the nearest one."""
    found = _FACTS[fact]
    release = version_tuple(version if version is not None else torch_version())
    if release is None:
        return False
    return found.since <= release and (found.until is None or release < found.until)


def untested(version: str | None) -> str | None:
    """The warning line for a PyTorch outside :data:`TESTED`, else None."""
    release = version_tuple(version)
    if release is None or TESTED[0] <= release <= TESTED[1]:
        return None
    first, last = (".".join(map(str, v)) for v in TESTED)
    return (f"unveil: PyTorch {version} is outside the releases unveil is tested on "
            f"({first} to {last}); frames it cannot show equivalent keep Dynamo's code")


def add_bytecode_hook(hook: BytecodeHook) -> Callable[[], None]:
    """Register ``hook`` with Dynamo; returns the function that removes it. On a PyTorch
    without the hook, warns once (one line) and does nothing; on one outside
    :data:`TESTED`, warns once (one line) and goes on."""
    version = torch_version()
    warning = untested(version)
    if warning is not None and warning not in _warned:
        _warned.add(warning)
        warnings.warn(warning, RuntimeWarning, stacklevel=3)
    try:
        from torch._dynamo.convert_frame import register_bytecode_hook
    except ImportError as exc:  # torch missing, or a PyTorch that moved the hook
        version = torch_version()
        if version is None:
            raise ImportError("unveil.prepare_debug needs PyTorch: pip install torch") from exc
        warnings.warn(f"unveil: PyTorch {version} has no register_bytecode_hook; "
                      "nothing will be dumped", RuntimeWarning, stacklevel=3)
        return lambda: None
    handle: Any = register_bytecode_hook(hook)
    return handle.remove


def distributed_rank() -> int | None:
    """This process's rank: from ``torch.distributed`` when it is initialised, else from
    the environment ``torchrun`` sets up before the script starts (``RANK`` with
    ``WORLD_SIZE`` and ``LOCAL_RANK``); None for a single process."""
    try:
        import torch.distributed as dist
    except ImportError:
        return None
    if dist.is_available() and dist.is_initialized():
        return int(dist.get_rank())
    env = os.environ
    if all(k in env for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK")):
        with contextlib.suppress(ValueError):
            return int(env["RANK"])
    return None


def rank_directory(directory: Path) -> Path:
    """Where this process dumps: ``directory/rank_<r>`` for a rank of a distributed job
    (each rank its own directory), else ``directory``."""
    rank = distributed_rank()
    if rank is None or directory.name == f"rank_{rank}":
        return directory
    return directory / f"rank_{rank}"


@contextlib.contextmanager
def forced_backend(backend: str | None) -> Iterator[None]:
    """While active, every ``torch.compile`` call uses ``backend`` (None: as written)."""
    if backend is None:
        yield
        return
    import torch

    original = torch.compile

    def compile_with(*args: Any, **kwargs: Any) -> Any:
        kwargs["backend"] = backend
        return original(*args, **kwargs)

    compile_with.__wrapped__ = original  # type: ignore[attr-defined]  # as functools.wraps sets it
    torch.compile = compile_with
    try:
        yield
    finally:
        torch.compile = original


def bytecode_logger() -> Any:
    """The logger ``TORCH_LOGS=+bytecode`` turns on (Dynamo's bytecode artifact), or None."""
    try:
        import torch._logging
    except ImportError:
        return None
    try:
        return torch._logging.getArtifactLogger("torch._dynamo.convert_frame", "bytecode")
    except (AttributeError, ValueError):
        return None


# ------------------------------------------------------------------ compile ids and caches


def current_compile_id() -> str | None:
    """Dynamo's id (``"frame/compile"``) of the compile running now, or None."""
    try:
        from torch._guards import CompileContext
    except ImportError:
        return None
    try:
        cid = CompileContext.current_compile_id()
    except Exception:  # noqa: BLE001 (a PyTorch that changed the API: no id, no harm)
        return None
    return None if cid is None else str(cid)


@dataclass
class CacheEntry:
    """One entry of Dynamo's cache for a code object: the guard and the code it runs."""

    compile_id: str | None
    guards: list[str]  # Dynamo's guard expressions, as it prints them
    code: CodeType  # the transformed code this entry runs
    closure_vars: dict[str, Any]  # the helpers the guard expressions call


def cache_entries(code: CodeType) -> list[CacheEntry]:
    """Dynamo's cache entries for ``code``, newest first; [] when unavailable."""
    try:
        from torch._dynamo.eval_frame import _debug_get_cache_entry_list
    except ImportError:
        return []
    out = []
    for entry in _debug_get_cache_entry_list(code):
        manager = getattr(entry, "guard_manager", None)
        parts = [str(p) for p in getattr(manager, "code_parts", None) or []]
        cid = getattr(entry, "compile_id", None)
        helpers = dict(getattr(manager, "closure_vars", None) or {})
        out.append(CacheEntry(None if cid is None else str(cid), parts, entry.code, helpers))
    return out


# ------------------------------------------------------------------ the structured trace

TraceCallback = Callable[[dict[str, Any], "str | None", Any], None]
# (event, artifact name or None) -> whether a handler uses it; see add_trace_handler
TraceWants = Callable[[str, "str | None"], bool]


class _TraceHandler(logging.Handler):
    def __init__(self, callback: TraceCallback, wants: TraceWants | None) -> None:
        super().__init__(logging.DEBUG)
        self.callback = callback
        self.wants = wants

    def emit(self, record: logging.LogRecord) -> None:
        metadata = getattr(record, "metadata", None)
        if not isinstance(metadata, dict):
            return
        try:
            self.callback(metadata, getattr(record, "payload", None),
                          _payload_graph_module(metadata))
        except Exception:  # noqa: BLE001 (a dump problem must never break compilation)
            logging.getLogger("unveil").debug("unveil: trace event failed", exc_info=True)


def _trace_structured_code() -> CodeType | None:
    """The code of ``torch._logging._internal.trace_structured`` when it is the one
    :class:`_TraceHandlers` knows (it tests ``trace_log.handlers`` with its arguments
    ``name`` and ``metadata_fn`` in hand), else None."""
    try:
        from torch._logging._internal import trace_structured
    except ImportError:
        return None
    code = getattr(trace_structured, "__code__", None)
    if (not isinstance(code, CodeType) or "handlers" not in code.co_names
            or code.co_varnames[:2] != ("name", "metadata_fn")):
        return None
    return code


class _TraceHandlers(list):
    """``trace_log.handlers`` while unveil listens. ``trace_structured`` computes an event
    (metadata and payload: tensor descriptions, guard and graph prints, chromium events)
    whenever this list is true, before any handler or filter could drop it. Asked from
    there, this list is false when all its handlers are unveil's and none wants the event,
    so Dynamo skips the events unveil does not record."""

    code: CodeType | None = None  # trace_structured's, set before use

    def __bool__(self) -> bool:
        if not list.__len__(self):
            return False
        frame = sys._getframe(1)
        if frame.f_code is not self.code:
            return True
        wants = [getattr(h, "wants", None) if isinstance(h, _TraceHandler) else None
                 for h in self]
        if None in wants:  # another handler (TORCH_TRACE's): it gets every event
            return True
        try:
            local = frame.f_locals
            event = local["name"]
            artifact = local["metadata_fn"]().get("name") if event == "artifact" else None
            return any(want(event, artifact) for want in wants)  # type: ignore[misc]  # no None in wants here
        except Exception:  # noqa: BLE001 (unsure: compute the event)
            return True


def add_trace_handler(callback: TraceCallback,
                      wants: TraceWants | None = None) -> Callable[[], None]:
    """Call ``callback(metadata, payload, graph_module)`` for every event of Dynamo's
    structured trace (``torch.__trace``, what ``TORCH_TRACE`` writes): graphs, guards,
    graph breaks, recompile reasons, compile metrics. ``graph_module`` is the FX
    GraphModule a graph event prints, when it can be found, else None. Returns the
    function that removes the handler.

    ``wants(event, artifact)`` (default: ``callback.wants`` if it has one) says which
    events the callback uses (``artifact`` is the artifact's name for ``"artifact"``
    events, else None): while only such handlers listen, Dynamo does not even compute
    the others. An event it does not want may still arrive (another handler, such as
    ``TORCH_TRACE``'s, wants everything)."""
    try:
        from torch._logging._internal import trace_log
    except ImportError:
        warnings.warn(f"unveil: PyTorch {torch_version()} has no structured trace log; graphs, "
                      "guards and graph breaks will not be dumped", RuntimeWarning, stacklevel=3)
        return lambda: None
    if wants is None:
        wants = getattr(callback, "wants", None)
    handler = _TraceHandler(callback, wants)
    old_level, old_propagate = trace_log.level, trace_log.propagate
    trace_log.setLevel(logging.DEBUG)
    trace_log.propagate = False  # the trace is for its handlers, never the root logger
    code = _trace_structured_code()
    if code is not None and type(trace_log.handlers) is list:
        handlers = _TraceHandlers(trace_log.handlers)
        handlers.code = code
        trace_log.handlers = handlers
    trace_log.addHandler(handler)

    def remove() -> None:
        trace_log.removeHandler(handler)
        if (isinstance(trace_log.handlers, _TraceHandlers)
                and not any(isinstance(h, _TraceHandler) for h in trace_log.handlers)):
            trace_log.handlers = list(trace_log.handlers)
        if not trace_log.handlers:
            trace_log.setLevel(old_level)
            trace_log.propagate = old_propagate

    return remove


def interned_string(index: int) -> str | None:
    """The string the structured trace interned as ``index`` (file names in stacks), for
    indices interned before unveil listened; None when unknown."""
    try:
        from torch._logging.structured import INTERN_TABLE
    except ImportError:
        return None
    for text, i in list(INTERN_TABLE.items()):
        if i == index:
            return text
    return None


# Graph events whose payload is a printed string: the caller's local that holds the graph.
_GRAPH_LOCALS = {"aot_forward_graph": "fw_module", "aot_backward_graph": "bw_module"}


def _payload_graph_module(metadata: dict[str, Any]) -> Any:
    """The GraphModule printed by the ``trace_structured`` call being logged: its payload
    function closes over it, or (AOT's forward and backward) its caller holds it. None
    when it is not found (another PyTorch); the graph is then dumped as printed."""
    event = next((k for k in metadata if k.endswith("_graph")), None)
    if event is None:
        return None
    try:
        from torch.fx import GraphModule
    except ImportError:
        return None
    frame: FrameType | None = sys._getframe(2)
    for _ in range(12):  # logging's own frames, then trace_structured
        if frame is None:
            return None
        if frame.f_code.co_name == "trace_structured":
            payload_fn = frame.f_locals.get("payload_fn")
            for cell in getattr(payload_fn, "__closure__", None) or ():
                with contextlib.suppress(ValueError):
                    if isinstance(cell.cell_contents, GraphModule):
                        return cell.cell_contents
            caller = frame.f_back
            local = _GRAPH_LOCALS.get(event)
            if caller is not None and local is not None:
                found = caller.f_locals.get(local)
                return found if isinstance(found, GraphModule) else None
            return None
        frame = frame.f_back
    return None


def compiled_fn_name_now() -> str | None:
    """The ``__compiled_fn_<n>_<uuid>`` global of the graph Dynamo compiles now (a local
    of ``OutputGraph.compile_and_call_fx_graph``, up the stack), or None."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "compile_and_call_fx_graph":
            name = frame.f_locals.get("name")
            return name if isinstance(name, str) and name.startswith("__compiled_fn") else None
        frame = frame.f_back
    return None


# ------------------------------------------------------------------ graph code from files

# GraphModule -> the file its code is compiled from. Kept outside the module (not in its
# __dict__, which Inductor's FX graph cache hashes: a per-dump path there would miss the
# cache on every run).
_graph_files: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
_graph_writers: dict[str, Callable[[str], None]] = {}  # that file -> writes the source


def compile_graph_from_file(graph_module: Any, path: str,
                            write: Callable[[str], None]) -> bool:
    """Make ``graph_module`` (and its deep copies, which AOTAutograd compiles for the
    backward) run code compiled from the file ``path``: each time FX compiles its code,
    ``write(source)`` puts the source in that file first. Returns False on a PyTorch whose
    FX does not compile through ``_exec_with_source``."""
    try:
        import torch.fx.graph_module as fx_graph_module
    except ImportError:
        return False
    if not callable(getattr(fx_graph_module, "_exec_with_source", None)):
        return False
    _route_fx_sources(fx_graph_module)
    _graph_writers[path] = write
    _graph_files[graph_module] = path  # deep copies inherit it
    if is_lazy(graph_module):
        # a lazy GraphModule not compiled yet compiles its code when first needed (run,
        # or hashed for AOTAutograd's cache), then through the file; compiling it now
        # would put its code in its __dict__ early, which AOTAutograd's cache key pickles
        # (in order): the key would differ from a plain run's, and its cache miss
        return True
    try:
        graph_module.recompile()
        graph_module.code  # noqa: B018 (a lazy GraphModule compiles on first use)
    except BaseException:
        _graph_files.pop(graph_module, None)
        _graph_writers.pop(path, None)
        raise
    return True


def subgraphs(graph_module: Any) -> list[tuple[str, Any]]:
    """The subgraphs of ``graph_module`` its higher-order ops call (``torch.cond``'s
    branches, ``while_loop``'s ``cond_fn``/``body_fn``, ``scan``'s ``combine_fn``): its
    direct children that are GraphModules themselves, by attribute name, nested ones
    after their parent (``cond_true_0.cond_true_1``)."""
    try:
        import torch.fx
    except ImportError:
        return []
    out: list[tuple[str, Any]] = []
    todo = [("", graph_module)]
    while todo:
        prefix, module = todo.pop(0)
        for name, child in module.named_children():
            if isinstance(child, torch.fx.GraphModule):
                out.append((prefix + name, child))
                todo.append((f"{prefix}{name}.", child))
    return out


def is_lazy(graph_module: Any) -> bool:
    """Whether ``graph_module`` is a lazy GraphModule (FX's ``_LazyGraphModule``) that has
    not compiled its code yet."""
    lazy = getattr(type(graph_module), "_needs_recompile", None)
    try:
        return callable(lazy) and bool(lazy())
    except Exception:  # noqa: BLE001 (another FX)
        return False


def _compiling_graph_file() -> str | None:
    """The dump file of the GraphModule whose ``recompile`` is up the stack, if any. A
    deep copy being made (its ``__init__`` recompiles) inherits the original's file."""
    if not _graph_files:
        return None
    frame: FrameType | None = sys._getframe(2)
    target = None
    for _ in range(10):
        if frame is None:
            return None
        owner = frame.f_locals.get("self")
        try:
            path = _graph_files.get(owner)
        except TypeError:  # not weakly referenceable: not a GraphModule
            path = None
        if target is None and "recompile" in frame.f_code.co_name:
            if path is not None:
                return path
            target = owner
        elif target is not None and frame.f_code.co_name == "__deepcopy__":
            if path is not None:
                _graph_files[target] = path
            return path
        frame = frame.f_back
    return None


def _route_fx_sources(fx_graph_module: Any) -> None:
    """Wrap FX's ``_exec_with_source`` once (it stays, so graphs compiled later, such as a
    lazily compiled backward, still land in their files): the code of a GraphModule given
    to ``compile_graph_from_file`` is written to its file and compiled from it; all other
    code passes through untouched."""
    original = fx_graph_module._exec_with_source
    if getattr(original, "_unveil_routed", False):
        return

    def exec_with_source(src: str, globals: dict[str, Any],
                         co_fields: dict[str, Any] | None = None) -> None:
        path = _compiling_graph_file()
        write = _graph_writers.get(path) if path else None
        if write is not None:
            try:
                write(src)
            except OSError:
                pass  # cannot write the file: FX's own in-memory source
            else:
                exec(compile(src, cast(str, path), "exec", dont_inherit=True), globals)  # noqa: S102
                return
        original(src, globals, co_fields)

    exec_with_source._unveil_routed = True  # type: ignore[attr-defined]  # a mark on the function
    fx_graph_module._exec_with_source = exec_with_source
    module_class = fx_graph_module.GraphModule
    copy_module = module_class.__deepcopy__

    def deepcopy(self: Any, memo: dict[int, Any]) -> Any:
        copied = copy_module(self, memo)
        with contextlib.suppress(TypeError):
            path = _graph_files.get(self)
            if path is not None:  # (a lazy copy compiles later, outside this call)
                _graph_files[copied] = path
        return copied

    module_class.__deepcopy__ = deepcopy


# The globals Dynamo puts in a frame's module for its transformed code (the fact
# ``fixed_globals``; ``output_graph.install_global*``, ``symbolic_convert``): a compiled
# graph (``__compiled_fn_<n>_<uuid>``), a resume function (``__resume_at_<offset>_<n>``)
# and modules it imports (``__import_torch_dot__dynamo_dot_utils``, which its code reads
# helpers from: ``codegen.load_import_from``; ``__import_torch_dot_autograd_dot_profiler``,
# whose ``_is_profiler_enabled`` flag it reads: a flag is no helper, it changes). Each
# name is unique and bound once, before the code that reads it runs; the helpers are
# functions nothing rebinds.
_FIXED_GLOBAL = re.compile(r"__compiled_fn_\d+(_\w+)?|__resume_at_\d+_\d+(_\w+)?"
                           r"|__import_\w+")
_DYNAMO_UTILS = "__import_torch_dot__dynamo_dot_utils"


def fixed_global(name: str, attr: str | None) -> bool:
    """Whether Dynamo's global ``name`` (its attribute ``attr``, if given) holds one value
    while a transformed frame runs (see :data:`unveil.decompiler.temporaries.Fixed`)."""
    if attr is None:
        return _FIXED_GLOBAL.fullmatch(name) is not None
    if name != _DYNAMO_UTILS:
        return False
    module = sys.modules.get("torch._dynamo.utils")
    helper = getattr(module, attr, None) if module is not None else None
    return inspect.isfunction(helper) and helper.__module__ == "torch._dynamo.utils"


def never_none(name: str, attr: str) -> bool:
    """Whether calling Dynamo's fixed helper ``name.attr`` never gives None (the fact
    ``profiler_enter_value``: ``record_pregraph_bytecode_enter()`` returns the context
    manager it entered). A question of names only, answered without torch."""
    return name == _DYNAMO_UTILS and attr == PROFILER_HELPERS[0]


def known_globals(fixed: Callable[[str, str | None], bool] = fixed_global) -> Known:
    """What the decompiler and the equivalence check may take as known of Dynamo's
    globals: ``fixed`` (default: :func:`fixed_global`) and :func:`never_none`."""
    return Known(fixed, never_none)


def fixed_names(code: CodeType) -> list[tuple[str, str | None]]:
    """The (global, attribute) pairs ``code`` (and code nested in it) may read for which
    :func:`fixed_global` holds, so that it can be answered later without torch."""
    names: set[str] = set()
    todo = [code]
    while todo:
        current = todo.pop()
        names.update(current.co_names)
        todo.extend(c for c in current.co_consts if isinstance(c, CodeType))
    out: list[tuple[str, str | None]] = [(n, None) for n in sorted(names) if fixed_global(n, None)]
    if _DYNAMO_UTILS in names:
        out += [(_DYNAMO_UTILS, a) for a in sorted(names) if fixed_global(_DYNAMO_UTILS, a)]
    return out


def graph_code_now(graph_module: Any) -> str | None:
    """The Python code ``graph_module``'s graph gives now (what its ``recompile()`` would
    compile), made without changing the module: later passes (AOTAutograd's boxed calling
    convention) may change it. None where FX cannot say."""
    try:
        return str(graph_module.graph.python_code(root_module="self").src)
    except Exception:  # noqa: BLE001 (another FX: the code it compiled, if any)
        return graph_code_compiled(graph_module)


def compiling_globals() -> dict[str, Any] | None:
    """The globals of the frame Dynamo compiles now (``convert_frame._compile``'s
    ``globals``, up the stack from a bytecode hook), where it installs the compiled graphs
    (``__compiled_fn_*``) the transformed code calls; None when not found."""
    found = compiling_frame()
    return None if found is None else found[0]


def compiling_frame() -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The globals and locals of the frame Dynamo compiles now (``_compile``'s
    ``globals`` and ``locals``: the values its guards were made from, the arguments
    included), up the stack from a bytecode hook; None when not found (the fact
    ``compile_frame``)."""
    frame: FrameType | None = sys._getframe(1)
    for _ in range(30):
        if frame is None:
            return None
        if frame.f_code.co_name == "_compile" and "convert_frame" in frame.f_code.co_filename:
            found, local = frame.f_locals.get("globals"), frame.f_locals.get("locals")
            if not isinstance(found, dict):
                return None
            return found, local if isinstance(local, dict) else {}
        frame = frame.f_back
    return None


def frames_seen() -> int | None:
    """How many frames Dynamo has been given so far in this process (the fact
    ``frame_counters``), None where it does not say."""
    module = sys.modules.get("torch._dynamo.utils")
    counters = getattr(module, "counters", None)
    try:
        return int(counters["frames"]["total"])  # type: ignore[index]  # None raises TypeError
    except (TypeError, KeyError, ValueError):
        return None


def describe_value(value: Any) -> str:
    """A value as a recompile explanation shows it: a tensor by its size, dtype and
    device, anything else by its repr (cut)."""
    import torch

    if isinstance(value, torch.Tensor):
        return (f"a tensor of size {tuple(value.shape)}, {value.dtype}"
                + (f" on {value.device}" if value.device.type != "cpu" else ""))
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 (a user's __repr__)
        return f"a {type(value).__name__}"
    return text if len(text) <= 80 else text[:77] + "..."


def never_compile(code: CodeType) -> None:
    """Tell Dynamo never to compile frames of ``code`` (unveil's own wrappers, called from
    transformed code); nothing on a PyTorch without ``skip_code``."""
    try:
        from torch._dynamo.eval_frame import skip_code
    except ImportError:
        return
    with contextlib.suppress(Exception):
        skip_code(code)


def graph_break_id(gb_type: str) -> str | None:
    """PyTorch's registry id (``GB0170``) of the graph-break type ``gb_type`` (the first
    line of its message; torch >= 2.8 ships the registry), or None."""
    if not holds("graph_break_registry"):
        return None
    try:
        from torch._dynamo.exc import _load_gb_type_to_gb_id_map
    except ImportError:
        return None
    try:
        found = _load_gb_type_to_gb_id_map().get(gb_type)
    except Exception:  # noqa: BLE001 (a registry it cannot read: no id)
        return None
    return found if isinstance(found, str) and re.fullmatch(r"GB\d+", found) else None


def graph_code_compiled(graph_module: Any) -> str | None:
    """The code ``graph_module`` last compiled (FX keeps it as ``_code``), without making
    it compile; None before it ever did."""
    code = getattr(graph_module, "__dict__", {}).get("_code")
    return code if isinstance(code, str) else None


# ------------------------------------------------------------------ Inductor's kernels


@dataclass(frozen=True)
class KernelOrigin:
    """A node of the post-grad graph that an Inductor kernel computes."""

    node: str
    stack_trace: str | None  # the user code it comes from, as FX keeps it
    source_node: str | None  # the node of Dynamo's graph it was made from (from_node)


# name, origins: called for each kernel Inductor writes (see watch_kernels)
KernelCallback = Callable[[str, list[KernelOrigin]], None]
_KERNEL_FN = "set_kernel_post_grad_provenance_tracing"
_kernel_callbacks: list[KernelCallback] = []
_kernel_wrappers: dict[int, tuple[Any, Any]] = {}  # id(wrapper) -> (wrapper, original)


def watch_kernels(callback: KernelCallback) -> Callable[[], None]:
    """Call ``callback(kernel_name, origins)`` for each kernel Inductor writes from now
    on (C++, Triton or an extern call), with the FX nodes it computes (the fact
    ``kernel_origins``). Inductor's function is wrapped, not changed: it returns what
    it did, the provenance level (part of the caches' keys) stays as it is. Nothing
    happens until Inductor is imported: :func:`watch_kernels_now` then wraps it (called
    again on each compile). Returns the function that stops watching."""
    _kernel_callbacks.append(callback)
    watch_kernels_now()

    def remove() -> None:
        if callback in _kernel_callbacks:
            _kernel_callbacks.remove(callback)
        if not _kernel_callbacks:
            _unwrap_kernel_fn()

    return remove


def watch_kernels_now() -> None:
    """Wrap Inductor's per-kernel function if someone watches and Inductor is loaded."""
    debug = sys.modules.get("torch._inductor.debug")
    if debug is None or not _kernel_callbacks or not holds("kernel_origins"):
        return
    original = getattr(debug, _KERNEL_FN, None)
    if original is None or id(original) in _kernel_wrappers:
        return

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        if _kernel_callbacks:
            try:
                name = args[1] if len(args) > 1 else kwargs["kernel_name"]
                extern = args[2] if len(args) > 2 else kwargs.get("is_extern", False)
                origins = _kernel_origins(args[0] if args else kwargs["node_schedule"],
                                          bool(extern))
                for callback in list(_kernel_callbacks):
                    callback(str(name), origins)
            except Exception:  # noqa: BLE001 (a kernel unveil cannot place: no link)
                logging.getLogger("unveil").debug("unveil: kernel origins", exc_info=True)
        return result

    wrapper.__wrapped__ = original  # type: ignore[attr-defined]  # as functools.wraps sets it
    _kernel_wrappers[id(wrapper)] = (wrapper, original)
    _swap_kernel_fn(original, wrapper)


def _unwrap_kernel_fn() -> None:
    for wrapper, original in list(_kernel_wrappers.values()):
        _swap_kernel_fn(wrapper, original)
    _kernel_wrappers.clear()


def _swap_kernel_fn(old: Any, new: Any) -> None:
    """Replace ``old`` by ``new`` wherever Inductor's modules hold it (``debug`` and the
    code generators that imported it by name)."""
    for name, module in list(sys.modules.items()):
        if name.startswith("torch._inductor") and getattr(module, _KERNEL_FN, None) is old:
            setattr(module, _KERNEL_FN, new)


def _kernel_origins(node_schedule: Any, extern: bool) -> list[KernelOrigin]:
    """The post-grad FX nodes a kernel computes: an extern kernel's origin node (else
    its origins), or the origins of each scheduler node it fuses, in order, once each."""
    if extern:
        origin = getattr(node_schedule, "origin_node", None)
        nodes = [origin] if origin is not None else list(node_schedule.origins or ())
    else:
        nodes = [fx for snode in node_schedule
                 for fx in (getattr(getattr(snode, "node", None), "origins", None) or ())]
    out: dict[str, KernelOrigin] = {}
    for fx in nodes:
        meta = getattr(fx, "meta", None) or {}
        sources = meta.get("from_node") or []
        source = getattr(sources[0], "name", None) if sources else None
        trace = meta.get("stack_trace")
        out.setdefault(fx.name, KernelOrigin(fx.name, trace if isinstance(trace, str)
                                             else None, source))
    return list(out.values())


def node_stack_traces(graph_module: Any) -> dict[str, str]:
    """Each node of an FX graph with the user code it comes from (``stack_trace``)."""
    out = {}
    for node in getattr(getattr(graph_module, "graph", None), "nodes", ()):
        trace = getattr(node, "meta", {}).get("stack_trace")
        if isinstance(trace, str):
            out[node.name] = trace
    return out
